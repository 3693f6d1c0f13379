"""Serving metrics exactly as `vllm bench serve` (vLLM 0.26.0) computes them.

A client sends a request at time `sent` and sees its tokens arrive at `token_times`
(vllm/benchmarks/lib/endpoint_request_func.py: async_request_openai_completions: the
first streamed chunk gives TTFT, each later chunk one inter-token latency, the last
chunk the end-to-end latency). vllm/benchmarks/serve.py: calculate_metrics turns the
requests into means, medians, standard deviations and percentiles with numpy; the
functions below reproduce numpy's arithmetic (pairwise summation, linear
interpolation) in the standard library, to the last bit.
"""

import math

MS = 1000  # vLLM reports every latency in milliseconds


def _times(name: str, values) -> list[float]:
    values = list(values)
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} must be numbers, got {value!r}")
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be finite and not negative, got {value!r}")
    return [float(value) for value in values]


def request_metrics(
    sent: float, token_times: list[float], output_tokens: int | None = None
) -> dict:
    """One request's metrics from its send time and the arrival times of its streamed
    chunks. output_tokens is the usage's completion_tokens, which vLLM divides by: a
    chunk can carry several tokens (speculative decoding, stream_interval); without it,
    one token per chunk. TPOT leaves out the first token: (e2el - ttft) divided by
    output_tokens - 1; with one output token it is 0.0, which vLLM counts for goodput
    but leaves out of the TPOT statistics."""
    (sent,) = _times("sent", [sent])
    times = _times("token_times", token_times)
    if not times:
        raise ValueError("a request needs at least one token time")
    if any(b < a for a, b in zip([sent, *times], times)):
        raise ValueError(f"token times must not come before {sent} or go back in time")
    n = len(times) if output_tokens is None else output_tokens
    if isinstance(n, bool) or not isinstance(n, int) or n < len(times):
        raise ValueError(
            f"output_tokens must be a whole number of at least {len(times)},"
            f" one per chunk: {output_tokens!r}"
        )
    ttft = times[0] - sent
    e2el = times[-1] - sent  # latency = most_recent_timestamp - st
    return {
        "ttft": ttft,
        "tpot": (e2el - ttft) / (n - 1) if n > 1 else 0.0,
        "itls": [b - a for a, b in zip(times, times[1:])],
        "e2el": e2el,
        "output_tokens": n,
    }


def _pairwise_sum(values: list[float]) -> float:
    """numpy's sum of float64 (numpy/_core/src/umath/loops_utils.h.src: pairwise_sum):
    eight running sums in blocks of up to 128 values, halves above that."""
    n = len(values)
    if n < 8:
        total = 0.0
        for value in values:
            total += value
        return total
    if n <= 128:
        sums = values[:8]
        whole = n - n % 8
        for i in range(8, whole, 8):
            sums = [s + v for s, v in zip(sums, values[i : i + 8])]
        total = ((sums[0] + sums[1]) + (sums[2] + sums[3])) + (
            (sums[4] + sums[5]) + (sums[6] + sums[7])
        )
        for value in values[whole:]:
            total += value
        return total
    half = n // 2
    half -= half % 8
    return _pairwise_sum(values[:half]) + _pairwise_sum(values[half:])


def mean(values: list[float]) -> float:
    """np.mean(values or 0): 0.0 for no values, as vLLM reports an empty metric."""
    values = _times("values", values)
    return _pairwise_sum(values) / len(values) if values else 0.0


def std(values: list[float]) -> float:
    """np.std(values or 0): the population standard deviation."""
    values = _times("values", values)
    if not values:
        return 0.0
    average = mean(values)
    return math.sqrt(
        _pairwise_sum([(v - average) * (v - average) for v in values]) / len(values)
    )


def median(values: list[float]) -> float:
    """np.median(values or 0): the middle value, or the mean of the middle two."""
    values = sorted(_times("values", values))
    if not values:
        return 0.0
    middle = len(values) // 2
    if len(values) % 2:
        return values[middle]
    return (values[middle - 1] + values[middle]) / 2


def percentile(values: list[float], p: float) -> float:
    """np.percentile(values or 0, p), numpy's default ("linear"): the value at position
    (n - 1) * p / 100 of the sorted values, interpolated between its two neighbours."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 100:
        raise ValueError(f"a percentile is a number from 0 to 100, got {p!r}")
    values = sorted(_times("values", values)) or [0.0]
    position = (len(values) - 1) * (p / 100)
    below = math.floor(position)
    above = min(below + 1, len(values) - 1)
    t = position - below
    a, b = values[below], values[above]
    # numpy's _lerp: from the lower neighbour below t = 0.5, from the upper one above.
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


SLO_METRICS = ("ttft", "tpot", "e2el")  # what --goodput takes, in milliseconds


def goodput(requests: list[dict], slos: dict, duration: float) -> float:
    """Requests per second that met every SLO (`--goodput ttft:MS tpot:MS e2el:MS`):
    a request is good when each of its metrics is at most its SLO; a one-token request
    counts with TPOT 0 (vllm/benchmarks/serve.py: calculate_metrics)."""
    if not slos:
        raise ValueError("goodput needs at least one SLO")
    for name, limit in slos.items():
        if name not in SLO_METRICS:
            raise ValueError(f"an SLO is one of {', '.join(SLO_METRICS)}, got {name!r}")
        _times(f"the SLO of {name}", [limit])
    (duration,) = _times("duration", [duration])
    if duration == 0:
        raise ValueError("duration must be more than 0 seconds")
    good = sum(
        all(limit / MS >= request[name] for name, limit in slos.items())
        for request in requests
    )
    return good / duration


def summary(requests: list[dict], percentiles=(99,)) -> dict:
    """The latency statistics of `vllm bench serve`, in ms, under its JSON keys:
    mean_/median_/std_/pNN_ of ttft, tpot (requests of more than one token only),
    itl (every gap of every request) and e2el."""
    series = {
        "ttft": [r["ttft"] for r in requests],
        "tpot": [r["tpot"] for r in requests if r["output_tokens"] > 1],
        "itl": [gap for r in requests for gap in r["itls"]],
        "e2el": [r["e2el"] for r in requests],
    }
    result = {}
    for name, values in series.items():
        result[f"mean_{name}_ms"] = mean(values) * MS
        result[f"median_{name}_ms"] = median(values) * MS
        result[f"std_{name}_ms"] = std(values) * MS
        for p in percentiles:
            word = str(int(p)) if int(p) == p else str(p)
            result[f"p{word}_{name}_ms"] = percentile(values, p) * MS
    return result


if __name__ == "__main__":
    # Three requests sent at t = 0 s, 0.1 s and 0.2 s; the times their tokens arrived.
    runs = {
        "A": (0.0, [0.25, 0.28, 0.31, 0.34, 0.37]),
        "B": (0.1, [0.30, 0.34, 0.42, 0.46]),
        "C": (0.2, [0.36]),  # one output token
    }
    requests = {name: request_metrics(*run) for name, run in runs.items()}
    for name, r in requests.items():
        itls = ", ".join(f"{gap * MS:.0f}" for gap in r["itls"]) or "-"
        print(
            f"{name}: TTFT {r['ttft'] * MS:.0f} ms  TPOT {r['tpot'] * MS:.1f} ms"
            f"  E2EL {r['e2el'] * MS:.0f} ms  ITLs [{itls}] ms"
        )
    stats = summary(list(requests.values()), percentiles=(50, 90, 99))
    for name in ("ttft", "tpot", "itl", "e2el"):
        cells = "  ".join(
            f"{key.split('_')[0]} {stats[key]:.2f}"
            for key in stats
            if key.endswith(f"_{name}_ms")
        )
        print(f"{name:>4} (ms): {cells}")
    slos = {"ttft": 200, "tpot": 40}
    # vllm bench serve's duration runs from the run's start (t = 0) to the last token.
    duration = max(times[-1] for _, times in runs.values())
    good = goodput(list(requests.values()), slos, duration)
    print(f"goodput under {slos} over {duration * MS:.0f} ms: {good:.2f} req/s")
