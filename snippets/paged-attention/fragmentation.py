"""Contiguous reservation against paging, for Qwen2.5-7B-Instruct in BF16.

Contiguous: every request reserves room for max_model_len tokens when it arrives, since
nobody knows how long its answer will be. Paged: it holds whole 16-token blocks, as many
as its tokens fill so far.
"""

from block_pool import BLOCK_SIZE, blocks_for
from hf_config import read_presets
from kv_cache_size import kv_bytes_per_token

MIB = 1024**2
MAX_MODEL_LEN = 4096
# Tokens each running request holds (prompt + generated so far): a mix of lengths.
REQUESTS = [23, 180, 517, 1000, 2049, 3600]

qwen = read_presets()["Qwen2.5-7B-Instruct"].model
per_token = kv_bytes_per_token(qwen)
per_block = BLOCK_SIZE * per_token


def report(max_model_len: int = MAX_MODEL_LEN) -> None:
    reserved = max_model_len * per_token
    print("tokens reserved MiB blocks paged MiB waste")
    for tokens in REQUESTS:
        blocks = blocks_for(tokens)
        waste = blocks * BLOCK_SIZE - tokens  # empty slots in the last block
        print(
            f"{tokens:>6,} {reserved / MIB:>12.1f} {blocks:>6}"
            f" {blocks * per_block / MIB:>9.2f} {waste:>5}"
        )
    used = sum(REQUESTS) * per_token
    paged = sum(blocks_for(tokens) for tokens in REQUESTS) * per_block
    total = reserved * len(REQUESTS)
    print(
        f"total {sum(REQUESTS):,} tokens = {used / MIB:.1f} MiB of KV:"
        f" contiguous reserves {total / MIB:,.1f} MiB ({used / total:.1%} used),"
    )
    empty = (paged - used) / MIB
    share = f"{used / paged:.1%} used, {empty:.1f} MiB empty"
    print(f"  paging holds {paged / MIB:.1f} MiB ({share})")


if __name__ == "__main__":
    print(f"{qwen.name}: {per_token:,} bytes per token, {per_block:,} bytes per block")
    print(f"contiguous: each request reserves max_model_len = {MAX_MODEL_LEN:,} tokens")
    report()
    worst = (BLOCK_SIZE - 1) * per_token
    print(f"waste per request: at most {BLOCK_SIZE - 1} tokens = {worst:,} bytes")
    reserve = 32768 * per_token / MIB
    print(f"at max_model_len 32,768 a request would reserve {reserve:,.1f} MiB")
