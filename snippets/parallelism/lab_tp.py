"""Start Qwen2.5-7B-Instruct split over TP GPUs with a fixed KV cache per GPU, then time
one sequence decoding 256 tokens (greedy).

Run: python lab_tp.py TP > run.txt 2>&1     (TP 1 needs one RTX 4090, TP 2 two)
"""

import sys
import time

import torch
from vllm import LLM, SamplingParams

KV_CACHE_MEMORY_BYTES = 4 * 1024**3  # per GPU: fixes the block count exactly

if __name__ == "__main__":
    tp = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    gpus = torch.cuda.device_count()
    print(f"GPUs: {gpus}")
    if tp > gpus:
        sys.exit(f"TP {tp} needs {tp} GPUs; this machine has {gpus}")
    llm = LLM(
        model="Qwen/Qwen2.5-7B-Instruct",
        tensor_parallel_size=tp,
        max_model_len=8192,
        kv_cache_memory_bytes=KV_CACHE_MEMORY_BYTES,
    )
    params = SamplingParams(max_tokens=256, temperature=0, ignore_eos=True)
    llm.generate(["Warm up."], SamplingParams(max_tokens=8))
    start = time.perf_counter()
    out = llm.generate(["Explain tensor parallelism."], params, use_tqdm=False)
    seconds = time.perf_counter() - start
    tokens = len(out[0].outputs[0].token_ids)
    print(f"decode at concurrency 1, TP {tp}: {tokens / seconds:.1f} tokens/s")
