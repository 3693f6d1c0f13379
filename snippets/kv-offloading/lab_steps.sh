#!/usr/bin/env bash
# Lesson 9's lab, step by step: send revisits.py's 16 requests to vLLM without and with a 4 GiB CPU tier for the KV cache, and check the counters and report the TTFTs with lab_revisits.py.
# Run it from the unzipped lesson folder on the GPU machine, after installing vLLM 0.26.0 (pip install vllm==0.26.0); kv-offloading-lab.zh.ipynb and kv-offloading-lab.en.ipynb run the same steps, one cell each.
set -euo pipefail

# Without a CPU tier (argument 0); saved as none.txt.
python lab_offload.py 0 > none.txt

# With --kv-offloading-size 4 (argument 4); saved as tier.txt.
python lab_offload.py 4 > tier.txt

# Check both runs' counters against the prediction, and compare their TTFTs.
python lab_revisits.py none.txt tier.txt
