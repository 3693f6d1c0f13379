"""Two tenants send the same 1,030-token prompt. With a cache_salt each, neither hits
on the other's blocks, though only the first block's hash includes the salt."""

from prefix_cache import PrefixCache, block_hashes

PROMPT = list(range(1000, 2030))
cache = PrefixCache(num_gpu_blocks=300)
for request_id, salt in [
    ("a1", "tenant-a-secret"),
    ("a2", "tenant-a-secret"),
    ("b1", "tenant-b-secret"),
    ("b2", "tenant-b-secret"),
    ("none", None),
]:
    cached = cache.run(request_id, PROMPT, cache_salt=salt)
    print(f"{request_id:5} cache_salt={salt!r:18} {cached:5} cached")

a, b = (
    block_hashes(PROMPT, cache_salt=s) for s in ("tenant-a-secret", "tenant-b-secret")
)
print(f"first block hash   a {a[0].hex()[:8]}  b {b[0].hex()[:8]}")
print(f"last block hash    a {a[-1].hex()[:8]}  b {b[-1].hex()[:8]}")
print(f"blocks with the same hash: {sum(x == y for x, y in zip(a, b))} of {len(a)}")
