"""Worked trace 4: the same workload in the simple engine and with vLLM's two
defaults on, prefix caching and async scheduling.

4 blocks of 16 tokens, block 0 being the null block: 3 to share. B is preempted
right after its first token, with 17 tokens, and comes back when A is done.
"""

from scheduler import Request, run, table, ttft_steps

WORKLOAD = [
    Request("A", prompt_tokens=16, max_tokens=10),
    Request("B", prompt_tokens=16, max_tokens=6, arrival_step=1),
]
CONFIG = dict(max_num_batched_tokens=64, max_num_seqs=2, num_gpu_blocks=4)
BOTH_ON = dict(enable_prefix_caching=True, async_scheduling=True)

if __name__ == "__main__":
    for title, defaults in (("both off", {}), ("\nvLLM's defaults", BOTH_ON)):
        steps = run(WORKLOAD, **CONFIG, **defaults)
        print(f"{title}:")
        print(table(WORKLOAD, steps))
        print("time to first token, in steps:", ttft_steps(WORKLOAD, steps))
