"""Lesson 3's worked trace 4 (vllm_defaults.py) with both of vLLM's defaults on:
async scheduling, and this lesson's prefix cache as the scheduler's KV cache manager.
B is preempted with 17 tokens; when it comes back, its first block, full and hashed,
is still cached, and it computes 1 token instead of 17."""

from block_pool import BlockPool
from prefix_cache import PrefixCache
from scheduler import run, table, ttft_steps
from vllm_defaults import ASYNC, CONFIG, WORKLOAD

if __name__ == "__main__":
    for title, kv_cache_manager in (
        ("async scheduling", BlockPool),
        ("\nasync scheduling + prefix caching (vLLM's defaults)", PrefixCache),
    ):
        steps = run(WORKLOAD, kv_cache_manager, **CONFIG, **ASYNC)
        print(f"{title}:")
        print(table(WORKLOAD, steps))
        print("time to first token, in steps:", ttft_steps(WORKLOAD, steps))
