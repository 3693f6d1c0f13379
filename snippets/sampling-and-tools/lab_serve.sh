vllm serve Qwen/Qwen2.5-7B-Instruct \
  --max-model-len 4096 \
  --enable-auto-tool-choice \
  --tool-call-parser hermes
