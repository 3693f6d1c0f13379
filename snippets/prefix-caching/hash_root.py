"""The root of every chain comes from PYTHONHASHSEED. Two processes with different
roots give the same tokens different hashes: hits inside one process are unaffected,
but block hashes cannot be compared across them (KV events, cache-aware routing)."""

from prefix_cache import NONE_HASH, block_hashes, sha256

tokens = list(range(1000, 1032))  # 2 full blocks
ours = block_hashes(tokens)
print(f"root with PYTHONHASHSEED=0: {NONE_HASH.hex()[:8]}")
print(f"block hashes: {[h.hex()[:8] for h in ours]}")
root = sha256("1")  # PYTHONHASHSEED=1
other = []
for start in (0, 16):
    root = sha256((root, tuple(tokens[start : start + 16]), None))
    other.append(root)
print(f"root with PYTHONHASHSEED=1: {sha256('1').hex()[:8]}")
print(f"block hashes: {[h.hex()[:8] for h in other]}")
