"""The lab's time-to-first-token part: a 4,000-token prompt sent after a reset of the
prefix cache (a miss), then again (a hit), ROUNDS times. What prefix_cache.py predicts
of each request; the times are the GPU's to tell, reported and not predicted.

Run: python ttft_hit.py        (the prediction)
     python ttft_hit.py FILE   (reads what lab_ttft.py printed: the medians and ratio)
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

from prefix_cache import PrefixCache

LONG_PROMPT = list(range(10_000, 14_000))  # ordinary Qwen2.5 tokens, no chat template
ROUNDS = 3
POOL = 300  # blocks: one 4,000-token prompt takes 250
LINE = re.compile(
    r"round (\d+) (miss|hit): (\d+) prompt tokens, (\d+) cached, ([\d.]+) ms"
)


def predict() -> list[tuple[str, int, int]]:
    """(kind, prompt tokens, cached tokens) of every request, in order."""
    cache, rows = PrefixCache(POOL), []
    for number in range(ROUNDS):
        if not cache.reset_prefix_cache():
            raise RuntimeError("a request still holds blocks")
        for kind in ("miss", "hit"):
            cached = cache.run(f"{kind}{number}", LONG_PROMPT, max_tokens=1)
            rows.append((kind, len(LONG_PROMPT), cached))
    return rows


def read(text: str) -> tuple[list[tuple[str, int, int]], dict[str, list[float]]]:
    """What lab_ttft.py printed: the requests as predict() gives them, and the times."""
    rows, times = [], {"miss": [], "hit": []}
    for match in LINE.finditer(text):
        rows.append((match[2], int(match[3]), int(match[4])))
        times[match[2]].append(float(match[5]))
    return rows, times


def medians(times: dict[str, list[float]]) -> tuple[float, float]:
    return statistics.median(times["miss"]), statistics.median(times["hit"])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        rows, times = read(Path(sys.argv[1]).read_text("utf-8"))
        verdict = "match" if rows == predict() else "MISMATCH"
        miss, hit = medians(times)
        print(f"cached tokens: {verdict}")
        print(f"median TTFT: miss {miss:.1f} ms, hit {hit:.1f} ms, {miss / hit:.1f}x")
    else:
        for number, (kind, prompt, cached) in enumerate(predict()):
            round_ = number // 2 + 1
            print(f"round {round_} {kind}: {prompt} prompt tokens, {cached} cached")
        _, prompt, cached = predict()[1]
        print(f"a hit computes {prompt - cached} of its {prompt} prompt tokens")
