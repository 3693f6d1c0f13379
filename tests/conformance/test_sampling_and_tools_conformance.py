"""Lesson 10's sampler (sampling.py) and Hermes parser (tool_calls.py) against vLLM 0.26.0's
own code on the CPU, run once for this module by sampling_and_tools_vllm_side.py in the
conformance venv (read its docstring for how the Sampler is fed).

Sampler: on hand-picked edges and seeded random batches (1 to 3 requests, 8 to 48 tokens,
every knob drawn in SamplingParams' ranges), compared per request:
- each stage's logits (bias and penalties, temperature, min_p, top-k and top-p): the same
  tokens at -inf, the others within float32's rounding (the course computes in float64);
- the greedy token exactly;
- the random token exactly, when the course's sampler is given the Exp(1) noise vLLM's
  seeded torch.Generator drew (Python's own generator draws other numbers: the rule is
  compared, not the random stream);
- the logprobs vLLM returns for logprobs_mode raw_logprobs and processed_logprobs: token
  ids and ranks exactly, values within rounding.
The sampler vLLM ran is vllm/v1/sample/sampler.py: Sampler with the PyTorch-native top-k
/top-p path (forward_native: this venv's platform is neither CUDA nor CPU-built, and
CUDA takes the same path for seeded requests); the GPU model runner's Triton sampler
(vllm/v1/worker/gpu/sample/) needs a GPU and is not compared.

Hermes: Hermes2ProToolParser.extract_tool_calls and extract_tool_calls_streaming on
model outputs written here: one call, two, text before, malformed JSON, a missing name or
arguments, a call left open, non-ASCII arguments, and each split into deltas at every
3rd, 7th and 1st character and at token-like boundaries. The parser's module imports
partial_json_parser (a dependency of the vLLM wheel): without it in the conformance venv
these tests fail with that ImportError.

Structured output: the course's mask (structured.py: allowed_tokens, bitmask) against
xgrammar's (the library vLLM's XgrammarBackend calls, in the conformance venv) for the
page's one-enum JSON schema over the page's toy vocabulary: every token sequence the
grammar allows, the bitmask words after it. xgrammar runs with any_whitespace off, the
texts structured.ALLOWED lists."""

import random
import struct
from pathlib import Path

import pytest
from sampling import Params, sample, top_logprobs
from structured import ALLOWED, EOS, VOCAB, allowed_tokens, bitmask
from tool_calls import parse, stream

from coursekit.vllm_source import run_in_conformance_venv

DRIVER = Path(__file__).with_name("sampling_and_tools_vllm_side.py")
TOL = 2e-5  # float32 rounding on values of a few units
RANDOM_BATCHES = 150


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def request(rng: random.Random, vocab: int, **fixed) -> dict:
    params = {
        "temperature": rng.choice([0.0, 0.005, 0.3, 0.7, 1.0, 1.5, 2.0]),
        "top_p": rng.choice([1.0, 1.0, 0.95, 0.8, 0.5, 0.05]),
        "top_k": rng.choice([0, -1, 1, 3, 5, vocab, vocab + 5]),
        "min_p": rng.choice([0.0, 0.0, 0.05, 0.2, 0.9]),
        "presence_penalty": rng.choice([0.0, 0.0, 0.5, -0.5, 2.0]),
        "frequency_penalty": rng.choice([0.0, 0.0, 0.3, -0.3, 1.0]),
        "repetition_penalty": rng.choice([1.0, 1.0, 1.05, 1.3, 0.8]),
        "seed": rng.randrange(2**31),
    }
    if rng.random() < 0.3:
        params["logit_bias"] = {rng.randrange(vocab): rng.choice([-100.0, -2.0, 3.0, 5.0])}
    if rng.random() < 0.3:
        params["min_tokens"] = rng.choice([1, 3, 10])
        params["stop_token_ids"] = [rng.randrange(vocab)]
    params.update(fixed)
    return {
        "logits": [f32(rng.uniform(-6, 6)) for _ in range(vocab)],
        "prompt": [rng.randrange(vocab) for _ in range(rng.randrange(0, 6))],
        "output": [rng.randrange(vocab) for _ in range(rng.randrange(0, 6))],
        "params": params,
        "logprobs": rng.randrange(0, 6),
    }


def edge_batches() -> list[list[dict]]:
    rng = random.Random(10)
    r = request
    return [
        [r(rng, 8, temperature=0.0)],  # all greedy: Sampler.sample returns early
        [r(rng, 8, temperature=0.0), r(rng, 8, temperature=1.0)],  # mixed
        [r(rng, 8, temperature=0.005)],  # raised to 0.01 by SamplingParams
        [r(rng, 16, top_k=1, top_p=1.0, min_p=0.0)],
        [r(rng, 16, top_p=0.01, top_k=0, min_p=0.0)],  # only the largest survives
        [r(rng, 16, min_p=1.0, top_p=1.0, top_k=0)],
        [r(rng, 16, repetition_penalty=2.0, temperature=0.0)],  # negative logits too
        [r(rng, 8, min_tokens=5, stop_token_ids=[3], temperature=0.0)],
        [r(rng, 8, logit_bias={5: 30.0}, temperature=0.0)],  # the bias wins greedy
        [r(rng, 48, top_k=48, top_p=1.0)],  # top_k = vocab: off
    ]


def random_batches() -> list[list[dict]]:
    rng = random.Random(2026)
    batches = []
    for _ in range(RANDOM_BATCHES):
        vocab = rng.randrange(8, 49)
        batches.append([request(rng, vocab) for _ in range(rng.randrange(1, 4))])
    return batches


CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
OUTPUTS = [
    "Just text, no call.",
    CALL,
    "Let me check.\n" + CALL,
    CALL + "\n" + CALL.replace("get_weather", "get_time").replace("Paris", "東京"),
    '<tool_call>\n{"name": "f", "arguments": {"a": [1, 2, {"b": null}]}}\n</tool_call>',
    '<tool_call>\n{"name": "f", "arguments": {"x": 1}}',  # left open
    '<tool_call>\n{"name": "f", "arguments": {"x": 1}\n</tool_call>',  # malformed JSON
    '<tool_call>\n{"arguments": {"x": 1}}\n</tool_call>',  # no name
    '<tool_call>\n{"name": "f"}\n</tool_call>',  # no arguments
    "<tool_call>\n{'name': 'f', 'arguments': {}}\n</tool_call>",  # Python, not JSON
    'Text < not a tag <tool_c and more <tool_call>{"name": "g", "arguments": {}}</tool_call>',
    '{"name": "f", "arguments": {"x": 1}}',  # no tags at all
]


def splits(text: str) -> list[list[str]]:
    cuts = [[text[i:i + n] for i in range(0, len(text), n)] for n in (1, 3, 7)]
    return cuts + [[p for p in text.replace("<", "\0<").replace('"', '"\0').split("\0") if p]]


def hermes_cases() -> list[dict]:
    return [{"text": t, "deltas": d} for t in OUTPUTS for d in splits(t)]


@pytest.fixture(scope="module")
def vllm_side():
    schema = {"type": "object", "properties": {"unit": {"enum": ["celsius", "fahrenheit"]}},
              "required": ["unit"], "additionalProperties": False}  # structured.py's
    given = {"batches": edge_batches() + random_batches(), "hermes": hermes_cases(),
             "xgrammar": {"vocab": VOCAB, "eos": EOS, "schema": schema}}
    return given, run_in_conformance_venv(DRIVER, given)


def result(outputs: dict, part: str):
    if "error" in outputs[part]:
        pytest.fail(f"vLLM's side failed on {part}:\n{outputs[part]['error'][-3000:]}")
    return outputs[part]["result"]


def close(ours: list[float], theirs: list[float | None]) -> bool:
    """The same -inf positions (None in vLLM's JSON), the rest within rounding."""
    return len(ours) == len(theirs) and all(
        (t is None) == (o == float("-inf")) and (t is None or abs(o - t) <= TOL * max(1, abs(t)))
        for o, t in zip(ours, theirs))


def params_of(req: dict) -> Params:
    return Params(**{k: tuple(v) if k == "stop_token_ids" else v for k, v in req["params"].items()})


def compare(req: dict, theirs: dict, batch_top_p: bool) -> list[str]:
    params = params_of(req)
    ours = sample(req["logits"], params, req["prompt"], req["output"], noise=theirs["noise"],
                  batch_top_p=batch_top_p)
    problems = []
    names = ["penalties"] if params.greedy else ["penalties", "temperature", "min_p", "top_p"]
    for name in names:
        if not close(ours["stages"][name], theirs["stages"][name]):
            problems.append(f"stage {name}: {ours['stages'][name]} vs {theirs['stages'][name]}")
    if ours["token"] != theirs["token"]:
        problems.append(f"token {ours['token']} vs {theirs['token']}")
    for mode in ("raw_logprobs", "processed_logprobs"):
        got, want = top_logprobs(ours[mode], theirs["token"], req_n(theirs, mode)), theirs[mode]
        ids = [got["token"][0]] + [i for i, _ in got["top"]]
        values = [got["token"][1]] + [x for _, x in got["top"]]
        # torch.topk orders tied -inf entries as it likes: their ids are not compared
        same_ids = all(a == b or v is None for a, b, v in zip(ids, want["ids"], want["logprobs"]))
        if not same_ids or got["rank"] != want["rank"] or not close(values, want["logprobs"]):
            problems.append(f"{mode}: {ids} {values} rank {got['rank']} vs {want}")
    return problems


def req_n(theirs: dict, mode: str) -> int:
    """vLLM returns the batch's largest logprobs count for every row: the token + that many."""
    return len(theirs[mode]["ids"]) - 1


def test_the_sampler_matches_vllms_on_every_request(vllm_side):
    given, outputs = vllm_side
    batches = result(outputs, "batches")
    failures, count = [], 0
    for b, (batch, theirs) in enumerate(zip(given["batches"], batches, strict=True)):
        batch_top_p = any(params_of(req).top_p < 1 for req in batch)
        for r, (req, out) in enumerate(zip(batch, theirs, strict=True)):
            count += 1
            failures += [f"batch {b} request {r}: {p}" for p in compare(req, out, batch_top_p)]
    assert count > 300
    assert not failures, f"{len(failures)} differences in {count} requests:\n" + "\n".join(failures[:5])


def test_the_cases_reach_every_rule(vllm_side):
    """The comparison means something only where each rule decides something."""
    given, outputs = vllm_side
    rows = [(req, out) for batch, theirs in zip(given["batches"], result(outputs, "batches"))
            for req, out in zip(batch, theirs)]
    greedy = [(q, o) for q, o in rows if o["params"]["temperature"] < 1e-5]
    rand = [(q, o) for q, o in rows if o["params"]["temperature"] >= 1e-5]
    assert len(greedy) >= 30 and len(rand) >= 150
    assert any(o["params"]["temperature"] == 0.01 for _, o in rand)  # the clamp
    newly = {name: 0 for name in ("min_p", "top_p")}
    before = {"min_p": "temperature", "top_p": "min_p"}
    for _, o in rand:
        for name in newly:
            cut = [a is not None and b is None for a, b in zip(o["stages"][before[name]], o["stages"][name])]
            newly[name] += any(cut)
    assert min(newly.values()) >= 20, newly
    # the random token differs from the greedy one often enough to test the noise rule
    assert sum(o["token"] != max(range(len(q["logits"])), key=lambda i: (o["stages"]["penalties"][i] or -1e9))
               for q, o in rand) >= 50
    # raw and processed logprobs differ where the knobs change the distribution
    assert sum(o["raw_logprobs"]["logprobs"] != o["processed_logprobs"]["logprobs"] for _, o in rows) >= 100


def test_the_hermes_parser_matches_vllms(vllm_side):
    given, outputs = vllm_side
    failures = []
    for case, theirs in zip(given["hermes"], result(outputs, "hermes"), strict=True):
        whole = parse(case["text"])
        if (whole["tools_called"], [list(c) for c in whole["calls"]], whole["content"]) != (
                theirs["tools_called"], theirs["calls"], theirs["content"]):
            failures.append(f"whole {case['text']!r}: {whole} vs {theirs}")
        ours = [None if s is None else {"content": s["content"], "tool_calls": [
            {"index": i, "name": n, "arguments": a, "has_id": n is not None} for i, n, a in s["calls"]]}
            for s in stream(case["deltas"])]
        if ours != theirs["streamed"]:
            failures.append(f"streamed {case['deltas']!r}:\n  ours {ours}\n  vLLM {theirs['streamed']}")
    assert not failures, f"{len(failures)} of {len(given['hermes'])} cases differ:\n" + "\n".join(failures[:4])


def test_the_hermes_cases_reach_every_rule(vllm_side):
    given, outputs = vllm_side
    theirs = result(outputs, "hermes")
    assert sum(t["tools_called"] for t in theirs) >= 12 and sum(not t["tools_called"] for t in theirs) >= 12
    assert any(len(t["calls"]) == 2 for t in theirs)
    streamed = [d for t in theirs for d in t["streamed"] if d]
    assert sum(1 for d in streamed for c in d["tool_calls"] if c["index"] == 1 and c["name"]) >= 4
    assert sum(1 for d in streamed for c in d["tool_calls"] if c["arguments"]) >= 40


def test_the_mask_matches_xgrammars(vllm_side):
    _, outputs = vllm_side
    theirs = result(outputs, "xgrammar")
    ours = {}
    todo = [""]
    while todo:  # every text the course's mask lets through, as the driver walks xgrammar's
        text = todo.pop()
        mask = allowed_tokens(text)
        ours[text] = bitmask(mask)
        todo += [text + t for i, t in enumerate(VOCAB) if mask[i] and i != EOS]
    assert ours == theirs
    # both outputs reached, <eos> allowed exactly at their ends
    assert sorted(
        t for t in ours if allowed_tokens(t)[EOS]) == sorted(ALLOWED)
