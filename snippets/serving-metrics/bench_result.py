"""Recompute every metric of a `vllm bench serve --save-result --save-detailed` JSON
from the per-request data in that same JSON, with serving_metrics.py.

The JSON keeps each request's ttfts, itls, output_lens, input_lens, start_times and
errors, but not its end-to-end latency: vLLM took the latency as the last chunk's time
minus the send time, and TTFT with a second clock reading just after the first chunk's
(vllm/benchmarks/lib/endpoint_request_func.py: async_request_openai_completions). So
ttft + sum(itls) is the latency plus the gap between those two readings (well under a
microsecond): TTFT, ITL, the token counts, the throughputs and the peak tokens per
second come out exact; TPOT and E2EL within TOLERANCE_MS (and the peak concurrency
exact unless a request ends within that gap of a whole second).

A request counts as vLLM counts it (RequestFuncOutput.success): it succeeded when its
first chunk arrived, which sets its TTFT, and no error followed. The JSON keeps no
success flag, and a refused request's error can be empty (response.reason or ""): its
TTFT is the default 0.0.

Run: python bench_result.py RESULT.json [ttft:MS tpot:MS e2el:MS]
     (the SLOs given to --goodput; default: the example file, with this lesson's
     SLOs. A run made without --goodput saves "request_goodput": null: the goodput
     those SLOs give is printed on its own line, with nothing to compare it with)
"""

import json
import math
import sys
from pathlib import Path

from serving_metrics import MS, SLO_METRICS, goodput, summary

EXAMPLE = Path(__file__).with_name("bench_example.json")
SLOS = {"ttft": 500.0, "tpot": 50.0}  # the lab's --goodput ttft:500 tpot:50
TOLERANCE_MS = 0.001  # 1 microsecond: TPOT and E2EL are not saved, only rebuilt
METRICS = ("ttft", "tpot", "itl", "e2el")


def succeeded(result: dict) -> list[int]:
    """The indices of the requests that succeeded: no error, and a first chunk, which
    sets a TTFT above 0 (vllm/benchmarks/lib/endpoint_request_func.py:
    async_request_openai_completions)."""
    missing = [k for k in ("ttfts", "itls", "output_lens", "errors") if k not in result]
    if missing:
        raise ValueError(
            f"the JSON has no {', '.join(missing)}: run vllm bench serve with"
            " --save-result --save-detailed"
        )
    pairs = enumerate(zip(result["errors"], result["ttfts"]))
    return [i for i, (error, ttft) in pairs if not error and ttft > 0]


def requests_of(result: dict) -> list[dict]:
    """The successful requests' metrics."""
    requests = []
    for i in succeeded(result):
        ttft, itls, n = result["ttfts"][i], result["itls"][i], result["output_lens"][i]
        e2el = ttft + sum(itls)
        tpot = (e2el - ttft) / (n - 1) if n > 1 else 0.0
        requests.append(
            {"ttft": ttft, "tpot": tpot, "itls": itls, "e2el": e2el, "output_tokens": n}
        )
    return requests


def percentiles_in(result: dict) -> list[float]:
    """The --metric-percentiles of the run, read off its keys (p99_ttft_ms -> 99)."""
    found = []
    for key in result:
        name, _, rest = key.partition("_")
        if name.startswith("p") and rest in {f"{m}_ms" for m in METRICS}:
            value = float(name[1:])
            if value not in found:
                found.append(value)
    return found


def peaks(result: dict) -> dict:
    """The peak output tokens in a second and the peak requests in flight in a second
    (vllm/benchmarks/serve.py: calculate_metrics), from the token times it keeps."""
    ok = succeeded(result)
    if not ok:
        return {"max_output_tokens_per_s": 0.0, "max_concurrent_requests": 0}
    start = [result["start_times"][i] for i in ok]
    ttft = [result["ttfts"][i] for i in ok]
    itls = [result["itls"][i] for i in ok]
    latency = [t + sum(gaps) for t, gaps in zip(ttft, itls)]
    first = min(start)
    seconds = math.ceil(max(s + e for s, e in zip(start, latency)) - first) + 1
    tokens, in_flight = [0] * seconds, [0] * seconds
    for s, t, gaps, e in zip(start, ttft, itls, latency):
        now = s + t
        times = [now]
        for gap in gaps:
            now += gap
            times.append(now)
        for when in times:
            if 0 <= int(when - first) < seconds:
                tokens[int(when - first)] += 1
        for second in range(int(s - first), int(s + e - first) + 1):
            in_flight[second] += 1
    return {
        "max_output_tokens_per_s": float(max(tokens)),
        "max_concurrent_requests": max(in_flight),
    }


def recompute(result: dict, slos: dict | None = None) -> dict:
    """Every metric the JSON reports, recomputed from its per-request data."""
    requests = requests_of(result)
    ok = succeeded(result)
    duration = result["duration"]
    total_in = sum(result["input_lens"][i] for i in ok)
    total_out = sum(result["output_lens"][i] for i in ok)
    found = {
        "completed": len(requests),
        "failed": len(result["errors"]) - len(ok),
        "total_input_tokens": total_in,
        "total_output_tokens": total_out,
        "request_throughput": len(requests) / duration,
        "output_throughput": total_out / duration,
        "total_token_throughput": (total_in + total_out) / duration,
        **peaks(result),
    }
    if slos:
        found["request_goodput"] = goodput(requests, slos, duration)
    stats = summary(requests, percentiles_in(result))
    found.update((key, value) for key, value in stats.items() if key in result)
    return found


def tolerance(key: str) -> float:
    return TOLERANCE_MS if key.endswith(("_tpot_ms", "_e2el_ms")) else 0.0


def compare(
    result: dict, slos: dict | None = None
) -> list[tuple[str, object, object, bool]]:
    """(key, reported, recomputed, agrees) for every metric the JSON reports (a run
    without --goodput reports its goodput as null: nothing to compare)."""
    rows = []
    for key, value in recompute(result, slos).items():
        reported = result[key]
        if reported is None:
            continue
        agrees = abs(reported - value) <= tolerance(key)
        rows.append((key, reported, value, agrees))
    return rows


def read_slos(words: list[str]) -> dict:
    slos = {}
    for word in words:
        name, _, value = word.partition(":")
        if name not in SLO_METRICS or not value:
            raise ValueError(
                f"an SLO is written NAME:MS, NAME one of ttft, tpot, e2el: {word!r}"
            )
        slos[name] = float(value)
    return slos


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else EXAMPLE
    slos = read_slos(sys.argv[2:]) if len(sys.argv) > 2 else SLOS
    result = json.loads(path.read_text("utf-8"))
    rows = compare(result, slos)
    print(f"{'metric':<26} {'reported':>12}  recomputed")
    for key, reported, value, agrees in rows:
        if value == reported:
            how = "exactly"
        else:
            how = f"{value - reported:+.1e} off, within {TOLERANCE_MS * MS:g} us"
        verdict = how if agrees else f"DIFFERS: {value}"
        shown = f"{reported:.4f}" if isinstance(reported, float) else reported
        print(f"{key:<26} {shown:>12}  {verdict}")
    print(f"{sum(r[3] for r in rows)} of {len(rows)} metrics agree")
    if result.get("request_goodput") is None and slos:
        said = " ".join(f"{name}:{value:g}" for name, value in slos.items())
        print(
            f"request_goodput: not in the JSON (a run without --goodput); with {said}:"
            f" {recompute(result, slos)['request_goodput']:.4f} req/s"
        )
