"""The lab, AWQ: Qwen's 4-bit AWQ checkpoint (groups of 128 weights, a scale and a zero
point each); vLLM reads the method from the checkpoint's quantization_config.

Run: python lab_awq.py 2>&1 | tee awq.txt
     python lab_quant_check.py awq awq.txt
"""

from lab_quant_check import batch_speed, decode_speed, quality
from vllm import LLM

if __name__ == "__main__":  # vLLM may start processes that import this file again
    llm = LLM(
        model="Qwen/Qwen2.5-7B-Instruct-AWQ",
        max_model_len=8192,
        gpu_memory_utilization=0.90,
        max_num_batched_tokens=2048,
        max_num_seqs=256,
    )
    decode_speed(llm)
    batch_speed(llm)
    quality(llm)
