"""The mental model: each full block's hash covers its parent's hash and its own 16
tokens, so a block hits only if every block before it hits too."""

from prefix_cache import PrefixCache, block_hashes

BASE = list(range(1000, 1056))  # 56 tokens: 3 full blocks + 8
prompts = {
    "A": BASE,
    "B": BASE[:48] + list(range(5000, 5010)),  # same 3 blocks, other tail
    "C": BASE[:20] + [7] + BASE[21:],  # token 20 changed: block 1 differs
}
cache = PrefixCache(num_gpu_blocks=20)
for name, prompt in prompts.items():
    hashes = [h.hex()[:8] for h in block_hashes(prompt)]
    hit, hit_tokens = cache.lookup(prompt)
    cells = [f"{h}{'*' if i < len(hit) else ' '}" for i, h in enumerate(hashes)]
    tail = len(prompt) % 16
    print(f"{name} ({len(prompt)} tokens) | {' | '.join(cells)} | +{tail} unhashed")
    print(f"   hit {hit_tokens} tokens, blocks {hit}")
    cache.run(name, prompt)
print("* = found in the cache when the request arrives (after the ones above ran)")
