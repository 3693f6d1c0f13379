"""What chunked prefill does to time: 16 requests are decoding on Qwen2.5-7B-Instruct
(BF16, one RTX 4090) when an 8,000-token prompt arrives. Each setting runs through
scheduler.py; each step's time is estimated from lesson 1's figures, as the larger of
its bytes over the memory bandwidth and its FLOPs over the peak BF16 rate. Both count
only what a step cannot avoid, so the time is a lower bound, and every time printed
here is an estimate. What a step reads and computes of the weights is lesson 1's model
(decode_batch.weights_read and matmul_flops).
"""

from decode_batch import (
    ATTENTION,
    BANDWIDTH,
    KV_PER_TOKEN,
    PARAMETERS,
    PEAK_BF16,
    QWEN,
    matmul_flops,
    weights_read,
)
from scheduler import Request, Step, run

ARRIVAL = 100  # the step at which the long prompt arrives
WORKLOAD = [Request(f"u{i}", 1000, 300) for i in range(16)]
WORKLOAD.append(Request("long", 8000, 50, arrival_step=ARRIVAL))
SETTINGS = [  # (max_num_batched_tokens, enable_chunked_prefill)
    (512, True),
    (2048, True),  # `vllm serve` on an RTX 4090
    (8192, True),  # LLM() on an RTX 4090
    (8192, False),
]


def step_bounds(step: Step) -> tuple[float, float]:
    """Seconds for one step's bytes and for its FLOPs: the weights (weights_read), and
    each scheduled request's KV cache; the weight matmuls (matmul_flops), plus attention
    over the tokens before each new one (causal within the chunk)."""
    new = step.scheduled
    before = step.computed_before
    tokens = sum(new.values())
    kv_bytes = sum(before[i] + n for i, n in new.items()) * KV_PER_TOKEN
    read = weights_read(2 * PARAMETERS, QWEN.config, tokens) + kv_bytes
    pairs = sum(n * before[i] + n * (n + 1) // 2 for i, n in new.items())
    flops = matmul_flops(QWEN.config, tokens, len(new)) + pairs * ATTENTION
    return read / BANDWIDTH, flops / PEAK_BF16


def step_seconds(step: Step) -> float:
    """Estimated time of one step: the longer of its two bounds."""
    return max(step_bounds(step))


def timeline(budget: int, chunked: bool) -> tuple[list[Step], list[float]]:
    """The steps, and the time at the end of each (seconds, estimated)."""
    steps = run(WORKLOAD, max_num_batched_tokens=budget, enable_chunked_prefill=chunked)
    ends, now = [], 0.0
    for step in steps:
        now += step_seconds(step)
        ends.append(now)
    return steps, ends


def effect(budget: int, chunked: bool) -> dict:
    steps, ends = timeline(budget, chunked)
    start = ends[ARRIVAL - 1]  # the long prompt arrives as step ARRIVAL begins
    first = next(s.step for s in steps if "long" in s.sampled)
    chunks = [s.scheduled["long"] for s in steps[ARRIVAL : first + 1]]
    gaps, last = [], {}  # the others' inter-token latency after the arrival
    for step in steps:
        for i in step.sampled:
            if i != "long" and i in last and step.step >= ARRIVAL:
                gaps.append(ends[step.step] - last[i])
            last[i] = ends[step.step]
    return {
        "steps": first - ARRIVAL + 1,
        "chunks": chunks,
        "ttft": ends[first] - start,
        "itl": max(gaps),
        "decode": ends[ARRIVAL - 1] - ends[ARRIVAL - 2],
    }


if __name__ == "__main__":
    print("max_num_batched_tokens  chunked  prefill steps  its TTFT  others' worst ITL")
    for budget, chunked in SETTINGS:
        e = effect(budget, chunked)
        print(
            f"{budget:>22}  {'yes' if chunked else 'no':>7}  {e['steps']:>13}"
            f"  {e['ttft'] * 1000:>5.0f} ms  {e['itl'] * 1000:>14.0f} ms"
        )
    e = effect(2048, True)
    print(f"a decode-only step of the 16 others: {e['decode'] * 1000:.1f} ms")
    print(f"the long prompt's chunks at 2048 tokens per step: {e['chunks']}")
