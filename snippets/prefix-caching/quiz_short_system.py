"""Self-test: ten requests share a 20-token system prompt, each with its own 10-token
question. What hit rate does vLLM report?"""

from prefix_cache import PrefixCache

cache = PrefixCache(num_gpu_blocks=100)
system = list(range(1000, 1020))
for user in range(10):
    cache.run(
        f"user{user}",
        system + list(range(10_000 * (user + 1), 10_000 * (user + 1) + 10)),
    )
print(f"cached per request: {[step.cached_tokens for step in cache.history]}")
print(f"hit rate {cache.hits} / {cache.queries} = {cache.hit_rate:.1%}")
