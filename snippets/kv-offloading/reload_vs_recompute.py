"""Reload or recompute: what a CPU tier of `--kv-offloading-size` GiB holds for
Qwen2.5-7B-Instruct, what copying a block over PCIe 4.0 x16 costs, and from which prefix
length copying it back beats computing it again on an RTX 4090, with the KV cache in
BF16 and in FP8 (lesson 4's --kv-cache-dtype fp8: one byte per element).

Every time here is an estimate: the prefill time is lesson 3's lower bound of a step
(its bytes over the memory bandwidth or its FLOPs over the peak rate, whichever is
longer; serving-metrics' step_costs.step), and the copy runs at an assumed 25 GB/s.
"""

from dataclasses import replace

from decode_batch import QWEN
from hf_config import bytes_per_token
from kv_capacity import BLOCK_SIZE
from offload import cpu_blocks
from step_costs import step

# PCIe 4.0 x16: 16 GT/s per lane, 16 lanes, 128b/130b coding, per direction.
PCIE_PEAK = 16e9 * 16 * 128 / 130 / 8  # bytes/s
PCIE = 25e9  # bytes/s a pinned-memory copy reaches: an estimate
OFFLOADING_SIZE_GIB = 4  # --kv-offloading-size 4
NEW_TOKENS = 16  # the question a revisit appends to the document it shares


def bytes_per_block(kv_bytes: int = 2) -> int:
    """All layers' K and V of one 16-token block, as vLLM's CPU tier stores it."""
    return bytes_per_token(replace(QWEN.model, dtype_bytes=kv_bytes)) * BLOCK_SIZE


def reload_seconds(tokens: int, kv_bytes: int = 2) -> float:
    """Copying the blocks of `tokens` tokens from CPU memory to the GPU (estimate)."""
    return tokens // BLOCK_SIZE * bytes_per_block(kv_bytes) / PCIE


def with_tier(prefix: int, kv_bytes: int = 2) -> float:
    """A revisit whose prefix is in the CPU tier: reload it, compute the new tokens."""
    return reload_seconds(prefix, kv_bytes) + step({"r": NEW_TOKENS}, {"r": prefix})


def without_tier(prefix: int) -> float:
    """The same revisit recomputing the prefix with the new tokens, in one step."""
    return step({"r": prefix + NEW_TOKENS}, {"r": 0})


def break_even(kv_bytes: int = 2) -> int:
    """The shortest prefix, in whole blocks, whose reload beats its recompute."""
    prefix = BLOCK_SIZE
    while with_tier(prefix, kv_bytes) >= without_tier(prefix):
        prefix += BLOCK_SIZE
    return prefix


if __name__ == "__main__":
    print(f"PCIe 4.0 x16: {PCIE_PEAK / 1e9:.1f} GB/s per direction at most;"
          f" assumed {PCIE / 1e9:.0f} GB/s (estimate)")  # fmt: skip
    for name, kv_bytes in (("BF16", 2), ("FP8", 1)):
        block = bytes_per_block(kv_bytes)
        blocks = cpu_blocks(OFFLOADING_SIZE_GIB, block)
        print(f"{name} KV: {block:,} bytes per block,"
              f" {block / PCIE * 1e6:.1f} us to copy one (estimate);"
              f" --kv-offloading-size {OFFLOADING_SIZE_GIB} holds {blocks:,} blocks"
              f" = {blocks * BLOCK_SIZE:,} tokens")  # fmt: skip
    prefix = 4096
    print(f"a {prefix:,}-token prefix (estimates):"
          f" reload {reload_seconds(prefix) * 1000:.1f} ms (BF16),"
          f" {reload_seconds(prefix, 1) * 1000:.1f} ms (FP8);"
          f" recompute {step({'r': prefix}, {'r': 0}) * 1000:.1f} ms")  # fmt: skip
    print(f"a revisit appending {NEW_TOKENS} tokens (estimates):")
    print("prefix tokens  reload + new (BF16)  recompute all")
    for prefix in (16, 64, 128, 256, 1024, 4096):
        print(f"{prefix:>13,} {with_tier(prefix) * 1000:17.1f} ms"
              f" {without_tier(prefix) * 1000:11.1f} ms")  # fmt: skip
    for name, kv_bytes in (("BF16", 2), ("FP8", 1)):
        tokens = break_even(kv_bytes)
        print(f"reload beats recompute from a {tokens}-token prefix ({name} KV,"
              " estimate)")  # fmt: skip
