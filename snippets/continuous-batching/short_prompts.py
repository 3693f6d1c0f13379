"""Worked trace 1: short prompts join and leave the batch at every step.

A budget of 64 tokens per step and at most 3 running requests: D arrives at step 1
but waits until a request finishes and frees a seat.
"""

from scheduler import Request, run, table, ttft_steps

WORKLOAD = [
    Request("A", prompt_tokens=20, max_tokens=3),
    Request("B", prompt_tokens=14, max_tokens=5),
    Request("C", prompt_tokens=25, max_tokens=2, arrival_step=1),
    Request("D", prompt_tokens=10, max_tokens=3, arrival_step=1),
]
CONFIG = dict(max_num_batched_tokens=64, max_num_seqs=3)

if __name__ == "__main__":
    steps = run(WORKLOAD, **CONFIG)
    print(table(WORKLOAD, steps))
    print("time to first token, in steps:", ttft_steps(WORKLOAD, steps))
