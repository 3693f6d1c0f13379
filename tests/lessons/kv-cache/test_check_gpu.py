"""check_gpu.py, the lab's (and the GPU runner's) prerequisite check, on this machine without a
GPU: with the dry run's stand-in nvidia-smi reporting a new or an old driver, without nvidia-smi,
without a C compiler, with stand-ins for vLLM and torch installed, and with its figures read back
from the vLLM wheel. What needs a real GPU (torch seeing it) is the GPU job's."""

import os
import subprocess
import sys

import check_gpu
import pytest

from coursekit import ROOT, vllm_source
from coursekit.vllm_claims import _python_range

SCRIPT = ROOT / "snippets/kv-cache/check_gpu.py"
STAND_IN_BIN = ROOT / "tests/stand_in_vllm/bin"


@pytest.fixture
def tools(tmp_path):
    """A folder for programs of this test's own, with python3 (the stand-in nvidia-smi's)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "python3").symlink_to(sys.executable)
    return folder


def run(*args, path, **env):
    clean = {k: v for k, v in os.environ.items() if k not in ("CC", "PYTHONPATH", "HF_HOME")}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          env={**clean, "PATH": os.pathsep.join(map(str, path)), **env})


def system_path():
    return os.environ["PATH"].split(os.pathsep)


def stub(folder, name, text):
    program = folder / name
    program.write_text("#!/bin/sh\n" + text)
    program.chmod(0o755)


def test_a_new_driver_passes():
    result = run(path=[STAND_IN_BIN, *system_path()])
    assert ("ok    NVIDIA GeForce RTX 4090 (stand-in, dry run), driver 580.95.05, 24564 MiB,"
            " compute capability 8.9\n") in result.stdout
    assert result.returncode == 0 and result.stdout.endswith("ready for the GPU labs\n")


@pytest.mark.parametrize("driver", ["570.124.06", "580.65.05", "535.247.01"])
def test_an_old_driver_fails_with_what_to_do(driver):
    result = run(path=[STAND_IN_BIN, *system_path()], STAND_IN_DRIVER=driver)
    assert (f"FAIL  NVIDIA GeForce RTX 4090 (stand-in, dry run), driver {driver}, 24564 MiB,"
            " compute capability 8.9: CUDA 13 needs driver 580.65.06 or newer: with this one"
            " torch sees no GPU. Update the driver, or rent a machine whose image has CUDA 13"
            ) in result.stdout
    assert result.returncode == 1
    assert result.stderr == "1 to fix: see the FAIL lines, then run this again.\n"


def test_the_oldest_driver_that_cuda_13_accepts_passes():
    result = run(path=[STAND_IN_BIN, *system_path()], STAND_IN_DRIVER="580.65.06")
    assert "ok    NVIDIA GeForce RTX 4090 (stand-in, dry run), driver 580.65.06" in result.stdout


def test_no_driver_and_a_broken_driver_fail(tools):
    result = run(path=[tools, *system_path()])
    assert ("FAIL  NVIDIA driver: nvidia-smi is not installed, so this machine has no NVIDIA"
            " driver; install driver 580.65.06 or newer") in result.stdout
    stub(tools, "nvidia-smi", "echo \"NVIDIA-SMI has failed because it couldn't communicate"
         " with the NVIDIA driver.\"\nexit 9\n")
    result = run(path=[tools, *system_path()])
    assert ("FAIL  NVIDIA driver: nvidia-smi fails (NVIDIA-SMI has failed because it couldn't"
            " communicate with the NVIDIA driver.); the driver is not loaded") in result.stdout


def test_a_driver_too_old_to_report_compute_capability(tools):
    stub(tools, "nvidia-smi", 'case "$1" in *compute_cap*) echo \'Field "compute_cap" is not a'
         ' valid field to query.\'; exit 2;; esac\necho "NVIDIA GeForce RTX 4090, 470.256.02,'
         ' 24564 MiB"\n')
    result = run(path=[tools, *system_path()])
    assert ("FAIL  NVIDIA GeForce RTX 4090, driver 470.256.02, 24564 MiB: CUDA 13 needs driver"
            " 580.65.06 or newer") in result.stdout


def test_a_missing_or_broken_compiler_fails_with_what_to_do(tools):
    # Only python3 and the stand-in nvidia-smi on PATH: no gcc, no clang.
    result = run(path=[STAND_IN_BIN, tools])
    assert ("FAIL  C compiler: none found (gcc or clang); Triton compiles small helper modules"
            " with one the first time vLLM runs. Install one: sudo apt-get install gcc"
            ) in result.stdout
    stub(tools, "cc-broken", "echo 'cc1: fatal error: cannot run' >&2\nexit 1\n")
    result = run(path=[STAND_IN_BIN, tools], CC=str(tools / "cc-broken"))
    assert (f"FAIL  C compiler {tools / 'cc-broken'}: it cannot compile (cc1: fatal error:"
            " cannot run)") in result.stdout
    result = run(path=[STAND_IN_BIN, tools], CC=str(tools / "no-such-cc"))
    assert f"FAIL  C compiler {tools / 'no-such-cc'}: it does not run" in result.stdout


def test_it_checks_the_headers_with_the_compiler_triton_uses():
    result = run(path=[STAND_IN_BIN, *system_path()])
    assert "ok    C compiler " in result.stdout and " and the Python headers (" in result.stdout


def test_installed_checks_vllm_and_that_torch_sees_the_gpu(stand_in_vllm):
    result = run("--installed", path=[STAND_IN_BIN, *system_path()],
                 PYTHONPATH=str(stand_in_vllm), GPU_LAB_DRY_RUN="1")
    assert "ok    vLLM 0.26.0+standin\n" in result.stdout
    assert ("ok    torch 2.11.0+cu130 (CUDA 13.0) sees NVIDIA GeForce RTX 4090 (stand-in, dry"
            " run)\n") in result.stdout
    assert result.returncode == 0


def test_installed_fails_without_vllm():
    result = run("--installed", path=[STAND_IN_BIN, *system_path()])
    assert "FAIL  vLLM: not installed: pip install vllm==0.26.0\n" in result.stdout
    without = run(path=[STAND_IN_BIN, *system_path()])
    assert "--    vLLM is not installed yet (pip install vllm==0.26.0)\n" in without.stdout


# -- in this process, what cannot be arranged for a subprocess ----------------------------------


@pytest.fixture
def checks(monkeypatch):
    monkeypatch.setattr(check_gpu, "problems", [])
    return check_gpu


def test_an_unsupported_python_fails(checks, capsys, monkeypatch):
    monkeypatch.setattr(checks, "PYTHONS", ((3, 98), (3, 99)))
    checks.check_python()
    out = capsys.readouterr().out
    assert out.startswith(f"FAIL  Python {sys.version_info.major}.{sys.version_info.minor} (")
    assert "vLLM 0.26.0 supports Python 3.98 to 3.99; make a virtual environment" in out


def test_too_little_disk_and_a_read_only_model_cache(checks, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setattr(checks, "DISK_GIB", 10**9)
    checks.check_disk(installed=False)
    out = capsys.readouterr().out
    assert out.startswith("FAIL  ") and " GiB free at " in out
    assert ("the model and vLLM need about 1000000000 GiB more. Free some space, or point HF_HOME"
            " at a larger disk") in out
    checks.check_disk(installed=True)
    assert "need about 500000000 GiB more" in capsys.readouterr().out
    monkeypatch.setattr(checks, "DISK_GIB", 0)
    monkeypatch.setattr(checks.os, "access", lambda path, mode: False)
    checks.check_disk(installed=False)
    assert capsys.readouterr().out.startswith(
        f"ok    model cache {tmp_path} (read-only: the models are provided)\nok    ")


def test_its_figures_are_the_wheels(vllm_src):
    assert check_gpu.VLLM == vllm_source.pinned_version()
    supported = _python_range(vllm_source.requires_python(vllm_src))
    assert supported == tuple(f"{major}.{minor}" for major, minor in check_gpu.PYTHONS)
    assert check_gpu.CUDA == vllm_source.cuda_major(vllm_src) == 13
    assert "libcudart.so.13" in vllm_source.linked_libraries(vllm_src)
