"""sampling.js, sampling.py's JavaScript twin (the lesson's component runs it), against the
Python, in Node: CPython's random.Random draw for draw, and the sampler stage by stage on
seeded random logits and parameter sets.

What is compared exactly: every random() of random.Random(seed) (the Mersenne Twister and
its seeding by an int are integer arithmetic), every decision (which tokens each stage sets
to -inf, the greedy and the sampled token, the logprob ranks, the top tokens, each refusal's
rule); every number the component prints is compared in Chromium by its parity contract
(tests/test_components.py). The floats themselves agree to a unit or two in the last
place: Math.exp and Math.log in V8 and exp and log of the C library Python calls each
round to within one, not always the same way (ULPS below is what that allows)."""

import math
import random

from sampling import (
    NEG_INF,
    Params,
    exponential_noise,
    sample,
    top_logprobs,
)

from coursekit.components import run_twins

# Node loads the twins as the browser does (classic scripts, in order, one global), then
# answers each case of the JSON on its stdin.
DRIVER = r"""
const fs = require("fs"), vm = require("vm");
for (const file of JSON.parse(process.argv[1])) vm.runInThisContext(fs.readFileSync(file, "utf-8"), { filename: file });
const S = courseModules.sampling;
const floats = (row) => row.map((x) => (x === -Infinity ? "-inf" : x));
const answers = JSON.parse(fs.readFileSync(0, "utf-8")).map((c) => {
  if (c.kind === "random") {
    const generator = new S.Random(c.seed);
    return { draws: Array.from({ length: c.n }, () => generator.random()),
             noise: S.exponential_noise(c.seed, c.n) };
  }
  try {
    const params = new S.Params(c.params);
    const logits = c.logits.map((x) => (x === "-inf" ? -Infinity : x));
    const run = S.sample(logits, params, c.prompt, c.output, c.noise, c.batch_top_p);
    const stages = Object.fromEntries(Object.entries(run.stages).map(([k, v]) => [k, floats(v)]));
    const logprobs = Object.fromEntries(["raw_logprobs", "processed_logprobs"].map((mode) =>
      [mode, { values: floats(run[mode]), top: S.top_logprobs(run[mode], run.token, 3) }]));
    return { stages, greedy: run.greedy, token: run.token, probs: run.probs ?? null,
             temperature: params.temperature, logprobs };
  } catch (error) {
    if (error.name !== "ValueError") throw error;
    return { error: error.message };
  }
});
process.stdout.write(JSON.stringify(answers));
"""

# Units in the last place (of the row's largest magnitude, at least 1) two floats may
# differ by: a probability goes through an exp, a log and an exp (log_softmax, then exp),
# each off by one at most in either language; on these cases they stay within one.
ULPS = 2


def node(cases: list[dict]) -> list:
    """The twin's answers; a -inf among the logits goes to Node as "-inf" (JSON has none)."""
    wire = [dict(case, logits=plain(case["logits"])) if "logits" in case else case for case in cases]
    return run_twins(["sampling"], DRIVER, wire)


def plain(row):
    return ["-inf" if x == NEG_INF else x for x in row]


def differences(where: str, ours, theirs) -> list[str]:
    """Float by float: -inf (and every other decision) alike, numbers within ULPS units in
    the last place of the row's largest magnitude (at least 1): a logprob x - log_sum
    carries log_sum's last bit, however small the difference."""
    if len(ours) != len(theirs):
        return [f"{where}: {len(ours)} values in Python, {len(theirs)} in JavaScript"]
    scale = max([1.0] + [abs(x) for x in ours if x != NEG_INF])
    found = []
    for i, (a, b) in enumerate(zip(plain(ours), theirs)):
        if "-inf" in (a, b):
            if a != b:
                found.append(f"{where}[{i}]: Python {a}, JavaScript {b}")
        elif abs(a - b) > ULPS * math.ulp(scale):
            found.append(f"{where}[{i}]: Python {a!r}, JavaScript {b!r}")
    return found


SEEDS = [0, 1, 42, 1234, 2**31 - 1, 2**32 - 1, 2**32, 2**32 + 1, 2**40 + 12345, 2**53 - 1, -7]


def test_the_twin_draws_what_python_draws_bit_for_bit():
    rng = random.Random(10)
    seeds = SEEDS + [rng.randrange(2**53) for _ in range(40)] + [rng.randrange(2**32) for _ in range(40)]
    # 700 draws: past the 624 words of one twist, so the twist itself is compared too.
    found = node([{"kind": "random", "seed": seed, "n": 700} for seed in seeds])
    for seed, answer in zip(seeds, found):
        generator = random.Random(seed)
        assert answer["draws"] == [generator.random() for _ in range(700)], f"seed {seed}"
        noise = exponential_noise(seed, 700)
        assert differences(f"seed {seed} noise", noise, answer["noise"]) == []
        off = sum(a != b for a, b in zip(noise, answer["noise"]))
        assert off < 700 // 4, f"seed {seed}: {off} of the q differ in their last bits"


def random_case(rng: random.Random) -> dict:
    """Logits with ties and -inf among them, knobs within and outside SamplingParams'
    limits, prompts and outputs that repeat tokens, a seed or explicit noise."""
    vocab = rng.choice([1, 2, 3, 8, 8, 16, 40])
    logits = [rng.choice([round(rng.uniform(-5, 5), 1), rng.uniform(-12, 12), rng.gauss(0, 3)])
              for _ in range(vocab)]
    if vocab > 2 and rng.random() < 0.2:
        logits[rng.randrange(vocab)] = logits[0]  # a tie
    pick = lambda *choices: rng.choice(choices)  # noqa: E731
    params = {
        "temperature": pick(0.0, 0.0, 0.005, 0.3, 0.7, 1.0, 1.5, 2.0, rng.uniform(0, 2)),
        "top_p": pick(1.0, 1.0, 0.9, 0.5, 0.05, rng.uniform(0, 1)),
        "top_k": pick(0, -1, 1, 2, 5, vocab, vocab + 3, rng.randint(1, 10)),
        "min_p": pick(0.0, 0.0, 0.05, 0.1, 0.5, 1.0, rng.uniform(0, 1)),
        "presence_penalty": pick(0.0, 0.5, -1.0, 2.0, rng.uniform(-2, 2)),
        "frequency_penalty": pick(0.0, 0.3, -2.0, rng.uniform(-2, 2)),
        "repetition_penalty": pick(1.0, 1.05, 1.3, 0.8, rng.uniform(0.5, 2)),
        "min_tokens": pick(0, 0, 2, 5),
        "stop_token_ids": sorted(rng.sample(range(vocab), min(vocab, rng.randint(0, 2)))),
        "logit_bias": {str(rng.randrange(vocab)): rng.uniform(-5, 5)} if rng.random() < 0.3 else {},
        "seed": pick(None, 0, 1234, rng.randrange(2**32), rng.randrange(2**53)),
    }
    if rng.random() < 0.2:  # one knob outside SamplingParams' limits
        name, value = rng.choice([("temperature", 2.5), ("temperature", -0.1), ("top_p", 0.0),
                                  ("top_p", 1.2), ("top_k", -2), ("top_k", 2.5), ("min_p", 1.5),
                                  ("presence_penalty", 2.5), ("frequency_penalty", -2.5),
                                  ("repetition_penalty", 0.0), ("min_tokens", -1)])
        params[name] = value
    output = [rng.randrange(vocab) for _ in range(rng.randint(0, 6))]
    return {"kind": "sample", "logits": logits, "params": params,
            "prompt": [rng.randrange(vocab) for _ in range(rng.randint(0, 6))], "output": output,
            "noise": [rng.expovariate(1.0) for _ in range(vocab)] if rng.random() < 0.2 else None,
            "batch_top_p": rng.random() < 0.2}


def python_answer(case: dict) -> dict:
    given = dict(case["params"], logit_bias={int(k): v for k, v in case["params"]["logit_bias"].items()},
                 stop_token_ids=tuple(case["params"]["stop_token_ids"]))
    try:
        params = Params(**given)
        run = sample(case["logits"], params, case["prompt"], case["output"], case["noise"],
                     case["batch_top_p"])
    except ValueError as error:
        return {"error": str(error)}
    return {"params": params, "run": run}


def test_the_twin_samples_as_python_stage_by_stage():
    rng = random.Random(37)
    cases = [random_case(rng) for _ in range(600)]
    found = node(cases)
    problems, refused, greedy, masked = [], 0, 0, 0
    for index, (case, theirs) in enumerate(zip(cases, found)):
        ours, where = python_answer(case), f"case {index}"
        if "error" in ours or "error" in theirs:
            refused += 1
            rule = [answer.get("error", "").split(": got")[0] for answer in (ours, theirs)]
            if rule[0] != rule[1]:
                problems.append(f"{where}: Python {ours.get('error')}, JavaScript {theirs.get('error')}")
            continue
        run, params = ours["run"], ours["params"]
        greedy += params.greedy
        masked += any(x == NEG_INF for x in run["stages"].get("top_p", []))
        if list(run["stages"]) != list(theirs["stages"]):
            problems.append(f"{where}: stages {list(run['stages'])}, JavaScript {list(theirs['stages'])}")
            continue
        for stage, row in run["stages"].items():
            problems += differences(f"{where} {stage}", row, theirs["stages"][stage])
        if run.get("probs") is not None or theirs["probs"] is not None:
            problems += differences(f"{where} probs", run.get("probs") or [], theirs["probs"] or [])
        decided = {"greedy": (run["greedy"], theirs["greedy"]), "token": (run["token"], theirs["token"]),
                   "temperature": (params.temperature, theirs["temperature"])}
        problems += [f"{where} {name}: Python {a}, JavaScript {b}" for name, (a, b) in decided.items() if a != b]
        for mode in ("raw_logprobs", "processed_logprobs"):
            problems += differences(f"{where} {mode}", run[mode], theirs["logprobs"][mode]["values"])
            top, their_top = top_logprobs(run[mode], run["token"], 3), theirs["logprobs"][mode]["top"]
            if (top["rank"], [i for i, _ in top["top"]]) != (their_top["rank"], [i for i, _ in their_top["top"]]):
                problems.append(f"{where} {mode}: Python {top}, JavaScript {their_top}")
    # The cases reach every branch: refusals, greedy requests, tokens masked by the last stage.
    assert refused > 50 and greedy > 80 and masked > 80, (refused, greedy, masked)
    assert problems == []


def test_the_edges_as_python():
    """A tiny temperature raised to 0.01, greedy resetting the knobs, every logit -inf,
    noise that is not positive, no logits."""
    edges = [([1.0, 2.0, 2.0], {"temperature": 0.005}, None),
             ([1.0, 2.0, 2.0], {"temperature": 0.0, "top_k": 1, "top_p": 0.1}, None),
             ([NEG_INF, NEG_INF], {}, None), ([1.0, NEG_INF], {}, None),
             ([1.0, 2.0], {}, [1.0, -1.0]), ([], {}, None), ([3.0], {"top_k": 1}, None)]
    base = {"temperature": 1.0, "top_p": 1.0, "top_k": 0, "min_p": 0.0, "presence_penalty": 0.0,
            "frequency_penalty": 0.0, "repetition_penalty": 1.0, "min_tokens": 0,
            "stop_token_ids": [], "logit_bias": {}, "seed": None}
    cases = [{"kind": "sample", "logits": logits, "params": base | params, "prompt": [], "output": [],
              "noise": noise, "batch_top_p": False} for logits, params, noise in edges]
    found = node(cases)
    shown = []
    for case, theirs in zip(cases, found):
        ours = python_answer(case)
        if "error" in ours:
            shown.append((ours["error"], theirs.get("error")))
        else:
            shown.append(((ours["params"].temperature, ours["run"]["token"], plain(ours["run"]["stages"]["raw"])),
                          (theirs.get("temperature"), theirs.get("token"), theirs.get("stages", {}).get("raw"))))
    assert [ours for ours, theirs in shown if ours != theirs] == []
    assert shown[0][0][0] == 0.01 and shown[2][0].startswith("every logit is -inf")
