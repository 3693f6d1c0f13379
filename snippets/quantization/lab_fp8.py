"""The lab, FP8: the same BF16 checkpoint, its linear layers quantized to FP8 as vLLM
loads them (weights and activations: W8A8).

Run: python lab_fp8.py 2>&1 | tee fp8.txt
     python lab_quant_check.py fp8 fp8.txt
"""

from lab_quant_check import batch_speed, decode_speed, quality
from vllm import LLM

if __name__ == "__main__":  # vLLM may start processes that import this file again
    llm = LLM(
        model="Qwen/Qwen2.5-7B-Instruct",
        quantization="fp8",  # online: quantized while loading, no FP8 checkpoint needed
        max_model_len=8192,
        gpu_memory_utilization=0.90,
        max_num_batched_tokens=2048,
        max_num_seqs=256,
    )
    decode_speed(llm)
    batch_speed(llm)
    quality(llm)
