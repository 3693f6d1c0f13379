"""Where the performance model's time goes: lesson 3's estimate of a step
(chunked_prefill.step_seconds) for the steps the lab's workload makes on
Qwen2.5-7B-Instruct (BF16) on an RTX 4090. Every time printed is an estimate, and only
for batches the lab's KV cache holds: its 8,192 blocks (--kv-cache-memory-bytes 7 GiB)
hold MOST_REQUESTS requests at their full length; a larger batch would be preempted
(lesson 3), so its step is not timed.
"""

from chunked_prefill import step_seconds
from kv_capacity import blocks_per_sequence
from perf_model import INPUT_LEN, NUM_GPU_BLOCKS, OUTPUT_LEN
from scheduler import Step

CONTEXT = INPUT_LEN + OUTPUT_LEN // 2  # a decoding request's context, on average
BLOCKS_PER_REQUEST = blocks_per_sequence(INPUT_LEN + OUTPUT_LEN)
MOST_REQUESTS = NUM_GPU_BLOCKS // BLOCKS_PER_REQUEST


def step(scheduled: dict[str, int], before: dict[str, int]) -> float:
    """The estimated seconds of a step that computes `scheduled` tokens per request,
    each having computed `before` tokens already."""
    return step_seconds(Step(0, scheduled, before, [], [], [], [], [], [], 0))


def decodes(batch: int) -> tuple[dict[str, int], dict[str, int]]:
    names = [f"d{i}" for i in range(batch)]
    return dict.fromkeys(names, 1), dict.fromkeys(names, CONTEXT)


if __name__ == "__main__":
    prompt = step({"p": INPUT_LEN}, {"p": 0})
    print(f"prefill of one {INPUT_LEN}-token prompt alone: {prompt * 1000:.1f} ms")
    for batch in (1, 16, 64, MOST_REQUESTS, 256):
        if batch > MOST_REQUESTS:
            print(f"a decode step, batch {batch:>3}: not reachable:"
                  f" {NUM_GPU_BLOCKS:,} blocks hold {MOST_REQUESTS} requests"
                  f" of {BLOCKS_PER_REQUEST} blocks")  # fmt: skip
            continue
        ms = step(*decodes(batch)) * 1000
        print(f"a decode step, batch {batch:>3}: {ms:6.1f} ms,"
              f" {batch / ms * 1000:7.0f} tokens/s")  # fmt: skip
    new, before = decodes(16)
    for chunk in (512, 2048 - 16):
        mixed = step({**new, "p": chunk}, {**before, "p": 0}) * 1000
        print(f"16 decodes + a {chunk}-token prompt chunk: {mixed:.1f} ms")
    # At saturation the GPU computes every prompt; prompts alone cap the rate.
    per_request = step({"p": 2048}, {"p": 0}) / 2048 * INPUT_LEN
    print(f"a prompt's compute in 2048-token chunks: {per_request * 1000:.1f} ms,"
          f" so at most {1 / per_request:.1f} requests/s")  # fmt: skip
