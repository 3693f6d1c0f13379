VLLM_SERVER_DEV_MODE=1 vllm serve Qwen/Qwen2.5-7B-Instruct \
  --max-model-len 4096 \
  --enable-prefix-caching \
  --enable-prompt-tokens-details
