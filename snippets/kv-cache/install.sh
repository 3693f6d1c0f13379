python check_gpu.py &&
  pip install vllm==0.26.0 &&
  python check_gpu.py --installed
