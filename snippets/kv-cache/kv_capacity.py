"""vLLM's KV cache capacity: predicted, and checked against vLLM's start-up log.

Run: python kv_capacity.py [LOG]   (LOG defaults to the example vllm_startup.log)
"""

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from hf_config import bytes_per_token
from kv_cache_size import GIB, ModelConfig, kv_bytes_per_token

BLOCK_SIZE = 16  # tokens per KV cache block: vLLM 0.26.0's default
# An RTX 4090's 24 GB as CUDA reports them (cudaMemGetInfo's total, which PyTorch's
# out-of-memory messages print as "a total capacity of 23.64 GiB"): vLLM takes its share
# of this (vllm/v1/worker/utils.py: request_memory). It varies a little with the driver
# and with a display on the card; the lab reads the run's own.
GPU_GIB = 23.64
UTILIZATION = 0.92  # vLLM's gpu_memory_utilization

# The lab's model: Qwen2.5-7B-Instruct-AWQ keeps the 28 layers, 4 KV heads and
# head_dim 128 of Qwen2.5-7B-Instruct; kv_cache_dtype="fp8" stores 1 byte per element.
QWEN_FP8 = ModelConfig(
    "Qwen2.5-7B-Instruct-AWQ, fp8 KV",
    num_layers=28,
    num_kv_heads=4,
    head_dim=128,
    dtype_bytes=1,
)


@dataclass(frozen=True)
class Capacity:
    num_blocks: int
    tokens: int  # vLLM's "GPU KV cache size"
    max_concurrency: float  # sequences of max_model_len tokens that fit at once


def blocks_per_sequence(tokens: int, block_size: int = BLOCK_SIZE) -> int:
    """The blocks a sequence of `tokens` tokens holds: ceil(tokens / block_size)
    (vllm/v1/core/single_type_kv_cache_manager.py:
    SingleTypeKVCacheManager.get_num_blocks_to_allocate)."""
    if type(tokens) is not int or tokens < 1:
        raise ValueError(f"tokens must be a positive integer, got {tokens!r}")
    return -(-tokens // block_size)


def reported_tokens(
    num_blocks: int, max_model_len: int, block_size: int = BLOCK_SIZE
) -> tuple[int, float]:
    """vLLM's "GPU KV cache size" and "Maximum concurrency" for a number of blocks
    (vllm/v1/core/kv_cache_utils.py: get_kv_cache_capacity): the sequences of
    max_model_len tokens the blocks hold, as a float, times max_model_len, truncated."""
    max_concurrency = num_blocks / blocks_per_sequence(max_model_len, block_size)
    return int(max_concurrency * max_model_len), max_concurrency


def predict(
    cfg: ModelConfig,
    kv_memory_bytes: int,
    max_model_len: int,
    block_size: int = BLOCK_SIZE,
) -> Capacity:
    # A block holds block_size tokens in every layer; vLLM rounds down to whole blocks.
    num_blocks = kv_memory_bytes // (block_size * bytes_per_token(cfg))
    tokens, max_concurrency = reported_tokens(num_blocks, max_model_len, block_size)
    return Capacity(num_blocks, tokens, max_concurrency)


@dataclass(frozen=True)
class StartupLog:
    available_gib: float | None  # absent when kv_cache_memory_bytes is set
    tokens: int
    max_model_len: int
    max_concurrency: float
    block_size: int


def read_startup_log(text: str) -> StartupLog:
    def find(pattern: str, line: str):
        match = re.search(pattern, text)
        if match is None:
            raise ValueError(f"vLLM's start-up log has no line like {line!r}")
        return match

    tokens = find(r"GPU KV cache size: ([\d,]+) tokens", "GPU KV cache size: N tokens")
    concurrency = find(
        r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x",
        "Maximum concurrency for N tokens per request: X.XXx",
    )
    available = re.search(r"Available KV cache memory: ([\d.]+) GiB", text)
    block_size = re.search(r"Setting kv cache block size to (\d+)", text)
    return StartupLog(
        available_gib=float(available[1]) if available else None,
        tokens=int(tokens[1].replace(",", "")),
        max_model_len=int(concurrency[1].replace(",", "")),
        max_concurrency=float(concurrency[2]),
        block_size=int(block_size[1]) if block_size else BLOCK_SIZE,
    )


def predict_from_log(cfg: ModelConfig, log: StartupLog) -> tuple[Capacity, Capacity]:
    """The lowest and highest prediction that the rounded available memory allows."""
    if log.available_gib is None:
        raise ValueError(
            "vLLM's start-up log has no line like 'Available KV cache memory: X GiB'"
        )
    low, high = ((log.available_gib + delta) * GIB for delta in (-0.005, 0.005))
    return tuple(
        predict(cfg, int(memory), log.max_model_len, log.block_size)
        for memory in (low, high)
    )


if __name__ == "__main__":
    log_file = Path(sys.argv[1] if len(sys.argv) > 1 else "vllm_startup.log")
    log = read_startup_log(log_file.read_text(encoding="utf-8"))
    low, high = predict_from_log(QWEN_FP8, log)
    print(
        f"vLLM reports {log.tokens:,} tokens = {log.tokens // log.block_size:,} blocks"
        f" of {log.block_size} tokens, {log.max_concurrency:.2f} sequences"
        f" of {log.max_model_len:,} tokens"
    )
    per_token = kv_bytes_per_token(QWEN_FP8) // 1024
    per_block = log.block_size * per_token
    per_sequence = blocks_per_sequence(log.max_model_len, log.block_size)
    print(
        f"calculator: {per_token} KiB/token, {per_block} KiB per block,"
        f" {per_sequence} blocks per sequence"
    )
    print(f"  {log.available_gib} GiB holds {low.tokens:,} to {high.tokens:,} tokens")
    if not low.tokens <= log.tokens <= high.tokens:
        sys.exit("MISMATCH: vLLM's numbers are not the calculator's; check the model")
    print("match")

    memory = int(log.available_gib * GIB)
    # kv_cache_dtype="auto" stores the checkpoint's dtype: FP16 for this AWQ checkpoint.
    auto = ModelConfig(
        "Qwen2.5-7B-Instruct-AWQ, auto KV", num_layers=28, num_kv_heads=4, head_dim=128
    )
    print(f"same {log.available_gib} GiB, other settings:")
    for label, cfg, max_model_len in (
        ("fp8 KV, max_model_len 8192        ", QWEN_FP8, 8192),
        ("auto (fp16) KV, max_model_len 8192", auto, 8192),
        ("fp8 KV, max_model_len 32768       ", QWEN_FP8, 32768),
    ):
        capacity = predict(cfg, memory, max_model_len, log.block_size)
        print(
            f"  {label}: {capacity.num_blocks:>6,} blocks,"
            f" {capacity.max_concurrency:6.2f} sequences"
        )
