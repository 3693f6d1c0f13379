"""vLLM's side of the conformance tests, run once per test run: one process of the
conformance venv (vllm_side.py) imports torch and vLLM once (some 5 CPU seconds) and runs
the three drivers on the inputs of the three test modules; the first test that needs it
starts it, and pytest-xdist's other workers wait for its result (once_per_run)."""

from pathlib import Path

import pytest
import spec_decode_workloads
from capture_settings import SETTINGS
from scheduler_workloads import as_json, workloads

from coursekit.vllm_source import run_in_conformance_venv

DRIVER = Path(__file__).with_name("vllm_side.py")
FAILURES = {
    "scheduler": "vLLM's scheduler failed to run the workloads",
    "spec_decode": "vLLM's scheduler and proposer failed",
    "capture_sizes": "vLLM's config code failed on the settings",
}


def inputs() -> dict:
    """What each driver reads: vllm_trace.py, spec_trace.py, vllm_capture_sizes.py."""
    return {
        "scheduler": [as_json(*workload) for workload in workloads().values()],
        "spec_decode": {"runs": spec_decode_workloads.WORKLOADS, "proposals": [
            {"tokens": t, "min_n": a, "max_n": b, "k": k, "max_model_len": m}
            for t, a, b, k, m in spec_decode_workloads.SEQUENCES]},
        "capture_sizes": SETTINGS,
    }


def run_vllm_side() -> dict:
    try:
        return run_in_conformance_venv(DRIVER, inputs())
    except RuntimeError as failure:  # the process itself failed: every part did
        return {part: {"error": str(failure)} for part in FAILURES}


@pytest.fixture(scope="session")
def vllm_outputs(once_per_run) -> dict:
    return once_per_run("vllm-side", run_vllm_side)


def vllm_output(outputs: dict, part: str):
    if "error" in outputs[part]:
        pytest.fail(f"{FAILURES[part]}:\n{outputs[part]['error'][-3000:]}")
    return outputs[part]["result"]


@pytest.fixture(scope="session")
def vllm_traces(vllm_outputs) -> dict:
    """vLLM's scheduler trace of each of scheduler_workloads' workloads, by name."""
    return dict(zip(workloads(), vllm_output(vllm_outputs, "scheduler")))


@pytest.fixture(scope="session")
def vllm_spec_decode(vllm_outputs) -> dict:
    """vLLM's traces of spec_decode_workloads.WORKLOADS ("runs") and its proposals for
    .SEQUENCES ("proposals")."""
    return vllm_output(vllm_outputs, "spec_decode")


@pytest.fixture(scope="session")
def vllm_sizes(vllm_outputs) -> list:
    """vLLM's capture sizes for each of capture_settings.SETTINGS."""
    return vllm_output(vllm_outputs, "capture_sizes")
