"""The longest hit an N-token prompt can get: floor((N - 1) / 16) * 16 tokens. Each
prompt runs twice in a fresh cache; the second run's cached tokens are the hit."""

from prefix_cache import PrefixCache


def max_hit(num_tokens: int, block_size: int = 16) -> int:
    """Full blocks only, and never the last prompt token."""
    return (num_tokens - 1) // block_size * block_size


print(" prompt N   full blocks   hit on repeat   recomputed   formula")
for n in (10, 15, 16, 17, 32, 33, 1000, 1024, 1030):
    cache = PrefixCache(num_gpu_blocks=200)
    prompt = list(range(1000, 1000 + n))
    cache.run("first", prompt)
    hit = cache.run("repeat", prompt)
    assert hit == max_hit(n)
    print(f"{n:8}   {n // 16:11}   {hit:13}   {n - hit:10}   {max_hit(n):7}")
