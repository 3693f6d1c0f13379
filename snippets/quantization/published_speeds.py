"""Decode speeds others published for Qwen2.5-7B-Instruct, beside this lesson's floors.

Qwen's own speed benchmark (QwenLM/Qwen2.5, docs/source/benchmark/speed_benchmark.rst,
as of 2024-11): an NVIDIA A100 80GB, CUDA 12.1, vLLM release 0.6.3, one request, 2,048
tokens generated after a 1-token prompt. Someone else's measurement, on another card and
an older vLLM: what it shows is how far real kernels stay from the bandwidth bound."""

from decode_batch import BANDWIDTH
from quant_memory import decode_floor_ms

QWEN_A100 = {
    "bf16": 84.28,
    "gptq-int4-g128": 154.05,
    "awq-int4-g128": 148.10,
}  # tokens/s
A100_80GB = (1.935e12, 2.039e12)  # bytes/s: the PCIe and the SXM card (NVIDIA's sheet)
CONTEXT = 1 + 2048 // 2  # tokens of KV a step reads, on average over the 2,048 steps

if __name__ == "__main__":
    bound = {
        fmt: decode_floor_ms("Qwen2.5-7B-Instruct", fmt, 1, CONTEXT)
        for fmt in QWEN_A100
    }
    low, high = (f"{bandwidth / 1e9:,.0f} GB/s" for bandwidth in A100_80GB)
    print(f"Qwen's A100 80GB: {low} (PCIe) to {high} (SXM), tokens/s at batch 1")
    print("format          measured  x bf16   floor x bf16   share of the A100's bound")
    for fmt, speed in QWEN_A100.items():
        step_bytes = bound[fmt] / 1000 * BANDWIDTH  # what the floor's step reads
        shares = [speed * step_bytes / bandwidth for bandwidth in A100_80GB]
        print(f"{fmt:<15} {speed:>8.2f} {speed / QWEN_A100['bf16']:>7.2f}x"
              f" {bound['bf16'] / bound[fmt]:>12.2f}x"
              f"   {min(shares):.0%} to {max(shares):.0%}")  # fmt: skip
