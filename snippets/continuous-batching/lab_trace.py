"""What vLLM logs and exports while it runs this lesson's worked traces (the lab),
predicted with scheduler.py: one `Iteration(N)` line per engine step, the histogram
vllm:iteration_tokens_total and the counter vllm:num_preemptions.

Run: python lab_trace.py                      (the predictions)
     python lab_trace.py LAB FILE [FILE ...]  (checks a run: LAB is lab_chunks.py,
         lab_preemption.py or lab_chunks_serve.sh; the FILEs hold what it logged and
         printed, e.g. the server's log and lab_send.py's output)
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, replace
from itertools import permutations
from pathlib import Path

import long_prompt
import preemption
from scheduler import Request, Step, run

# The histogram's buckets: vllm/v1/metrics/loggers.py: PrometheusStatLogger.__init__
BUCKETS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]


@dataclass(frozen=True)
class Lab:
    """A lab's engine: a worked trace's requests and scheduler settings, and what the
    simulator leaves open: the KV blocks (num_gpu_blocks_override), max_model_len."""

    script: str
    requests: tuple[Request, ...]
    max_num_batched_tokens: int
    max_num_seqs: int
    num_gpu_blocks: int
    max_model_len: int

    def steps(self, requests=None) -> list[Step]:
        return run(
            list(requests or self.requests),
            max_num_batched_tokens=self.max_num_batched_tokens,
            max_num_seqs=self.max_num_seqs,
            num_gpu_blocks=self.num_gpu_blocks,
        )


CHUNKS = Lab(
    "lab_chunks.py",
    tuple(long_prompt.WORKLOAD),
    **long_prompt.CONFIG,
    num_gpu_blocks=64,  # plenty: no preemption, the same trace as without a limit
    max_model_len=256,
)
PREEMPTION = Lab(
    "lab_preemption.py",
    tuple(preemption.WORKLOAD),
    **preemption.CONFIG,  # 6 blocks
    max_model_len=96,  # vLLM wants 6 blocks to hold one request of max_model_len
)


@dataclass(frozen=True)
class Iteration:
    """One `Iteration(N)` line, without its elapsed time (vllm/v1/metrics/loggers.py:
    LoggingStatLogger._log_iteration_details)."""

    index: int
    context_requests: int
    context_tokens: int
    generation_requests: int
    generation_tokens: int
    kv_cache_usage: str  # a percentage, as logged: %.1f

    def __str__(self) -> str:
        return (
            f"Iteration({self.index}): {self.context_requests} context requests,"
            f" {self.context_tokens} context tokens, {self.generation_requests}"
            f" generation requests, {self.generation_tokens} generation tokens,"
            f" GPU KV cache usage: {self.kv_cache_usage}%"
        )


def iterations(lab: Lab, steps: list[Step], every_step: bool) -> list[Iteration]:
    """The Iteration lines of a run. vLLM numbers the steps that compute tokens
    (vllm/v1/engine/core.py: EngineCore.capture_iteration_details); `vllm serve` logs
    every one, LLM() only those in which a request got a token
    (vllm/v1/engine/llm_engine.py: LLMEngine.step records stats only with outputs)."""
    lines, index, running, answered = [], 0, set(), set()
    for step in steps:
        if not step.scheduled:
            continue
        # vllm/v1/utils.py: compute_iteration_details: a context request is one the
        # scheduler sends as new (a request back from preemption too, with the V2 model
        # runner that vLLM uses for this model) or one without an output token yet.
        context = [i for i in step.scheduled if i not in running or i not in answered]
        generation = [i for i in step.scheduled if i not in context]
        # After the step: vllm/v1/core/block_pool.py: BlockPool.get_usage
        usage = 1.0 - step.free_blocks / (lab.num_gpu_blocks - 1)
        line = Iteration(
            index,
            len(context),
            sum(step.scheduled[i] for i in context),
            len(generation),
            sum(step.scheduled[i] for i in generation),
            f"{usage * 100:.1f}",
        )
        if every_step or step.sampled:
            lines.append(line)
        index += 1
        running = set(step.running)
        answered |= set(step.sampled)
    return lines


@dataclass(frozen=True)
class Metrics:
    """vllm:iteration_tokens_total (cumulative count per bucket bound, count, sum) and
    vllm:num_preemptions."""

    buckets: dict[str, int]
    count: int
    sum: float
    preemptions: int


def iteration_tokens(lab: Lab, steps: list[Step]) -> list[int]:
    """What vllm:iteration_tokens_total observes: for each step in which requests got
    a token, the prompts of those that got their first one plus the tokens generated
    (vllm/v1/metrics/loggers.py: PrometheusStatLogger.record:
    prompt_token_stats.computed + num_generation_tokens). Not the tokens the step
    computed: a chunked prompt counts whole in its last chunk's step, a recompute
    after preemption not at all."""
    prompts = {r.request_id: r.prompt_tokens for r in lab.requests}
    seen, answered = [], set()
    for step in steps:
        if step.sampled:
            first = [i for i in step.sampled if i not in answered]
            seen.append(sum(prompts[i] for i in first) + len(step.sampled))
            answered |= set(first)
    return seen


def bound(value: float) -> str:
    """A bucket's upper bound as prometheus_client writes it: 8.0, +Inf."""
    return "+Inf" if value == math.inf else repr(float(value))


def predict_metrics(lab: Lab, steps: list[Step]) -> Metrics:
    seen = iteration_tokens(lab, steps)
    buckets = {bound(le): sum(n <= le for n in seen) for le in [*BUCKETS, math.inf]}
    preempted = sum(len(step.preempted) for step in steps)
    return Metrics(buckets, len(seen), float(sum(seen)), preempted)


# -- reading what vLLM logged and printed ---------------------------------------------

ITERATION = re.compile(
    r"Iteration\((\d+)\): (\d+) context requests, (\d+) context tokens,"
    r" (\d+) generation requests, (\d+) generation tokens,"
    r" iteration elapsed time: [\d.]+ ms( \(dummy\))?, GPU KV cache usage: ([\d.]+)%"
)
SAMPLE = re.compile(r"^(vllm:[\w:]+?)(?:\{([^}]*)\})? (\S+)$", re.M)
GENERATED = re.compile(r"^(\S+): (\d+) tokens generated$", re.M)


def read_iterations(text: str) -> list[Iteration]:
    """The Iteration lines of a log, in order; a data-parallel dummy step is none."""
    return [
        Iteration(*(int(n) for n in found[:5]), found[6])
        for found in ITERATION.findall(text)
        if not found[5]
    ]


def read_metrics(text: str) -> Metrics:
    """The two metrics, from the Prometheus text of /metrics (labels or none)."""
    buckets, values = {}, {}
    for name, labels, value in SAMPLE.findall(text):
        if name == "vllm:iteration_tokens_total_bucket":
            buckets[re.search(r'le="([^"]+)"', labels)[1]] = int(float(value))
        else:
            values[name] = float(value)
    name = "vllm:iteration_tokens_total"
    required = {f"{name}_count", f"{name}_sum", "vllm:num_preemptions_total"}
    missing = required - set(values)
    if missing or not buckets:
        raise ValueError(f"no {', '.join(sorted(missing)) or name + '_bucket'} here")
    return Metrics(
        buckets,
        int(values[f"{name}_count"]),
        values[f"{name}_sum"],
        int(values["vllm:num_preemptions_total"]),
    )


def read_generated(text: str) -> dict[str, int]:
    """What the lab printed of each request: `A: 6 tokens generated`."""
    return {name: int(n) for name, n in GENERATED.findall(text)}


def arrivals(lab: Lab, logged: list[Iteration]) -> list[Request] | None:
    """A served run's requests, each with the step it arrived at read off the log: in
    the order they were sent (else in another order), each arrives at the first step
    that the requests before it do not account for. None if no such arrival steps
    make the simulator log exactly what vLLM logged."""
    others = (order for order in permutations(lab.requests) if order != lab.requests)
    for order in [lab.requests, *others]:
        placed: list[Request] = []
        for request in order:
            step = 0
            if placed:
                predicted = iterations(lab, lab.steps(placed), every_step=True)
                pairs = list(zip(predicted, logged))
                step = next((n for n, (p, g) in enumerate(pairs) if p != g), len(pairs))
                step = max(step, placed[-1].arrival_step)
            placed.append(replace(request, arrival_step=step))
        steps = lab.steps(placed)
        if all(s.scheduled for s in steps) and (
            iterations(lab, steps, every_step=True) == logged
        ):
            return placed
    return None


def compare(predicted: list[Iteration], logged: list[Iteration]) -> list[str]:
    lines = []
    for n in range(max(len(predicted), len(logged))):
        p = predicted[n] if n < len(predicted) else None
        g = logged[n] if n < len(logged) else None
        lines.append(f"match     {p}" if p == g else f"MISMATCH  vLLM: {g}")
        if p != g:
            lines.append(f"    predicted: {p}")
    return lines


def show(lab: Lab, steps: list[Step], every_step: bool) -> None:
    for line in iterations(lab, steps, every_step):
        print(f"  {line}")
    every = iterations(lab, steps, every_step=True)
    context = sum(line.context_tokens for line in every)
    generation = sum(line.generation_tokens for line in every)
    print(f"  in all: {context} context tokens, {generation} generation tokens")
    metrics = predict_metrics(lab, steps)
    print(f"  vllm:iteration_tokens_total observes {iteration_tokens(lab, steps)}")
    print(f"    _count {metrics.count}, _sum {metrics.sum}, _bucket", end="")
    for le, n in metrics.buckets.items():  # up to the first bucket that holds them all
        print(f" le={le}: {n}", end="," if n < metrics.count else " ...\n")
        if n == metrics.count:
            break
    print(f"  vllm:num_preemptions_total {metrics.preemptions}")


if __name__ == "__main__":
    labs = {CHUNKS.script: CHUNKS, PREEMPTION.script: PREEMPTION}
    if len(sys.argv) == 1:
        for lab in labs.values():
            print(
                f"{lab.script}: {lab.max_num_batched_tokens} tokens per step,"
                f" {lab.max_num_seqs} sequences, {lab.num_gpu_blocks} KV blocks"
            )
            show(lab, lab.steps(), every_step=False)
        print("lab_chunks_serve.sh: the same engine as lab_chunks.py; its steps depend")
        print("  on when the requests arrive, which lab_trace.py reads off its log")
        sys.exit()
    name, files = sys.argv[1], sys.argv[2:]
    text = "\n".join(Path(file).read_text("utf-8", "replace") for file in files)
    served = name == "lab_chunks_serve.sh"
    lab = CHUNKS if served else labs[name]
    logged = read_iterations(text)
    requests = arrivals(lab, logged) if served else lab.requests
    if requests is None:
        print("MISMATCH: no arrival steps make the simulator log what vLLM logged")
        requests = lab.requests
    elif served:
        steps_read = {r.request_id: r.arrival_step for r in requests}
        print("arrival steps read off the log:", steps_read)
    steps = lab.steps(requests)
    print("\n".join(compare(iterations(lab, steps, served), logged)))
    expected, found = predict_metrics(lab, steps), read_metrics(text)
    verdict = "match" if found == expected else f"MISMATCH: predicted {expected}"
    print("metrics:", verdict)
