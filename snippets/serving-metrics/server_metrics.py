"""What the server's own Prometheus metrics (GET /metrics) must show of a benchmark run:
read two scrapes, one before and one after the run, and compare what they grew by with
the run's bench JSON. vLLM observes them in the API server's output handler
(vllm/v1/metrics/loggers.py: PrometheusStatLogger.record): per request, TTFT at its
first output, one inter-token latency per later output, and at its end its e2e latency
and its mean time per output token; tokens are counted as the engine reports them.

Run: python server_metrics.py BEFORE.prom AFTER.prom RESULT.json
"""

import json
import sys
from pathlib import Path


def read_samples(text: str) -> dict[str, float]:
    """Prometheus text format: each sample's value, summed over its label sets."""
    samples: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name_labels, _, value = line.rpartition(" ")
        name = name_labels.split("{")[0]
        if not name:
            raise ValueError(f"not a Prometheus sample line: {line!r}")
        samples[name] = samples.get(name, 0.0) + float(value)
    return samples


def grew(before: str, after: str) -> dict[str, float]:
    """How much each sample grew from one scrape to the next."""
    old, new = read_samples(before), read_samples(after)
    return {name: value - old.get(name, 0.0) for name, value in new.items()}


def expected_counts(result: dict) -> dict[str, int]:
    """What each count must grow by during a run of `completed` requests that generated
    total_output_tokens tokens (no warm-up inside the run: --num-warmups 0)."""
    done, out = result["completed"], result["total_output_tokens"]
    return {
        "vllm:request_success_total": done,
        "vllm:prompt_tokens_total": result["total_input_tokens"],
        "vllm:generation_tokens_total": out,
        "vllm:time_to_first_token_seconds_count": done,
        "vllm:inter_token_latency_seconds_count": out - done,
        "vllm:e2e_request_latency_seconds_count": done,
        "vllm:request_time_per_output_token_seconds_count": done,
    }


def server_means_ms(growth: dict[str, float]) -> dict[str, float]:
    """The server's mean TTFT, ITL, TPOT and e2e latency over the run (sum / count)."""
    means = {}
    for label, name in (
        ("TTFT", "vllm:time_to_first_token_seconds"),
        ("ITL", "vllm:inter_token_latency_seconds"),
        ("TPOT (per request)", "vllm:request_time_per_output_token_seconds"),
        ("E2EL", "vllm:e2e_request_latency_seconds"),
    ):
        count = growth.get(f"{name}_count", 0.0)
        means[label] = growth.get(f"{name}_sum", 0.0) / count * 1000 if count else 0.0
    return means


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: python server_metrics.py BEFORE.prom AFTER.prom RESULT.json")
    before, after, result = (Path(arg).read_text("utf-8") for arg in sys.argv[1:])
    growth = grew(before, after)
    for name, count in expected_counts(json.loads(result)).items():
        found = growth.get(name, 0.0)
        print(f"{name}: grew by {found:g}, expected {count}: {found == count}")
    for label, value in server_means_ms(growth).items():
        print(f"server's mean {label}: {value:.2f} ms")
