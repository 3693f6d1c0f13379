# Cold and warm start times of the lab's default way: vLLM starts the engine in a fresh
# process each time, cold with empty compilation caches (a temporary VLLM_CACHE_ROOT),
# warm with the caches the warm-up start left (vllm/benchmarks/startup.py).
vllm bench startup \
  --model Qwen/Qwen2.5-7B-Instruct \
  --max-model-len 8192 \
  --max-num-batched-tokens 8192 \
  --max-num-seqs 256 \
  --num-iters-cold 3 \
  --num-iters-warmup 1 \
  --num-iters-warm 3 \
  --output-json startup.json
