#!/usr/bin/env bash
# Lesson 1's lab, step by step: check the machine, start Qwen2.5-7B-Instruct-AWQ with an fp8 KV cache through the Python API and through vllm serve, and check the KV capacity vLLM reports with kv_capacity.py.
# Run it from the unzipped lesson folder on the GPU machine, after installing vLLM 0.26.0 (pip install vllm==0.26.0); kv-cache-lab.zh.ipynb and kv-cache-lab.en.ipynb run the same steps, one cell each.
set -euo pipefail

# Check that the machine has what the lab needs, that vLLM 0.26.0 is installed and that torch sees the GPU (check_gpu.py).
python check_gpu.py --installed

# Python API tab: start the engine, generate a short text, and save the whole output, vLLM's start-up log included, as vllm_startup.log.
python serve_kv.py 2>&1 | tee vllm_startup.log

# Check the capacity vLLM reported against the calculator of section 4.
python kv_capacity.py vllm_startup.log

# Command line tab: start the same engine as an OpenAI-compatible server, its log in server.log, and wait until it answers.
bash serve_kv.sh > server.log 2>&1 &
until curl -sf http://127.0.0.1:8000/v1/models > /dev/null; do
  kill -0 $! 2> /dev/null || { tail -n 20 server.log; exit 1; }
  sleep 5
done

# Command line tab: check the server's start-up log the same way.
python kv_capacity.py server.log

# Stop the server.
pkill -f "vllm serve"
while pgrep -f "vllm serve" > /dev/null; do sleep 1; done
