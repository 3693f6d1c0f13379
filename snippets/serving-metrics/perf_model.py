"""A performance model of `vllm serve` Qwen2.5-7B-Instruct (BF16) on one RTX 4090: the
lab's workload (random prompts of 1,024 tokens, 128 output tokens, Poisson arrivals at a
request rate) runs through lesson 3's scheduler (scheduler.py: Scheduler), each step
timed by lesson 3's roofline (chunked_prefill.step_seconds: weights and KV cache read
over the memory bandwidth, or FLOPs over the peak rate, whichever is larger). Every
time it prints is an estimate, and a lower bound: a real step also launches kernels,
samples and streams its tokens.

The scheduler runs with prefix caching on, as vLLM does by default (random prompts hit
nothing), and with async scheduling off: it overlaps the CPU's scheduling with the GPU's
step, which this model does not time, and returns a finished request's seat one step
later, which moves nothing measurable here.
"""

import random
from collections import deque

from chunked_prefill import step_seconds
from decode_batch import QWEN
from kv_cache_size import GIB
from kv_capacity import predict
from measured_share import BF16_SHARE, realistic, realistic_time
from prefix_cache import PrefixCache
from scheduler import (
    MAX_NUM_BATCHED_TOKENS,
    MAX_NUM_SEQS,
    Request,
    Scheduler,
    SchedulerConfig,
    Step,
)
from serving_metrics import goodput, request_metrics, summary

INPUT_LEN = 1024  # vllm bench serve --random-input-len (its default)
OUTPUT_LEN = 128  # --random-output-len (its default), with --ignore-eos
NUM_PROMPTS = 200
SEED = 0
# The lab's --kv-cache-memory-bytes, 7 GiB: 8,192 blocks of 16 tokens, no profiling.
KV_CACHE_MEMORY_BYTES = 7 * GIB
NUM_GPU_BLOCKS = predict(QWEN.model, KV_CACHE_MEMORY_BYTES, 4096).num_blocks
RATES = (2.0, 4.0, 8.0)  # requests per second, the lab's three
PERCENTILES = (50, 90, 99)


def arrivals(rate: float, count: int, seed: int = SEED) -> list[float]:
    """Send times of a Poisson process at `rate` requests/s, from a seeded stdlib RNG,
    stretched so that the last is at count / rate, as vllm bench serve does
    (vllm/benchmarks/serve.py: get_request, burstiness 1.0)."""
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate <= 0:
        raise ValueError(f"the request rate must be a number above 0, got {rate!r}")
    if type(count) is not int or count < 1:
        raise ValueError(f"count must be an integer of at least 1, got {count!r}")
    rng = random.Random(seed)
    times, now = [], 0.0
    for _ in range(count):
        now += rng.expovariate(rate)
        times.append(now)
    return [t * (count / rate) / now for t in times]


def serve(
    sent: list[float],
    input_len: int = INPUT_LEN,
    output_len: int = OUTPUT_LEN,
    max_num_batched_tokens: int = MAX_NUM_BATCHED_TOKENS,
    max_num_seqs: int = MAX_NUM_SEQS,
    enable_chunked_prefill: bool = True,
    num_gpu_blocks: int = NUM_GPU_BLOCKS,
) -> tuple[list[dict], float]:
    """Each request's metrics (serving_metrics.request_metrics) and the run's duration,
    from the start of the run (t = 0, before the first request's own gap) to the last
    token, as vllm bench serve times it (vllm/benchmarks/serve.py: benchmark). A
    request sent while a step runs joins the waiting queue before the next step
    (vllm/v1/engine/core.py: EngineCore.step); every sampled token reaches the client
    as its step ends."""
    config = SchedulerConfig(
        max_num_batched_tokens,
        max_num_seqs,
        enable_chunked_prefill=enable_chunked_prefill,
    )
    scheduler = Scheduler(config, PrefixCache(num_gpu_blocks))  # prefix caching on
    pending = deque(
        (t, Request(f"r{i}", input_len, output_len)) for i, t in enumerate(sent)
    )
    tokens: dict[str, list[float]] = {r.request_id: [] for _, r in pending}
    now, step = 0.0, 0
    while pending or scheduler.waiting or scheduler.running:
        if not (scheduler.waiting or scheduler.running):
            now = max(now, pending[0][0])  # an idle engine waits for the next request
        while pending and pending[0][0] <= now:
            scheduler.add_request(pending.popleft()[1])
        before = {s.id: s.num_computed_tokens for s in scheduler.running}
        before.update((s.id, s.num_computed_tokens) for s in scheduler.waiting)
        scheduled, preempted = scheduler.schedule()
        now += step_seconds(
            Step(step, scheduled, {i: before[i] for i in scheduled}, [], [], preempted,
                 [], [], [], scheduler.kv_cache_manager.num_free_blocks)
        )  # fmt: skip
        for request_id in scheduler.update_from_output(scheduled)[0]:
            tokens[request_id].append(now)
        step += 1
    metrics = [request_metrics(t, tokens[f"r{i}"]) for i, t in enumerate(sent)]
    return metrics, now


def predict_rate(rate: float, count: int = NUM_PROMPTS, **engine) -> dict:
    """The metrics vllm bench serve would report at a request rate (estimates)."""
    requests, duration = serve(arrivals(rate, count), **engine)
    stats = summary(requests, PERCENTILES)
    output = sum(r["output_tokens"] for r in requests)
    stats["request_throughput"] = len(requests) / duration
    stats["output_throughput"] = output / duration
    stats["duration"] = duration
    stats["requests"] = requests
    return stats


def row(label: str, s: dict) -> str:
    return (
        f"{label:>12}  {s['p50_ttft_ms']:>8.0f} {s['p99_ttft_ms']:>8.0f}"
        f"  {s['p50_itl_ms']:>6.1f} {s['p99_itl_ms']:>6.1f}"
        f"  {s['request_throughput']:>7.2f} {s['output_throughput']:>8.0f}"
    )


HEAD = (
    "                TTFT p50  p99 ms  ITL p50  p99 ms   req/s  out tok/s\n"
    "                (every figure an estimate, a lower bound on time)"
)

if __name__ == "__main__":
    print(f"KV cache: {NUM_GPU_BLOCKS} blocks; {NUM_PROMPTS} requests of"
          f" {INPUT_LEN} + {OUTPUT_LEN} tokens, seed {SEED}")  # fmt: skip
    print(HEAD)
    sweep = {rate: predict_rate(rate) for rate in (*RATES, 12.0, 16.0)}
    for rate, stats in sweep.items():
        print(row(f"{rate:g} req/s", stats))
    low, high = (f"{share:.0%}" for share in BF16_SHARE)
    short, long = realistic_time(sweep[RATES[0]]["p50_itl_ms"])
    slow, fast = realistic(sweep[16.0]["request_throughput"])
    print(f"if steps ran at {low} to {high} of the bound's speed, as Qwen's A100"
          f" did (lesson 1, an estimate):")  # fmt: skip
    print(f"  ITL p50 at {RATES[0]:g} req/s {short:.1f} to {long:.1f} ms;"
          f" saturation at {slow:.1f} to {fast:.1f} req/s, not"
          f" {sweep[16.0]['request_throughput']:.2f}")  # fmt: skip
    slos = {"ttft": 500, "tpot": 50}
    print(f"at 8 req/s, goodput under {slos}:")
    # max_num_batched_tokens, max_num_seqs, enable_chunked_prefill
    for budget, seqs, chunked in (
        (2048, 256, True),
        (8192, 256, True),
        (2048, 256, False),
        (512, 256, True),
        (2048, 16, True),
    ):
        s = predict_rate(8.0, max_num_batched_tokens=budget, max_num_seqs=seqs,
                         enable_chunked_prefill=chunked)  # fmt: skip
        good = goodput(s["requests"], slos, s["duration"])
        label = f"{budget}/{seqs}{'' if chunked else ' nc'}"
        print(row(label, s) + f"  goodput {good:.2f} req/s")
    print("(budget/max_num_seqs; nc: enable_chunked_prefill=False)")
