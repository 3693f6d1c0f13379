from vllm import LLM, SamplingParams

if __name__ == "__main__":  # vLLM may start processes that import this file again
    # AWQ 4-bit weights (about 5-6 GB) leave most of the 24 GB card to the KV cache.
    llm = LLM(
        model="Qwen/Qwen2.5-7B-Instruct-AWQ",
        max_model_len=8192,  # longest sequence, so the most KV one sequence can hold
        gpu_memory_utilization=0.90,  # share of the card vLLM may claim (default 0.92)
        kv_cache_dtype="fp8",  # 1 byte per cached element instead of 2
        enable_prefix_caching=True,  # reuse the KV of shared prompt prefixes
        attention_backend="TRITON_ATTN",  # fp8 KV on an RTX 4090, no CUDA toolkit
        max_num_batched_tokens=2048,  # per step; vllm serve's default (LLM(): 8192)
        max_num_seqs=256,  # sequences per step, as both would choose here
    )

    outputs = llm.generate(
        ["Why is LLM decode memory-bound?"], SamplingParams(max_tokens=64)
    )
    print(outputs[0].outputs[0].text)
