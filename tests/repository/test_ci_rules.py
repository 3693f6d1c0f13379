"""Under CI=true a skipped test fails, except a GPU test; REQUIRE_GPU=1 requires those too.
The GPU job runs the one file that holds GPU tests."""

import ast
import os
import subprocess
import sys

import pytest

from coursekit import ROOT

SKIPPING = """
import pytest

def test_browser():
    pytest.skip("no Chromium")

@pytest.mark.gpu
def test_lab():
    pytest.skip("no GPU")
"""


@pytest.mark.parametrize(("env", "failed", "skipped"), [
    ({}, 0, 2),
    ({"CI": "true"}, 1, 1),
    ({"CI": "true", "REQUIRE_GPU": "1"}, 2, 0),
])
def test_required_skips_fail(tmp_path, env, failed, skipped):
    (tmp_path / "test_skipping.py").write_text(SKIPPING)
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "REQUIRE_GPU")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-q", "-p", "no:cacheprovider",
         "test_skipping.py"],
        cwd=tmp_path, capture_output=True, text=True,
        env={**clean, **env, "PYTHONPATH": str(ROOT / "tests")},
    )
    summary = result.stdout.strip().splitlines()[-1]
    counts = {word: int(number) for number, word in
              (part.split()[:2] for part in summary.split(" in ")[0].split(", "))}
    assert (counts.get("failed", 0), counts.get("skipped", 0)) == (failed, skipped), result.stdout


GPU_TESTS = "tests/test_gpu_labs.py"


def marks_gpu(path) -> bool:
    """Whether a test file marks something gpu (pytest.mark.gpu in its code, not in a string)."""
    return any(isinstance(node, ast.Attribute) and node.attr == "gpu"
               and isinstance(node.value, ast.Attribute) and node.value.attr == "mark"
               for node in ast.walk(ast.parse(path.read_text("utf-8"))))


def test_the_gpu_job_runs_the_one_file_that_holds_gpu_tests():
    assert sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "tests").rglob("*.py")
                  if marks_gpu(path)) == [GPU_TESTS]
    assert f"-m pytest -m gpu {GPU_TESTS} " in (ROOT / ".ci/gpu-job").read_text("utf-8")
