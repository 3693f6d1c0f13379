"""How many blocks vLLM makes of its KV cache memory, for Qwen2.5-7B-Instruct in BF16.

vLLM keeps one KV cache tensor per layer; a block is one page in every layer's tensor.
"""

from block_pool import BLOCK_SIZE
from hf_config import read_presets
from kv_cache_size import GIB
from kv_capacity import predict

qwen = read_presets()["Qwen2.5-7B-Instruct"].model


def page_size_bytes(block_size: int = BLOCK_SIZE) -> int:
    """One layer's page: K and V of block_size tokens
    (vllm/v1/kv_cache_interface.py: AttentionSpec.real_page_size_bytes)."""
    return 2 * block_size * qwen.num_kv_heads * qwen.head_dim * qwen.dtype_bytes


def num_blocks(available_memory: int, block_size: int = BLOCK_SIZE) -> int:
    """vllm/v1/core/kv_cache_utils.py: get_num_blocks."""
    return available_memory // page_size_bytes(block_size) // qwen.num_layers


if __name__ == "__main__":
    page = page_size_bytes()
    print(
        f"page per layer: 2 * {BLOCK_SIZE} * {qwen.num_kv_heads} * {qwen.head_dim}"
        f" * {qwen.dtype_bytes} = {page:,} bytes"
    )
    print(
        f"one block in all {qwen.num_layers} layers:"
        f" {page * qwen.num_layers:,} bytes = {page * qwen.num_layers // 1024} KiB"
    )
    # The KV memory of lesson 1's example start-up log (RTX 4090, AWQ weights).
    memory = int(13.86 * GIB)
    blocks = num_blocks(memory)
    print(
        f"13.86 GiB: {memory:,} // {page:,} // {qwen.num_layers}"
        f" = {blocks:,} blocks = {blocks * BLOCK_SIZE:,} tokens"
    )
    # Lesson 1's calculator divides by a whole block at once: the same count.
    same = predict(qwen, memory, 4096).num_blocks
    print(f"lesson 1's kv_capacity.predict: {same:,} blocks")
