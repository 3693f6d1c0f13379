vllm serve Qwen/Qwen2.5-7B-Instruct \
  --max-model-len 4096 \
  --max-num-seqs 32 \
  --speculative-config '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 2, "prompt_lookup_max": 4}'
