"""block_trace.js, block_trace.py's JavaScript twin (which the block table component replays a
link with), does what block_trace.py does, in Node: run on the lesson's worked trace and on
seeded traces (requests that arrive, grow by a token or by blocks, are refused and finish,
on pools small enough to refuse, caching off and on, block sizes from 1 to 16, some ending in
misuse: a request that shrinks or finishes without holding blocks), compared after every step:
what happened, each block table and its tokens, the free queue, the hashed blocks and the
usage, or the ValueError that ends the run; and encode on the same traces."""

import json
import random

from block_pool import BlockPool
from block_trace import NUM_GPU_BLOCKS, TRACE, encode, run

from coursekit.components import run_twins

# Node loads the twins as the browser does (classic scripts, in order, one global); each case
# of the JSON on its stdin is a trace to run (no block_size: run's default).
DRIVER = r"""
const fs = require("fs"), vm = require("vm");
for (const file of JSON.parse(process.argv[1])) vm.runInThisContext(fs.readFileSync(file, "utf-8"), { filename: file });
const { run, encode } = courseModules.block_trace;
const state = (kv) => ({ tables: Object.fromEntries(kv.requests.map((r) => [r, [kv.block_table(r), kv.num_tokens(r)]])),
                         free_queue: kv.free_queue, hashed: [...kv.hashed].sort((a, b) => a - b), usage: kv.usage });
const answers = JSON.parse(fs.readFileSync(0, "utf-8")).map((c) => {
  const steps = [];
  try {
    for (const [step, kv, happened] of run(c.trace, c.blocks, c.caching, c.block_size)) {
      steps.push({ step, happened, ...state(kv) });
    }
  } catch (problem) {
    if (problem.name !== "ValueError") throw problem;
    steps.push("ValueError");
  }
  return { link: encode(c.trace), steps };
});
process.stdout.write(JSON.stringify(answers));
"""


def state(pool: BlockPool) -> dict:
    """The pool as the driver's state() reads it."""
    tables = {r: [pool.block_table(r), pool.num_tokens(r)] for r in pool.requests}
    return {"tables": tables, "free_queue": pool.free_queue,
            "hashed": sorted(pool.hashed), "usage": pool.usage}


def replayed(case: dict) -> dict:
    """What block_trace.py does with a case, step by step."""
    given = {"block_size": case["block_size"]} if "block_size" in case else {}
    steps = []
    try:
        for step, pool, happened in run(case["trace"], case["blocks"], case["caching"], **given):
            steps.append({"step": step, "happened": happened, **state(pool)})
    except ValueError:
        steps.append("ValueError")
    return json.loads(json.dumps({"link": encode(case["trace"]), "steps": steps}))


def random_case(rng: random.Random) -> dict:
    """Requests that arrive, grow and finish, on a small pool; one run in five ends in misuse."""
    block_size = rng.choice([1, 2, 4, 16])
    trace, held = [], {}  # held: the tokens a request asked for last (refused or not)
    for _ in range(rng.randint(1, 30)):
        request = rng.choice("ABCD")
        if request in held and rng.random() < 0.3:
            trace.append((request, None))
            held.pop(request)
        else:
            held[request] = held.get(request, 0) + rng.choice([0, 1, block_size, rng.randint(1, 3 * block_size)])
            trace.append((request, held[request]))
    if rng.random() < 0.2:  # a request that shrinks, or one that holds no blocks finishes
        request = rng.choice("ABCDE")
        trace.append((request, held[request] - 1) if held.get(request) else (request, None))
    return {"trace": trace, "blocks": rng.randint(2, 24), "block_size": block_size,
            "caching": rng.random() < 0.5}


def test_the_trace_twin_runs_every_trace_as_the_python_after_every_step():
    rng = random.Random(35)
    cases = [{"trace": TRACE, "blocks": NUM_GPU_BLOCKS, "caching": caching} for caching in (True, False)]
    cases += [random_case(rng) for _ in range(300)]
    expected = [replayed(case) for case in cases]
    found = run_twins(["block_trace"], DRIVER, cases)
    problems = {}
    for index, (ours, theirs) in enumerate(zip(expected, found, strict=True)):
        if ours["link"] != theirs["link"]:
            problems[index] = f"link: Python {ours['link']}, JavaScript {theirs['link']}"
        for step, (a, b) in enumerate(zip(ours["steps"], theirs["steps"])):
            if a != b:
                problems[index] = f"step {step}: Python {a}, JavaScript {b}"
                break
        else:
            if len(ours["steps"]) != len(theirs["steps"]):
                problems[index] = f"Python {len(ours['steps'])} steps, JavaScript {len(theirs['steps'])}"
    assert problems == {}
    # The runs reach every rule: each kind of step, a refusal, misuse on both sides.
    kinds = {step["happened"]["kind"] for run_ in expected for step in run_["steps"] if step != "ValueError"}
    assert kinds == {"start", "grew", "refused", "finished"}
    assert sum(run_["steps"][-1] == "ValueError" for run_ in expected) > 10
