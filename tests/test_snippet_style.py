"""The code the pages show is formatted and lint-clean (ruff.toml), as pre-commit checks."""

import subprocess
import sys
from pathlib import Path

from pages import ROOT

RUFF = Path(sys.executable).parent / "ruff"


def test_snippets_are_formatted():
    result = subprocess.run([RUFF, "format", "--check", "snippets"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_snippets_pass_lint():
    result = subprocess.run([RUFF, "check", "snippets"], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_trailing_whitespace():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    assert tracked.returncode == 0 and tracked.stdout, tracked.stderr
    files = [ROOT / name for name in tracked.stdout.splitlines()
             if name.endswith((".md", ".py", ".yml", ".yaml", ".sh", ".txt", ".toml", ".json"))]
    offenders = [f"{path.relative_to(ROOT)}:{number}" for path in files if path.is_file()
                 for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
                 if line != line.rstrip()]
    assert offenders == []
