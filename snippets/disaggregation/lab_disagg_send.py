"""The lab's proxy, in a few lines: in each round, one fresh prompt goes straight to
the decode instance (aggregated: it computes the whole prompt itself), and another
first to the prefill instance with max_tokens=1 (its ExampleConnector saves the
prompt's KV to the shared folder), then to the decode instance (whose ExampleConnector
loads it). Prints the cached tokens vLLM reports for each request, its time, and the
decode instance's KV connector counters.

Run (with both servers up): python lab_disagg_send.py http://127.0.0.1:8100 \
    http://127.0.0.1:8200 > sent.txt; python lab_disagg_check.py sent.txt
"""

import json
import random
import sys
import time
import urllib.request

from lab_disagg_check import COUNTERS, PROMPT_TOKENS, ROUNDS

MODEL = "Qwen/Qwen2.5-7B-Instruct-AWQ"
rng = random.Random()  # fresh prompts on every run: the shared folder may hold old ones


def complete(url: str, prompt: list[int], max_tokens: int) -> tuple[dict, float]:
    body = {"model": MODEL, "prompt": prompt, "max_tokens": max_tokens,
            "temperature": 0.0, "ignore_eos": True}  # fmt: skip
    request = urllib.request.Request(
        url + "/v1/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as response:
        usage = json.load(response)["usage"]
    return usage, (time.perf_counter() - start) * 1000


def line(kind: str, number: int, usage: dict, ms: float) -> str:
    # prompt_tokens_details is there with --enable-prompt-tokens-details only
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    prompt = usage["prompt_tokens"]
    return f"{kind} {number}: {prompt} prompt, {cached} cached, {ms:.1f} ms"


if __name__ == "__main__":
    prefill_url, decode_url = sys.argv[1], sys.argv[2]
    for number in range(1, ROUNDS + 1):
        # Token ids of ordinary words in Qwen's vocabulary, none shared between prompts.
        alone, split = ([rng.randrange(1000, 100000) for _ in range(PROMPT_TOKENS)]
                        for _ in range(2))  # fmt: skip
        print(line("aggregated", number, *complete(decode_url, alone, 1)))
        usage, prefill_ms = complete(prefill_url, split, 1)  # the proxy's first leg
        print(line("prefill", number, usage, prefill_ms))
        usage, decode_ms = complete(decode_url, split, 1)  # and its second
        print(line("disaggregated", number, usage, prefill_ms + decode_ms))
    with urllib.request.urlopen(decode_url + "/metrics", timeout=30) as response:
        metrics = response.read().decode()
    print("\n".join(m for m in metrics.splitlines() if m.startswith(COUNTERS)))
