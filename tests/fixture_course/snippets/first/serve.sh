vllm serve Qwen/Qwen2.5-0.5B-Instruct \
  --max-model-len 2048 \
  --kv-cache-dtype fp8
