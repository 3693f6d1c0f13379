"""vLLM 0.26.0's scheduler in the standard library: one token budget per step,
spent on the running requests first and then on waiting ones in arrival order;
chunked prefill; preemption by recompute when KV blocks run out.

Every rule names the vLLM function it mirrors (vllm/<path>: <function>, read from
the 0.26.0 wheel). KV blocks come from lesson 2's block pool, or, with
enable_prefix_caching=True, from lesson 5's prefix cache: a request then starts
from the cached blocks of its prompt, also its own after a preemption.
async_scheduling=True runs the engine as vLLM does by default: step N+1 is
scheduled before step N's output is processed. Both are vLLM's defaults; both
default to False here, the simpler engine the lesson starts from. Left out, as for
a plain text model: speculative decoding, the watermark (0.0), LoRA, multimodal
inputs, stop strings and EOS (a request runs until max_tokens), max_model_len,
pipeline parallelism and KV connectors.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from block_pool import BLOCK_SIZE, BlockPool, NoFreeBlocks, blocks_for
from prefix_cache import PrefixCache

# `vllm serve` on a card under 70 GiB
# (vllm/engine/arg_utils.py: EngineArgs.get_batch_defaults).
MAX_NUM_BATCHED_TOKENS = 2048
MAX_NUM_SEQS = 256
# Token ids above the vocabulary (Qwen2.5's is 152,064): a request given no prompt
# gets a run of them no other prompt has.
UNIQUE_TOKENS = 1_000_000_000


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
    # Its token ids, for prefix caching; None: tokens no other prompt has.
    prompt: tuple[int, ...] | None = None

    def __post_init__(self):
        name = self.request_id
        if not isinstance(name, str) or not name:
            raise ValueError(f"request_id must be a non-empty string, got {name!r}")
        _whole(f"prompt_tokens of request {name!r}", self.prompt_tokens, 1)
        _whole(f"max_tokens of request {name!r}", self.max_tokens, 1)
        _whole(f"arrival_step of request {name!r}", self.arrival_step, 0)
        if self.prompt is not None:
            if (
                not isinstance(self.prompt, tuple)
                or len(self.prompt) != self.prompt_tokens
            ):
                raise ValueError(
                    f"prompt of request {name!r} must be a tuple of its"
                    f" {self.prompt_tokens} token ids, got {self.prompt!r}"
                )
            for token in self.prompt:
                _whole(f"a token id of request {name!r}", token, 0)


class _State:
    """What the scheduler tracks of a request (vllm/v1/request.py: Request)."""

    def __init__(self, request: Request, prompt: list[int]):
        self.request = request
        self.id = request.request_id
        self.tokens = prompt  # Request.all_token_ids: prompt, then output tokens
        self.num_computed_tokens = 0
        self.num_output_tokens = 0
        # Tokens scheduled whose output is not processed yet (async scheduling).
        self.num_output_placeholders = 0
        self.num_preemptions = 0
        self.is_prefill_chunk = False
        self.preempted = False  # RequestStatus.PREEMPTED, until it runs again

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
    sampled: list[str]  # the model samples a token for them in this step
    preempted: list[str]  # in the order they were preempted
    finished: list[str]  # finished when an output was processed in this step
    running: list[str]  # after the step, in vLLM's running order
    waiting: list[str]  # after the step, head first
    free_blocks: int
    # Prefix cache lookups of new requests so far, in tokens (0 without caching).
    hits: int = 0
    queries: int = 0
    # The running requests' block tables after the step.
    block_tables: dict[str, list[int]] = field(default_factory=dict)


def _flag(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


class Scheduler:
    def __init__(
        self,
        num_gpu_blocks: int,
        max_num_batched_tokens: int = MAX_NUM_BATCHED_TOKENS,
        max_num_seqs: int = MAX_NUM_SEQS,
        block_size: int = BLOCK_SIZE,
        long_prefill_token_threshold: int = 0,
        enable_chunked_prefill: bool = True,
        enable_prefix_caching: bool = False,
        async_scheduling: bool = False,
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
        self.enable_chunked_prefill = _flag(
            "enable_chunked_prefill", enable_chunked_prefill
        )
        self.enable_prefix_caching = _flag(
            "enable_prefix_caching", enable_prefix_caching
        )
        # vllm/v1/core/sched/async_scheduler.py: AsyncScheduler
        self.async_scheduling = _flag("async_scheduling", async_scheduling)
        pool = PrefixCache if enable_prefix_caching else BlockPool
        self.pool = pool(_whole("num_gpu_blocks", num_gpu_blocks, 1), block_size)
        # vllm/v1/core/sched/request_queue.py: FCFSRequestQueue, a deque
        self.waiting: deque[_State] = deque()
        self.running: list[_State] = []
        self._next_unique = UNIQUE_TOKENS

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
        prompt = request.prompt
        if prompt is None:
            start, self._next_unique = (
                self._next_unique,
                self._next_unique + request.prompt_tokens,
            )
            prompt = range(start, self._next_unique)
        self.waiting.append(_State(request, list(prompt)))

    def _allocate_slots(
        self, state: _State, num_new_tokens: int, hit: list[int] | None = None
    ) -> bool:
        """vllm/v1/core/kv_cache_manager.py: KVCacheManager.allocate_slots, for one
        full-attention group: no lookahead, no watermark. hit: the cached blocks a
        waiting request starts from (None for a running request)."""
        pool = self.pool
        # A waiting request is admitted only if its whole sequence so far fits in
        # the free blocks (SchedulerConfig.scheduler_reserve_full_isl, default True).
        full_sequence_must_fit = hit is not None
        if self.enable_prefix_caching:
            new = pool.allocate_slots(
                state.id,
                state.tokens,
                state.num_computed_tokens,
                num_new_tokens,
                hit or (),
                full_sequence_must_fit,
            )
            return new is not None
        held = len(pool.block_table(state.id)) if state.id in pool.requests else 0
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
        state.num_preemptions += 1
        state.preempted = True
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
            # Async scheduling: no extra step for a request whose last token is
            # already on its way (AsyncScheduler's placeholders).
            if (
                state.num_output_placeholders > 0
                and state.num_computed_tokens + 2 - state.num_output_placeholders
                >= state.request.prompt_tokens + state.request.max_tokens
            ):
                req_index += 1
                continue
            # What it lacks: the rest of its prompt (or recompute), or one token,
            # counting the tokens still on their way as known.
            num_new_tokens = (
                state.num_tokens
                + state.num_output_placeholders
                - state.num_computed_tokens
            )
            if 0 < threshold < num_new_tokens:
                num_new_tokens = threshold
            num_new_tokens = min(num_new_tokens, token_budget)
            # Blocks run out: preempt the last running request (FCFS policy), again
            # and again, until this one fits or is itself the one preempted.
            fits = True
            while not self._allocate_slots(state, num_new_tokens):
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
                # Its cached blocks, looked up (and counted) at every try, a preempted
                # request's own among them (KVCacheManager.get_computed_blocks).
                hit, num_computed_tokens = [], 0
                if self.enable_prefix_caching:
                    hit, num_computed_tokens = self.pool.get_computed_blocks(
                        state.tokens, preempted=state.num_preemptions > 0
                    )
                # A new request computes its prompt; a preempted one its prompt and
                # the tokens it had generated (request.num_tokens).
                num_new_tokens = state.num_tokens - num_computed_tokens
                if 0 < threshold < num_new_tokens:
                    num_new_tokens = threshold
                # Without chunked prefill, a prompt longer than what is left of the
                # budget ends this step's admissions: no later request jumps it.
                if not self.enable_chunked_prefill and num_new_tokens > token_budget:
                    break
                num_new_tokens = min(num_new_tokens, token_budget)
                if not self._allocate_slots(state, num_new_tokens, hit):
                    break  # too few free blocks: it waits, and all behind it
                self.waiting.popleft()
                self.running.append(state)
                state.preempted = False
                state.num_computed_tokens = num_computed_tokens
                scheduled[state.id] = num_new_tokens
                token_budget -= num_new_tokens

        assert sum(scheduled.values()) <= self.max_num_batched_tokens
        assert len(self.running) <= self.max_num_seqs
        self._update_after_schedule(scheduled)
        return scheduled, preempted

    def _update_after_schedule(self, scheduled: dict[str, int]) -> None:
        """The scheduled tokens count as computed at once, so that the next step
        can be scheduled before this one's output is back
        (vllm/v1/core/sched/scheduler.py: Scheduler._update_after_schedule). A
        chunk that does not reach the end of the known tokens samples nothing: the
        model runner discards it. With async scheduling a request that samples gets
        a placeholder for the token it will get (vllm/v1/core/sched/async_scheduler.py:
        AsyncScheduler._update_after_schedule)."""
        by_id = {state.id: state for state in self.running}
        for request_id, num_tokens in scheduled.items():
            state = by_id[request_id]
            state.num_computed_tokens += num_tokens
            state.is_prefill_chunk = state.num_computed_tokens < (
                state.num_tokens + state.num_output_placeholders
            )
            if self.async_scheduling and not state.is_prefill_chunk:
                state.num_output_placeholders += 1

    def update_from_output(
        self, scheduled: dict[str, int], sampled: list[str] | None = None
    ) -> tuple[list[str], list[str]]:
        """A step's output is back (vllm/v1/core/sched/scheduler.py:
        Scheduler.update_from_output): each request that sampled gets its token
        (sampled: by default, every request of the step that is not in the middle
        of its prompt). The stand-in model samples token id -1 - k as a request's
        k-th output token: tokens no prompt holds, the same for the same prompt, as
        greedy decoding gives. Returns who sampled and who finished."""
        if sampled is None:
            sampled = self.sampling(scheduled)
        finished = []
        states = {state.id: state for state in [*self.running, *self.waiting]}
        for request_id in scheduled:
            state = states.get(request_id)
            if state is None or request_id not in sampled:
                continue  # finished already, or a prompt chunk that samples nothing
            state.tokens.append(-1 - state.num_output_tokens)
            state.num_output_tokens += 1
            if self.async_scheduling:
                state.num_output_placeholders -= 1
                # The new token's full block gets its hash, unless the request was
                # preempted meanwhile (AsyncScheduler._update_request_with_output).
                if self.enable_prefix_caching and not state.preempted:
                    self.pool.cache_blocks(
                        state.id,
                        state.tokens,
                        state.num_computed_tokens - state.num_output_placeholders,
                    )
            # Finished at max_tokens (vllm/v1/core/sched/utils.py: check_stop): its
            # blocks go back to the pool (Scheduler._free_request).
            if state.num_output_tokens >= state.request.max_tokens:
                finished.append(request_id)
                if request_id in self.pool.requests:
                    self.pool.free(request_id)
        self.running = [state for state in self.running if state.id not in finished]
        self.waiting = deque(
            state for state in self.waiting if state.id not in finished
        )
        return sampled, finished

    def sampling(self, scheduled: dict[str, int]) -> list[str]:
        """Who of a step just scheduled gets a token sampled: those whose chunk
        reaches the end of their known tokens."""
        states = {state.id: state for state in self.running}
        return [i for i in scheduled if not states[i].is_prefill_chunk]


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
    enable_prefix_caching: bool = False,
    async_scheduling: bool = False,
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
        enable_prefix_caching,
        async_scheduling,
    )
    for request in requests:
        scheduler.check(request)  # refuse bad input before the first step
    # Arrival order, and list order among requests arriving at the same step.
    pending = deque(sorted(requests, key=lambda request: request.arrival_step))
    # Steps whose output is not processed yet, newest first. The engine core
    # processes a step's output before it schedules the next one
    # (vllm/v1/engine/core.py: EngineCore.step), or, with async scheduling, keeps
    # two steps in flight: it schedules step N+1, then processes step N's output
    # (EngineCore.step_with_batch_queue, a batch queue of two).
    in_flight: deque[tuple[dict[str, int], list[str]]] = deque()
    depth = 2 if async_scheduling else 1
    steps: list[Step] = []
    while pending or scheduler.waiting or scheduler.running or in_flight:
        step = len(steps)
        while pending and pending[0].arrival_step <= step:
            scheduler.add_request(pending.popleft())
        states = {s.id: s for s in [*scheduler.running, *scheduler.waiting]}
        computed = {i: s.num_computed_tokens for i, s in states.items()}
        decoding = [  # one token after the prompt: a decode
            i
            for i, s in states.items()
            if s.num_output_tokens
            and s.num_computed_tokens == s.num_tokens + s.num_output_placeholders - 1
        ]
        scheduled, preempted, sampled, finished = {}, [], [], []
        if scheduler.waiting or scheduler.running:
            scheduled, preempted = scheduler.schedule()
            if not scheduled and not in_flight:
                raise RuntimeError(f"step {step}: no request could be scheduled")
            sampled = scheduler.sampling(scheduled)
            in_flight.appendleft((scheduled, sampled))
        if in_flight and (
            len(in_flight) == depth or not (scheduler.waiting or scheduler.running)
        ):
            finished = scheduler.update_from_output(*in_flight.pop())[1]
        pool = scheduler.pool
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
                free_blocks=pool.num_free_blocks,
                block_tables={s.id: pool.block_table(s.id) for s in scheduler.running},
                hits=getattr(pool, "hits", 0),
                queries=getattr(pool, "queries", 0),
            )
        )
    # The engine's last turn may only process an empty step: not a step to show.
    while steps and not steps[-1].scheduled and not steps[-1].finished:
        steps.pop()
    return steps


def simulate(
    requests: list[Request],
    max_num_batched_tokens: int = MAX_NUM_BATCHED_TOKENS,
    max_num_seqs: int = MAX_NUM_SEQS,
    num_gpu_blocks: int | None = None,
    block_size: int = BLOCK_SIZE,
    long_prefill_token_threshold: int = 0,
    enable_chunked_prefill: bool = True,
    enable_prefix_caching: bool = False,
    async_scheduling: bool = False,
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
        enable_prefix_caching,
        async_scheduling,
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
    """Per step: the tokens each request got (* = the model samples a token for it
    in this step; . = not scheduled; x = preempted), the waiting queue after the
    step, and what happened."""
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
