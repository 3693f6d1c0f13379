"""Two requests share a 40-token system prompt at the same time, in lesson 3's
scheduler with prefix caching on: B arrives while A is still computing its
prompt in chunks, and starts from the blocks A has filled."""

from prefix_cache import PrefixCache
from scheduler import Request, run, table

SYSTEM = tuple(range(100, 140))  # 40 tokens: 2 full blocks and 8 more
WORKLOAD = [
    Request("A", 72, 3, prompt=SYSTEM + tuple(range(500, 532))),
    Request("B", 48, 3, arrival_step=1, prompt=SYSTEM + tuple(range(600, 608))),
]
CONFIG = dict(max_num_batched_tokens=48, max_num_seqs=4)

if __name__ == "__main__":
    steps = run(WORKLOAD, PrefixCache, **CONFIG)
    print(table(WORKLOAD, steps))
    for step in steps:
        tables = step.block_tables
        shared = sorted(set(tables.get("A", ())) & set(tables.get("B", ())))
        listed = ", ".join(f"{i} {blocks}" for i, blocks in tables.items())
        print(f"after step {step.step}: {listed or '-'}; shared {shared}")
    print(f"prefix cache hits: {steps[-1].hits} of {steps[-1].queries} prompt tokens")
