#!/usr/bin/env bash
# Lesson 3's lab, step by step: run worked traces 2 (chunked prefill) and 3 (preemption) on vLLM, through the Python API and through vllm serve, and compare every Iteration line vLLM logs with scheduler.py's trace using lab_trace.py.
# Run it from the unzipped lesson folder on the GPU machine, after installing vLLM 0.26.0 (pip install vllm==0.26.0); continuous-batching-lab.zh.ipynb and continuous-batching-lab.en.ipynb run the same steps, one cell each.
set -euo pipefail

# Python API tab: worked trace 2, stepping the engine by hand; vLLM's log and what the lab prints go to chunks.txt.
python lab_chunks.py > chunks.txt 2>&1

# Check every Iteration line and the two metrics against the trace.
python lab_trace.py lab_chunks.py chunks.txt

# Command line tab: start the same engine as an OpenAI-compatible server, its log in server.log, and wait until it answers.
bash lab_chunks_serve.sh > server.log 2>&1 &
until curl -sf http://127.0.0.1:8000/v1/models > /dev/null; do
  kill -0 $! 2> /dev/null || { tail -n 20 server.log; exit 1; }
  sleep 5
done

# Command line tab, "in another terminal": send worked trace 2's four requests; save what it prints as sent.txt.
python lab_send.py > sent.txt

# Stop the server.
pkill -f "vllm serve"
while pgrep -f "vllm serve" > /dev/null; do sleep 1; done

# Command line tab: read the arrival steps off the server's log, then check every line and both metrics.
python lab_trace.py lab_chunks_serve.sh server.log sent.txt

# Worked trace 3 (Python API only): a preemption when the 6 blocks run out; output to preemption.txt.
python lab_preemption.py > preemption.txt 2>&1

# Check the preemption run the same way.
python lab_trace.py lab_preemption.py preemption.txt
