vllm serve Qwen/Qwen2.5-7B-Instruct \
  --max-model-len 4096 \
  --kv-cache-memory-bytes 7516192768
