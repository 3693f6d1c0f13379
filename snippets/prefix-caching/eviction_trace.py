"""A pool of 8 blocks (7 to hand out, block 0 is the null block). Finished requests
leave their full blocks cached in the free queue; a new request takes blocks from the
head of the queue, unhashed ones first, then the least recently freed cached ones."""

from prefix_cache import PrefixCache

cache = PrefixCache(num_gpu_blocks=8)
A = list(range(100, 140))  # 40 tokens: 2 full blocks + 8
B = list(range(200, 240))
C = list(range(300, 372))  # 72 tokens: 4 full blocks + 8
print(f"start: free queue {cache.free_queue}")
for request_id, prompt in [("A", A), ("B", B), ("A2", A), ("C", C), ("A3", A)]:
    cached = cache.run(request_id, prompt)
    step = cache.history[-1]
    print(
        f"{request_id:2} {len(prompt)} tokens: cached {cached:2}, table"
        f" {list(step.block_table)}, hit {list(step.hit_blocks)},"
        f" evicted {list(step.evicted)}"
    )
    print(
        f"   cached blocks {sorted(cache.cached_blocks)}, free queue"
        f" {cache.free_queue}, usage {cache.usage:.0%}"
    )
print(f"hit rate {cache.hits} / {cache.queries} = {cache.hit_rate:.1%}")
