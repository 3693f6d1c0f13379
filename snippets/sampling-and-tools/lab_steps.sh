#!/usr/bin/env bash
# Lesson 10's lab, step by step: serve Qwen2.5-7B-Instruct with tool calling, send it a tool call, a JSON-schema answer, a logprobs request and a batch-invariance test, then measure what structured output costs with vllm bench serve.
# Run it from the unzipped lesson folder on the GPU machine, after installing vLLM 0.26.0 (pip install vllm==0.26.0); sampling-and-tools-lab.zh.ipynb and sampling-and-tools-lab.en.ipynb run the same steps, one cell each.
set -euo pipefail

# Start the server with the hermes tool-call parser, its log in server.log, and wait until it answers.
bash lab_serve.sh > server.log 2>&1 &
until curl -sf http://127.0.0.1:8000/v1/models > /dev/null; do
  kill -0 $! 2> /dev/null || { tail -n 20 server.log; exit 1; }
  sleep 5
done

# "In a second terminal": the four requests, each printed as one JSON line.
python lab_requests.py

# What structured output costs, with the server still up: the same 64 prompts without and with the schema, results in bench-schema/.
python lab_bench_schema.py

# Stop the server.
pkill -f "vllm serve"
while pgrep -f "vllm serve" > /dev/null; do sleep 1; done
