pip install vllm==0.26.0
