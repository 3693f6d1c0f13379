"""Benchmark the server of bench_serve.sh with `vllm bench serve`: a warm-up, three
request rates (open loop: Poisson arrivals) and a concurrency sweep (closed loop: a
fixed number of requests in flight), each with its own seed, so that no run finds
another's prompts in the prefix cache. Each run saves its JSON with the per-request
data (--save-result --save-detailed), and the server's /metrics before and after it.

Run (in a second terminal): python bench_sweep.py [URL] [OUT_DIR]
     then: python bench_result.py OUT_DIR/rate-2.json ttft:500 tpot:50
"""

import subprocess
import sys
import urllib.request
from pathlib import Path

from perf_model import INPUT_LEN, NUM_PROMPTS, OUTPUT_LEN, RATES

MODEL = "Qwen/Qwen2.5-7B-Instruct"
GOODPUT = ["ttft:500", "tpot:50"]  # SLOs in ms, the lesson's
CONCURRENCY = (1, 8, 64)
# name -> (its own seed, prompts, its flags)
RUNS = {f"rate-{r:g}": (i + 1, NUM_PROMPTS, ["--request-rate", f"{r:g}"])
        for i, r in enumerate(RATES)}  # fmt: skip
RUNS.update(
    (f"concurrency-{c}", (10 + c, max(16, 4 * c), ["--max-concurrency", str(c)]))
    for c in CONCURRENCY
)


def bench(
    url: str,
    seed: int,
    prompts: int,
    flags: list[str],
    out: Path,
    name: str,
    ignore_eos: bool = True,
):
    """One `vllm bench serve` run; with a name, its JSON is saved as OUT/NAME.json. A
    later lesson lets its answers end (ignore_eos=False) and adds flags of its own."""
    command = [
        "vllm", "bench", "serve", "--backend", "openai", "--base-url", url,
        "--model", MODEL, "--dataset-name", "random",
        "--random-input-len", str(INPUT_LEN), "--random-output-len", str(OUTPUT_LEN),
        "--num-prompts", str(prompts), "--seed", str(seed),
        "--percentile-metrics", "ttft,tpot,itl,e2el",
        "--metric-percentiles", "50,90,99",
        "--goodput", *GOODPUT, *flags,
    ] + (["--ignore-eos"] if ignore_eos else [])  # fmt: skip
    if name:
        command += ["--save-result", "--save-detailed", "--result-dir", str(out),
                    "--result-filename", f"{name}.json"]  # fmt: skip
    subprocess.run(command, check=True, stdout=sys.stderr)


def scrape(url: str) -> str:
    with urllib.request.urlopen(f"{url}/metrics", timeout=60) as response:
        return response.read().decode()


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
    out = Path(sys.argv[2] if len(sys.argv) > 2 else "bench-results")
    out.mkdir(parents=True, exist_ok=True)
    bench(url, 100, 16, [], out, "")  # warm-up: not saved, a seed of its own
    for name, (seed, prompts, flags) in RUNS.items():
        (out / f"{name}.before.prom").write_text(scrape(url), "utf-8")
        bench(url, seed, prompts, flags, out, name)
        (out / f"{name}.after.prom").write_text(scrape(url), "utf-8")
        print(f"{name}: {out / (name + '.json')}")
