"""What the GPU job checks of the KV offloading lab (coursekit/gpu_labs.py).

lab_offload.py runs twice, without a CPU tier and with --kv-offloading-size 4 (GiB):
16 requests, 8 documents of 6,000 tokens sent once and then again, on a KV cache of
exactly 2 GiB. The four prefix cache counters (GPU and connector lookups, in tokens)
must be what revisits.py predicts, and each request's prompt 6,000 tokens; the median
TTFT of the revisits with and without the tier is reported beside the estimate, not
asserted.
"""

from lab_revisits import (
    COUNTERS,
    estimated_ratio,
    predict,
    read,
    revisit_median,
)
from revisits import DOC_TOKENS, OFFLOADING_SIZE_GIB, VISITS


def lab_offload_py(lab):
    """Both runs; the counters would show prefix caching turned off (no GPU queries),
    and LLM.get_metrics() fails without disable_log_stats=False."""
    runs = {}
    for size in (0, OFFLOADING_SIZE_GIB):
        run = lab.run_python("lab_offload.py", str(size))
        times, found = read(run.stdout)
        expected = predict(size)
        rows = {
            name: f"{found[name]:,} (predicted {expected[name]:,})" for name in COUNTERS
        }
        rows["requests answered"] = f"{len(times)} (sent {len(VISITS)})"
        lab.report(f"lab_offload.py {size}: counters", rows)
        assert sorted(times) == sorted(name for name, _ in VISITS), (
            f"lab_offload.py {size}: answered {sorted(times)}"
        )
        assert found == expected, (
            f"lab_offload.py {size}: {found}, predicted {expected}"
        )
        assert f"{DOC_TOKENS} prompt tokens" in run.stdout
        runs[size] = times
    slow, fast = revisit_median(runs[0]), revisit_median(runs[OFFLOADING_SIZE_GIB])
    lab.report(
        "lab_offload.py: time to first token of a revisit",
        {
            "median without the tier": f"{slow:.1f} ms",
            "median with the tier": f"{fast:.1f} ms",
            "without / with": f"{slow / fast:.1f}x measured,"
            f" {estimated_ratio():.1f}x estimated (not asserted)",
        },
    )


CHECKS = {"lab_offload.py": lab_offload_py}
