"""The lab, BF16: Qwen2.5-7B-Instruct as published, 2 bytes per weight.

Run: python lab_bf16.py 2>&1 | tee bf16.txt
     python lab_quant_check.py bf16 bf16.txt
"""

from lab_quant_check import batch_speed, decode_speed, quality
from vllm import LLM

if __name__ == "__main__":  # vLLM may start processes that import this file again
    llm = LLM(
        model="Qwen/Qwen2.5-7B-Instruct",
        max_model_len=8192,  # longest sequence
        gpu_memory_utilization=0.90,  # share of the card vLLM may claim
        max_num_batched_tokens=2048,  # per step; vllm serve's default (LLM(): 8192)
        max_num_seqs=256,  # sequences per step, as both would choose here
    )
    decode_speed(llm)
    batch_speed(llm)
    quality(llm)
