"""Static batching against continuous batching, on the same eight requests.

Static: batches of 4 in arrival order. A batch starts when the one before it has
finished; its prompts are padded to the longest one, and it runs until its longest
answer ends, finished requests keeping their seats. Continuous: scheduler.py with at
most 4 running requests; a request leaves when it is done, and a waiting one takes
its seat in the next step.
"""

from scheduler import Request, run, ttft_steps

SEATS = 4
WORKLOAD = [  # all arrive at step 0; (prompt tokens, output tokens)
    Request("A", 40, 4),
    Request("B", 12, 32),
    Request("C", 25, 8),
    Request("D", 60, 16),
    Request("E", 18, 4),
    Request("F", 33, 24),
    Request("G", 50, 8),
    Request("H", 9, 12),
]


def static_batching(requests: list[Request], seats: int) -> dict:
    """Per request the step of its first token and of its last; the steps in all;
    the token positions computed (padding and finished seats included)."""
    first, last, step, computed = {}, {}, 0, 0
    for start in range(0, len(requests), seats):
        batch = requests[start : start + seats]
        longest = max(r.max_tokens for r in batch)
        for r in batch:  # the batch's first step samples every first token
            first[r.request_id] = step
            last[r.request_id] = step + r.max_tokens - 1
        # one step of padded prompts, then longest - 1 decode steps of every seat
        computed += len(batch) * max(r.prompt_tokens for r in batch)
        computed += len(batch) * (longest - 1)
        step += longest
    return {"first": first, "last": last, "steps": step, "computed": computed}


def continuous_batching(requests: list[Request], seats: int) -> dict:
    steps = run(requests, max_num_seqs=seats)
    first = {i: n - 1 for i, n in ttft_steps(requests, steps).items()}  # arrived at 0
    last = {i: step.step for step in steps for i in step.finished}
    computed = sum(sum(step.scheduled.values()) for step in steps)
    return {"first": first, "last": last, "steps": len(steps), "computed": computed}


if __name__ == "__main__":
    needed = sum(r.prompt_tokens + r.max_tokens - 1 for r in WORKLOAD)
    results = {
        "static": static_batching(WORKLOAD, SEATS),
        "continuous": continuous_batching(WORKLOAD, SEATS),
    }
    print("request  output    static: first last   continuous: first last")
    for r in WORKLOAD:
        s, c = results["static"], results["continuous"]
        i = r.request_id
        print(
            f"{i:>7} {r.max_tokens:>7}  {s['first'][i]:>14} {s['last'][i]:>4}"
            f"  {c['first'][i]:>18} {c['last'][i]:>4}"
        )
    for name, result in results.items():
        mean_first = sum(result["first"].values()) / len(WORKLOAD)
        mean_last = sum(result["last"].values()) / len(WORKLOAD)
        wasted = 1 - needed / result["computed"]
        print(
            f"{name:>10}: {result['steps']} steps; on average the first token at step"
            f" {mean_first:.1f}, the last at step {mean_last:.1f};\n{'':12}"
            f"{result['computed']} token positions computed, {wasted:.0%} wasted"
        )
