"""Building the site with MkDocs, as the README's serve command and the tests do."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from coursekit import ROOT

# What a course is built from; a copy of these (node_modules linked) builds the same site.
SOURCES = ("docs", "snippets", "hooks")


def mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` of the course at root into site; the caller reads the result."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def copy_course(dest: Path, root: Path = ROOT) -> Path:
    """The sources a course is built from, copied into dest (node_modules linked)."""
    for name in SOURCES:
        shutil.copytree(root / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(root / "mkdocs.yml", dest / "mkdocs.yml")
    (dest / "node_modules").symlink_to(ROOT / "node_modules")
    return dest
