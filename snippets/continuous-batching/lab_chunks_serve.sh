vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ \
  --max-model-len 256 \
  --max-num-batched-tokens 64 \
  --max-num-seqs 4 \
  --num-gpu-blocks-override 64 \
  --no-async-scheduling \
  --enable-logging-iteration-details
