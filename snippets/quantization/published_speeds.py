"""Decode speeds others published for Qwen2.5-7B-Instruct, beside this lesson's floors.

Qwen's own speed benchmark on an A100 80GB with vLLM release 0.6.3 (lesson 1's
measured_share.py names it): someone else's measurement, on another card and an older
vLLM. What it shows is how far real kernels stay from the bandwidth bound; the last
lines put the RTX 4090's floors at the same shares, an estimate."""

from decode_batch import BANDWIDTH
from measured_share import A100_80GB, CONTEXT, QWEN_A100, realistic, shares
from quant_memory import decode_floor_ms

MODEL = "Qwen2.5-7B-Instruct"

if __name__ == "__main__":
    floor = {fmt: decode_floor_ms(MODEL, fmt, 1, CONTEXT) for fmt in QWEN_A100}
    reached = {}
    low, high = (f"{bandwidth / 1e9:,.0f} GB/s" for bandwidth in A100_80GB)
    print(f"Qwen's A100 80GB: {low} (PCIe) to {high} (SXM), tokens/s at batch 1")
    print("format          measured  x bf16   floor x bf16   share of the A100's bound")
    for fmt, speed in QWEN_A100.items():
        step_bytes = round(floor[fmt] / 1000 * BANDWIDTH)  # what the floor's step reads
        reached[fmt] = shares(speed, step_bytes)
        low, high = reached[fmt]
        print(f"{fmt:<15} {speed:>8.2f} {speed / QWEN_A100['bf16']:>7.2f}x"
              f" {floor['bf16'] / floor[fmt]:>12.2f}x"
              f"   {low:.0%} to {high:.0%}")  # fmt: skip
    print("the RTX 4090 at the same shares, 1,024 tokens of context (estimate):")
    for fmt in QWEN_A100:
        bound = 1000 / decode_floor_ms(MODEL, fmt, 1, 1024)
        slow, fast = realistic(bound, reached[fmt])
        print(f"{fmt:<15} at most {bound:>4.0f} tokens/s, at that share"
              f" {slow:.0f} to {fast:.0f}")  # fmt: skip
