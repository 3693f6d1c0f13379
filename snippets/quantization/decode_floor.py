"""The decode floor of one step on an RTX 4090, per weight format, and when the 16-bit
math of a W4A16 matmul catches up with it. Floors, not measurements: what a step reads
and computes is lesson 1's model (decode_batch.weights_read and matmul_flops)."""

from decode_batch import BANDWIDTH, PEAK_BF16, matmul_flops
from hf_config import read_presets
from quant_memory import decode_floor_ms, kv_left

NAME, CONTEXT = "Qwen2.5-7B-Instruct", 1024
CONFIG = read_presets()[NAME].config
# FLOP/s, RTX 4090 dense FP8 tensor cores, FP32 accumulate: twice the BF16 rate (NVIDIA
# Ada GPU Architecture whitepaper, appendix: Peak FP8 Tensor TFLOPS with FP32
# Accumulate)
PEAK_FP8 = 330.3e12


def compute_floor_ms(batch: int, fmt: str = "bf16") -> float:
    """The step's weight matmuls at the tensor cores' peak: 2 FLOPs per linear weight
    and sequence, and per lm_head weight and sequence (one logits row each); the
    embedding gather costs none, attention is left out. bf16, and W4A16 (it dequantizes,
    then multiplies in 16-bit), at 165.2 TFLOPS. fp8 is W8A8 on SM 8.9 (its kernel,
    CutlassFP8ScaledMMLinearKernel, quantizes the activations too): its linear layers
    run at the FP8 rate, while lm_head, not a linear layer, stays 16-bit
    (vllm/model_executor/layers/quantization/fp8.py: Fp8Config.get_quant_method)."""
    linear = matmul_flops(CONFIG, batch, 0) / (PEAK_FP8 if fmt == "fp8" else PEAK_BF16)
    return (linear + matmul_flops(CONFIG, 0, batch) / PEAK_BF16) * 1000


if __name__ == "__main__":
    print(f"{NAME}, {CONTEXT:,} tokens of bf16 KV per sequence,")
    print(f"{BANDWIDTH / 1e9:.0f} GB/s (GB = 10**9 bytes); milliseconds per step")
    table = CONFIG["vocab_size"] * CONFIG["hidden_size"] * 2
    row = CONFIG["hidden_size"] * 2
    print(f"of the {table:,}-byte embedding table a step reads {row:,} per sequence")
    print("batch   bf16    fp8    awq   math(16-bit)  math(fp8)  awq step  bf16/awq")
    for batch in (1, 16, 64, 128):
        bf16, fp8, awq = (
            decode_floor_ms(NAME, fmt, batch, CONTEXT)
            for fmt in ("bf16", "fp8", "awq-int4-g128")
        )
        math = compute_floor_ms(batch)
        step_bf16, step_awq = max(bf16, math), max(awq, math)
        print(
            f"{batch:>5} {bf16:>6.2f} {fp8:>6.2f} {awq:>6.2f} {math:>12.2f}"
            f" {compute_floor_ms(batch, 'fp8'):>10.2f} {step_awq:>9.2f}"
            f" {step_bf16 / step_awq:>8.2f}x"
        )
    most = kv_left(NAME, "bf16", CONTEXT).num_blocks // (CONTEXT // 16)
    print(f"bf16 weights leave room for {most} sequences of {CONTEXT:,} tokens")
    batch = 1
    while compute_floor_ms(batch) < decode_floor_ms(
        NAME, "awq-int4-g128", batch, CONTEXT
    ):
        batch += 1
    print(f"from batch {batch}, awq's 16-bit math takes longer than its reads")
