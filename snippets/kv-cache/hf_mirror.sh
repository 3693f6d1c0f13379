export HF_ENDPOINT=https://hf-mirror.com
