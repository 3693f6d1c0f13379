"""Worked trace 3: KV blocks run out and the last running request is preempted.

6 blocks of 16 tokens, block 0 being the null block: 5 blocks (80 tokens) to share.
A crosses a block boundary at step 2 when none is free.
"""

from scheduler import Request, run, table, ttft_steps

WORKLOAD = [
    Request("A", prompt_tokens=31, max_tokens=6),
    Request("B", prompt_tokens=20, max_tokens=4),
    Request("C", prompt_tokens=10, max_tokens=4),
    Request("D", prompt_tokens=8, max_tokens=2, arrival_step=2),
]
CONFIG = dict(max_num_batched_tokens=64, max_num_seqs=4, num_gpu_blocks=6)

if __name__ == "__main__":
    steps = run(WORKLOAD, **CONFIG)
    print(table(WORKLOAD, steps))
    print("free blocks after each step:", [step.free_blocks for step in steps])
    print("time to first token, in steps:", ttft_steps(WORKLOAD, steps))
