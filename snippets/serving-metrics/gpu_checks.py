"""What the GPU job checks of the serving metrics lab on the RTX 4090 (see
coursekit/gpu_labs.py).

bench_serve.sh serves Qwen2.5-7B-Instruct with the KV cache perf_model.py assumes;
bench_sweep.py runs `vllm bench serve` against it: a warm-up, three request rates and a
concurrency sweep, saving each run's JSON and the server's /metrics before and after it.
For every run, every metric the JSON reports must come out of its per-request data with
bench_result.py (exactly, or within a microsecond for TPOT and E2EL, which the JSON does
not keep), and server_metrics.py must find the server's counts grown by exactly what the
JSON says. perf_model.py's predictions for the three rates are reported next to what
was measured, with their ratio: reported, not asserted (they are estimates).

server_metrics.py's check reads the sweep bench_sweep.py's check left in the lab's log
folder (the page shows bench_sweep.py first, and the job runs the checks in page order);
without it, it runs the sweep itself.
"""

import json

from bench_result import SLOS, compare, read_slos
from bench_sweep import GOODPUT, MODEL, RUNS
from coursekit.vllm_claims import serve_options
from perf_model import KV_CACHE_MEMORY_BYTES, predict_rate
from server_metrics import expected_counts, grew, server_means_ms

DONE = "sweep.done"
COMPARED = ("p50_ttft_ms", "p99_ttft_ms", "p50_itl_ms", "p99_itl_ms",
            "request_throughput", "output_throughput")  # fmt: skip


def sweep(lab):
    """Serve, run bench_sweep.py, and return the folder of its results."""
    script = lab.folder / "bench_serve.sh"
    options = serve_options(script)
    assert options.get("model") == MODEL, "bench_serve.sh serves another model"
    assert options.get("kv_cache_memory_bytes") == KV_CACHE_MEMORY_BYTES, (
        f"bench_serve.sh must fix the KV cache perf_model.py assumes:"
        f" --kv-cache-memory-bytes {KV_CACHE_MEMORY_BYTES}"
    )
    assert read_slos(GOODPUT) == SLOS, (
        "bench_sweep.py and bench_result.py differ in SLOs"
    )
    out = lab.log_dir / "bench"
    (out / DONE).unlink(missing_ok=True)
    with lab.serve("bench_serve.sh") as server:
        lab.run_python("bench_sweep.py", server.url, str(out))
    (out / DONE).write_text("\n".join(RUNS), "utf-8")
    return out


def bench_sweep_py(lab):
    out = sweep(lab)
    for name in RUNS:
        result = json.loads((out / f"{name}.json").read_text("utf-8"))
        rows = compare(result, SLOS)
        lab.report(
            f"bench_sweep.py, {name}: every metric recomputed from its JSON",
            {key: f"{reported} (recomputed {value})" + ("" if ok else " DIFFERS")
             for key, reported, value, ok in rows},
        )  # fmt: skip
        wrong = [key for key, _, _, ok in rows if not ok]
        assert not wrong, f"{name}: recomputed differently: {', '.join(wrong)}"
        if name.startswith("rate-"):
            rate = float(name.removeprefix("rate-"))
            predicted = predict_rate(rate)
            lab.report(
                f"bench_sweep.py, {name}: perf_model.py's estimates",
                {key: f"measured {result[key]:.2f}, predicted {predicted[key]:.2f},"
                 f" ratio {result[key] / predicted[key]:.2f}" for key in COMPARED},
            )  # fmt: skip


def server_metrics_py(lab):
    out = lab.log_dir / "bench"
    if not (out / DONE).is_file():
        out = sweep(lab)
    for name in RUNS:
        files = [str(out / f"{name}.{part}") for part in ("before.prom", "after.prom")]
        run = lab.run_python("server_metrics.py", *files, str(out / f"{name}.json"))
        result = json.loads((out / f"{name}.json").read_text("utf-8"))
        before, after = ((out / f"{name}.{p}.prom").read_text("utf-8")
                         for p in ("before", "after"))  # fmt: skip
        growth = grew(before, after)
        expected = expected_counts(result)
        rows = {key: f"grew by {growth.get(key, 0.0):g}, expected {count}"
                for key, count in expected.items()}  # fmt: skip
        means = server_means_ms(growth)
        rows["server's mean TTFT / the bench's"] = (
            f"{means['TTFT']:.2f} / {result['mean_ttft_ms']:.2f} ms"
        )
        lab.report(f"server_metrics.py, {name}: /metrics grew by", rows)
        wrong = [key for key, count in expected.items() if growth.get(key) != count]
        assert not wrong, f"{name}: /metrics did not grow as the JSON says: {wrong}"
        assert "False" not in run.stdout, run.stdout


CHECKS = {"bench_sweep.py": bench_sweep_py, "server_metrics.py": server_metrics_py}
