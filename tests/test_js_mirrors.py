"""Each teaching module's JavaScript twin (snippets/<slug>/<module>.js, which the components
run in the browser) does what its Python does, in Node, step by step: the scheduler on every
workload the conformance tests run against vLLM (lesson 5's scheduler_workloads.py, with
lesson 2's block pool and lesson 5's prefix cache), the block pool and the prefix cache
on runs of operations like those of their tests, compared after every operation."""

import json
import random

import pytest
import scheduler_workloads as WORKLOADS
from block_pool import BlockPool
from prefix_cache import PrefixCache

from coursekit.components import run_twins

# Node loads the twins as the browser does (classic scripts, in order, one global), then
# answers each case of the JSON on its stdin with what the twins did.
DRIVER = r"""
const fs = require("fs"), vm = require("vm");
for (const file of JSON.parse(process.argv[1])) vm.runInThisContext(fs.readFileSync(file, "utf-8"), { filename: file });
const { BlockPool } = courseModules.block_pool;
const { PrefixCache } = courseModules.prefix_cache;
const { Request, run } = courseModules.scheduler;
const MANAGERS = { BlockPool, PrefixCache };
const plain = (value) => value instanceof Map ? Object.fromEntries([...value].map(([k, v]) => [k, plain(v)]))
  : value instanceof Set ? [...value].sort((a, b) => a - b) : value;
const tables = (kv) => Object.fromEntries(kv.requests.map((r) => [r, kv.block_table(r)]));
const pool = (kv) => ({ free_queue: kv.free_queue, hashed: plain(kv.hashed), tables: tables(kv),
                         usage: kv.usage, hits: kv.hits, queries: kv.queries });
const answers = JSON.parse(fs.readFileSync(0, "utf-8")).map((c) => {
  if (c.kind === "scheduler") {
    const requests = c.requests.map((r) => new Request(r.request_id, r.prompt_tokens, r.max_tokens,
                                                       r.arrival_step, r.prompt));
    return run(requests, MANAGERS[c.manager], c.settings).map((step) => ({
      scheduled: [...step.scheduled], preempted: step.preempted, sampled: [...step.sampled].sort(),
      finished: step.finished, running: step.running, waiting: step.waiting,
      free_blocks: step.free_blocks, block_tables: plain(step.block_tables),
      hits: step.hits, queries: step.queries }));
  }
  if (c.kind === "block_pool") {
    const kv = new BlockPool(c.blocks, c.block_size, c.caching);
    return c.ops.map(([r, n]) => ({ result: n === null ? (kv.free(r), "freed") : kv.allocate(r, n), ...pool(kv) }));
  }
  const kv = new PrefixCache(c.blocks, c.block_size);
  return c.ops.map(([r, prompt, m, salt]) => ({ result: kv.run(r, prompt, m, { cache_salt: salt }),
                                                 history: kv.history.at(-1) ?? null, ...pool(kv) }));
});
process.stdout.write(JSON.stringify(answers));
"""


def node(cases: list[dict]) -> list:
    return run_twins(["scheduler", "prefix_cache"], DRIVER, cases)


def first_difference(python: list, javascript: list) -> str | None:
    for index, (ours, theirs) in enumerate(zip(python, javascript)):
        if ours != theirs:
            return f"step {index}: Python {ours}, JavaScript {theirs}"
    if len(python) != len(javascript):
        return f"Python {len(python)} steps, JavaScript {len(javascript)}"
    return None


def test_the_scheduler_twin_runs_every_conformance_workload_as_the_python():
    workloads = WORKLOADS.workloads()
    cases, expected = [], []
    for requests, config, manager in workloads.values():
        cases.append({
            "kind": "scheduler", "manager": manager.__name__, "settings": config,
            "requests": [{"request_id": r.request_id, "prompt_tokens": r.prompt_tokens,
                          "max_tokens": r.max_tokens, "arrival_step": r.arrival_step,
                          "prompt": None if r.prompt is None else list(r.prompt)}
                         for r in requests]})
        expected.append(json.loads(json.dumps(WORKLOADS.trace(requests, config, manager))))
    assert len(cases) == 4 * (len(WORKLOADS.EDGE_CASES) + WORKLOADS.RANDOM_PER_MODE)
    found = node(cases)
    problems = {name: first_difference(ours, theirs)
                for name, ours, theirs in zip(workloads, expected, found)}
    assert {name: problem for name, problem in problems.items() if problem} == {}


def _pool(kv) -> dict:
    return {"free_queue": kv.free_queue, "hashed": sorted(kv.hashed),
            "tables": {r: kv.block_table(r) for r in kv.requests}, "usage": kv.usage,
            "hits": kv.hits, "queries": kv.queries}


def block_pool_case(rng: random.Random) -> tuple[dict, list]:
    """Requests that grow, get refused and finish, on a small pool, caching off or on."""
    blocks, block_size, caching = rng.randint(2, 24), rng.choice([1, 2, 4, 16]), rng.random() < 0.5
    kv, ops, out, held = BlockPool(blocks, block_size, caching), [], [], {}
    for _ in range(rng.randint(1, 30)):
        name = rng.choice("ABCD")
        if name in kv.requests and rng.random() < 0.3:
            op = [name, None]
            kv.free(name)
            held.pop(name)
            result = "freed"
        else:
            op = [name, held.get(name, 0) + rng.randint(0, 3 * block_size)]
            result = kv.allocate(*op)
            if result is not None:
                held[name] = op[1]
        ops.append(op)
        out.append({"result": result, **_pool(kv)})
    return {"kind": "block_pool", "blocks": blocks, "block_size": block_size,
            "caching": caching, "ops": ops}, out


def prefix_cache_case(rng: random.Random) -> tuple[dict, list]:
    """Prompts that share a system prompt, repeat, differ by one token, carry a salt, on a
    pool small enough to evict and refuse."""
    blocks, block_size = rng.randint(2, 24), rng.choice([2, 4, 16])
    system = [rng.randint(0, 50) for _ in range(rng.randint(0, 3 * block_size))]
    kv, ops, out = PrefixCache(blocks, block_size), [], []
    for index in range(rng.randint(1, 10)):
        prompt = system + [rng.randint(0, 3) for _ in range(rng.randint(1, 2 * block_size))]
        op = [f"r{index}", prompt, rng.randint(1, block_size * 2), rng.choice([None, None, "t"])]
        result = kv.run(op[0], op[1], op[2], cache_salt=op[3])
        last = kv.history[-1].__dict__ if kv.history else None
        ops.append(op)
        out.append({"result": result, "history": last, **_pool(kv)})
    return {"kind": "prefix_cache", "blocks": blocks, "block_size": block_size, "ops": ops}, out


@pytest.mark.parametrize("make", [block_pool_case, prefix_cache_case])
def test_the_pool_twins_do_what_the_python_does_after_every_operation(make):
    rng = random.Random(35)
    cases, expected = zip(*(make(rng) for _ in range(300)))
    found = node(list(cases))
    problems = [first_difference(json.loads(json.dumps(ours)), theirs)
                for ours, theirs in zip(expected, found)]
    refused = sum(step["result"] is None for run in expected for step in run)
    assert refused, "no operation is refused: the check would miss the null rule"
    assert [problem for problem in problems if problem] == []
