"""When INT4 stops paying: a prefill chunk of T tokens of one request, with lesson 1's
model of what a step reads and computes. Floors: the roofline gives a W4A16 matmul the
16-bit math of BF16 and nothing for dequantizing, which real kernels pay on top."""

from decode_batch import (
    ATTENTION,
    BANDWIDTH,
    KV_PER_TOKEN,
    PEAK_BF16,
    matmul_flops,
    weights_read,
)
from hf_config import read_presets
from quant_memory import weight_bytes

NAME = "Qwen2.5-7B-Instruct"
CONFIG = read_presets()[NAME].config


def chunk_ms(fmt: str, tokens: int) -> tuple[float, float]:
    """A prefill chunk of `tokens` tokens of one new request: (reads, math) in ms."""
    read = weights_read(weight_bytes(NAME, fmt), CONFIG, tokens) + tokens * KV_PER_TOKEN
    pairs = tokens * (tokens + 1) // 2  # causal attention within the chunk
    flops = matmul_flops(CONFIG, tokens, 1) + pairs * ATTENTION
    return read / BANDWIDTH * 1000, flops / PEAK_BF16 * 1000


if __name__ == "__main__":
    print(f"{NAME}, one prefill chunk of T tokens; milliseconds, floors")
    print("    T  bf16 reads  awq reads   math  bf16 step  awq step  bf16/awq")
    for tokens in (1, 16, 64, 128, 256, 512, 2048):
        (bf16, math), (awq, _) = (
            chunk_ms("bf16", tokens),
            chunk_ms("awq-int4-g128", tokens),
        )
        step_bf16, step_awq = max(bf16, math), max(awq, math)
        print(
            f"{tokens:>5} {bf16:>11.2f} {awq:>10.2f} {math:>6.2f} {step_bf16:>10.2f}"
            f" {step_awq:>9.2f} {step_bf16 / step_awq:>8.2f}x"
        )
    for fmt in ("awq-int4-g128", "bf16"):
        tokens = 1
        while chunk_ms(fmt, tokens)[1] < chunk_ms(fmt, tokens)[0]:
            tokens += 1
        print(f"{fmt}: from {tokens} tokens per step, the math outlasts the reads")
