"""The stand-in's vllm/v1/metrics/reader.py: the snapshot LLM.get_metrics() returns, with
vLLM 0.26.0's dataclasses (the stand-in models a few gauges, a counter and a histogram)."""

from dataclasses import dataclass


@dataclass
class Metric:
    name: str
    labels: dict[str, str]


@dataclass
class Counter(Metric):
    value: int


@dataclass
class Gauge(Metric):
    value: float


@dataclass
class Histogram(Metric):
    """Buckets: the cumulative count of each upper bound, keyed as prometheus_client writes
    the bound ("1.0", ..., "+Inf")."""

    count: int
    sum: float
    buckets: dict[str, int]
