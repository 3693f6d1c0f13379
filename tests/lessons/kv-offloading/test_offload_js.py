"""offload.js, offload.py's JavaScript twin (which the offload-tiers component runs), does what
the Python does, in Node: the CPU tier's manager under LRU and ARC on seeded runs of the calls
the scheduler makes (lookup, touch, prepare_load, complete_load, prepare_store, complete_store,
misuse included), and OffloadedCache on seeded runs of documents revisited, compared after
every call or request: what it returned and the whole state (each policy list in its order,
ARC's target, the free block ids, the counters; each document's blocks held by each tier)."""

import json
import random

import pytest
from offload import HIT, CPUOffloadingManager, OffloadedCache
from prefix_cache import block_hashes, sha256

from coursekit.components import run_twins

# Node loads the twins as the browser does (classic scripts, in order, one global); each case
# of the JSON on its stdin runs its calls and answers with what happened after each. A key is
# a name ("k3") in the manager's cases; in the visits' cases a document's block is named
# "<document>:<index>".
DRIVER = r"""
const fs = require("fs"), vm = require("vm");
for (const file of JSON.parse(process.argv[1])) vm.runInThisContext(fs.readFileSync(file, "utf-8"), { filename: file });
const { CPUOffloadingManager, OffloadedCache, HIT } = courseModules.offload;
const { block_hashes } = courseModules.prefix_cache;
const keysOf = (map) => [...map.keys()];
function tier(cpu, name = (key) => key) {
  const p = cpu.policy;
  const blocks = (map) => [...map].map(([key, b]) => [name(key), b.block_id, b.ref_cnt]);
  const lists = p.t1 ? { t1: blocks(p.t1), t2: blocks(p.t2), b1: keysOf(p.b1).map(name),
                         b2: keysOf(p.b2).map(name), target: p.target_t1_size }
                     : { blocks: blocks(p.blocks), evictable: keysOf(p.evictable).map(name) };
  return { ...lists, free_list: cpu.free_list, num_allocated: cpu.num_allocated,
           num_evictable: cpu.num_evictable, num_write_pending: cpu.num_write_pending };
}
function call(cpu, [op, keys]) {
  try {
    if (op === "lookup") return keys.map((key) => cpu.lookup(key));
    if (op === "prepare_store") return cpu.prepare_store(keys);
    const out = cpu[op](keys);
    return out === undefined ? null : out;
  } catch (problem) {
    if (problem.name !== "ValueError") throw problem;
    return "ValueError";
  }
}
const answers = JSON.parse(fs.readFileSync(0, "utf-8")).map((c) => {
  if (c.kind === "manager") {
    const cpu = new CPUOffloadingManager(c.blocks, c.policy);
    return c.ops.map((op) => ({ result: call(cpu, op), ...tier(cpu) }));
  }
  const docs = Object.fromEntries(Object.entries(c.docs).map(([d, tokens]) => [d, block_hashes(tokens)]));
  const names = new Map(Object.entries(docs).flatMap(([d, keys]) => keys.map((key, i) => [key, `${d}:${i}`])));
  const cache = new OffloadedCache(c.gpu, c.cpu, c.policy);
  return c.order.map((d, i) => {
    const visit = cache.visit(`${d}${i}`, c.docs[d]);
    const onGpu = new Set(cache.gpu.cached_blocks.values());
    const holds = Object.fromEntries(Object.entries(docs).map(([doc, keys]) => [doc, [
      keys.filter((key) => onGpu.has(key)).length, keys.filter((key) => cache.cpu.lookup(key) === HIT).length]]));
    return { visit, holds, ran: cache.gpu.history.length, ...tier(cache.cpu, (key) => names.get(key)) };
  });
});
process.stdout.write(JSON.stringify(answers));
"""


def node(cases: list[dict]) -> list:
    return run_twins(["offload"], DRIVER, cases)


def tier(cpu: CPUOffloadingManager, name) -> dict:
    """The manager's whole state, keys named, as the driver's tier() reads it."""
    policy = cpu.policy

    def blocks(items):
        return [[name(key), block.block_id, block.ref_cnt] for key, block in items]

    if hasattr(policy, "t1"):
        lists = {"t1": blocks(policy.t1.items()), "t2": blocks(policy.t2.items()),
                 "b1": [name(k) for k in policy.b1], "b2": [name(k) for k in policy.b2],
                 "target": policy.target_t1_size}
    else:
        lists = {"blocks": blocks(policy.blocks.items()),
                 "evictable": [name(k) for k in policy.evictable]}
    return lists | {"free_list": list(cpu.free_list), "num_allocated": cpu.num_allocated,
                    "num_evictable": cpu.num_evictable,
                    "num_write_pending": cpu.num_write_pending}


def manager_case(rng: random.Random) -> tuple[dict, list]:
    """The scheduler's calls on a small tier: stores that complete now or later (a lookup then
    finds HIT_PENDING), loads in flight that protect their blocks, touches of held keys and of
    ghosts, and misuse (a load of a key not readable, a complete_load with none in flight)."""
    names = [f"k{i}" for i in range(rng.randint(3, 14))]
    byte_key = {name: sha256(name) for name in names}
    name_of = {key: name for name, key in byte_key.items()}
    blocks, policy = rng.randint(0, 6), rng.choice(["lru", "arc"])
    cpu = CPUOffloadingManager(blocks, policy)
    pending: list[list[str]] = []
    loading: list[list[str]] = []
    ops, out = [], []
    for _ in range(rng.randint(1, 40)):
        pick = [rng.choice(names) for _ in range(rng.randint(1, 4))]
        held = [n for n in names if cpu.lookup(byte_key[n]) == HIT]
        kind = rng.choice(["lookup", "touch", "store", "store", "complete_store", "load",
                           "complete_load", "bad"])
        if kind == "store":
            op = ["prepare_store", list(dict.fromkeys(pick))]
        elif kind == "complete_store" and pending:
            op = ["complete_store", pending.pop(rng.randrange(len(pending)))]
        elif kind == "load" and held:
            op = ["prepare_load", rng.sample(held, rng.randint(1, min(3, len(held))))]
        elif kind == "complete_load" and loading:
            op = ["complete_load", loading.pop(rng.randrange(len(loading)))]
        elif kind == "bad":
            op = [rng.choice(["prepare_load", "complete_load"]), pick]
        else:
            op = [rng.choice(["lookup", "touch"]), pick]
        keys = [byte_key[n] for n in op[1]]
        try:
            if op[0] == "lookup":
                result = [cpu.lookup(key) for key in keys]
            elif op[0] == "prepare_store":
                stored = cpu.prepare_store(keys)
                result = None if stored is None else {
                    "keys_to_store": [name_of[k] for k in stored.keys_to_store],
                    "block_ids": stored.block_ids,
                    "evicted_keys": [name_of[k] for k in stored.evicted_keys]}
                if stored is not None and stored.keys_to_store:
                    if rng.random() < 0.6:  # the copy completes at once, as in a visit
                        ops.append(op)
                        out.append({"result": result, **tier(cpu, name_of.get)})
                        cpu.complete_store(stored.keys_to_store)
                        op, result = ["complete_store", result["keys_to_store"]], None
                    else:
                        pending.append(result["keys_to_store"])
            else:
                result = getattr(cpu, op[0])(keys)
                if op[0] == "prepare_load" and kind == "load":
                    loading.append(op[1])
        except ValueError:
            result = "ValueError"
        ops.append(op)
        out.append({"result": result, **tier(cpu, name_of.get)})
    return {"kind": "manager", "blocks": blocks, "policy": policy, "ops": ops}, out


def visits_case(rng: random.Random) -> tuple[dict, list]:
    """Documents revisited in a random order through both tiers, on GPU and CPU pools from
    smaller than one document to larger than all of them."""
    size = rng.choice([1, 15, 16, 17, 33, 48, 64, 100])
    docs = {d: list(range(1000 * n, 1000 * n + rng.randint(1, size)))
            for n, d in enumerate("ABCDE"[: rng.randint(1, 5)])}
    gpu, cpu, policy = rng.randint(2, 30), rng.randint(0, 30), rng.choice(["lru", "arc"])
    order = [rng.choice(list(docs)) for _ in range(rng.randint(1, 16))]
    keys = {d: block_hashes(tokens) for d, tokens in docs.items()}
    names = {key: f"{d}:{i}" for d, ks in keys.items() for i, key in enumerate(ks)}
    cache, out = OffloadedCache(gpu, cpu, policy), []
    for i, d in enumerate(order):
        visit = cache.visit(f"{d}{i}", docs[d])
        on_gpu = {h for h in cache.gpu.cached_blocks.values()}
        holds = {doc: [sum(k.hex()[:8] in on_gpu for k in ks),
                       sum(cache.cpu.lookup(k) == HIT for k in ks)] for doc, ks in keys.items()}
        out.append({"visit": visit.__dict__ | {"recomputed": visit.recomputed},
                    "holds": holds, "ran": len(cache.gpu.history), **tier(cache.cpu, names.get)})
    return {"kind": "visits", "docs": docs, "gpu": gpu, "cpu": cpu, "policy": policy,
            "order": order}, out


def first_difference(python: list, javascript: list) -> str | None:
    for index, (ours, theirs) in enumerate(zip(python, javascript)):
        if ours != theirs:
            return f"call {index}: Python {ours}, JavaScript {theirs}"
    if len(python) != len(javascript):
        return f"Python {len(python)} calls, JavaScript {len(javascript)}"
    return None


@pytest.mark.parametrize("make", [manager_case, visits_case])
def test_the_offload_twin_does_what_the_python_does_after_every_call(make):
    rng = random.Random(36)
    cases, expected = zip(*(make(rng) for _ in range(300)))
    found = node(list(cases))
    problems = [first_difference(json.loads(json.dumps(ours)), theirs)
                for ours, theirs in zip(expected, found)]
    assert [problem for problem in problems if problem] == []
    # The runs reach every rule: both policies evict, refuse a store, and ARC moves its
    # target; a visit loads from the tier, fails to store, and a document does not fit.
    steps = [step for run in expected for step in run]
    if make is manager_case:
        results = [step["result"] for step in steps]
        assert None in results and "ValueError" in results and "HIT_PENDING" in str(results)
        assert any(isinstance(r, dict) and r["evicted_keys"] for r in results)
        assert any(step.get("target", 0) > 0 for step in steps)
    else:
        assert any(step["visit"]["loaded"] for step in steps)
        assert any(step["visit"]["store_failed"] for step in steps)
        assert any(step["visit"]["evicted"] for step in steps)
        assert any(a["ran"] == b["ran"] for run in expected for a, b in zip(run, run[1:]))
