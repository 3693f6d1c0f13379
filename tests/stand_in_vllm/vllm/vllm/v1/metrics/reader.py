"""The stand-in's vllm/v1/metrics/reader.py: the snapshot LLM.get_metrics() returns, with
vLLM 0.26.0's dataclasses (the stand-in models gauges only)."""

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
