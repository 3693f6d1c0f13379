"""vLLM 0.26.0's scheduler in the standard library: one token budget per step,
spent on the running requests first and then on waiting ones in arrival order;
chunked prefill; preemption by recompute when KV blocks run out.

Every rule names the vLLM function it mirrors (vllm/<path>: <function>, read from
the 0.26.0 wheel). KV blocks come from lesson 2's block pool. Left out, as for a
plain text model with vLLM's defaults: speculative decoding, the watermark (0.0),
LoRA, multimodal inputs, stop strings and EOS (a request runs until max_tokens),
max_model_len, async scheduling, and prefix cache hits (as with
enable_prefix_caching=False: with it on, a preempted request may find some of its
own full blocks still cached when it comes back, and recompute less).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from block_pool import BLOCK_SIZE, BlockPool, NoFreeBlocks, blocks_for

# `vllm serve` on a card under 70 GiB
# (vllm/engine/arg_utils.py: EngineArgs.get_batch_defaults).
MAX_NUM_BATCHED_TOKENS = 2048
MAX_NUM_SEQS = 256


def _whole(name: str, value, least: int) -> int:
    if type(value) is not int or value < least:
        raise ValueError(
            f"{name} must be an integer of at least {least}, got {value!r}"
        )
    return value


@dataclass(frozen=True)
class Request:
    """A request: its prompt length, the tokens it generates, when it arrives."""

    request_id: str
    prompt_tokens: int
    max_tokens: int
    arrival_step: int = 0

    def __post_init__(self):
        name = self.request_id
        if not isinstance(name, str) or not name:
            raise ValueError(f"request_id must be a non-empty string, got {name!r}")
        _whole(f"prompt_tokens of request {name!r}", self.prompt_tokens, 1)
        _whole(f"max_tokens of request {name!r}", self.max_tokens, 1)
        _whole(f"arrival_step of request {name!r}", self.arrival_step, 0)


class _State:
    """What the scheduler tracks of a request (vllm/v1/request.py: Request)."""

    def __init__(self, request: Request):
        self.request = request
        self.id = request.request_id
        self.num_computed_tokens = 0
        self.num_output_tokens = 0

    @property
    def num_tokens(self) -> int:  # Request.num_tokens: prompt + output tokens
        return self.request.prompt_tokens + self.num_output_tokens


@dataclass
class Step:
    """One engine step: what was scheduled, and the queues after it."""

    step: int
    scheduled: dict[str, int]  # request id -> tokens computed, in schedule order
    computed_before: dict[str, int]  # request id -> tokens it had computed
    decoding: list[str]  # got one new token: no prompt chunk, no recompute
    sampled: list[str]  # produced an output token at the end of the step
    preempted: list[str]  # in the order they were preempted
    finished: list[str]
    running: list[str]  # after the step, in vLLM's running order
    waiting: list[str]  # after the step, head first
    free_blocks: int


class Scheduler:
    def __init__(
        self,
        num_gpu_blocks: int,
        max_num_batched_tokens: int = MAX_NUM_BATCHED_TOKENS,
        max_num_seqs: int = MAX_NUM_SEQS,
        block_size: int = BLOCK_SIZE,
        long_prefill_token_threshold: int = 0,
        enable_chunked_prefill: bool = True,
    ):
        budget = _whole("max_num_batched_tokens", max_num_batched_tokens, 1)
        self.max_num_batched_tokens = budget
        self.max_num_seqs = _whole("max_num_seqs", max_num_seqs, 1)
        # vllm/config/scheduler.py: SchedulerConfig.verify_max_model_len
        if budget < max_num_seqs:
            raise ValueError(
                f"max_num_batched_tokens ({budget}) must be greater than or equal"
                f" to max_num_seqs ({max_num_seqs}), as vLLM requires (it lowers its"
                " default max_num_seqs to max_num_batched_tokens when max_num_seqs is"
                " not given)"
            )
        self.long_prefill_token_threshold = _whole(
            "long_prefill_token_threshold", long_prefill_token_threshold, 0
        )
        if not isinstance(enable_chunked_prefill, bool):
            raise ValueError(
                "enable_chunked_prefill must be True or False,"
                f" got {enable_chunked_prefill!r}"
            )
        self.enable_chunked_prefill = enable_chunked_prefill
        self.pool = BlockPool(_whole("num_gpu_blocks", num_gpu_blocks, 1), block_size)
        # vllm/v1/core/sched/request_queue.py: FCFSRequestQueue, a deque
        self.waiting: deque[_State] = deque()
        self.running: list[_State] = []

    def check(self, request: Request) -> None:
        """Refuse a request that could never finish, as vLLM refuses such a setup."""
        name = request.request_id
        # The most it ever holds: its last output token is sampled, never computed.
        most = request.prompt_tokens + request.max_tokens - 1
        needed = blocks_for(most, self.pool.block_size)
        usable = self.pool.num_gpu_blocks - 1  # block 0 is the null block
        if needed > usable:
            raise ValueError(
                f"request {name!r} needs {needed} blocks for its {most} tokens,"
                f" the pool has {usable}: it could never finish"
            )
        # Without chunked prefill vLLM requires max_model_len <= max_num_batched_tokens
        # (SchedulerConfig.verify_max_model_len): a whole prompt fits in one step.
        total = request.prompt_tokens + request.max_tokens
        if not self.enable_chunked_prefill and total > self.max_num_batched_tokens:
            raise ValueError(
                f"request {name!r} has {total} tokens (prompt_tokens + max_tokens),"
                f" more than max_num_batched_tokens={self.max_num_batched_tokens}:"
                " without chunked prefill vLLM requires max_model_len <="
                " max_num_batched_tokens"
            )

    def add_request(self, request: Request) -> None:
        # A new request joins the back of the waiting queue
        # (vllm/v1/core/sched/scheduler.py: Scheduler.add_request).
        self.check(request)
        self.waiting.append(_State(request))

    def _allocate_slots(
        self, state: _State, num_new_tokens: int, full_sequence_must_fit: bool
    ) -> bool:
        """vllm/v1/core/kv_cache_manager.py: KVCacheManager.allocate_slots, for one
        full-attention group: no prefix-cache hit, no lookahead, no watermark."""
        pool = self.pool
        held = len(pool.block_table(state.id)) if state.id in pool.requests else 0
        # A waiting request is admitted only if its whole sequence so far fits in
        # the free blocks (SchedulerConfig.scheduler_reserve_full_isl, default True).
        if full_sequence_must_fit:
            whole = blocks_for(state.num_tokens, pool.block_size)
            if whole - held > pool.num_free_blocks:
                return False
        try:  # blocks for the tokens computed so far and this step's new ones
            pool.allocate(state.id, state.num_computed_tokens + num_new_tokens)
        except NoFreeBlocks:
            return False
        return True

    def _preempt_request(self, state: _State) -> None:
        """vllm/v1/core/sched/scheduler.py: Scheduler._preempt_request: free all its
        blocks, forget what it computed (recompute), put it at the waiting queue's
        front (FCFSRequestQueue.prepend_request)."""
        if state.id in self.pool.requests:
            self.pool.free(state.id)
        state.num_computed_tokens = 0
        self.waiting.appendleft(state)

    def schedule(self) -> tuple[dict[str, int], list[str]]:
        """vllm/v1/core/sched/scheduler.py: Scheduler.schedule. Returns the tokens
        scheduled per request and the requests preempted in this step."""
        token_budget = self.max_num_batched_tokens  # max_num_scheduled_tokens unset
        threshold = self.long_prefill_token_threshold
        scheduled: dict[str, int] = {}
        preempted: list[str] = []

        # First the RUNNING requests, in their order, while the budget lasts.
        req_index = 0
        while req_index < len(self.running) and token_budget > 0:
            state = self.running[req_index]
            # What it lacks: the rest of its prompt (or recompute), or one token.
            num_new_tokens = state.num_tokens - state.num_computed_tokens
            if 0 < threshold < num_new_tokens:
                num_new_tokens = threshold
            num_new_tokens = min(num_new_tokens, token_budget)
            # Blocks run out: preempt the last running request (FCFS policy), again
            # and again, until this one fits or is itself the one preempted.
            fits = True
            while not self._allocate_slots(state, num_new_tokens, False):
                victim = self.running.pop()
                self._preempt_request(victim)
                preempted.append(victim.id)
                if victim is state:
                    fits = False
                    break
            if not fits:
                break  # no running request after it is scheduled in this step
            scheduled[state.id] = num_new_tokens
            token_budget -= num_new_tokens
            req_index += 1

        # Then the WAITING requests, head first; none in a step that preempted.
        if not preempted:
            while self.waiting and token_budget > 0:
                if len(self.running) >= self.max_num_seqs:
                    break
                state = self.waiting[0]
                # A new request computes its prompt; a preempted one its prompt and
                # the tokens it had generated (request.num_tokens).
                num_new_tokens = state.num_tokens - state.num_computed_tokens
                if 0 < threshold < num_new_tokens:
                    num_new_tokens = threshold
                # Without chunked prefill, a prompt longer than what is left of the
                # budget ends this step's admissions: no later request jumps it.
                if not self.enable_chunked_prefill and num_new_tokens > token_budget:
                    break
                num_new_tokens = min(num_new_tokens, token_budget)
                if not self._allocate_slots(state, num_new_tokens, True):
                    break  # too few free blocks: it waits, and all behind it
                self.waiting.popleft()
                self.running.append(state)
                scheduled[state.id] = num_new_tokens
                token_budget -= num_new_tokens

        assert sum(scheduled.values()) <= self.max_num_batched_tokens
        assert len(self.running) <= self.max_num_seqs
        return scheduled, preempted

    def update_from_output(
        self, scheduled: dict[str, int]
    ) -> tuple[list[str], list[str]]:
        """After the step ran (vllm/v1/core/sched/scheduler.py:
        Scheduler.update_from_output). Returns who sampled a token, who finished."""
        sampled, finished = [], []
        by_id = {state.id: state for state in self.running}
        for request_id, num_tokens in scheduled.items():
            state = by_id[request_id]
            # The tokens count as computed (in vLLM already at schedule time:
            # Scheduler._update_after_schedule).
            state.num_computed_tokens += num_tokens
            # A partial prompt chunk samples nothing: the model runner discards it
            # (vllm/v1/worker/gpu_model_runner.py: GPUModelRunner._prepare_inputs);
            # the step that computes a prompt's last token samples the first output.
            if state.num_computed_tokens < state.num_tokens:
                continue
            state.num_output_tokens += 1
            sampled.append(request_id)
            # Finished at max_tokens (vllm/v1/core/sched/utils.py: check_stop): its
            # blocks go back to the pool (Scheduler._free_request).
            if state.num_output_tokens >= state.request.max_tokens:
                finished.append(request_id)
                self.pool.free(request_id)
        self.running = [state for state in self.running if state.id not in finished]
        return sampled, finished


def enough_blocks(requests: list[Request], block_size: int = BLOCK_SIZE) -> int:
    """A pool in which blocks never run out: the null block, plus every request's
    whole sequence at once (its last output token is never written to the cache)."""
    _whole("block_size", block_size, 1)
    return 1 + sum(
        blocks_for(r.prompt_tokens + r.max_tokens - 1, block_size) for r in requests
    )


def run(
    requests: list[Request],
    max_num_batched_tokens: int = MAX_NUM_BATCHED_TOKENS,
    max_num_seqs: int = MAX_NUM_SEQS,
    num_gpu_blocks: int | None = None,
    block_size: int = BLOCK_SIZE,
    long_prefill_token_threshold: int = 0,
    enable_chunked_prefill: bool = True,
) -> list[Step]:
    """Run the requests to completion, one Step per engine step from step 0. A
    request arriving at step s joins the waiting queue before step s is scheduled;
    num_gpu_blocks=None: enough blocks that none ever runs out."""
    requests = list(requests)
    for request in requests:
        if not isinstance(request, Request):
            raise ValueError(f"requests must be Request objects, got {request!r}")
    ids = [request.request_id for request in requests]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f"request ids must be unique: {', '.join(repeated)} repeat")
    if num_gpu_blocks is None:
        num_gpu_blocks = enough_blocks(requests, block_size)
    scheduler = Scheduler(
        num_gpu_blocks,
        max_num_batched_tokens,
        max_num_seqs,
        block_size,
        long_prefill_token_threshold,
        enable_chunked_prefill,
    )
    for request in requests:
        scheduler.check(request)  # refuse bad input before the first step
    # Arrival order, and list order among requests arriving at the same step.
    pending = deque(sorted(requests, key=lambda request: request.arrival_step))
    steps: list[Step] = []
    while pending or scheduler.waiting or scheduler.running:
        step = len(steps)
        while pending and pending[0].arrival_step <= step:
            scheduler.add_request(pending.popleft())
        states = {s.id: s for s in [*scheduler.running, *scheduler.waiting]}
        computed = {i: s.num_computed_tokens for i, s in states.items()}
        decoding = [  # one token after the prompt: a decode
            i
            for i, s in states.items()
            if s.num_output_tokens and s.num_computed_tokens == s.num_tokens - 1
        ]
        scheduled, preempted = scheduler.schedule()
        if not scheduled and (scheduler.waiting or scheduler.running):
            raise RuntimeError(f"step {step}: no request could be scheduled")
        sampled, finished = scheduler.update_from_output(scheduled)
        steps.append(
            Step(
                step=step,
                scheduled=scheduled,
                computed_before={i: computed[i] for i in scheduled},
                decoding=[i for i in scheduled if i in decoding],
                sampled=sampled,
                preempted=preempted,
                finished=finished,
                running=[s.id for s in scheduler.running],
                waiting=[s.id for s in scheduler.waiting],
                free_blocks=scheduler.pool.num_free_blocks,
            )
        )
    return steps


def simulate(
    requests: list[Request],
    max_num_batched_tokens: int = MAX_NUM_BATCHED_TOKENS,
    max_num_seqs: int = MAX_NUM_SEQS,
    num_gpu_blocks: int | None = None,
    block_size: int = BLOCK_SIZE,
    long_prefill_token_threshold: int = 0,
    enable_chunked_prefill: bool = True,
) -> list[dict[str, int]]:
    """One dict per step: request id -> the tokens scheduled for it in that step."""
    steps = run(
        requests,
        max_num_batched_tokens,
        max_num_seqs,
        num_gpu_blocks,
        block_size,
        long_prefill_token_threshold,
        enable_chunked_prefill,
    )
    return [step.scheduled for step in steps]


def ttft_steps(requests: list[Request], steps: list[Step]) -> dict[str, int]:
    """Time to first token in steps, from the request's arrival to the end of the
    step that produced its first token (1: its prompt ran in its arrival step)."""
    first: dict[str, int] = {}
    for step in steps:
        for request_id in step.sampled:
            first.setdefault(request_id, step.step)
    return {r.request_id: first[r.request_id] - r.arrival_step + 1 for r in requests}


def tokens_per_step(steps: list[Step], request_id: str) -> list[int]:
    """The tokens a request got in each step (0 when it was not scheduled)."""
    return [step.scheduled.get(request_id, 0) for step in steps]


def table(requests: list[Request], steps: list[Step]) -> str:
    """Per step: the tokens each request got (* = it produced an output token at
    the end of the step; . = not scheduled; x = preempted), the waiting queue after
    the step, and what happened."""
    ids = [r.request_id for r in requests]
    width = max(5, *(len(i) + 2 for i in ids))
    head = "step  total" + "".join(f"{i:>{width - 1}} " for i in ids)
    lines = [head + " waiting  events"]
    for step in steps:
        cells = "".join(
            f"{step.scheduled[i]:>{width - 1}}{'*' if i in step.sampled else ' '}"
            if i in step.scheduled
            else f"{'x' if i in step.preempted else '.':>{width - 1}} "
            for i in ids
        )
        events = [f"{i} preempted" for i in step.preempted]
        events += [f"{i} done" for i in step.finished]
        total = sum(step.scheduled.values())
        waiting = ",".join(step.waiting) or "-"
        line = f"{step.step:>4}  {total:>5}{cells} {waiting:<8} {'; '.join(events)}"
        lines.append(line.rstrip())
    return "\n".join(lines)


if __name__ == "__main__":
    workload = [
        Request("A", prompt_tokens=12, max_tokens=4),
        Request("B", prompt_tokens=20, max_tokens=3),
        Request("C", prompt_tokens=9, max_tokens=3, arrival_step=2),
    ]
    steps = run(workload, max_num_batched_tokens=32, max_num_seqs=4)
    print(table(workload, steps))
    print(simulate(workload, max_num_batched_tokens=32, max_num_seqs=4))
    print("time to first token, in steps:", ttft_steps(workload, steps))
