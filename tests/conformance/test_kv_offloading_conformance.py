"""Lesson 9's CPU tier (snippets/kv-offloading/offload.py: CPUOffloadingManager, LRUPolicy,
ARCPolicy) against vLLM 0.26.0's own CPUOffloadingManager with its LRUCachePolicy and
ARCCachePolicy, imported from the wheel and run on the CPU (kv_offloading_vllm_side.py, once
per test module): the same calls, on hand-picked and seeded random key sequences, must return
the same thing (every lookup result, the CPU block ids of every load, every store decision and
eviction, the events and the stats) and leave the same state (the policy's lists in order,
ARC's target, the free block ids and the counters).

The calls come from two sources: the protocol as offload.OffloadedCache drives it for a
workload of documents revisited (recorded here, then replayed on vLLM's manager), and random
sequences of every call the manager offers, kept valid (a load only of readable blocks, a
completion only of what was prepared) by asking the lesson's manager, as vLLM's scheduler
does. What is not compared: the scheduler side of OffloadingConnector with vLLM's real
Scheduler. Building it needs a KVCacheConfig and the connector's worker-side metadata round
trip (OffloadingWorkerMetadata from a worker that copies tensors between GPU and pinned CPU
memory: CPUOffloadingSpec.get_worker refuses any platform but CUDA-alike and XPU), so the
order of the calls the lesson's OffloadedCache makes is checked against the source by reading
(each rule cites OffloadingConnectorScheduler), not by running it.
"""

import random
from pathlib import Path

import pytest
from offload import HIT, ARCPolicy, CPUOffloadingManager, OffloadedCache
from prefix_cache import sha256

from coursekit.vllm_source import run_in_conformance_venv

DRIVER = Path(__file__).with_name("kv_offloading_vllm_side.py")
RANDOM_CASES = 300  # per policy


def key(i: int) -> bytes:
    return sha256(("block", i))


def state(manager: CPUOffloadingManager) -> dict:
    """What kv_offloading_vllm_side.state reads of vLLM's manager, from the lesson's."""
    policy = manager.policy
    if isinstance(policy, ARCPolicy):
        lists = {name: [k.hex() for k in getattr(policy, name)] for name in ("t1", "t2", "b1", "b2")}
        lists["target_t1_size"] = policy.target_t1_size
        held = {**policy.t1, **policy.t2}
    else:
        lists = {"blocks": sorted(k.hex() for k in policy.blocks),
                 "evictable": [k.hex() for k in policy.evictable]}
        held = policy.blocks
    return {**lists, "block_ids": {k.hex(): b.block_id for k, b in held.items()},
            "free_list": list(manager.free_list), "allocated": manager.num_allocated,
            "evictable_count": manager.num_evictable, "write_pending": manager.num_write_pending}


PROTOCOL = ("lookup", "prepare_load", "touch", "complete_load", "prepare_store",
            "complete_store")


def call(manager: CPUOffloadingManager, name: str, keys: list[bytes]):
    """One call on the lesson's manager; returns what the lesson's method returns."""
    if name == "lookup":
        return manager.lookup(keys[0])
    if name == "complete_store_failed":
        return manager.complete_store(keys, success=False)
    if name == "events":
        return manager.take_events()
    if name == "stats":
        return manager.get_stats()
    return getattr(manager, name)(keys)


def shaped(name: str, value):
    """A result as kv_offloading_vllm_side.call shapes vLLM's."""
    if name == "prepare_store" and value is not None:
        return {"keys_to_store": [k.hex() for k in value.keys_to_store],
                "block_ids": value.block_ids, "evicted_keys": [k.hex() for k in value.evicted_keys]}
    if name == "events":
        return [[kind, [k.hex() for k in keys], medium] for kind, keys, medium in value]
    return value


class Recorder:
    """Runs calls on the lesson's manager and keeps them, their results and its states."""

    def __init__(self, policy: str, num_blocks: int):
        self.case = {"policy": policy, "num_blocks": num_blocks, "calls": []}
        self.manager = CPUOffloadingManager(num_blocks, policy, events=True)
        self.steps = []

    def __call__(self, name: str, keys: list[bytes]):
        value = call(self.manager, name, keys)
        self.case["calls"].append([name, [k.hex() for k in keys]])
        self.steps.append({"result": shaped(name, value), "state": state(self.manager)})
        return value


class Recording:
    """Stands where OffloadedCache keeps its CPUOffloadingManager: every protocol call goes
    through the Recorder."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder
        self.num_blocks = recorder.manager.num_blocks

    def __getattr__(self, name):
        if name not in PROTOCOL:
            raise AttributeError(name)
        return lambda keys: self.recorder(name, [keys] if isinstance(keys, bytes) else list(keys))


def hand_picked(policy: str) -> Recorder:
    """Edges: a store into a full tier, a store whose keys are partly held (protected from
    eviction), a load pinning blocks against eviction, a failed store freeing its ids, a
    store that cannot evict enough (None), ghosts of ARC touched back (its target moves)."""
    r = Recorder(policy, 4)
    a, b, c, d, e, f, g = (key(i) for i in range(7))
    r("lookup", [a])
    r("prepare_store", [a, b, c])
    r("lookup", [a])  # HIT_PENDING: the store is in flight
    r("prepare_store", [d, e])  # one free block, nothing idle: None
    r("complete_store", [a, b, c])
    r("touch", [a, b])
    r("prepare_store", [b, d, e])  # b is held and protected; one eviction
    r("complete_store", [d, e])
    r("prepare_load", [a, d])
    r("prepare_store", [f, g])  # a and d are being read: they stay
    r("complete_load", [a, d])
    r("complete_store", [f, g])
    r("touch", [c, e, b])  # ARC: ghosts of evicted blocks move the target
    r("touch", [a, d, a])
    r("prepare_store", [c, e])
    r("complete_store_failed", [c, e])
    r("prepare_store", [c])
    r("complete_store", [c])
    r("events", [])
    r("stats", [])
    return r


def random_case(policy: str, seed: int) -> Recorder:
    rng = random.Random(seed)
    num_blocks = rng.randint(1, 12)
    universe = [key(i) for i in range(rng.randint(num_blocks + 1, 3 * num_blocks + 4))]
    r = Recorder(policy, num_blocks)
    stores, loads = [], []
    for _ in range(rng.randint(20, 80)):
        ready = [k for k in universe if r.manager.lookup(k) == HIT]
        move = rng.choice(["lookup", "store", "store", "complete_store", "load", "complete_load",
                           "touch", "touch", "stats", "events"])
        if move == "lookup":
            r("lookup", [rng.choice(universe)])
        elif move == "store":
            out = r("prepare_store", rng.sample(universe, rng.randint(1, min(len(universe), num_blocks + 1))))
            if out and out.keys_to_store:
                stores.append(out.keys_to_store)
        elif move == "complete_store" and stores:
            done = stores.pop(rng.randrange(len(stores)))
            r("complete_store" if rng.random() < 0.85 else "complete_store_failed", done)
        elif move == "load" and ready:
            loads.append(rng.sample(ready, rng.randint(1, len(ready))))
            r("prepare_load", loads[-1])
        elif move == "complete_load" and loads:
            r("complete_load", loads.pop(rng.randrange(len(loads))))
        elif move == "touch":
            r("touch", [rng.choice(universe) for _ in range(rng.randint(1, 6))])
        elif move in ("stats", "events"):
            r(move, [])
    r("events", [])
    r("stats", [])
    return r


def workload(policy: str) -> Recorder:
    """The protocol as OffloadedCache drives it: 6 documents of 100 tokens (6 full blocks and
    a partial one each) visited in order, then in reverse, on a GPU of 20 blocks and a CPU tier
    of 24: the GPU keeps the full blocks of the last 3 documents, the CPU the last 4, so the
    second round hits the GPU, then the CPU, then neither."""
    recorder = Recorder(policy, 24)
    cache = OffloadedCache(20, 24, policy)
    cache.cpu = Recording(recorder)
    docs = [list(range(1000 * d, 1000 * d + 100)) for d in range(6)]
    for number, d in enumerate([*range(6), *reversed(range(6))]):
        cache.visit(f"{number}-d{d}", docs[d])
    recorder("events", [])
    recorder("stats", [])
    return recorder


def cases() -> dict[str, Recorder]:
    out = {}
    for policy in ("lru", "arc"):
        out[f"{policy}-hand-picked"] = hand_picked(policy)
        out[f"{policy}-workload"] = workload(policy)
        for seed in range(RANDOM_CASES):
            out[f"{policy}-seed{seed}"] = random_case(policy, seed)
    return out


@pytest.fixture(scope="module")
def compared():
    ours = cases()
    theirs = run_in_conformance_venv(DRIVER, [r.case for r in ours.values()])
    return ours, dict(zip(ours, theirs, strict=True))


def first_difference(ours: Recorder, theirs: list) -> str | None:
    for number, (call_, mine, vllm) in enumerate(zip(ours.case["calls"], ours.steps, theirs)):
        if mine != vllm:
            return f"call {number} {call_[0]}:\n  lesson 9: {mine}\n  vLLM:     {vllm}"
    if len(theirs) != len(ours.steps):
        return f"vLLM answered {len(theirs)} of the {len(ours.steps)} calls"
    return None


@pytest.mark.parametrize("policy", ["lru", "arc"])
def test_every_call_matches_vllm(compared, policy):
    ours, theirs = compared
    names = [name for name in ours if name.startswith(policy)]
    differences = {n: d for n in names if (d := first_difference(ours[n], theirs[n]))}
    assert not differences, (f"{len(differences)} of {len(names)} {policy} cases differ from"
                             " vLLM; the first:\n" + "\n".join(f"{n}: {d}" for n, d in
                                                               list(differences.items())[:2]))


def test_the_cases_reach_every_rule(compared):
    """The comparison means something only where each rule decides: evictions from a full
    tier, stores refused (None), HIT_PENDING lookups, failed stores, ARC's target moving, ghosts
    trimmed, and the workload's CPU hits."""
    ours, _ = compared
    steps = [(c[0], s) for r in ours.values() for c, s in zip(r.case["calls"], r.steps)]
    assert sum(n == "prepare_store" and s["result"] is not None and s["result"]["evicted_keys"] != []
               for n, s in steps) >= 200
    assert sum(n == "prepare_store" and s["result"] is None for n, s in steps) >= 50
    assert sum(n == "lookup" and s["result"] == "HIT_PENDING" for n, s in steps) >= 50
    assert sum(n == "complete_store_failed" for n, s in steps) >= 50
    assert sum(s["state"].get("target_t1_size", 0) > 0 for _, s in steps) >= 50
    assert sum(len(s["state"].get("b1", [])) == r.case["num_blocks"] for r in ours.values()
               for s in r.steps if r.case["policy"] == "arc") >= 20
    for policy in ("lru", "arc"):
        loads = [c for c in ours[f"{policy}-workload"].case["calls"] if c[0] == "prepare_load"]
        assert loads, f"the {policy} workload loads nothing from the CPU tier"
