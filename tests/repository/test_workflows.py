"""The GitHub Actions workflows: valid against GitHub's schema, clean under zizmor, actions pinned
by commit, and the GPU workflow unreachable from pull requests, its steps all in .ci/gpu-job."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from coursekit import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
BIN = Path(sys.executable).parent
PINNED_USE = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$")


def schema_check(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [BIN / "check-jsonschema", "--builtin-schema", "vendor.github-workflows",
         *sorted(folder.glob("*.yml"))], capture_output=True, text=True)


def zizmor(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([BIN / "zizmor", "--offline", "--no-progress",
                           *sorted(folder.glob("*.yml"))], capture_output=True, text=True)


def load(path: Path) -> dict:
    workflow = yaml.safe_load(path.read_text("utf-8"))
    workflow["on"] = workflow.pop(True, workflow.get("on"))  # YAML 1.1 reads `on` as true
    return workflow


def uses_lines(folder: Path) -> list[str]:
    return [line.split("uses:", 1)[1].strip() for path in sorted(folder.glob("*.yml"))
            for line in path.read_text("utf-8").splitlines() if "uses:" in line]


def gpu_problems(workflow: dict) -> list[str]:
    problems = []
    if set(workflow["on"]) != {"push", "schedule", "workflow_dispatch"}:
        problems.append(f"triggers are {sorted(workflow['on'])}")
    if workflow.get("permissions") != {}:
        problems.append("top-level permissions are not {}")
    for name, job in workflow["jobs"].items():
        if job.get("runs-on") != ["self-hosted", "linux", "x64", "rtx4090"]:
            problems.append(f"job {name} runs on {job.get('runs-on')}")
        if "timeout-minutes" not in job:
            problems.append(f"job {name} has no timeout")
        steps = job["steps"]
        runs = [step.get("run", "") for step in steps]
        if "bash .ci/gpu-job" not in [run.strip() for run in runs]:
            problems.append(f"job {name} does not run .ci/gpu-job, which holds the job's steps")
        if any(word in run for run in runs for word in ("pytest", "pip install", ".ci/setup")):
            problems.append(f"job {name} has steps of its own besides .ci/gpu-job (which CI's"
                            " dry run exercises)")
        if not any("nvidia-smi --query-compute-apps" in step.get("run", "")
                   and step.get("if") == "always()" for step in steps):
            problems.append(f"job {name} does not always kill its GPU processes")
        if not any(step.get("uses", "").startswith("actions/upload-artifact@")
                   and step.get("if") == "always()" for step in steps):
            problems.append(f"job {name} does not always upload vLLM's logs")
    if not workflow.get("concurrency", {}).get("group"):
        problems.append("no concurrency group: two jobs could share the GPU")
    return problems


def test_workflows_match_githubs_schema():
    result = schema_check(WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_finds_nothing():
    result = zizmor(WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actions_are_pinned_by_commit_with_their_version():
    assert uses_lines(WORKFLOWS)
    assert [use for use in uses_lines(WORKFLOWS) if not PINNED_USE.match(use)] == []


def test_gpu_workflow_keeps_its_boundaries():
    assert gpu_problems(load(WORKFLOWS / "gpu-labs.yml")) == []


@pytest.fixture
def workflows_copy(tmp_path):
    copy = tmp_path / "workflows"
    shutil.copytree(WORKFLOWS, copy)
    return copy


def test_checks_fail_on_broken_workflows(workflows_copy, edit):
    gpu = workflows_copy / "gpu-labs.yml"
    edit(gpu, "  schedule:\n", "  pull_request_target:\n  schedule:\n")
    edit(gpu, "    timeout-minutes: 60\n", "")
    edit(gpu, "run: bash .ci/gpu-job", "run: .venv/bin/python -m pytest -m gpu tests")
    assert gpu_problems(load(gpu)) == [
        "triggers are ['pull_request_target', 'push', 'schedule', 'workflow_dispatch']",
        "job lab has no timeout",
        "job lab does not run .ci/gpu-job, which holds the job's steps",
        "job lab has steps of its own besides .ci/gpu-job (which CI's dry run exercises)",
    ]
    ci = workflows_copy / "ci.yml"
    edit(ci, "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1",
              "actions/checkout@v7")
    assert not PINNED_USE.match(uses_lines(workflows_copy)[0])
    edit(ci, "actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f # v7.0.0",
              "someone/upload-artifact@main")
    result = zizmor(workflows_copy)
    assert result.returncode != 0
    assert "dangerous-triggers" in result.stdout and "unpinned-uses" in result.stdout
    edit(ci, "    runs-on: ubuntu-24.04", "    runs_on: ubuntu-24.04")
    assert schema_check(workflows_copy).returncode != 0
