"""All Python in the repository is lint-clean and the code the pages show is formatted
(pyproject.toml and snippets/ruff.toml), as pre-commit checks."""

import subprocess
import sys
from pathlib import Path

from coursekit import ROOT

RUFF = Path(sys.executable).parent / "ruff"


def test_snippets_are_formatted():
    result = subprocess.run([RUFF, "format", "--check", "snippets"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_all_python_passes_lint():
    result = subprocess.run([RUFF, "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_nothing_changes_sys_path():
    """Code reaches coursekit as an installed package and lesson code through its import
    finder (coursekit/code.py), never by editing the module search path."""
    needle = "sys." + "path"  # spelled apart so that this file does not match itself
    tracked = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                              "*.py"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    assert [name for name in tracked if (ROOT / name).is_file()
            and needle in (ROOT / name).read_text("utf-8")] == []


def test_no_trailing_whitespace():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    assert tracked.returncode == 0 and tracked.stdout, tracked.stderr
    files = [ROOT / name for name in tracked.stdout.splitlines()
             if name.endswith((".md", ".py", ".yml", ".yaml", ".sh", ".txt", ".toml", ".json"))]
    offenders = [f"{path.relative_to(ROOT)}:{number}" for path in files if path.is_file()
                 for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
                 if line != line.rstrip()]
    assert offenders == []
