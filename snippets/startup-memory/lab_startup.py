"""Start Qwen2.5-7B-Instruct one of three ways, print the CUDA graph capture sizes vLLM
settled on, and time one sequence decoding 256 tokens.

Run: python lab_startup.py [default|eager|small] > run.txt 2>&1
"""

import sys
import time

from vllm import LLM, SamplingParams

WAYS = ("default", "eager", "small")

if __name__ == "__main__":
    way = sys.argv[1] if len(sys.argv) > 1 else "default"
    if way not in WAYS:
        sys.exit(f"usage: python lab_startup.py [{'|'.join(WAYS)}]")
    llm = LLM(
        model="Qwen/Qwen2.5-7B-Instruct",
        max_model_len=8192,
        gpu_memory_utilization=0.92,
        max_num_batched_tokens=8192,
        max_num_seqs=16 if way == "small" else 256,
        enforce_eager=way == "eager",
    )
    config = llm.llm_engine.vllm_config.compilation_config
    print(f"capture sizes: {config.cudagraph_capture_sizes}")

    params = SamplingParams(max_tokens=256, temperature=0, ignore_eos=True)
    llm.generate(["Warm up."], SamplingParams(max_tokens=8))  # first-call costs
    start = time.perf_counter()
    out = llm.generate(["Explain what a CUDA graph is."], params, use_tqdm=False)
    seconds = time.perf_counter() - start
    tokens = len(out[0].outputs[0].token_ids)
    print(f"decode at concurrency 1: {tokens / seconds:.1f} tokens/s")
