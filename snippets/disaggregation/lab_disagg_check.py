"""What the lab must show, and a reader for what lab_disagg_send.py printed: with
ExampleConnector, a decode instance loads a saved prompt's KV up to the block boundary
below its last token (remote_kv.external_tokens), so of a 1,000-token prompt it computes
only the last 8 tokens itself; a fresh prompt it computes whole. The connector
counts every prompt token past the local prefix-cache hit as queried and the loaded
ones as hits (vllm/v1/core/sched/scheduler.py: Scheduler.schedule,
connector_prefix_cache_stats).

Run: python lab_disagg_check.py [sent.txt]; without a file it prints the prediction.
"""

import re
import sys

from remote_kv import external_tokens

PROMPT_TOKENS = 1000
ROUNDS = 4
# vllm/v1/metrics/loggers.py: PrometheusStatLogger, counters end in _total over HTTP
COUNTERS = (
    "vllm:external_prefix_cache_queries_total",
    "vllm:external_prefix_cache_hits_total",
)
LINE = re.compile(r"(\w+) (\d+): (\d+) prompt, (\d+) cached, ([\d.]+) ms")


def predict(prompt_tokens: int = PROMPT_TOKENS, rounds: int = ROUNDS) -> dict:
    """Each request's (prompt tokens, cached tokens), and the decode side's counters."""
    loaded, _ = external_tokens("ExampleConnector", prompt_tokens, 0)
    requests = {}
    for number in range(1, rounds + 1):
        requests[f"aggregated {number}"] = (prompt_tokens, 0)
        requests[f"prefill {number}"] = (prompt_tokens, 0)
        requests[f"disaggregated {number}"] = (prompt_tokens, loaded)
    counters = {COUNTERS[0]: 2 * rounds * prompt_tokens, COUNTERS[1]: rounds * loaded}
    return {"requests": requests, "counters": counters}


def read(text: str) -> tuple[dict, dict]:
    """What lab_disagg_send.py printed: the report predict() gives, and the times."""
    requests, times, counters = {}, {}, {}
    for raw in text.splitlines():
        found = LINE.fullmatch(raw.strip())
        if found:
            kind, number, prompt, cached, ms = found.groups()
            requests[f"{kind} {number}"] = (int(prompt), int(cached))
            times[f"{kind} {number}"] = float(ms)
        elif raw.startswith(COUNTERS):
            name = raw.split("{")[0].split(" ")[0]
            counters[name] = counters.get(name, 0) + round(float(raw.split()[-1]))
    return {"requests": requests, "counters": counters}, times


if __name__ == "__main__":
    expected = predict()
    if len(sys.argv) > 1:
        with open(sys.argv[1], encoding="utf-8") as sent:
            found, times = read(sent.read())
        print("as predicted" if found == expected else f"differs: {found}")
    else:
        loaded = expected["requests"]["disaggregated 1"][1]
        print(
            f"a {PROMPT_TOKENS}-token prompt: the decode instance loads {loaded}"
            f" tokens' KV and computes {PROMPT_TOKENS - loaded}"
        )
        for name, value in expected["counters"].items():
            print(f"{name}: {value:,}")
