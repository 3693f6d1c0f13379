"""The GPU job (.ci/gpu-job) as ordinary CI runs it: `--dry-run`, with the stand-ins of
tests/stand_in_vllm in a venv of their own. The three defects that would have failed the real
job on the RTX 4090 (issue 15) are put back, one at a time, in a copy of the repository, and the
dry run fails on each, saying why:

1. `vllm` is not on PATH: the Lab no longer puts the Python's own programs first on PATH, and
   the job runs pytest as <venv>/bin/python without activating the venv;
2. fp8 KV on SM 8.9 without a pinned attention backend: vLLM picks FlashInfer, which compiles its
   kernels at start-up (nvcc, ninja);
3. a set-up that needs npm: .ci/setup without --python-only, on a machine without npm.

Every run has a failing `npm` first on PATH and no virtual environment on PATH, as on the
runner. .ci/run runs the whole dry run once more, on the repository itself.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from coursekit import ROOT


def copy_of_the_repository(dest: Path) -> Path:
    """The files of the repository (tracked, or new and not ignored), as a fresh clone has."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                             "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    for name in listed.stdout.split("\0"):
        source = ROOT / name
        if name and source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


@pytest.fixture
def repo(tmp_path):
    return copy_of_the_repository(tmp_path / "repo")


def dry_run(repo: Path, tmp_path: Path, *pytest_args: str) -> subprocess.CompletedProcess:
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    npm = stubs / "npm"
    npm.write_text("#!/bin/sh\necho 'npm (stub): this machine has no node or npm' >&2\nexit 127\n")
    npm.chmod(0o755)
    # The PATH of a runner: system programs, no virtual environment.
    system = [entry for entry in os.environ["PATH"].split(os.pathsep)
              if entry and "venv" not in entry and not entry.startswith(str(ROOT))]
    env = {key: value for key, value in os.environ.items()
           if key not in ("VIRTUAL_ENV", "PYTHONPATH", "GPU_LAB_DRY_RUN", "REQUIRE_GPU",
                          "GITHUB_STEP_SUMMARY", "GPU_LAB_LOG_DIR")}
    env.update(PATH=os.pathsep.join([str(stubs), *system]),
               GPU_LAB_LOG_DIR=str(tmp_path / "logs"),
               GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"))
    args = ["--", *pytest_args] if pytest_args else []
    return subprocess.run(["bash", str(repo / ".ci/gpu-job"), "--dry-run", *args], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=900)


def output(run: subprocess.CompletedProcess) -> str:
    return run.stdout + run.stderr


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert old in text, f"{path} no longer holds {old!r}: update this test"
    path.write_text(text.replace(old, new), "utf-8")


def test_the_dry_run_passes_without_npm_and_says_it_is_one(repo, tmp_path):
    run = dry_run(repo, tmp_path, "-k", "kv-cache")
    assert run.returncode == 0, output(run)[-4000:]
    assert "npm (stub)" not in output(run)
    assert "gpu-job: dry run passed (stand-ins, no GPU)" in run.stdout
    assert "test_gpu_lab[kv-cache/serve_kv.sh (dry run)] PASSED" in run.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("### GPU lab machine: dry run, with stand-ins")
    assert "| dry run: reported GPU KV cache size | 149,792 tokens |" in summary
    # No line of its summary passes for a GPU result.
    lines = [line for line in summary.splitlines() if line.strip() and line != "|---|---|"]
    assert [line for line in lines if "dry run" not in line.lower()
            and "stand-in" not in line] == []
    assert sorted(path.name for path in (tmp_path / "logs/kv-cache").iterdir()) == [
        "check_gpu.py.log", "kv_cache_memory_bytes.log", "serve_kv.py.log", "serve_kv.sh.log"]
    # The lab notebook's cells, each with its log (the set-up cell is not run: cell 2).
    cells = sorted((tmp_path / "logs/kv-cache-lab-notebook").iterdir())
    assert cells and "cell 2.log" not in [path.name for path in cells]


def test_defect_1_vllm_not_on_path_fails_the_dry_run(repo, tmp_path):
    edit(repo / "coursekit/gpu_labs.py",
         'path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])',
         'path = os.environ.get("PATH", "")')
    run = dry_run(repo, tmp_path, "-k", "serve_kv.sh")
    assert run.returncode != 0
    assert "serve_kv.sh exited (exit 127) before it served" in output(run)
    assert "vllm: command not found" in output(run)
    assert "gpu-job: dry run: a GPU lab check failed" in run.stderr


def test_defect_2_fp8_kv_without_a_pinned_backend_fails_the_dry_run(repo, tmp_path):
    lesson = repo / "snippets/kv-cache"
    edit(lesson / "serve_kv.py", '        attention_backend="TRITON_ATTN",', "        # unpinned")
    edit(lesson / "serve_kv.sh", "  --attention-backend TRITON_ATTN \\\n", "")
    run = dry_run(repo, tmp_path, "-k", "serve_kv")
    assert run.returncode != 0
    text = output(run)
    assert "serve_kv.py failed (exit 1)" in text and "serve_kv.sh exited (exit 1)" in text
    assert text.count("vLLM 0.26.0 would use FLASHINFER here (kv_cache_dtype='fp8' on compute"
                      " capability 8.9, no attention backend pinned): FlashInfer JIT-compiles"
                      " its attention kernels at start-up") >= 2
    assert "Using FLASHINFER attention backend out of potential backends:" in text


def test_defect_3_a_set_up_needing_npm_fails_the_dry_run(repo, tmp_path):
    edit(repo / ".ci/gpu-job", 'bash .ci/setup --python-only --venv "$venv"',
         'bash .ci/setup --venv "$venv"')
    run = dry_run(repo, tmp_path, "-k", "kv-cache")
    assert run.returncode != 0
    assert "npm (stub): this machine has no node or npm" in run.stderr
    assert "run every GPU block's check" not in run.stdout  # it stopped at the set-up
