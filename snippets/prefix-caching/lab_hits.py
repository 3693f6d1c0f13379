"""What the lab's vLLM reports, predicted with prefix_cache.py: the cached tokens of
every request (RequestOutput.num_cached_tokens, or usage.prompt_tokens_details
.cached_tokens over HTTP), what each reset of the prefix cache answers, and the two
prefix cache counters.

Run: python lab_hits.py        (the predictions)
     python lab_hits.py FILE   (checks what lab_prefix.py or lab_prefix_send.py printed)
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from prefix_cache import PrefixCache

# Token ids, not text: the prompt is exactly these tokens, with no chat template. All
# are ordinary Qwen2.5 tokens (its special tokens start at 151643).
PROMPT = list(range(1000, 1100))  # 100 tokens: 6 full blocks and 4 tokens
CHANGED = PROMPT[:50] + [2000] + PROMPT[51:]  # the same, token 50 changed
EXACT = list(range(3000, 3064))  # 64 tokens: exactly 4 blocks
SYSTEM = list(range(4000, 4012))  # a shared "system prompt" of 12 tokens
QUESTION_A, QUESTION_B = list(range(5000, 5020)), list(range(6000, 6020))

# The lab's parts; the prefix cache is reset before each part but the first.
PARTS = {
    "the same prompt twice": [("1a", PROMPT), ("1b", PROMPT)],
    "one token changed": [("2a", PROMPT), ("2b", CHANGED)],
    "a multiple of 16": [("3a", EXACT), ("3b", EXACT)],
    "a shared prefix shorter than a block": [
        ("4a", SYSTEM + QUESTION_A),
        ("4b", SYSTEM + QUESTION_B),
    ],
}
MAX_TOKENS = 1  # each request generates one token: only its prompt is cached
POOL = 64  # blocks: with these nothing is evicted, so vLLM's far bigger pool is alike
COUNTERS = ("vllm:prefix_cache_queries", "vllm:prefix_cache_hits")


@dataclass(frozen=True)
class Report:
    """What a run reports: per request (prompt tokens, cached tokens), in order; what
    each reset answered; the two counters, in tokens."""

    requests: dict[str, tuple[int, int]]
    resets: list[bool]
    counters: dict[str, int]


def predict() -> tuple[Report, PrefixCache]:
    """The lab's requests, one at a time, through the lesson's simulator."""
    cache, requests, resets = PrefixCache(POOL), {}, []
    for number, part in enumerate(PARTS.values()):
        if number:
            resets.append(cache.reset_prefix_cache())
        for name, prompt in part:
            requests[name] = (len(prompt), cache.run(name, prompt, MAX_TOKENS))
    assert not any(done.evicted for done in cache.history), "make POOL bigger"
    counters = dict(zip(COUNTERS, (cache.queries, cache.hits)))
    return Report(requests, resets, counters), cache


# -- reading what the lab printed ------------------------------------------------------

REQUEST = re.compile(r"^\s*(\w+): (\d+) prompt tokens, (\d+) cached$", re.M)
RESET = re.compile(r"^\s*reset_prefix_cache: (\w+)$", re.M)
# LLM.get_metrics() names a counter without _total; GET /metrics adds _total and labels.
COUNTER = re.compile(
    rf"^({'|'.join(COUNTERS)})(?:_total)?(?:\{{[^}}]*\}})? (\S+)$", re.M
)


def read_report(text: str) -> Report:
    """The lines a lab printed: `1b: 100 prompt tokens, 96 cached`,
    `reset_prefix_cache: True`, `vllm:prefix_cache_hits 96` (or as /metrics writes
    it: `vllm:prefix_cache_hits_total{engine="0",...} 96.0`)."""
    requests = {}
    for name, prompt, cached in REQUEST.findall(text):
        if name in requests:
            raise ValueError(f"request {name} is reported twice")
        requests[name] = (int(prompt), int(cached))
    resets = []
    for answer in RESET.findall(text):
        if answer not in ("True", "False"):
            raise ValueError(f"reset_prefix_cache answered {answer!r}, not True/False")
        resets.append(answer == "True")
    counters = {}
    for name, value in COUNTER.findall(text):
        if name in counters:
            raise ValueError(f"{name} appears twice (more than one engine?)")
        if float(value) != int(float(value)):
            raise ValueError(f"{name} is {value}: a counter of tokens is whole")
        counters[name] = int(float(value))
    missing = [name for name in COUNTERS if name not in counters]
    if not requests:
        missing.insert(0, "no line like '1a: 100 prompt tokens, 0 cached'")
    if missing:
        raise ValueError(f"not a report of the lab: {', '.join(missing)}")
    return Report(requests, resets, counters)


def compare(expected: Report, found: Report) -> list[str]:
    """One line per request, reset and counter: match or MISMATCH."""
    lines = []
    for name in dict.fromkeys([*expected.requests, *found.requests]):
        want, got = expected.requests.get(name), found.requests.get(name)
        verdict = "match" if want == got else f"MISMATCH: predicted {want}"
        lines.append(f"{name}: (prompt, cached) = {got} {verdict}")
    verdict = "match" if expected.resets == found.resets else "MISMATCH"
    lines.append(f"resets {found.resets} {verdict}")
    for name in COUNTERS:
        want, got = expected.counters[name], found.counters.get(name)
        verdict = "match" if want == got else f"MISMATCH: predicted {want}"
        lines.append(f"{name} {got} {verdict}")
    return lines


if __name__ == "__main__":
    report, cache = predict()
    block = cache.block_size
    runs = iter(cache.history)
    for number, (title, part) in enumerate(PARTS.items()):
        if number:
            print(f"reset_prefix_cache: {report.resets[number - 1]}")
        print(f"part {number + 1}, {title}:")
        for name, prompt in part:
            done = next(runs)
            tokens, cached = done.prompt_tokens, done.cached_tokens
            print(f"  {name}: {tokens} prompt tokens, {cached} cached")
            most = (tokens - 1) // block
            print(
                f"      {tokens // block} full blocks, at most ({tokens} - 1)"
                f" // {block}"
                f" = {most} can hit; hit {len(done.hit_blocks)}, computed"
                f" {tokens - cached}"
            )
    queries, hits = report.counters.values()
    for name, value in report.counters.items():
        print(f"{name} {value}")
    print(f"hit rate: {hits} / {queries} = {hits / queries:.1%} of the prompt tokens")
    if len(sys.argv) > 1:
        found = read_report(Path(sys.argv[1]).read_text("utf-8", "replace"))
        print("your run:")
        print("\n".join(f"  {line}" for line in compare(report, found)))
