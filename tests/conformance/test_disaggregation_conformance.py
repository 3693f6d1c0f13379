"""Lesson 12's rules of a request whose KV another instance computes
(snippets/disaggregation/remote_kv.py) against vLLM 0.26.0's own Scheduler with the
scheduler half of real connectors from the wheel, NixlConnector and ExampleConnector,
built by KVConnectorFactory from a KVTransferConfig and run on the CPU
(disaggregation_vllm_side.py, once per test module). Compared at every engine step: the
tokens scheduled per request, each request's status (WAITING_FOR_REMOTE_KVS, RUNNING,
FINISHED_LENGTH_CAPPED while a prefill instance holds the blocks) and num_computed_tokens,
the free blocks; and the kv_transfer_params a prefill instance returns. Also what
KVTransferConfig accepts.

What runs for real: vLLM's scheduler, KV cache manager and the connectors' scheduler
halves. What is played: the model runner (every request that reaches the end of its known
tokens samples a token) and the connectors' worker halves, which move KV between GPUs
(NixlConnector through the NIXL library, not installed here and not usable without a GPU)
or between a GPU and files (ExampleConnector): the test says at which step the worker
reports a request's KV received or sent, as vLLM's KVConnectorOutput carries it.

What is not compared: requests competing for one token budget or for blocks (each case
gives both to spare, so every request runs as it would alone: remote_kv.py models one
request; lesson 3's scheduler, compared with vLLM's in test_scheduler_conformance.py, is
what shares a budget), async scheduling (the sync EngineCore.step loop runs here), and a
load that fails (kv_load_failure_policy).
"""

import random
from pathlib import Path

import pytest
from block_pool import blocks_for
from prefix_cache import block_hashes
from remote_kv import check_kv_transfer_config, consumer_steps, producer_steps

from coursekit.vllm_source import run_in_conformance_venv

DRIVER = Path(__file__).with_name("disaggregation_vllm_side.py")
BLOCK_SIZE = 16
NUM_GPU_BLOCKS = 400
RANDOM_CASES = 120  # per kind
CONFIGS = [(c, r) for c in ("NixlConnector", "ExampleConnector", None)
           for r in ("kv_producer", "kv_consumer", "kv_both", None, "decode")]


def local_hit(prompt: list[int], warm: list[list[int]]) -> int:
    """Lesson 5's rule: the longest run of cached full blocks from the first token,
    below the prompt's last token (KVCacheManager.get_computed_blocks)."""
    best = 0
    mine = block_hashes(prompt[:-1], BLOCK_SIZE)
    for other in warm:
        theirs = block_hashes(other, BLOCK_SIZE)
        same = 0
        while same < min(len(mine), len(theirs)) and mine[same] == theirs[same]:
            same += 1
        best = max(best, same * BLOCK_SIZE)
    return best


def consumer_case(rng: random.Random, connector: str, n: int) -> dict:
    warm, requests = [], []
    for i in range(n):
        start = 1000 * (i + 1)
        length = rng.randint(2, 300)
        prompt = list(range(start, start + length))
        if connector == "NixlConnector" and rng.random() < 0.5:
            # its first blocks ran on this instance before (a turn of the same chat)
            shared = rng.randint(1, length)
            warm.append(prompt[:shared] + [7] * rng.randint(0, 20))
        arrival = rng.randint(0, 6)
        request = {"id": f"r{i}", "prompt": prompt, "arrival": arrival,
                   "max_tokens": rng.randint(1, 5)}
        if connector == "NixlConnector":  # the step whose output reports it received
            request["done_step"] = arrival + rng.randint(0, 4)
        requests.append(request)
    case = {"connector": connector, "role": "kv_consumer", "block_size": BLOCK_SIZE,
            "num_gpu_blocks": NUM_GPU_BLOCKS, "budget": 4096, "warm": warm,
            "requests": requests}
    if connector == "ExampleConnector":  # which prompts a producer saved
        case["stored"] = [r["prompt"] for r in requests if rng.random() < 0.7]
    return case


def producer_case(rng: random.Random, n: int) -> dict:
    chunk = rng.choice([16, 64, 2048])  # long_prefill_token_threshold
    requests = []
    for i in range(n):
        start = 1000 * (i + 1)
        prompt = list(range(start, start + rng.randint(2, 300)))
        arrival = rng.randint(0, 4)
        chunks = -(-len(prompt) // chunk)
        requests.append({"id": f"r{i}", "prompt": prompt, "arrival": arrival,
                         "max_tokens": 1,
                         "done_step": arrival + chunks - 1 + rng.randint(0, 4)})
    return {"connector": "NixlConnector", "role": "kv_producer", "block_size": BLOCK_SIZE,
            "num_gpu_blocks": NUM_GPU_BLOCKS, "budget": 4096, "chunk": chunk,
            "requests": requests}


def edge_cases() -> list[dict]:
    """A prompt one token past a block, a prompt of exactly two blocks, one that hits
    its whole prompt but the last token locally, a KV that arrives in the step it was
    asked for, and a saved prompt too short for ExampleConnector to load anything."""
    p33, p32 = list(range(100, 133)), list(range(200, 232))
    base = {"block_size": BLOCK_SIZE, "num_gpu_blocks": NUM_GPU_BLOCKS, "budget": 4096}
    nixl = {**base, "connector": "NixlConnector", "role": "kv_consumer"}
    return [
        {**nixl, "warm": [], "requests": [
            {"id": "a", "prompt": p33, "arrival": 0, "max_tokens": 2, "done_step": 0},
            {"id": "b", "prompt": p32, "arrival": 1, "max_tokens": 3, "done_step": 3}]},
        {**nixl, "warm": [p33], "requests": [
            {"id": "a", "prompt": p33, "arrival": 0, "max_tokens": 2, "done_step": 2}]},
        {**base, "connector": "ExampleConnector", "role": "kv_consumer", "warm": [],
         "stored": [p33, [5, 6]], "requests": [
            {"id": "a", "prompt": p33, "arrival": 0, "max_tokens": 2},
            {"id": "b", "prompt": [5, 6], "arrival": 0, "max_tokens": 2}]},
    ]


def cases() -> list[dict]:
    rng = random.Random(12)
    made = edge_cases()
    for _ in range(RANDOM_CASES):
        made.append(consumer_case(rng, "NixlConnector", rng.randint(1, 4)))
        made.append(consumer_case(rng, "ExampleConnector", rng.randint(1, 4)))
        made.append(producer_case(rng, rng.randint(1, 4)))
    return made


def model_steps(case: dict) -> tuple[list[dict], dict]:
    """remote_kv's steps of each request, merged into engine steps as the driver
    records vLLM's, and the kv_transfer_params of each request."""
    runs, params = {}, {}
    for r in case["requests"]:
        if case["role"] == "kv_producer":
            runs[r["id"]], params[r["id"]] = producer_steps(
                len(r["prompt"]), r["done_step"], case["chunk"], r["arrival"], BLOCK_SIZE)
        else:
            stored = case["connector"] == "NixlConnector" or r["prompt"] in case["stored"]
            connector = case["connector"] if stored else "NixlConnector"
            hit = local_hit(r["prompt"], case["warm"])
            steps = (consumer_steps(connector, len(r["prompt"]), r["max_tokens"], hit,
                                    r["arrival"], r.get("done_step"), BLOCK_SIZE)
                     if stored else plain_steps(r, hit))
            runs[r["id"]], params[r["id"]] = steps, None
    usable = NUM_GPU_BLOCKS - 1  # block 0 is the null block
    merged = []
    for t in range(max(len(s) for s in runs.values())):
        now = {i: s[t] for i, s in runs.items() if t < len(s)}
        merged.append({
            "scheduled": {i: s["scheduled"] for i, s in now.items() if s["scheduled"]},
            "status": {i: s["status"] for i, s in now.items() if s["status"]},
            "computed": {i: s["computed"] for i, s in now.items() if s["status"]},
            "free_blocks": usable - sum(s["blocks"] for s in now.values()),
        })
    return merged, params


def plain_steps(r: dict, hit: int) -> list[dict]:
    """A request the connector has nothing for (ExampleConnector, prompt not saved):
    an ordinary prefill after its local hit, then decodes."""
    length = len(r["prompt"])
    steps = [{"scheduled": 0, "status": None, "computed": 0, "blocks": 0}] * r["arrival"]
    computed = hit
    for k in range(r["max_tokens"]):
        new = length + k - computed
        computed += new
        done = k + 1 == r["max_tokens"]
        steps.append({"scheduled": new, "status": None if done else "RUNNING",
                      "computed": None if done else computed,
                      "blocks": 0 if done else blocks_for(computed, BLOCK_SIZE)})
    return steps


@pytest.fixture(scope="module")
def vllm_results() -> list:
    given = cases() + [
        {"kv_connector": c, "kv_role": r} for c, r in CONFIGS]
    return run_in_conformance_venv(DRIVER, given)


@pytest.mark.parametrize("index", range(len(cases())))
def test_request_with_remote_kv_steps_as_vllm(vllm_results, index):
    case = cases()[index]
    theirs = vllm_results[index]
    assert "failed" not in theirs, theirs.get("failed")
    ours, params = model_steps(case)
    steps = theirs["steps"]
    for t, (mine, vllm) in enumerate(zip(ours, steps)):
        assert mine == vllm, f"step {t} of {case['connector']} {case['role']}: {case}"
    # vLLM's loop may run one more, empty, step to report the last finish
    for vllm in steps[len(ours):]:
        assert not vllm["scheduled"] and not vllm["status"], vllm
    assert len(steps) >= len(ours)
    if case["role"] == "kv_producer":
        assert theirs["params"] == params


@pytest.mark.parametrize("connector, role", CONFIGS)
def test_kv_transfer_config_as_vllm(vllm_results, connector, role):
    theirs = vllm_results[len(cases()) + CONFIGS.index((connector, role))]
    try:
        ours = check_kv_transfer_config(connector, role)
    except ValueError:
        ours = {"error": "ValidationError"}  # pydantic wraps vLLM's ValueError
    assert ours == theirs
