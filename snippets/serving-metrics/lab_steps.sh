#!/usr/bin/env bash
# Lesson 6's lab, step by step: serve Qwen2.5-7B-Instruct, benchmark it with vllm bench serve at three request rates and three concurrencies, then recompute the rate-2 run's metrics with bench_result.py and compare them with the server's /metrics with server_metrics.py.
# Run it from the unzipped lesson folder on the GPU machine, after installing vLLM 0.26.0 (pip install vllm==0.26.0); serving-metrics-lab.zh.ipynb and serving-metrics-lab.en.ipynb run the same steps, one cell each.
set -euo pipefail

# First: start the server with a 7 GiB KV cache, its log in server.log, and wait until it answers.
bash bench_serve.sh > server.log 2>&1 &
until curl -sf http://127.0.0.1:8000/v1/models > /dev/null; do
  kill -0 $! 2> /dev/null || { tail -n 20 server.log; exit 1; }
  sleep 5
done

# Second, "from another terminal": a warm-up, then each run's JSON and /metrics before and after it, in bench-results/.
python bench_sweep.py

# Stop the server.
pkill -f "vllm serve"
while pgrep -f "vllm serve" > /dev/null; do sleep 1; done

# Third, check: recompute every metric of the rate-2 run from its per-request data.
python bench_result.py bench-results/rate-2.json ttft:500 tpot:50

# Compare what /metrics grew by during the rate-2 run with the counts in its JSON.
python server_metrics.py bench-results/rate-2.before.prom bench-results/rate-2.after.prom bench-results/rate-2.json
