"""vLLM's hit rate counts tokens, not requests: one long repeated prompt outweighs
nine short requests that miss. The logged "Prefix cache hit rate" covers the 1000 most
recent requests (vllm/v1/metrics/stats.py: CachingMetrics), printed every 10 seconds by
default (VLLM_LOG_STATS_INTERVAL); the counters vllm:prefix_cache_queries and
vllm:prefix_cache_hits add up every request since start-up."""

from prefix_cache import PrefixCache

cache = PrefixCache(num_gpu_blocks=600)
long_prompt = list(range(1000, 5000))  # 4,000 tokens
cache.run("long-1", long_prompt)
cache.run("long-2", long_prompt)
for i in range(8):
    cache.run(f"short-{i}", list(range(10_000 * (i + 1), 10_000 * (i + 1) + 20)))
rates = [step.cached_tokens / step.prompt_tokens for step in cache.history]
print(
    f"{len(cache.history)} requests, {cache.queries} prompt tokens, {cache.hits} cached"
)
print(f"token-weighted (vLLM's): {cache.hit_rate:.1%}")
print(f"mean of per-request rates: {sum(rates) / len(rates):.1%}")
