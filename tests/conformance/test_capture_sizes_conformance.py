"""Lesson 8's startup_budget.capture_sizes gives the CUDA graph capture sizes vLLM 0.26.0's
own VllmConfig._set_cudagraph_sizes gives (run on the CPU by vllm_capture_sizes.py in the
conformance venv), on hand-picked edges and seeded random settings: max_num_seqs,
max_num_batched_tokens, speculative tokens, enforce-eager and the performance mode."""

import json
import random
import subprocess

import pytest
from startup_budget import PERFORMANCE_MODES, capture_sizes

from coursekit import ROOT

PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
DRIVER = ROOT / "tests" / "conformance" / "vllm_capture_sizes.py"
RANDOM_SETTINGS = 200


def setting(seqs, tokens, spec=0, eager=False, mode="balanced") -> dict:
    return {"max_num_seqs": seqs, "max_num_batched_tokens": tokens,
            "num_speculative_tokens": spec, "enforce_eager": eager, "performance_mode": mode}


EDGES = [
    setting(256, 8192), setting(256, 2048), setting(16, 8192), setting(1, 1),
    setting(3, 5000), setting(4, 7), setting(64, 100), setting(128, 256), setting(127, 255),
    setting(200, 300), setting(256, 512), setting(256, 513), setting(1024, 16384),
    setting(255, 8192), setting(256, 8192, eager=True), setting(100, 8192, spec=1),
    setting(256, 8192, spec=3), setting(5, 6, spec=2), setting(64, 8192, mode="interactivity"),
    setting(8, 20, mode="interactivity"), setting(256, 8192, mode="throughput"),
]


def random_settings(seed: int = 8) -> list[dict]:
    rng = random.Random(seed)
    found = []
    for _ in range(RANDOM_SETTINGS):
        seqs = rng.choice([rng.randint(1, 32), rng.randint(1, 600), 2 ** rng.randint(0, 10)])
        tokens = rng.choice([seqs, rng.randint(seqs, seqs + 600), rng.randint(seqs, 16384)])
        found.append(setting(seqs, tokens, rng.choice([0, 0, 0, 1, 2, 4]),
                             rng.random() < 0.1, rng.choice(PERFORMANCE_MODES)))
    return found


SETTINGS = EDGES + random_settings()


def lesson(s: dict) -> list[int]:
    return capture_sizes(s["max_num_seqs"], s["max_num_batched_tokens"],
                         s["num_speculative_tokens"], s["enforce_eager"], s["performance_mode"])


@pytest.fixture(scope="module")
def vllm_sizes():
    if not PYTHON.exists():
        pytest.fail(f"no conformance venv at {PYTHON.parent.parent}: run .ci/setup (npm test runs"
                    " it) to install PyTorch's CPU build and the pinned vLLM wheel there")
    result = subprocess.run([PYTHON, DRIVER], input=json.dumps(SETTINGS), capture_output=True,
                            text=True, cwd=DRIVER.parent)
    if result.returncode:
        pytest.fail(f"vLLM's config code failed on the settings:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout)


def test_every_setting_gives_vllms_sizes(vllm_sizes):
    mismatches = [f"{s}:\n  lesson 8: {lesson(s)}\n  vLLM:     {theirs}"
                  for s, theirs in zip(SETTINGS, vllm_sizes, strict=True) if lesson(s) != theirs]
    assert not mismatches, (f"{len(mismatches)} of {len(SETTINGS)} settings differ from vLLM;"
                            " the first ones:\n" + "\n".join(mismatches[:3]))


def test_the_settings_reach_every_rule(vllm_sizes):
    """The comparison means something only where each rule of the list decides: step 16
    above 256, a full step appended off-stride, speculative steps, eager, interactivity."""
    assert any(len(theirs) > 40 for theirs in vllm_sizes)
    assert sum(s["max_num_batched_tokens"] in theirs and s["max_num_batched_tokens"] % 8
               for s, theirs in zip(SETTINGS, vllm_sizes)) >= 5
    assert sum(theirs == [] for theirs in vllm_sizes) >= 5
    assert sum(s["num_speculative_tokens"] > 0 and theirs[-1] > 2 * s["max_num_seqs"]
               for s, theirs in zip(SETTINGS, vllm_sizes) if theirs) >= 5
    assert sum(theirs[:3] == [1, 2, 3] for theirs in vllm_sizes) >= 5
