"""What a JSON schema costs, measured: `vllm bench serve` twice against lab_serve.sh's
server with the same random prompts (one seed), once plain and once with every request
held to lab_requests.py's SCHEMA (--extra-body: the completions API's
structured_outputs field, vllm/entrypoints/openai/completion/protocol.py:
CompletionRequest). Answers may end (no --ignore-eos): the schema's grammar ends them
when the JSON is complete.

bench's first request, its untimed test run, compiles the grammar; the xgrammar
backend's compiler keeps it in a cache (vllm/v1/structured_output/backend_xgrammar.py:
XgrammarBackend), so the timed requests pay the mask at every step, not the compiling.

Prints one JSON line per run: requests completed, median TTFT and TPOT (lesson 6's
bench_result.requests_of), output tokens per second, and how many answers end before
max_tokens and how many of those satisfy the schema (lab_answers.lab_json_problems).

Run (in a second terminal): python lab_bench_schema.py [URL] [OUT_DIR]
"""

import json
import statistics
import sys
from pathlib import Path

from bench_result import requests_of
from bench_sweep import bench
from lab_answers import lab_json_problems
from lab_requests import SCHEMA
from perf_model import OUTPUT_LEN

PROMPTS = 64
SEED = 7
HELD = {"structured_outputs": {"json": SCHEMA}}
RUNS = {"plain": [], "schema": ["--extra-body", json.dumps(HELD)]}


def summary(result: dict, schema: bool) -> dict:
    requests = requests_of(result)
    ended = [
        text
        for text, n in zip(result["generated_texts"], result["output_lens"])
        if n < OUTPUT_LEN
    ]
    row = {
        "completed": result["completed"],
        "median_ttft_ms": statistics.median(r["ttft"] for r in requests) * 1000,
        "median_tpot_ms": statistics.median(r["tpot"] for r in requests) * 1000,
        "output_tokens_per_s": result["output_throughput"],
        "mean_output_tokens": statistics.mean(result["output_lens"]),
        "ended_before_max_tokens": len(ended),
    }
    if schema:
        row["ended_and_valid"] = sum(not lab_json_problems(text) for text in ended)
    return row


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
    out = Path(sys.argv[2] if len(sys.argv) > 2 else "bench-schema")
    out.mkdir(parents=True, exist_ok=True)
    for name, flags in RUNS.items():
        bench(url, SEED, PROMPTS, flags, out, name, ignore_eos=False)
        result = json.loads((out / f"{name}.json").read_text("utf-8"))
        print(json.dumps({"run": name, **summary(result, name == "schema")}))
