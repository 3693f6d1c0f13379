"""Lesson 7's n-gram proposer and engine loop with speculation do what vLLM 0.26.0 does: its
own NgramProposer (numba), its matching function and its Scheduler, imported from the pinned
wheel in the conformance venv and run on the CPU by tests/conformance/spec_trace.py.

Compared, at every step of every generation: the tokens scheduled per request, the draft
tokens scheduled for verification, how many were accepted, the tokens each request's output
gained, the KV blocks each running request holds, who finished; and at the end the
spec-decode counters (drafts, draft tokens, accepted tokens, both per position). The n-gram
matching rule is compared on its own on hand-picked and seeded random token sequences.

What is not run: vLLM's greedy verification (vllm/v1/sample/rejection_sampler.py:
rejection_greedy_sample_kernel) is a Triton kernel, and Triton does not run without a GPU
driver (vllm/triton_utils/importing.py leaves placeholders), so spec_trace.py plays the
verification by the kernel's rule and writes its output rows as the kernel does (tokens,
then PLACEHOLDER_TOKEN_ID), which vLLM's own RejectionSampler.parse_output turns into the
tokens the scheduler gets; the lesson's spec_decode.verify is checked against that rule
by the hand-picked cases of tests/lessons/speculative-decoding, not against the kernel.
"""

import json
import random
import subprocess
from dataclasses import asdict

import pytest
from ngram import propose_ngram
from spec_scheduler import Request, run

from coursekit import ROOT

PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
DRIVER = ROOT / "tests" / "conformance" / "spec_trace.py"
MAX_MODEL_LEN = 2048  # spec_trace.py's, unless a workload sets its own

HAND_PICKED_SEQUENCES = [
    # (tokens, min_n, max_n, k, max_model_len)
    ([0, 1, 2, 3, 0, 4, 5, 0, 1, 2, 3, 0], 1, 3, 4, MAX_MODEL_LEN),
    ([0, 1, 2, 3, 0, 4, 5, 0, 1, 2, 3, 0], 1, 1, 3, MAX_MODEL_LEN),  # earliest wins
    ([7, 7, 7, 7, 7], 1, 5, 4, MAX_MODEL_LEN),  # overlapping matches
    ([1, 2, 3], 5, 5, 3, MAX_MODEL_LEN),  # shorter than min_n
    ([1, 2, 3, 1, 2, 3], 2, 2, 5, MAX_MODEL_LEN),  # fewer tokens follow than k
    ([1, 2, 3, 1, 2], 2, 2, 5, 6),  # max_model_len caps k
    ([1, 2, 3, 1, 2], 2, 2, 5, 5),  # no room left at all
    ([5, 6, 9, 5, 6], 3, 4, 2, MAX_MODEL_LEN),  # match shorter than min_n
]


def random_sequences(count: int, seed: int) -> list[tuple]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        vocab = rng.randint(2, 6)
        tokens = [rng.randrange(vocab) for _ in range(rng.randint(1, 60))]
        min_n = rng.randint(1, 4)
        cases.append((tokens, min_n, rng.randint(min_n, 6), rng.randint(1, 8),
                      rng.choice([MAX_MODEL_LEN, len(tokens) + rng.randint(0, 3)])))
    return cases


def answer_for(rng: random.Random, prompt: list[int], length: int) -> list[int]:
    """A greedy answer that partly repeats its prompt, so that drafts are accepted."""
    answer = []
    while len(answer) < length:
        if rng.random() < 0.6:
            start = rng.randrange(len(prompt))
            answer += prompt[start : start + rng.randint(1, 12)]
        else:
            answer.append(rng.randrange(8))
    return answer[:length]


def random_workloads(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    workloads = []
    for _ in range(count):
        k = rng.randint(1, 5)
        min_n = rng.randint(1, 3)
        requests = []
        for i in range(rng.randint(1, 4)):
            # A first token of its own: no prefix cache hit between requests.
            prompt = [100 + i] + [rng.randrange(8) for _ in range(rng.randint(4, 40))]
            max_tokens = rng.randint(1, 40)
            requests.append({"request_id": f"r{i}", "prompt": prompt,
                             "answer": answer_for(rng, prompt, max_tokens + k),
                             "max_tokens": max_tokens})
        workloads.append({"config": {
            "num_spec_tokens": k, "prompt_lookup_min": min_n,
            "prompt_lookup_max": rng.randint(min_n, 5),
            "max_num_batched_tokens": rng.choice([8192, 8192, 12, 30]),
            "block_size": rng.choice([16, 4]), "num_gpu_blocks": 400,
        }, "requests": requests})
    return workloads


HAND_PICKED_WORKLOADS = [
    {"config": {"num_spec_tokens": 3, "prompt_lookup_min": 2, "prompt_lookup_max": 3,
                "max_num_batched_tokens": 8192, "block_size": 16, "num_gpu_blocks": 100},
     "requests": [{"request_id": "a", "prompt": [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3],
                   "answer": [4, 5, 6, 7, 8, 9, 9, 9, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0],
                   "max_tokens": 16}]},
    # A budget of 6 tokens: the second request's drafts are cut to what fits.
    {"config": {"num_spec_tokens": 4, "prompt_lookup_min": 1, "prompt_lookup_max": 2,
                "max_num_batched_tokens": 6, "block_size": 4, "num_gpu_blocks": 100},
     "requests": [{"request_id": "a", "prompt": [100, 1, 2, 1, 2], "answer": [1, 2] * 8,
                   "max_tokens": 10},
                  {"request_id": "b", "prompt": [101, 3, 4, 3, 4], "answer": [3, 4] * 8,
                   "max_tokens": 10}]},
    # max_model_len 20 stops the request at 11 of its 15 tokens, in a verification step.
    {"config": {"num_spec_tokens": 3, "prompt_lookup_min": 1, "prompt_lookup_max": 2,
                "max_num_batched_tokens": 8192, "block_size": 4, "num_gpu_blocks": 100,
                "max_model_len": 20},
     "requests": [{"request_id": "a", "prompt": [100, 1, 2, 1, 2, 1, 2, 1, 2],
                   "answer": [1, 2] * 10, "max_tokens": 15}]},
]
WORKLOADS = HAND_PICKED_WORKLOADS + random_workloads(120, seed=7)
SEQUENCES = HAND_PICKED_SEQUENCES + random_sequences(400, seed=7)


def ours(workload: dict) -> dict:
    config = workload["config"]
    requests = [Request(r["request_id"], r["prompt"], r["answer"], r["max_tokens"])
                for r in workload["requests"]]
    steps, stats = run(requests, config["num_spec_tokens"], config["prompt_lookup_min"],
                       config["prompt_lookup_max"], config["max_num_batched_tokens"],
                       config["block_size"], config["num_gpu_blocks"],
                       config.get("max_model_len", MAX_MODEL_LEN))
    return {"steps": [asdict(step) for step in steps], "stats": asdict(stats)}


@pytest.fixture(scope="module")
def vllm_side():
    if not PYTHON.exists():
        pytest.fail(f"no conformance venv at {PYTHON.parent.parent}: run .ci/setup (npm test"
                    " runs it) to install PyTorch's CPU build and the pinned vLLM wheel there")
    work = {"runs": WORKLOADS, "proposals": [
        {"tokens": t, "min_n": a, "max_n": b, "k": k, "max_model_len": m}
        for t, a, b, k, m in SEQUENCES]}
    result = subprocess.run([PYTHON, DRIVER], input=json.dumps(work), capture_output=True,
                            text=True)
    if result.returncode:
        pytest.fail(f"vLLM's scheduler and proposer failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout)


def test_the_ngram_rule_matches_vllm(vllm_side):
    wrong = [(case, vllm) for case, vllm in zip(SEQUENCES, vllm_side["proposals"])
             if propose_ngram(*case) != vllm]
    assert not wrong, (f"{len(wrong)} of {len(SEQUENCES)} sequences propose other drafts;"
                       f" the first (tokens, min, max, k, max_model_len), vLLM's: {wrong[:3]}")


def test_every_step_matches_vllm(vllm_side):
    mismatches = []
    for number, (workload, theirs) in enumerate(zip(WORKLOADS, vllm_side["runs"])):
        mine = ours(workload)
        if mine["stats"] != theirs["stats"]:
            mismatches.append(f"workload {number} counters: {mine['stats']} vs vLLM"
                              f" {theirs['stats']}")
        for index, (a, b) in enumerate(zip(mine["steps"], theirs["steps"])):
            if a != b:
                mismatches.append(f"workload {number} step {index}:\n  lesson 7: {a}\n"
                                  f"  vLLM:     {b}")
                break
        if len(mine["steps"]) != len(theirs["steps"]):
            mismatches.append(f"workload {number}: {len(mine['steps'])} steps, vLLM"
                              f" {len(theirs['steps'])}")
    assert not mismatches, "\n".join(mismatches[:4])


def test_the_workloads_reach_what_they_are_meant_to(vllm_side):
    """Drafts accepted in full, rejected at once, cut by the token budget: vLLM's traces."""
    steps = [s for run_ in vllm_side["runs"] for s in run_["steps"]]
    full = sum(len(s["drafts"][r]) == n for s in steps for r, n in s["accepted"].items())
    none = sum(n == 0 for s in steps for n in s["accepted"].values())
    assert full >= 50 and none >= 50, (full, none)
    budget_cut = 0
    for workload, run_ in zip(WORKLOADS, vllm_side["runs"]):
        k = workload["config"]["num_spec_tokens"]
        budget_cut += sum(0 < len(d) < k and s["scheduled"][r] == len(d) + 1
                          and sum(s["scheduled"].values())
                          == workload["config"]["max_num_batched_tokens"]
                          for s in run_["steps"] for r, d in s["drafts"].items())
    assert budget_cut >= 5, budget_cut
