"""Lesson 7's n-gram proposer and engine loop with speculation do what vLLM 0.26.0 does: its
own NgramProposer (numba), its matching function and its Scheduler, imported from the pinned
wheel in the conformance venv and run on the CPU by tests/conformance/spec_trace.py (the
vllm_spec_decode fixture of conftest.py), on the workloads and sequences of
spec_decode_workloads.py.

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

from dataclasses import asdict

from ngram import propose_ngram
from spec_decode_workloads import MAX_MODEL_LEN, SEQUENCES, WORKLOADS
from spec_scheduler import Request, run


def ours(workload: dict) -> dict:
    config = workload["config"]
    requests = [Request(r["request_id"], r["prompt"], r["answer"], r["max_tokens"])
                for r in workload["requests"]]
    steps, stats = run(requests, config["num_spec_tokens"], config["prompt_lookup_min"],
                       config["prompt_lookup_max"], config["max_num_batched_tokens"],
                       config["block_size"], config["num_gpu_blocks"],
                       config.get("max_model_len", MAX_MODEL_LEN))
    return {"steps": [asdict(step) for step in steps], "stats": asdict(stats)}


def test_the_ngram_rule_matches_vllm(vllm_spec_decode):
    wrong = [(case, vllm) for case, vllm in zip(SEQUENCES, vllm_spec_decode["proposals"])
             if propose_ngram(*case) != vllm]
    assert not wrong, (f"{len(wrong)} of {len(SEQUENCES)} sequences propose other drafts;"
                       f" the first (tokens, min, max, k, max_model_len), vLLM's: {wrong[:3]}")


def test_every_step_matches_vllm(vllm_spec_decode):
    mismatches = []
    for number, (workload, theirs) in enumerate(zip(WORKLOADS, vllm_spec_decode["runs"])):
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


def test_the_workloads_reach_what_they_are_meant_to(vllm_spec_decode):
    """Drafts accepted in full, rejected at once, cut by the token budget: vLLM's traces."""
    steps = [s for run_ in vllm_spec_decode["runs"] for s in run_["steps"]]
    full = sum(len(s["drafts"][r]) == n for s in steps for r, n in s["accepted"].items())
    none = sum(n == 0 for s in steps for n in s["accepted"].values())
    assert full >= 50 and none >= 50, (full, none)
    budget_cut = 0
    for workload, run_ in zip(WORKLOADS, vllm_spec_decode["runs"]):
        k = workload["config"]["num_spec_tokens"]
        budget_cut += sum(0 < len(d) < k and s["scheduled"][r] == len(d) + 1
                          and sum(s["scheduled"].values())
                          == workload["config"]["max_num_batched_tokens"]
                          for s in run_["steps"] for r, d in s["drafts"].items())
    assert budget_cut >= 5, budget_cut
