"""Worked trace 2: a long prompt arrives among short requests and is prefilled in
chunks, while the others keep decoding one token per step.

The budget is 64 tokens per step; L's 150-token prompt takes what is left of it.
"""

from scheduler import Request, run, table, ttft_steps

WORKLOAD = [
    Request("A", prompt_tokens=10, max_tokens=6),
    Request("B", prompt_tokens=12, max_tokens=6),
    Request("L", prompt_tokens=150, max_tokens=2, arrival_step=1),
    Request("S", prompt_tokens=6, max_tokens=2, arrival_step=2),
]
CONFIG = dict(max_num_batched_tokens=64, max_num_seqs=4)

if __name__ == "__main__":
    steps = run(WORKLOAD, **CONFIG)
    print(table(WORKLOAD, steps))
    print("time to first token, in steps:", ttft_steps(WORKLOAD, steps))
    chunks = [n for n in (s.scheduled.get("L", 0) for s in steps) if n > 1]
    print(f"L's prompt in chunks of {chunks} tokens")
