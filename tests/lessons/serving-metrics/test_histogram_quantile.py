"""histogram_quantile.py: vLLM's ITL buckets as the pinned wheel defines them, and
Prometheus' interpolation on cases worked by hand."""

import ast

import pytest
from histogram_quantile import ITL_BUCKETS, bucket_counts, histogram_quantile

from coursekit import vllm_source


def vllm_histogram_buckets(name: str) -> list[float]:
    """The buckets= list of the histogram vLLM names `name`, read from loggers.py."""
    tree = ast.parse((vllm_source.source_dir() / "vllm/v1/metrics/loggers.py").read_text("utf-8"))
    for call in ast.walk(tree):
        keywords = {k.arg: k.value for k in getattr(call, "keywords", [])}
        if isinstance(call, ast.Call) and isinstance(keywords.get("name"), ast.Constant) \
                and keywords["name"].value == name:
            return ast.literal_eval(keywords["buckets"])
    raise AssertionError(f"no histogram {name} in loggers.py")


def test_the_buckets_are_vllms():
    assert ITL_BUCKETS == vllm_histogram_buckets("vllm:inter_token_latency_seconds")
    assert ITL_BUCKETS == vllm_histogram_buckets("vllm:request_time_per_output_token_seconds")


def test_prometheus_interpolation_by_hand():
    bounds = [0.01, 0.025, 0.05]
    counts = bucket_counts([0.012, 0.02, 0.03, 0.04, 0.2], bounds)
    assert counts == [0, 2, 4, 5]
    # rank 2.5 of 5: the (25, 50] ms bucket holds ranks 3-4, half a sample in
    assert histogram_quantile(0.5, bounds, counts) == pytest.approx(0.025 + 0.025 * 0.5 / 2)
    # rank 0.5: the first non-empty bucket from its lower bound, 10 ms
    assert histogram_quantile(0.1, bounds, counts) == pytest.approx(0.01 + 0.015 * 0.5 / 2)
    # rank 4.95 falls in +Inf: the highest finite bound
    assert histogram_quantile(0.99, bounds, counts) == 0.05
    assert histogram_quantile(0.5, [0.01, 0.025], [1, 2, 2]) == pytest.approx(0.01)
    for bad in (0, 1.5, -0.1, True, "0.5"):
        with pytest.raises(ValueError, match="a quantile is a number above 0"):
            histogram_quantile(bad, bounds, counts)
    with pytest.raises(ValueError, match="the histogram is empty"):
        histogram_quantile(0.5, bounds, [0, 0, 0, 0])
