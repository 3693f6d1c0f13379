vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ \
  --max-model-len 8192 \
  --gpu-memory-utilization 0.90 \
  --kv-cache-dtype fp8 \
  --enable-prefix-caching \
  --attention-backend TRITON_ATTN \
  --max-num-batched-tokens 2048 \
  --max-num-seqs 256
