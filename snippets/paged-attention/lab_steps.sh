#!/usr/bin/env bash
# Lesson 2's lab, step by step: run vLLM with exactly 1,000 KV blocks through the Python API and through vllm serve, read its block usage, and check the readings with lab_prediction.py.
# Run it from the unzipped lesson folder on the GPU machine, after installing vLLM 0.26.0 (pip install vllm==0.26.0); paged-attention-lab.zh.ipynb and paged-attention-lab.en.ipynb run the same steps, one cell each.
set -euo pipefail

# Python API tab: step the engine by hand, read vllm:kv_cache_usage_perc twice, and save the output as lab_output.txt.
python usage_lab.py > lab_output.txt

# Check the two readings against the lesson's block pool: match or MISMATCH for each.
python lab_prediction.py lab_output.txt

# Command line tab: start the same engine as an OpenAI-compatible server, its log in server.log, and wait until it answers.
bash usage_serve.sh > server.log 2>&1 &
until curl -sf http://127.0.0.1:8000/v1/models > /dev/null; do
  kill -0 $! 2> /dev/null || { tail -n 20 server.log; exit 1; }
  sleep 5
done

# Command line tab, "in another terminal": one long answer in the background, then the block pool's gauges from /metrics.
bash metrics.sh

# Stop the server.
pkill -f "vllm serve"
while pgrep -f "vllm serve" > /dev/null; do sleep 1; done
