"""vLLM 0.26.0's scheduler in the standard library.

What vLLM does (vllm/v1/core/sched/scheduler.py: Scheduler.schedule): every engine
step has one token budget. It goes first to the running requests, in order, then to
the waiting ones, first come first served; a prompt longer than what is left runs in
chunks (chunked prefill). When KV blocks run out, the last running request is
preempted: its blocks go back and it computes everything again (recompute). vLLM's
default engine schedules step N+1 before step N's output is back: AsyncScheduler.

The scheduler gets its blocks from the KV cache manager it is handed, as vLLM's gets
them from its KVCacheManager: lesson 2's BlockPool, or any manager that answers the
same calls (lesson 5 hands in one with prefix caching). Every rule names the vLLM
function it mirrors (vllm/<path>: <function>, read from the 0.26.0 wheel). Left out,
as for a plain text model: speculative decoding, the watermark (0.0), LoRA,
multimodal inputs, stop strings and EOS (a request runs until max_tokens),
max_model_len, pipeline parallelism and KV connectors.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace

from block_pool import BLOCK_SIZE, BlockPool, blocks_for

# `vllm serve` on a card under 70 GiB
# (vllm/engine/arg_utils.py: EngineArgs.get_batch_defaults).
MAX_NUM_BATCHED_TOKENS = 2048
MAX_NUM_SEQS = 256
# Token ids above the vocabulary (Qwen2.5's is 152,064): a request given no prompt
# gets a run of them no other prompt has.
UNIQUE_TOKENS = 1_000_000_000


@dataclass(frozen=True)
class SchedulerConfig:
    """The settings the scheduler reads (vllm/config/scheduler.py: SchedulerConfig),
    and the KV cache's size (vllm/config/cache.py: CacheConfig): num_gpu_blocks=None
    gives enough blocks that none ever runs out."""

    max_num_batched_tokens: int = MAX_NUM_BATCHED_TOKENS
    max_num_seqs: int = MAX_NUM_SEQS
    num_gpu_blocks: int | None = None
    block_size: int = BLOCK_SIZE
    long_prefill_token_threshold: int = 0
    enable_chunked_prefill: bool = True
    async_scheduling: bool = False  # AsyncScheduler (SchedulerConfig.get_scheduler_cls)

    def __post_init__(self):
        least = {
            "max_num_batched_tokens": 1,
            "max_num_seqs": 1,
            "num_gpu_blocks": 1,  # or None
            "block_size": 1,
            "long_prefill_token_threshold": 0,
        }
        for name, smallest in least.items():
            value = getattr(self, name)
            if value is not None and value < smallest:
                raise ValueError(
                    f"{name} must be an integer of at least {smallest}, got {value!r}"
                )
        # vllm/config/scheduler.py: SchedulerConfig.verify_max_model_len
        budget, seqs = self.max_num_batched_tokens, self.max_num_seqs
        if budget < seqs:
            raise ValueError(
                f"max_num_batched_tokens ({budget}) must be greater than or equal"
                f" to max_num_seqs ({seqs}), as vLLM requires (it lowers its default"
                " max_num_seqs to max_num_batched_tokens when max_num_seqs is not"
                " given)"
            )


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
        if not name:
            raise ValueError(f"request_id must be a non-empty string, got {name!r}")
        for field_name, least in (
            ("prompt_tokens", 1),
            ("max_tokens", 1),
            ("arrival_step", 0),
        ):
            value = getattr(self, field_name)
            if value < least:
                raise ValueError(
                    f"{field_name} of request {name!r} must be an integer of at least"
                    f" {least}, got {value!r}"
                )
        if self.prompt is not None and len(self.prompt) != self.prompt_tokens:
            raise ValueError(
                f"prompt of request {name!r} must hold its {self.prompt_tokens}"
                f" token ids, got {len(self.prompt)}"
            )


class _State:
    """What the scheduler tracks of a request (vllm/v1/request.py: Request)."""

    def __init__(self, request: Request, prompt: list[int]):
        self.request = request
        self.id = request.request_id
        self.tokens = prompt  # Request.all_token_ids: prompt, then output tokens
        self.num_computed_tokens = 0
        self.num_output_tokens = 0
        # Tokens scheduled whose output is not processed yet (AsyncScheduler).
        self.num_output_placeholders = 0
        self.num_preemptions = 0
        self.is_prefill_chunk = False
        self.preempted = False  # RequestStatus.PREEMPTED, until it runs again

    @property
    def num_tokens(self) -> int:  # Request.num_tokens: prompt + output tokens
        return self.request.prompt_tokens + self.num_output_tokens


class Scheduler:
    """vllm/v1/core/sched/scheduler.py: Scheduler, on the KV cache manager it is
    handed, which answers get_computed_blocks, allocate_slots (None when too few
    blocks are free), free and cache_blocks, as vLLM's KVCacheManager does."""

    def __init__(self, config: SchedulerConfig, kv_cache_manager: BlockPool):
        self.config = config
        self.kv_cache_manager = kv_cache_manager
        # vllm/v1/core/sched/request_queue.py: FCFSRequestQueue, a deque
        self.waiting: deque[_State] = deque()
        self.running: list[_State] = []
        self._next_unique = UNIQUE_TOKENS

    def check(self, request: Request) -> None:
        """Refuse a request that could never finish, as vLLM refuses such a setup."""
        name, kv = request.request_id, self.kv_cache_manager
        # The most it ever holds: its last output token is sampled, never computed.
        most = request.prompt_tokens + request.max_tokens - 1
        needed = blocks_for(most, kv.block_size)
        usable = kv.num_gpu_blocks - 1  # block 0 is the null block
        if needed > usable:
            raise ValueError(
                f"request {name!r} needs {needed} blocks for its {most} tokens,"
                f" the pool has {usable}: it could never finish"
            )
        # Without chunked prefill vLLM requires max_model_len <= max_num_batched_tokens
        # (SchedulerConfig.verify_max_model_len): a whole prompt fits in one step.
        total = request.prompt_tokens + request.max_tokens
        budget = self.config.max_num_batched_tokens
        if not self.config.enable_chunked_prefill and total > budget:
            raise ValueError(
                f"request {name!r} has {total} tokens (prompt_tokens + max_tokens),"
                f" more than max_num_batched_tokens={budget}: without chunked prefill"
                " vLLM requires max_model_len <= max_num_batched_tokens"
            )

    def add_request(self, request: Request) -> None:
        """A new request joins the back of the waiting queue
        (vllm/v1/core/sched/scheduler.py: Scheduler.add_request)."""
        self.check(request)
        prompt = request.prompt
        if prompt is None:
            start, self._next_unique = (
                self._next_unique,
                self._next_unique + request.prompt_tokens,
            )
            prompt = range(start, self._next_unique)
        self.waiting.append(_State(request, list(prompt)))

    def _preempt_request(self, state: _State) -> None:
        """vllm/v1/core/sched/scheduler.py: Scheduler._preempt_request: free all its
        blocks, forget what it computed (recompute), put it at the waiting queue's
        front (FCFSRequestQueue.prepend_request)."""
        if state.id in self.kv_cache_manager.requests:
            self.kv_cache_manager.free(state.id)
        state.num_computed_tokens = 0
        state.num_preemptions += 1
        state.preempted = True
        self.waiting.appendleft(state)

    def schedule(self) -> tuple[dict[str, int], list[str]]:
        """vllm/v1/core/sched/scheduler.py: Scheduler.schedule. Returns the tokens
        scheduled per request and the requests preempted in this step."""
        config, kv = self.config, self.kv_cache_manager
        token_budget = config.max_num_batched_tokens  # max_num_scheduled_tokens unset
        threshold = config.long_prefill_token_threshold
        scheduled: dict[str, int] = {}
        preempted: list[str] = []

        # 1. The RUNNING requests, in their order, while the budget lasts.
        req_index = 0
        while req_index < len(self.running) and token_budget > 0:
            state = self.running[req_index]
            # No extra step for a request whose last token is already on its way
            # (AsyncScheduler's placeholders; none without async scheduling).
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
            # 2. Blocks run out (vllm/v1/core/kv_cache_manager.py:
            # KVCacheManager.allocate_slots returns None): preempt the last running
            # request (FCFS policy), again and again, until this one fits or is itself
            # the one preempted.
            while (
                kv.allocate_slots(
                    state.id, state.tokens, state.num_computed_tokens, num_new_tokens
                )
                is None
            ):
                victim = self.running.pop()
                self._preempt_request(victim)
                preempted.append(victim.id)
                if victim is state:
                    break
            if state.preempted:
                break  # no running request after it is scheduled in this step
            scheduled[state.id] = num_new_tokens
            token_budget -= num_new_tokens
            req_index += 1

        # 3. The WAITING requests, head first; none in a step that preempted.
        while not preempted and self.waiting and token_budget > 0:
            if len(self.running) >= config.max_num_seqs:
                break
            state = self.waiting[0]
            # Its cached blocks, looked up (and counted) at every try, a preempted
            # request's own among them (KVCacheManager.get_computed_blocks).
            hit, num_computed_tokens = kv.get_computed_blocks(
                state.tokens, preempted=state.num_preemptions > 0
            )
            # A new request computes its prompt; a preempted one its prompt and
            # the tokens it had generated (request.num_tokens).
            num_new_tokens = state.num_tokens - num_computed_tokens
            if 0 < threshold < num_new_tokens:
                num_new_tokens = threshold
            # Without chunked prefill, a prompt longer than what is left of the
            # budget ends this step's admissions: no later request jumps it.
            if not config.enable_chunked_prefill and num_new_tokens > token_budget:
                break
            num_new_tokens = min(num_new_tokens, token_budget)
            # It is admitted only if its whole sequence so far fits in the free blocks
            # (SchedulerConfig.scheduler_reserve_full_isl, default True).
            new_blocks = kv.allocate_slots(
                state.id,
                state.tokens,
                state.num_computed_tokens,
                num_new_tokens,
                hit,
                full_sequence_must_fit=True,
            )
            if new_blocks is None:
                break  # too few free blocks: it waits, and all behind it
            self.waiting.popleft()
            self.running.append(state)
            state.preempted = False
            state.num_computed_tokens = num_computed_tokens
            scheduled[state.id] = num_new_tokens
            token_budget -= num_new_tokens

        assert sum(scheduled.values()) <= config.max_num_batched_tokens
        assert len(self.running) <= config.max_num_seqs
        self._update_after_schedule(scheduled)
        return scheduled, preempted

    def _update_after_schedule(self, scheduled: dict[str, int]) -> None:
        """4. The scheduled tokens count as computed at once, so that the next step
        can be scheduled before this one's output is back
        (vllm/v1/core/sched/scheduler.py: Scheduler._update_after_schedule). A
        chunk that does not reach the end of the known tokens samples nothing: the
        model runner discards it."""
        by_id = {state.id: state for state in self.running}
        for request_id, num_tokens in scheduled.items():
            state = by_id[request_id]
            state.num_computed_tokens += num_tokens
            state.is_prefill_chunk = state.num_computed_tokens < (
                state.num_tokens + state.num_output_placeholders
            )

    def update_from_output(
        self, scheduled: dict[str, int], sampled: list[str] | None = None
    ) -> tuple[list[str], list[str]]:
        """5. A step's output is back (vllm/v1/core/sched/scheduler.py:
        Scheduler.update_from_output): each request that sampled gets its token
        (sampled: by default, every request of the step that is not in the middle
        of its prompt). Returns who sampled and who finished."""
        if sampled is None:
            sampled = self.sampling(scheduled)
        finished = []
        states = {state.id: state for state in [*self.running, *self.waiting]}
        for request_id in scheduled:
            state = states.get(request_id)
            if state is None or request_id not in sampled:
                continue  # finished already, or a prompt chunk that samples nothing
            self._update_request_with_output(state)
            # Finished at max_tokens (vllm/v1/core/sched/utils.py: check_stop): its
            # blocks go back to the pool (Scheduler._free_request).
            if state.num_output_tokens >= state.request.max_tokens:
                finished.append(request_id)
                if request_id in self.kv_cache_manager.requests:
                    self.kv_cache_manager.free(request_id)
        self.running = [state for state in self.running if state.id not in finished]
        self.waiting = deque(
            state for state in self.waiting if state.id not in finished
        )
        return sampled, finished

    def _update_request_with_output(self, state: _State) -> None:
        """The request gets its sampled token (Scheduler._update_request_with_output).
        The stand-in model samples token id -1 - k as a request's k-th output token:
        tokens no prompt holds, the same for the same prompt, as greedy decoding
        gives."""
        state.tokens.append(-1 - state.num_output_tokens)
        state.num_output_tokens += 1

    def sampling(self, scheduled: dict[str, int]) -> list[str]:
        """Who of a step just scheduled gets a token sampled: those whose chunk
        reaches the end of their known tokens."""
        states = {state.id: state for state in self.running}
        return [i for i in scheduled if not states[i].is_prefill_chunk]


class AsyncScheduler(Scheduler):
    """vllm/v1/core/sched/async_scheduler.py: AsyncScheduler, vLLM's default: the
    engine schedules step N+1 before step N's output is back, so a request that
    samples in a step gets a placeholder for its token until the output comes."""

    def _update_after_schedule(self, scheduled: dict[str, int]) -> None:
        """AsyncScheduler._update_after_schedule: a placeholder per sampling request."""
        super()._update_after_schedule(scheduled)
        for state in self.running:
            if state.id in scheduled and not state.is_prefill_chunk:
                state.num_output_placeholders += 1

    def _update_request_with_output(self, state: _State) -> None:
        """AsyncScheduler._update_request_with_output: the token replaces its
        placeholder, and its full block gets a hash, unless the request was
        preempted meanwhile."""
        super()._update_request_with_output(state)
        state.num_output_placeholders -= 1
        if not state.preempted:
            self.kv_cache_manager.cache_blocks(
                state.id,
                state.tokens,
                state.num_computed_tokens - state.num_output_placeholders,
            )


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


def enough_blocks(requests: list[Request], block_size: int = BLOCK_SIZE) -> int:
    """A pool in which blocks never run out: the null block, plus every request's
    whole sequence at once (its last output token is never written to the cache)."""
    return 1 + sum(
        blocks_for(r.prompt_tokens + r.max_tokens - 1, block_size) for r in requests
    )


def run(requests: list[Request], kv_cache_manager=BlockPool, **settings) -> list[Step]:
    """Run the requests to completion, one Step per engine step from step 0. A
    request arriving at step s joins the waiting queue before step s is scheduled.
    settings: SchedulerConfig's; kv_cache_manager: the class of the blocks' manager,
    made with (num_gpu_blocks, block_size): BlockPool by default."""
    config = SchedulerConfig(**settings)
    ids = [request.request_id for request in requests]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f"request ids must be unique: {', '.join(repeated)} repeat")
    if config.num_gpu_blocks is None:
        num_gpu_blocks = enough_blocks(requests, config.block_size)
        config = replace(config, num_gpu_blocks=num_gpu_blocks)
    kv = kv_cache_manager(config.num_gpu_blocks, config.block_size)
    # vllm/config/scheduler.py: SchedulerConfig.get_scheduler_cls
    scheduler_cls = AsyncScheduler if config.async_scheduling else Scheduler
    scheduler = scheduler_cls(config, kv)
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
    depth = 2 if config.async_scheduling else 1
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
                free_blocks=kv.num_free_blocks,
                block_tables={s.id: kv.block_table(s.id) for s in scheduler.running},
                hits=kv.hits,
                queries=kv.queries,
            )
        )
    # The engine's last turn may only process an empty step: not a step to show.
    while steps and not steps[-1].scheduled and not steps[-1].finished:
        steps.pop()
    return steps


def simulate(
    requests: list[Request], kv_cache_manager=BlockPool, **settings
) -> list[dict[str, int]]:
    """One dict per step: request id -> the tokens scheduled for it in that step."""
    return [step.scheduled for step in run(requests, kv_cache_manager, **settings)]


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
