# On the runner, as its user, with its environment (HF_HOME), in a clone of the course:
# driver 580.65.06 or newer, Python 3.11 to 3.14, gcc, Python headers, 20 GiB of disk.
python3 snippets/kv-cache/check_gpu.py
