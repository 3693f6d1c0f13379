"""The block size trade-off that the lesson's own code can count exactly, on the six
requests of fragmentation.py (Qwen2.5-7B-Instruct in BF16).

- Waste: a request holds whole blocks, so its last block has empty slots.
- Prefix-cache hits: sending a prompt of N tokens again hits only whole blocks, and
  stops before the last token, whose logits are needed: floor((N - 1) / B) blocks
  (vllm/v1/core/kv_cache_manager.py: KVCacheManager.get_computed_blocks).
- Block table entries: what the attention kernel walks per request per layer.
What it cannot count is the kernel's speed: that is the paper's measurement.
"""

from block_pool import blocks_for
from fragmentation import REQUESTS, per_token

MIB = 1024**2
BLOCK_SIZES = [8, 16, 32, 64, 128]


def last_block_waste(tokens: int, block_size: int) -> int:
    return blocks_for(tokens, block_size) * block_size - tokens


def hit_tokens(prompt: int, block_size: int) -> int:
    return (prompt - 1) // block_size * block_size


if __name__ == "__main__":
    total = sum(REQUESTS)
    print(f"requests {REQUESTS}: {total:,} tokens")
    print("   B  empty slots  MiB empty  mean/request  (B-1)/2  table entries")
    for size in BLOCK_SIZES:
        empty = sum(last_block_waste(n, size) for n in REQUESTS)
        entries = sum(blocks_for(n, size) for n in REQUESTS)
        print(
            f"{size:>4} {empty:>12,} {empty * per_token / MIB:>10.2f}"
            f" {empty / len(REQUESTS):>13.1f} {(size - 1) / 2:>8.1f} {entries:>14,}"
        )
    # The same six sequences sent again as prompts: the best any cache could do is
    # N - 1 tokens each (the last one is always computed).
    best = sum(n - 1 for n in REQUESTS)
    print(f"each sent again as a prompt: at best {best:,} tokens hit")
    print("   B  hit tokens  lost to whole blocks  hit share")
    for size in BLOCK_SIZES:
        hits = sum(hit_tokens(n, size) for n in REQUESTS)
        print(f"{size:>4} {hits:>11,} {best - hits:>21,} {hits / best:>10.1%}")
    short = REQUESTS[0]
    print(f"the {short}-token request alone (short, as the paper's Alpaca trace):")
    for size in BLOCK_SIZES:
        held = blocks_for(short, size) * size
        print(
            f"{size:>4}: holds {held:>3} slots, {held - short:>3} empty"
            f" ({(held - short) / held:.0%}), a resend hits {hit_tokens(short, size)}"
        )
