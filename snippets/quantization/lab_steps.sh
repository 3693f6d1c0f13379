#!/usr/bin/env bash
# Lesson 4's lab, step by step: load Qwen2.5-7B-Instruct as BF16, FP8, AWQ and GPTQ-Int4, and FP8 again under vllm serve, and check each run's memory, kernels, KV capacity and speed with lab_quant_check.py.
# Run it from the unzipped lesson folder on the GPU machine, after installing vLLM 0.26.0 (pip install vllm==0.26.0); quantization-lab.zh.ipynb and quantization-lab.en.ipynb run the same steps, one cell each.
set -euo pipefail

# BF16 tab: the published BF16 weights; output and vLLM's log saved as bf16.txt.
python lab_bf16.py 2>&1 | tee bf16.txt

# Check the BF16 run item by item.
python lab_quant_check.py bf16 bf16.txt

# FP8 tab: the same weights quantized to FP8 while loading; saved as fp8.txt.
python lab_fp8.py 2>&1 | tee fp8.txt

# Check the FP8 run.
python lab_quant_check.py fp8 fp8.txt

# AWQ tab: Qwen's AWQ checkpoint; saved as awq.txt.
python lab_awq.py 2>&1 | tee awq.txt

# Check the AWQ run.
python lab_quant_check.py awq awq.txt

# GPTQ-Int4 tab: Qwen's GPTQ-Int4 checkpoint; saved as gptq.txt.
python lab_gptq.py 2>&1 | tee gptq.txt

# Check the GPTQ run.
python lab_quant_check.py gptq gptq.txt

# Compare the AWQ and BF16 speeds at concurrency 1 and 256 with the floors' ratios.
python lab_quant_check.py versus bf16.txt awq.txt

# The command-line twin: serve the FP8 engine, its log in server.log, and wait until it answers.
bash lab_fp8_serve.sh > server.log 2>&1 &
until curl -sf http://127.0.0.1:8000/v1/models > /dev/null; do
  kill -0 $! 2> /dev/null || { tail -n 20 server.log; exit 1; }
  sleep 5
done

# The command-line twin, "in a second terminal": time decoding over HTTP; saved as speed.txt.
python lab_speed_send.py > speed.txt

# Stop the server.
pkill -f "vllm serve"
while pgrep -f "vllm serve" > /dev/null; do sleep 1; done

# Check the served FP8 run from the server's log and the speeds.
python lab_quant_check.py fp8 server.log speed.txt
