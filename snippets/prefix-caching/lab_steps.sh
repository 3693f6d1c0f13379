#!/usr/bin/env bash
# Lesson 5's lab, step by step: send the lesson's prompts to vLLM through the Python API and through vllm serve, check every prefix-cache hit with lab_hits.py, then measure what a hit saves in time to first token and check it with ttft_hit.py.
# Run it from the unzipped lesson folder on the GPU machine, after installing vLLM 0.26.0 (pip install vllm==0.26.0); prefix-caching-lab.zh.ipynb and prefix-caching-lab.en.ipynb run the same steps, one cell each.
set -euo pipefail

# Python API: the four parts, one request at a time, then the two counters; saved as prefix.txt.
python lab_prefix.py > prefix.txt

# Check every request's cached tokens, the resets and the counters.
python lab_hits.py prefix.txt

# The command-line twin: start the same engine (development mode, for the reset endpoint), its log in server.log, and wait until it answers.
bash lab_prefix_serve.sh > server.log 2>&1 &
until curl -sf http://127.0.0.1:8000/v1/models > /dev/null; do
  kill -0 $! 2> /dev/null || { tail -n 20 server.log; exit 1; }
  sleep 5
done

# The command-line twin, "in another terminal": the same requests over HTTP; saved as sent.txt.
python lab_prefix_send.py > sent.txt

# Stop the server.
pkill -f "vllm serve"
while pgrep -f "vllm serve" > /dev/null; do sleep 1; done

# Check the served run the same way.
python lab_hits.py sent.txt

# How much time to first token a hit saves: a 4,000-token prompt missed, then hit, for 3 rounds; saved as ttft.txt.
python lab_ttft.py > ttft.txt

# Check every request's hits, and print the median TTFT of a miss and of a hit.
python ttft_hit.py ttft.txt
