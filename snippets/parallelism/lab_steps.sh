#!/usr/bin/env bash
# Lesson 11's lab, step by step: start Qwen2.5-7B-Instruct with tensor parallelism 1 and a 4 GiB KV cache, check its KV cache tokens with lab_tp_check.py, and run TP 2 as well on a machine with two GPUs.
# Run it from the unzipped lesson folder on the GPU machine, after installing vLLM 0.26.0 (pip install vllm==0.26.0); parallelism-lab.zh.ipynb and parallelism-lab.en.ipynb run the same steps, one cell each.
set -euo pipefail

# TP 1 on one RTX 4090; vLLM's log and what the lab prints go to run.txt.
python lab_tp.py 1 > run.txt 2>&1

# Check the TP 1 run's KV cache tokens against the prediction.
python lab_tp_check.py run.txt

# TP 2 needs two cards: run it only where torch sees two GPUs (on one card lab_tp.py would stop at once).
if [ "$(python -c 'import torch; print(torch.cuda.device_count())')" -ge 2 ]; then
  python lab_tp.py 2
else
  echo "one GPU: TP 2 needs two, not run"
fi
