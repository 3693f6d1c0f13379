pip install "modelscope>=1.18.1"
export VLLM_USE_MODELSCOPE=true
