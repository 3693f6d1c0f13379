"""The lab: revisits.py's 16 requests through vLLM, one at a time, on a KV cache of
exactly --kv-cache-memory-bytes 2 GiB, with a CPU tier of the size given as the first
argument, in GiB (0: no tier). Prints each request's prompt tokens and time (a request
of 1 output token: the time LLM.generate takes is its TTFT, seen from this process),
then the prefix cache counters, in tokens.

Run: python lab_offload.py 0 > none.txt
     python lab_offload.py 4 > tier.txt
     python lab_revisits.py none.txt tier.txt
"""

import sys
import time

from lab_revisits import COUNTERS
from revisits import KV_CACHE_MEMORY_BYTES, MAX_MODEL_LEN, VISITS
from vllm import LLM, SamplingParams

if __name__ == "__main__":  # vLLM may start processes that import this file again
    size = float(sys.argv[1])
    llm = LLM(
        model="Qwen/Qwen2.5-7B-Instruct",
        max_model_len=MAX_MODEL_LEN,
        kv_cache_memory_bytes=KV_CACHE_MEMORY_BYTES,  # 2,340 blocks, no profiling
        max_num_batched_tokens=8192,  # as LLM() sets it under 70 GiB: a prompt a step
        enable_prefix_caching=True,  # vLLM's default, written out
        kv_offloading_size=size or None,  # --kv-offloading-size; None: no CPU tier
        disable_log_stats=False,  # LLM() keeps no metrics unless asked
    )
    params = SamplingParams(max_tokens=1)
    for request_id, prompt in VISITS:
        start = time.perf_counter()
        (output,) = llm.generate({"prompt_token_ids": prompt}, params, use_tqdm=False)
        elapsed = (time.perf_counter() - start) * 1000
        print(f"{request_id}: {len(output.prompt_token_ids)} prompt tokens,"
              f" {elapsed:.1f} ms")  # fmt: skip
    for metric in llm.get_metrics():
        if metric.name in COUNTERS:  # vllm/v1/metrics/reader.py: Counter
            print(f"{metric.name} {metric.value}")
