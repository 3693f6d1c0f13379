vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ \
  --max-model-len 4096 \
  --num-gpu-blocks-override 1000 \
  --max-num-batched-tokens 4096 \
  --max-num-seqs 16
