"""The files set-up reads name packages and paths inside the clone, never a path of one machine:
a lock line that named a wheel in /tmp once passed every CI run here and failed every fresh machine."""

import re
import subprocess

from coursekit import ROOT

# What .ci/setup, .ci/run, .ci/gpu-job and the workflows read or are: the lock files, the npm
# manifests, the Python projects, the CI scripts and the workflows.
SETUP_FILE = re.compile(r"(^|/)([^/]*requirements[^/]*\.(txt|in)|package(-lock)?\.json|pyproject\.toml)$"
                        r"|^\.ci/|^\.github/workflows/")
# A file URL or file: path that leaves the clone, a named file or folder under /tmp,
# /root, /home or /Users, a home folder (~/), or a user cache. ${TMPDIR:-/tmp} and
# $HOME/.cache name no file: they are where a fresh machine writes.
MACHINE_PATH = re.compile(r"file:(/|~|\.\.)|(?<![\w.$-])/(tmp|root|home|Users)/[\w.-]|~/|\.cache/")


def setup_files() -> list[str]:
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [name for name in tracked.stdout.splitlines() if SETUP_FILE.search(name)]


def machine_paths(name: str, text: str) -> list[str]:
    return [f"{name}:{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1)
            if MACHINE_PATH.search(line)]


def test_setup_files_name_no_path_of_this_machine():
    files = setup_files()
    assert {"requirements.txt", "tests/conformance/requirements.txt", "package-lock.json",
            ".ci/setup", ".ci/run", ".github/workflows/ci.yml", "pyproject.toml"} <= set(files)
    found = [hit for name in files for hit in machine_paths(name, (ROOT / name).read_text("utf-8"))]
    assert not found, "a fresh machine has none of these paths:\n" + "\n".join(found)


def test_a_lock_line_naming_a_wheel_in_tmp_is_caught():
    lock = ("numpy==2.4.6 \\\n    --hash=sha256:00\n"
            "vllm @ file:///tmp/whl/vllm-0.26.0-cp38-abi3-manylinux_2_28_x86_64.whl#sha256=ad \\\n")
    assert [hit.split(":")[1] for hit in machine_paths("requirements.txt", lock)] == ["3"]
    for line in ['"resolved": "file:../katex-0.19.1.tgz"', "find-links = /root/wheels",
                 "cp /home/me/x.whl .", "pip install ~/Downloads/x.whl", "PIP_CACHE_DIR=/var/.cache/pip",
                 "--find-links /tmp/whl"]:
        assert machine_paths("f", line), line
    for line in ['default_logs="${TMPDIR:-/tmp}/gpu-job-dry-run"', 'venv="${XDG_CACHE_HOME:-$HOME/.cache}/x"',
                 "# the lock file: hashed", "torch==2.13.0", '"resolved": "https://registry.npmjs.org/x"',
                 '"x": "file:./vendor/x.tgz"']:
        assert not machine_paths("f", line), line
