"""The workloads the course's conformance tests run through this lesson's scheduler
and through vLLM 0.26.0's own Scheduler and AsyncScheduler, step by step
(tests/conformance/): hand-picked edge cases and seeded random ones, each with async
scheduling off and on, and the trace both sides print for each step. The tests run
them, and lesson 5's, with lesson 5's prefix cache too: vLLM's other default."""

import random

import long_prompt
import preemption
import short_prompts
import vllm_defaults
from block_pool import BlockPool, blocks_for
from scheduler import Request, Scheduler, SchedulerConfig, enough_blocks, run

MODES = {"sync": dict(async_scheduling=False), "async": dict(async_scheduling=True)}
RANDOM_PER_MODE = 120
DEFAULTS = dict(
    num_gpu_blocks=None,
    block_size=16,
    max_num_batched_tokens=2048,
    max_num_seqs=256,
    long_prefill_token_threshold=0,
    enable_chunked_prefill=True,
    async_scheduling=False,
)


def _shared(start: int, count: int) -> tuple[int, ...]:
    return tuple(range(start, start + count))


SYSTEM = _shared(100, 40)  # a 40-token system prompt: 2 full blocks and 8 tokens
EDGE_CASES = {
    "lesson 3: short prompts": (short_prompts.WORKLOAD, short_prompts.CONFIG),
    "lesson 3: a long prompt in chunks": (long_prompt.WORKLOAD, long_prompt.CONFIG),
    "lesson 3: preemption": (preemption.WORKLOAD, preemption.CONFIG),
    # A 16-token prompt preempted after its first token comes back with 17 tokens: with
    # prefix caching it finds its own full block still cached and computes 1.
    "lesson 3: vLLM's defaults": (vllm_defaults.WORKLOAD, vllm_defaults.CONFIG),
    # 32 tokens, twice: the last token is recomputed, so the second hits 16, not 32.
    "a prompt of whole blocks, twice": (
        [
            Request("A", 32, 2, prompt=SYSTEM[:32]),
            Request("B", 32, 2, arrival_step=3, prompt=SYSTEM[:32]),
        ],
        dict(max_num_batched_tokens=64, max_num_seqs=4),
    ),
    "the same prompt three times": (
        [
            Request(name, 40, 5, arrival_step=step, prompt=SYSTEM)
            for name, step in (("A", 0), ("B", 0), ("C", 3))
        ],
        dict(max_num_batched_tokens=64, max_num_seqs=4),
    ),
    # With async scheduling a finished request's seat comes back one step later.
    "one seat": (
        [Request("A", 8, 3), Request("B", 8, 3), Request("C", 8, 2, arrival_step=1)],
        dict(max_num_batched_tokens=16, max_num_seqs=1),
    ),
    "without chunked prefill": (
        [Request("A", 30, 3), Request("B", 40, 2), Request("C", 5, 2, arrival_step=1)],
        dict(max_num_batched_tokens=64, max_num_seqs=4, enable_chunked_prefill=False),
    ),
    "long_prefill_token_threshold": (
        [Request("A", 50, 3), Request("B", 30, 2, arrival_step=1)],
        dict(
            max_num_batched_tokens=40, max_num_seqs=4, long_prefill_token_threshold=12
        ),
    ),
    "a tight pool, shared prefixes, block size 4": (
        [
            Request("A", 20, 6, prompt=SYSTEM[:20]),
            Request("B", 24, 6, prompt=SYSTEM[:24]),
            Request("C", 12, 9, prompt=SYSTEM[:12], arrival_step=2),
        ],
        dict(
            num_gpu_blocks=12, block_size=4, max_num_batched_tokens=32, max_num_seqs=3
        ),
    ),
}


def random_workload(seed: int) -> tuple[list[Request], dict]:
    """Up to 7 requests, most of them sharing the first tokens of one of two
    prompts, arriving over 8 steps, in a pool from just big enough for the longest
    to big enough for all."""
    rng = random.Random(seed)
    block_size = rng.choice([4, 16, 16])
    max_num_seqs = rng.randint(1, 6)
    budget = rng.randint(max_num_seqs, 96)
    chunked = rng.random() < 0.85
    bases = [
        [rng.randrange(100, 200) for _ in range(rng.randint(1, 60))] for _ in range(2)
    ]
    requests = []
    for index in range(rng.randint(1, 7)):
        if rng.random() < 0.6:
            base = rng.choice(bases)
            prompt = base[: rng.randint(1, len(base))]
            prompt += [rng.randrange(100, 200) for _ in range(rng.randint(0, 20))]
        else:
            prompt = [rng.randrange(100, 200) for _ in range(rng.randint(1, 70))]
        max_tokens = rng.randint(1, 16)
        if not chunked and len(prompt) + max_tokens > budget:
            prompt = prompt[: max(1, budget - max_tokens)]
            max_tokens = min(max_tokens, budget - len(prompt))
        requests.append(
            Request(
                f"R{index}", len(prompt), max_tokens, rng.randint(0, 8), tuple(prompt)
            )
        )
    least = 1 + max(
        blocks_for(r.prompt_tokens + r.max_tokens - 1, block_size) for r in requests
    )
    # Tight pools more often than roomy ones: that is where preemption happens.
    most = max(least, enough_blocks(requests, block_size))
    blocks = min(most, least + int(rng.random() ** 2 * (most - least)))
    threshold = rng.choice([0, 0, 0, rng.randint(1, 40)])
    return requests, dict(
        num_gpu_blocks=blocks,
        block_size=block_size,
        max_num_batched_tokens=budget,
        max_num_seqs=max_num_seqs,
        long_prefill_token_threshold=threshold,
        enable_chunked_prefill=chunked,
    )


def cases(edge_cases: dict = EDGE_CASES) -> dict[str, tuple[list[Request], dict]]:
    """The edge cases, then the random workloads: requests and run()'s settings."""
    random_ones = {
        f"random seed {seed}": random_workload(seed) for seed in range(RANDOM_PER_MODE)
    }
    return {**edge_cases, **random_ones}


def workloads() -> dict[str, tuple[list[Request], dict]]:
    """Every workload by name, in both modes."""
    return {
        f"{name} [{mode}]": (requests, {**config, **flags})
        for mode, flags in MODES.items()
        for name, (requests, config) in cases().items()
    }


def as_json(requests: list[Request], config: dict) -> dict:
    """The workload as vllm_trace.py reads it: every setting, and every prompt's
    token ids as this scheduler gives them (a request given none gets tokens no
    other prompt has)."""
    settings = {**DEFAULTS, **config}
    if settings["num_gpu_blocks"] is None:
        settings["num_gpu_blocks"] = enough_blocks(requests, settings["block_size"])
    kv = BlockPool(settings["num_gpu_blocks"], settings["block_size"])
    scheduler = Scheduler(SchedulerConfig(**settings), kv)
    for request in sorted(requests, key=lambda r: r.arrival_step):
        scheduler.add_request(request)
    prompts = {state.id: state.tokens for state in scheduler.waiting}
    return {
        "config": settings,
        "requests": [
            {
                "request_id": r.request_id,
                "prompt": prompts[r.request_id],
                "max_tokens": r.max_tokens,
                "arrival_step": r.arrival_step,
            }
            for r in requests
        ],
    }


def trace(
    requests: list[Request], config: dict, kv_cache_manager=BlockPool
) -> list[dict]:
    """Lesson 3's scheduler, step by step, in the shape vllm_trace.py prints."""
    return [
        {
            "scheduled": [[i, n] for i, n in step.scheduled.items()],
            "preempted": step.preempted,
            "sampled": sorted(step.sampled),
            "finished": step.finished,
            "running": step.running,
            "waiting": step.waiting,
            "free_blocks": step.free_blocks,
            "block_tables": step.block_tables,
            "hits": step.hits,
            "queries": step.queries,
        }
        for step in run(requests, kv_cache_manager, **config)
    ]


if __name__ == "__main__":
    found = workloads()
    steps = sum(len(trace(*workload)) for workload in found.values())
    print(f"{len(EDGE_CASES)} edge cases and {RANDOM_PER_MODE} random workloads,")
    print(f"in {len(MODES)} modes: {len(found):,} workloads, {steps:,} engine steps")
    for mode in MODES:
        runs = [trace(*w) for name, w in found.items() if name.endswith(f"[{mode}]")]
        preempting = sum(any(step["preempted"] for step in t) for t in runs)
        print(f"  {mode}: {preempting} of them preempt")
