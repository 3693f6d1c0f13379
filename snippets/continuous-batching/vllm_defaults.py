"""Worked trace 4: the same workload in the simple engine and in vLLM's default
one, AsyncScheduler (async scheduling on). Lesson 5 adds vLLM's other default,
prefix caching, to it (preempted_hit.py).

4 blocks of 16 tokens, block 0 being the null block: 3 to share. B is preempted
right after its first token, with 17 tokens, and comes back when A is done.
"""

from scheduler import Request, run, table, ttft_steps

WORKLOAD = [
    Request("A", prompt_tokens=16, max_tokens=10),
    Request("B", prompt_tokens=16, max_tokens=6, arrival_step=1),
]
CONFIG = dict(max_num_batched_tokens=64, max_num_seqs=2, num_gpu_blocks=4)
ASYNC = dict(async_scheduling=True)

if __name__ == "__main__":
    for title, mode in (("async scheduling off", {}), ("\nasync scheduling on", ASYNC)):
        steps = run(WORKLOAD, **CONFIG, **mode)
        print(f"{title}:")
        print(table(WORKLOAD, steps))
        print("time to first token, in steps:", ttft_steps(WORKLOAD, steps))
