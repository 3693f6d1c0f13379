"""How far below the bandwidth bound real decoding runs, from a published measurement.

Qwen's own speed benchmark (QwenLM/Qwen2.5, docs/source/benchmark/speed_benchmark.rst,
as of 2024-11): Qwen2.5-7B-Instruct on an NVIDIA A100 80GB, CUDA 12.1, vLLM release
0.6.3, one request, 2,048 tokens generated after a 1-token prompt. Someone else's
measurement, on another card and an older vLLM: the share of its card's bound that it
reached is the course's one published efficiency, and turning a bound on the RTX 4090
into a speed with it is an estimate.
"""

from decode_batch import BANDWIDTH, decode_step

QWEN_A100 = {
    "bf16": 84.28,
    "gptq-int4-g128": 154.05,
    "awq-int4-g128": 148.10,
}  # tokens/s at batch 1
A100_80GB = (1.935e12, 2.039e12)  # bytes/s: the PCIe and the SXM card (NVIDIA's sheet)
CONTEXT = 1 + 2048 // 2  # tokens of KV a step reads, on average over the 2,048 steps


def shares(speed: float, step_bytes: int) -> tuple[float, float]:
    """The share of the A100 80GB's bandwidth bound a measured `speed` (tokens/s at
    batch 1) reached, if each step read `step_bytes`: from the SXM card to the PCIe."""
    if speed <= 0 or step_bytes <= 0:
        raise ValueError(f"speed and bytes must be positive, got {speed}, {step_bytes}")
    pcie, sxm = (speed * step_bytes / bandwidth for bandwidth in A100_80GB)
    return sxm, pcie  # the faster card's bound leaves the smaller share


# The BF16 share: what a memory-bound step of this model reached on a real card.
BF16_SHARE = shares(QWEN_A100["bf16"], decode_step(1, CONTEXT)[0])


def realistic(bound: float, share: tuple[float, float] = BF16_SHARE):
    """A speed bound (tokens/s, requests/s) at the measured share: a (low, high) range.
    An estimate: the share was measured on another card, at batch 1."""
    return bound * share[0], bound * share[1]


def realistic_time(floor: float, share: tuple[float, float] = BF16_SHARE):
    """A time floor (a step's, a token's) at the measured share: (short, long)."""
    return floor / share[1], floor / share[0]


if __name__ == "__main__":
    low, high = BF16_SHARE
    print(f"Qwen's A100 80GB, bf16, batch 1: {QWEN_A100['bf16']} tokens/s,")
    print(f"  {low:.0%} to {high:.0%} of that card's bandwidth bound")
    read = decode_step(1, 1024)[0]
    bound = BANDWIDTH / read
    slow, fast = realistic(bound)
    print(f"the RTX 4090 at batch 1, 1,024 tokens of context: at most {bound:.0f}"
          " tokens/s;")  # fmt: skip
    print(f"  at that share {slow:.0f} to {fast:.0f} tokens/s (an estimate)")
