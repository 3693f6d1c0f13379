"""The lab, GPTQ: Qwen's 4-bit GPTQ checkpoint (groups of 128 weights, symmetric:
a scale each); vLLM reads the method from the checkpoint's quantization_config.

Run: python lab_gptq.py 2>&1 | tee gptq.txt
     python lab_quant_check.py gptq gptq.txt
"""

from lab_quant_check import batch_speed, decode_speed, quality
from vllm import LLM

if __name__ == "__main__":  # vLLM may start processes that import this file again
    llm = LLM(
        model="Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4",
        max_model_len=8192,
        gpu_memory_utilization=0.90,
        max_num_batched_tokens=2048,
        max_num_seqs=256,
    )
    decode_speed(llm)
    batch_speed(llm)
    quality(llm)
