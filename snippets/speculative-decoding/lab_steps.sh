#!/usr/bin/env bash
# Lesson 7's lab, step by step: serve Qwen2.5-7B-Instruct without and with n-gram speculation, send both the same tasks with lab_spec_send.py, and compare the measured speed-ups with spec_lab_prediction.py's.
# Run it from the unzipped lesson folder on the GPU machine, after installing vLLM 0.26.0 (pip install vllm==0.26.0); speculative-decoding-lab.zh.ipynb and speculative-decoding-lab.en.ipynb run the same steps, one cell each.
set -euo pipefail

# Start the server without speculation, its log in plain_server.log, and wait until it answers.
bash lab_plain_serve.sh > plain_server.log 2>&1 &
until curl -sf http://127.0.0.1:8000/v1/models > /dev/null; do
  kill -0 $! 2> /dev/null || { tail -n 20 plain_server.log; exit 1; }
  sleep 5
done

# "In a second terminal": send the two tasks, single and 32 at once; saved as plain.txt.
python lab_spec_send.py > plain.txt

# Stop the server.
pkill -f "vllm serve"
while pgrep -f "vllm serve" > /dev/null; do sleep 1; done

# Start the server with n-gram speculation (k = 3), its log in spec_server.log, and wait until it answers.
bash lab_spec_serve.sh > spec_server.log 2>&1 &
until curl -sf http://127.0.0.1:8000/v1/models > /dev/null; do
  kill -0 $! 2> /dev/null || { tail -n 20 spec_server.log; exit 1; }
  sleep 5
done

# Send the same tasks; saved as spec.txt, with the spec-decode counters.
python lab_spec_send.py > spec.txt

# Stop the server.
pkill -f "vllm serve"
while pgrep -f "vllm serve" > /dev/null; do sleep 1; done

# Each part's expected speed-up from the counters, next to the measured one.
python spec_lab_prediction.py plain.txt spec.txt
