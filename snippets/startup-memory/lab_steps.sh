#!/usr/bin/env bash
# Lesson 8's lab, step by step: start Qwen2.5-7B-Instruct three ways (default, eager, small), check each start-up's capture sizes and memory budget with lab_startup_check.py, then time cold and warm starts with vllm bench startup.
# Run it from the unzipped lesson folder on the GPU machine, after installing vLLM 0.26.0 (pip install vllm==0.26.0); startup-memory-lab.zh.ipynb and startup-memory-lab.en.ipynb run the same steps, one cell each.
set -euo pipefail

# The default way; vLLM's log and the lines the lab prints both go to default.txt.
python lab_startup.py default > default.txt 2>&1

# Check the default start-up item by item.
python lab_startup_check.py default default.txt default.txt

# With --enforce-eager (no torch.compile, no CUDA graphs); saved as eager.txt.
python lab_startup.py eager > eager.txt 2>&1

# Check the eager start-up.
python lab_startup_check.py eager eager.txt eager.txt

# With max_num_seqs=16; saved as small.txt.
python lab_startup.py small > small.txt 2>&1

# Check the small start-up.
python lab_startup_check.py small small.txt small.txt

# Cold and warm start times of the default way with vllm bench startup: seven starts, about ten minutes (estimate); saved as startup.json.
bash bench_startup.sh
