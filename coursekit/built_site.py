"""Building the site with MkDocs, as the README's serve command and the tests do."""

from __future__ import annotations

import io
import logging
import os
import shutil
import subprocess
import sys
import traceback
from contextlib import chdir
from pathlib import Path

import jinja2
from mkdocs.plugins import BasePlugin

from coursekit import ROOT

# What a course is built from; a copy of these (node_modules linked) builds the same site.
SOURCES = ("docs", "snippets", "hooks", "overrides")


def mkdocs_build(root: Path, site: Path, in_process: bool = False) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` of the course at root into site; the caller reads the result.
    in_process=True builds in this process, as `mkdocs build` does (load_config, build), with
    its log as the command's stderr: a build of the small fixture course then takes a quarter of
    the time, without a new Python importing MkDocs and its plugins, and with the theme's
    templates compiled by the first of these builds only (the guard tests)."""
    if in_process:
        return _build_in_process(root, site)
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


class CompiledTemplates(jinja2.BytecodeCache):
    """The theme's Jinja templates as the first in-process build compiled them, for the next
    ones: compiling them is about half of what a build of the fixture course costs. Jinja
    compiles a template again when its source changed; the key holds the environment's
    extensions too."""

    def __init__(self):
        self.compiled: dict[tuple, bytes] = {}

    def _key(self, bucket: jinja2.bccache.Bucket) -> tuple:
        return bucket.key, tuple(sorted(bucket.environment.extensions))

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = self.compiled.get(self._key(bucket))
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.compiled[self._key(bucket)] = bucket.bytecode_to_string()


class _TemplateCache(BasePlugin):
    templates = CompiledTemplates()

    def on_env(self, env, **kwargs):
        env.bytecode_cache = self.templates
        return env


def _build_in_process(root: Path, site: Path) -> subprocess.CompletedProcess:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    log = io.StringIO()
    handler = logging.StreamHandler(log)
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    logger = logging.getLogger("mkdocs")  # as mkdocs' command line sets it up
    level, propagate = logger.level, logger.propagate
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logger.addHandler(handler)
    returncode = 0
    try:
        with chdir(root):  # pymdownx.snippets reads base_path from the working folder
            config = load_config(str(root / "mkdocs.yml"), strict=True, site_dir=str(site))
            config.plugins["coursekit-template-cache"] = _TemplateCache()
            config.plugins.on_startup(command="build", dirty=False)
            try:
                build(config)
            finally:
                config.plugins.on_shutdown()
    except MkDocsException as error:  # what the command line prints for it, with exit 1
        log.write(f"Error: {error.format_message()}\n")
        returncode = 1
    except Exception:
        log.write(traceback.format_exc())
        returncode = 1
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
    return subprocess.CompletedProcess(["mkdocs", "build", "--strict", "-d", str(site)],
                                       returncode, "", log.getvalue())
