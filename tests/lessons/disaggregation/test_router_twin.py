"""router.js, router.py's JavaScript twin (which the replica-router component runs), does
what router.py does, in Node, operation by operation: requests routed by each of the four
policies to replicas of lesson 3's scheduler on lesson 5's prefix cache, and replicas
stepped, on seeded random workloads (shared system prompts longer and shorter than the
blocks prefix_hash reads, chats that grow turn by turn, pools small enough to evict and to
refuse a request). After every operation: what each policy would choose, the replica's
cached tokens for the prompt, the requests finished, and each replica's load, sent
hashes, free blocks, hits and queries. A chat's history holds its answers as lesson 3's
stand-in model samples them (token ids -1 - k), which PrefixCache.lookup refuses as a
reader's prompt: the cached tokens are read with its _hit, lookup without that check."""

import json
import random

import router
from prefix_cache import block_hashes
from scheduler import Request

from coursekit.components import run_twins

DRIVER = r"""
const fs = require("fs"), vm = require("vm");
for (const file of JSON.parse(process.argv[1])) vm.runInThisContext(fs.readFileSync(file, "utf-8"), { filename: file });
const { Replica, choose, POLICIES, BLOCK_SIZE, PREFIX_BLOCKS, BALANCE_ABS, BALANCE_REL } = courseModules.router;
const { block_hashes } = courseModules.prefix_cache;
const { Request } = courseModules.scheduler;
const state = (replicas) => replicas.map((r) => ({ load: r.load, busy: r.busy, sent: r.sent.size,
  free: r.cache.num_free_blocks, hits: r.cache.hits, queries: r.cache.queries }));
const cases = JSON.parse(fs.readFileSync(0, "utf-8"));
const answers = cases.map((c) => {
  const numbers = new Map(c.prefixes.map(([tokens, n]) =>
    [block_hashes(tokens, BLOCK_SIZE)[PREFIX_BLOCKS - 1], BigInt(n)]));
  const replicas = c.replicas.map((name) => new Replica(name, c.blocks, c.settings));
  return c.ops.map((op) => {
    if (op.kind === "step") return { finished: replicas[op.replica].step(), replicas: state(replicas) };
    const choices = POLICIES.map((p) => choose(p, replicas, op.prompt, op.number, numbers));
    const target = replicas[choices[POLICIES.indexOf(op.policy)]];
    const cached = target.cache._hit(op.prompt, null)[1];
    let refused = false;
    try {
      target.add(new Request(op.id, op.prompt.length, op.output, 0, op.prompt));
    } catch (error) {
      if (error.name !== "ValueError") throw error;
      refused = true;
    }
    return { choices, cached, refused, replicas: state(replicas) };
  });
});
const constants = [POLICIES, BLOCK_SIZE, PREFIX_BLOCKS, BALANCE_ABS, BALANCE_REL];
process.stdout.write(JSON.stringify({ answers, constants }));
"""


def node(cases: list[dict]) -> dict:
    return run_twins(["router"], DRIVER, cases)


def state(replicas: list[router.Replica]) -> list[dict]:
    return [{"load": r.load, "busy": r.busy, "sent": len(r.sent), "free": r.cache.num_free_blocks,
             "hits": r.cache.hits, "queries": r.cache.queries} for r in replicas]


def random_case(rng: random.Random) -> tuple[dict, list]:
    """A router over 1 to 5 replicas: new chats on a few system prompts (some shorter than
    PREFIX_BLOCKS blocks), their next turns with the answer in the history, and steps."""
    budget = rng.choice([32, 256, 2048])
    settings = {"max_num_batched_tokens": budget, "max_num_seqs": rng.choice([2, 4, min(budget, 256)])}
    blocks = rng.choice([8, 16, 32, 64])
    names = [f"R{i}" for i in range(rng.randint(1, 5))]
    replicas = [router.Replica(name, blocks, **settings) for name in names]
    systems = [[rng.randrange(100) for _ in range(rng.choice([8, 40, 64, 80]))] for _ in range(3)]
    history, ops, out, number = [], [], [], 0
    for _ in range(rng.randint(1, 40)):
        busy = [i for i, r in enumerate(replicas) if r.busy]
        if busy and rng.random() < 0.5:
            index = rng.choice(busy)
            ops.append({"kind": "step", "replica": index})
            out.append({"finished": replicas[index].step(), "replicas": state(replicas)})
            continue
        if history and rng.random() < 0.5:  # a chat's next turn: its history, then more
            start = rng.choice(history) + [-1 - k for k in range(rng.randint(1, 20))]
        else:
            start = list(rng.choice(systems))
        prompt = start + [1000 + rng.randrange(50) for _ in range(rng.randint(1, 20))]
        history.append(prompt)
        op = {"kind": "route", "policy": rng.choice(router.POLICIES), "prompt": prompt,
              "number": number, "id": f"q{number}", "output": rng.randint(1, 30)}
        number += 1
        choices = [router.choose(p, replicas, prompt, op["number"]) for p in router.POLICIES]
        target = replicas[choices[router.POLICIES.index(op["policy"])]]
        cached = target.cache._hit(prompt, None)[1]  # lookup refuses the answers' ids
        try:
            target.add(Request(op["id"], len(prompt), op["output"], prompt=tuple(prompt)), 0.0)
            refused = False
        except ValueError:
            refused = True
        ops.append(op)
        out.append({"choices": choices, "cached": cached, "refused": refused, "replicas": state(replicas)})
    # The number prefix_hash takes from each prompt's first blocks, keyed in Node by the
    # twin's hash of those blocks.
    size = router.PREFIX_BLOCKS * router.BLOCK_SIZE
    firsts = {tuple(op["prompt"][:size]) for op in ops if op["kind"] == "route" and len(op["prompt"]) >= size}
    prefixes = [[list(tokens), str(int.from_bytes(block_hashes(tokens, router.BLOCK_SIZE)[-1][:8], "big"))]
                for tokens in sorted(firsts)]
    return {"replicas": names, "blocks": blocks, "settings": settings, "prefixes": prefixes, "ops": ops}, out


def first_difference(python: list, javascript: list) -> str | None:
    for index, (ours, theirs) in enumerate(zip(python, javascript)):
        if ours != theirs:
            return f"operation {index}: Python {ours}, JavaScript {theirs}"
    if len(python) != len(javascript):
        return f"Python {len(python)} operations, JavaScript {len(javascript)}"
    return None


def test_the_router_twin_routes_and_steps_as_the_python():
    rng = random.Random(12)
    cases, expected = zip(*(random_case(rng) for _ in range(200)))
    found = node(list(cases))
    assert found["constants"] == [list(router.POLICIES), router.BLOCK_SIZE, router.PREFIX_BLOCKS,
                                  router.BALANCE_ABS, router.BALANCE_REL]
    problems = [first_difference(json.loads(json.dumps(ours)), theirs)
                for ours, theirs in zip(expected, found["answers"])]
    assert [problem for problem in problems if problem] == []
    # The workloads reach what the twin must get right: each policy choosing differently
    # from round robin, requests finishing, requests refused, prompts with a cache hit.
    steps = [step for run in expected for step in run]
    routed = [step for step in steps if "choices" in step]
    for policy in range(1, len(router.POLICIES)):
        assert any(step["choices"][policy] != step["choices"][0] for step in routed), policy
    assert any(step.get("finished") for step in steps)
    assert any(step["refused"] for step in routed)
    assert any(step["cached"] for step in routed)


def test_the_twin_refuses_an_unknown_policy():
    refused = run_twins(["router"], "const fs = require('fs'), vm = require('vm');"
                        " for (const f of JSON.parse(process.argv[1]))"
                        " vm.runInThisContext(fs.readFileSync(f, 'utf-8'));"
                        " try { courseModules.router.choose('random', [], [1], 0); }"
                        " catch (e) { process.stdout.write(JSON.stringify(e.name)); }", None)
    assert refused == "ValueError"
