"""The GPU runner's pre-job hook (shown on the maintainers' page) lets through only the GPU-lab
workflow of main, started by push, schedule or workflow_dispatch."""

import subprocess

import pytest

from coursekit import ROOT

HOOK = ROOT / "snippets" / "maintainers" / "runner_pre_job.sh"
LAB = "course/repo/.github/workflows/gpu-labs.yml@refs/heads/main"


@pytest.mark.parametrize(("event", "repository", "workflow", "allowed"), [
    ("push", "course/repo", LAB, True),
    ("schedule", "course/repo", LAB, True),
    ("workflow_dispatch", "course/repo", LAB, True),
    ("pull_request", "course/repo", LAB, False),
    ("pull_request_target", "course/repo", LAB, False),
    ("workflow_dispatch", "course/repo", LAB.replace("refs/heads/main", "refs/heads/x"), False),
    ("push", "course/repo", "course/repo/.github/workflows/ci.yml@refs/heads/main", False),
    ("push", "fork/repo", LAB.replace("course/", "fork/"), False),
    ("", "course/repo", LAB, False),
])
def test_pre_job_hook(event, repository, workflow, allowed):
    env = {"PATH": "/usr/bin:/bin", "COURSE_REPOSITORY": "course/repo",
           "GITHUB_EVENT_NAME": event, "GITHUB_REPOSITORY": repository,
           "GITHUB_WORKFLOW_REF": workflow}
    result = subprocess.run(["bash", str(HOOK)], env=env, capture_output=True, text=True)
    assert (result.returncode == 0) is allowed, result.stderr
    assert ("refused" in result.stderr) is not allowed


def test_pre_job_hook_needs_the_repository_name():
    result = subprocess.run(["bash", str(HOOK)], env={"PATH": "/usr/bin:/bin"},
                            capture_output=True, text=True)
    assert result.returncode != 0 and "set COURSE_REPOSITORY" in result.stderr
