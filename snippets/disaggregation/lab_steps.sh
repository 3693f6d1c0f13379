#!/usr/bin/env bash
# Lesson 12's lab, step by step: run a prefill and a decode instance of Qwen2.5-7B-Instruct-AWQ on one card, joined by ExampleConnector, send them prompts with lab_disagg_send.py, and check the cached tokens and connector counters with lab_disagg_check.py.
# Run it from the unzipped lesson folder on the GPU machine, after installing vLLM 0.26.0 (pip install vllm==0.26.0); disaggregation-lab.zh.ipynb and disaggregation-lab.en.ipynb run the same steps, one cell each.
set -euo pipefail

# Prefill instance tab: start the prefill instance (kv_producer) on port 8100, its log in prefill.log, and wait until it answers.
bash lab_prefill_serve.sh --port 8100 > prefill.log 2>&1 &
until curl -sf http://127.0.0.1:8100/v1/models > /dev/null; do
  kill -0 $! 2> /dev/null || { tail -n 20 prefill.log; exit 1; }
  sleep 5
done

# Decode instance tab: once the prefill instance is up, start the decode instance (kv_consumer) on port 8200, its log in decode.log.
bash lab_decode_serve.sh --port 8200 > decode.log 2>&1 &
until curl -sf http://127.0.0.1:8200/v1/models > /dev/null; do
  kill -0 $! 2> /dev/null || { tail -n 20 decode.log; exit 1; }
  sleep 5
done

# "In a third terminal": the proxy, aggregated and disaggregated rounds; saved as sent.txt.
python lab_disagg_send.py http://127.0.0.1:8100 http://127.0.0.1:8200 > sent.txt

# Stop both instances.
pkill -f "vllm serve"
while pgrep -f "vllm serve" > /dev/null; do sleep 1; done

# Check every request's cached tokens and the decode instance's connector counters.
python lab_disagg_check.py sent.txt
