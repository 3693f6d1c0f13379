"""Self-test: a 500-token prompt was cached; the next one differs only in token 100.
How many tokens hit?"""

from prefix_cache import PrefixCache

cache = PrefixCache(num_gpu_blocks=100)
prompt = list(range(1000, 1500))
cache.run("first", prompt)
changed = list(prompt)
changed[100] = 7
print(f"token 100 sits in block {100 // 16}: {cache.run('second', changed)} cached")
