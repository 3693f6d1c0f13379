"""What the server's ITL histogram can say of a percentile: Prometheus keeps only each
bucket's count, and histogram_quantile interpolates linearly inside the bucket where the
rank falls. vLLM's buckets for vllm:inter_token_latency_seconds start at 10, 25, 50 and
75 ms (vllm/v1/metrics/loggers.py: PrometheusStatLogger.__init__), so a tail of 14-40 ms
ITLs lands in two buckets of 15 and 25 ms. Here: the example run's ITLs, the client's
percentiles of every sample against what the histogram of the same samples gives.
"""

import json
from pathlib import Path

from serving_metrics import MS, percentile

# fmt: off
ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0,
               2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0]  # seconds, and +Inf
# fmt: on


def bucket_counts(values: list[float], bounds: list[float]) -> list[int]:
    """The cumulative count of each bucket (le=bound), then +Inf's: what /metrics
    shows."""
    return [sum(v <= bound for v in values) for bound in bounds] + [len(values)]


def histogram_quantile(q: float, bounds: list[float], cumulative: list[int]) -> float:
    """Prometheus' histogram_quantile (promql/quantile.go: BucketQuantile): the rank
    q x count, found in the first bucket whose cumulative count reaches it, and placed
    linearly between that bucket's lower and upper bound (the first bucket starts at 0;
    a rank in +Inf returns the highest finite bound)."""
    if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0 < q <= 1:
        raise ValueError(f"a quantile is a number above 0 and at most 1, got {q!r}")
    total = cumulative[-1]
    if total == 0:
        raise ValueError("the histogram is empty: no sample to take a quantile of")
    rank = q * total
    index = next(i for i, count in enumerate(cumulative) if count >= rank)
    if index == len(bounds):
        return bounds[-1]
    below = cumulative[index - 1] if index else 0
    lower = bounds[index - 1] if index else 0.0
    return lower + (bounds[index] - lower) * (rank - below) / (
        cumulative[index] - below
    )


if __name__ == "__main__":
    result = json.loads(
        Path(__file__).with_name("bench_example.json").read_text("utf-8")
    )
    itls = [gap for gaps in result["itls"] for gap in gaps]
    counts = bucket_counts(itls, ITL_BUCKETS)
    print(f"{len(itls)} ITLs from {min(itls) * MS:.1f} to {max(itls) * MS:.1f} ms;"
          f" buckets up to 10/25/50 ms hold"
          f" {counts[0]}/{counts[1]}/{counts[2]}")  # fmt: skip
    print("       every sample  the histogram")
    for p in (50, 90, 99):
        exact = percentile(itls, p) * MS
        binned = histogram_quantile(p / 100, ITL_BUCKETS, counts) * MS
        print(
            f"p{p:<3} {exact:>10.1f} ms {binned:>11.1f} ms  ({binned - exact:+.1f} ms)"
        )
