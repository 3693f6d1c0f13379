"""What the lab must report, from revisits.py's simulation, and a reader for what
lab_offload.py printed: the counters are predicted exactly; the times are the GPU's to
tell, and only their ratio is set beside the estimate.

Run: python lab_revisits.py                    (the prediction)
     python lab_revisits.py NONE.txt TIER.txt  (reads both runs of lab_offload.py)
"""

import re
import statistics
import sys
from pathlib import Path

from revisits import DOCS, OFFLOADING_SIZE_GIB, VISITS, run, ttft

# The GPU prefix cache's lookups (KVCacheManager.get_computed_blocks) and the
# connector's (Scheduler.schedule: connector_prefix_cache_stats), in tokens
# (vllm/v1/metrics/loggers.py: PrometheusStatLogger).
COUNTERS = (
    "vllm:prefix_cache_queries",
    "vllm:prefix_cache_hits",
    "vllm:external_prefix_cache_queries",
    "vllm:external_prefix_cache_hits",
)
LINE = re.compile(r"^(\S+): (\d+) prompt tokens, ([\d.]+) ms$", re.M)
COUNTER = re.compile(r"^(vllm:\S+) ([\d.]+)$", re.M)


def predict(size_gib: float) -> dict[str, int]:
    """The four counters after the 16 requests, with a tier of size_gib GiB (0: none,
    and no connector to count external lookups)."""
    # The GPU cache fares the same without the tier: any tier's run gives its hits.
    visits = run(size_gib or OFFLOADING_SIZE_GIB)
    tier = bool(size_gib)
    return {
        "vllm:prefix_cache_queries": sum(v.prompt_tokens for v in visits),
        "vllm:prefix_cache_hits": sum(v.gpu_hit for v in visits),
        "vllm:external_prefix_cache_queries": tier
        * sum(v.prompt_tokens - v.gpu_hit for v in visits),
        "vllm:external_prefix_cache_hits": tier * sum(v.cpu_hit for v in visits),
    }


def read(text: str) -> tuple[dict[str, float], dict[str, int]]:
    """Each request's time in ms, and the counters (0 for one vLLM did not export)."""
    times = {m[1]: float(m[3]) for m in LINE.finditer(text)}
    found = {m[1]: float(m[2]) for m in COUNTER.finditer(text)}
    return times, {name: int(found.get(name, 0)) for name in COUNTERS}


def revisit_median(times: dict[str, float]) -> float:
    return statistics.median(times[name] for name, _ in VISITS[len(DOCS) :])


def estimated_ratio() -> float:
    """The revisits' estimated TTFT without the tier over with it (revisits.ttft)."""
    pairs = [ttft(v) for v in run(OFFLOADING_SIZE_GIB)[len(DOCS) :]]
    return statistics.median(w for w, _ in pairs) / statistics.median(
        t for _, t in pairs
    )


if __name__ == "__main__":
    if len(sys.argv) == 3:
        (none_times, none), (tier_times, tier) = (
            read(Path(name).read_text("utf-8")) for name in sys.argv[1:]
        )
        for label, found, size in (("no tier", none, 0), ("tier", tier, 4)):
            verdict = "match" if found == predict(size) else "MISMATCH"
            print(f"{label}: counters {verdict} {found}")
        slow, fast = revisit_median(none_times), revisit_median(tier_times)
        print(
            f"median TTFT of a revisit: {slow:.1f} ms without, {fast:.1f} ms with"
            f" the tier: {slow / fast:.1f}x (estimated {estimated_ratio():.1f}x)"
        )
    else:
        for label, size in (
            ("no tier", 0),
            (f"--kv-offloading-size {OFFLOADING_SIZE_GIB}", OFFLOADING_SIZE_GIB),
        ):
            print(f"{label}:")
            for name, value in predict(size).items():
                print(f"  {name} {value:,}")
        print(
            f"revisits' TTFT, without over with the tier: {estimated_ratio():.1f}x"
            " (estimate)"
        )
