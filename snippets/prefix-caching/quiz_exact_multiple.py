"""Self-test: a 2,048-token prompt (exactly 128 blocks) is sent twice. How many of its
tokens come from the cache the second time?"""

from prefix_cache import PrefixCache

cache = PrefixCache(num_gpu_blocks=300)
prompt = list(range(1000, 3048))
cache.run("first", prompt)
cached = cache.run("second", prompt)
print(f"cached {cached} of {len(prompt)}, recomputed {len(prompt) - cached}")
print(f"one token less ({len(prompt) - 1}): {cache.lookup(prompt[:-1])[1]} cached")
