"""Is this machine ready for the GPU labs (vLLM 0.26.0 on an NVIDIA GPU)?

Run: python check_gpu.py [--installed]

It checks what `pip install vllm==0.26.0` cannot install: an NVIDIA driver new enough
for CUDA 13, a C compiler and the Python headers (Triton builds small helper modules
with them the first time vLLM runs), a Python that vLLM supports, and free disk.
With --installed (after the pip install) it also checks vLLM and that torch sees the
GPU. Every line says ok or FAIL; a FAIL line says what to do.
"""

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

VLLM = "0.26.0"
PYTHONS = ((3, 10), (3, 14))  # Python 3.10 to 3.14: Requires-Python >=3.10,<3.15
CUDA = 13  # the wheel links libcudart.so.13; torch 2.11.0 brings CUDA 13.0
MIN_DRIVER = "580.65.06"  # NVIDIA: CUDA 13.x needs a Linux driver >= 580.65.06
DISK_GIB = 20  # the model, vLLM and its CUDA libraries (an estimate)

problems = []


def report(ok, what, fix=""):
    print(f"ok    {what}" if ok else f"FAIL  {what}: {fix}")
    if not ok:
        problems.append(what)


def version(text):
    return tuple(int(part) for part in text.split("."))


def check_python():
    major, minor = sys.version_info[:2]
    (low_major, low), (high_major, high) = PYTHONS
    supported = f"{low_major}.{low} to {high_major}.{high}"
    report(
        PYTHONS[0] <= (major, minor) <= PYTHONS[1],
        f"Python {major}.{minor} ({sys.executable})",
        f"vLLM {VLLM} supports Python {supported}; make a virtual environment"
        f" with one of those, e.g. python3.12 -m venv ~/vllm && . ~/vllm/bin/activate",
    )


def query_gpus():
    fields = "name,driver_version,memory.total,compute_cap"
    for query in (fields, fields.rsplit(",", 1)[0]):  # old drivers lack compute_cap
        run = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        )
        if run.returncode == 0:  # a name may hold ", ": split the others off its right
            lines = run.stdout.splitlines()
            return [line.rsplit(", ", query.count(",")) for line in lines if line]
    return (run.stderr or run.stdout).strip().splitlines()[:1] or ["no output"]


def check_driver():
    if shutil.which("nvidia-smi") is None:
        report(
            False,
            "NVIDIA driver",
            "nvidia-smi is not installed, so this machine has no NVIDIA driver;"
            f" install driver {MIN_DRIVER} or newer (or rent a machine with one)",
        )
        return
    gpus = query_gpus()
    if not gpus or isinstance(gpus[0], str):
        report(
            False,
            "NVIDIA driver",
            f"nvidia-smi fails ({gpus[0] if gpus else 'no GPU listed'}); the driver"
            " is not loaded: reboot, or reinstall the driver",
        )
        return
    for name, driver, memory, *capability in gpus:
        about = f", compute capability {capability[0]}" if capability else ""
        report(
            version(driver) >= version(MIN_DRIVER),
            f"{name}, driver {driver}, {memory}{about}",
            f"CUDA {CUDA} needs driver {MIN_DRIVER} or newer: with this one torch"
            " sees no GPU. Update the driver, or rent a machine whose image has"
            f" CUDA {CUDA}",
        )


def check_compiler():
    # Triton's own choice (triton/runtime/build.py): $CC, else gcc, else clang.
    compiler = os.environ.get("CC") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        report(
            False,
            "C compiler",
            "none found (gcc or clang); Triton compiles small helper modules with"
            " one the first time vLLM runs. Install one: sudo apt-get install gcc",
        )
        return
    scheme = sysconfig.get_default_scheme()
    scheme = "posix_prefix" if scheme == "posix_local" else scheme
    include = Path(sysconfig.get_paths(scheme=scheme)["include"])
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder, "probe.c")
        source.write_text("#include <Python.h>\nint main(void) { return 0; }\n")
        try:
            run = subprocess.run(
                [compiler, "-fsyntax-only", f"-I{include}", str(source)],
                capture_output=True,
                text=True,
            )
        except OSError as error:
            report(False, f"C compiler {compiler}", f"it does not run ({error})")
            return
    if run.returncode == 0:
        report(True, f"C compiler {compiler} and the Python headers ({include})")
    elif not (include / "Python.h").is_file():
        minor = f"{sys.version_info.major}.{sys.version_info.minor}"
        report(
            False,
            f"Python headers ({include}/Python.h)",
            "missing; Triton needs them to build its helper modules. Install them:"
            f" sudo apt-get install python{minor}-dev (or python3-dev)",
        )
    else:
        error = (run.stderr.strip().splitlines() or ["no message"])[0]
        report(False, f"C compiler {compiler}", f"it cannot compile ({error})")


def check_disk(installed):
    cache = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    if cache.is_dir() and not os.access(cache, os.W_OK):
        report(True, f"model cache {cache} (read-only: the models are provided)")
        cache = Path.home()
    where = next(path for path in (cache, *cache.parents) if path.exists())
    free = shutil.disk_usage(where).free / 1024**3
    # Once vLLM is installed, what is left to come is the model and the compile caches.
    need = DISK_GIB // 2 if installed else DISK_GIB
    report(
        free >= need,
        f"{free:.0f} GiB free at {where}",
        f"the model and vLLM need about {need} GiB more. Free some space, or point"
        " HF_HOME at a larger disk (export HF_HOME=/path/on/it)",
    )


def check_installed(required):
    try:
        installed = importlib.metadata.version("vllm")
    except importlib.metadata.PackageNotFoundError:
        if required:
            report(False, "vLLM", f"not installed: pip install vllm=={VLLM}")
        else:
            print(f"--    vLLM is not installed yet (pip install vllm=={VLLM})")
        return
    report(
        installed.split("+")[0] == VLLM,
        f"vLLM {installed}",
        f"the labs are written for {VLLM}: pip install vllm=={VLLM}",
    )
    probe = (
        "import torch; print(torch.__version__, torch.version.cuda,"
        " torch.cuda.is_available(), torch.cuda.is_available()"
        " and torch.cuda.get_device_name(0), sep='|')"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if run.returncode != 0:
        error = (run.stderr.strip().splitlines() or ["no message"])[-1]
        report(False, "torch", f"it does not import ({error})")
        return
    torch, cuda, available, device = run.stdout.strip().split("|")
    if not (cuda or "").startswith(f"{CUDA}."):
        report(
            False,
            f"torch {torch} (CUDA {cuda})",
            f"vLLM {VLLM} needs torch built for CUDA {CUDA}: install vLLM into a"
            " fresh virtual environment",
        )
    else:
        report(
            available == "True",
            f"torch {torch} (CUDA {cuda}) sees "
            + (device if available == "True" else "no GPU"),
            f"the driver is too old for CUDA {CUDA} (see the driver line), or no GPU"
            " is visible to this process (CUDA_VISIBLE_DEVICES)",
        )


if __name__ == "__main__":
    installed = "--installed" in sys.argv[1:]
    check_python()
    check_driver()
    check_compiler()
    check_disk(installed)
    check_installed(required=installed)
    if problems:
        sys.exit(f"{len(problems)} to fix: see the FAIL lines, then run this again.")
    print("ready for the GPU labs")
