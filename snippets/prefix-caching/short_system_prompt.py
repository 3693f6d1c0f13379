"""Five users share a system prompt and ask different 20-token questions. With a
12-token system prompt no block is ever shared: a 0% hit rate is the right answer."""

from prefix_cache import PrefixCache

for system_tokens in (12, 40):
    system = list(range(1000, 1000 + system_tokens))
    cache = PrefixCache(num_gpu_blocks=100)
    hits = []
    for user in range(5):
        question = list(range(10_000 * (user + 1), 10_000 * (user + 1) + 20))
        hits.append(cache.run(f"user{user}", system + question))
    print(
        f"system prompt of {system_tokens} tokens: cached tokens per request {hits},"
        f" hit rate {cache.hits} / {cache.queries} = {cache.hit_rate:.1%}"
    )
