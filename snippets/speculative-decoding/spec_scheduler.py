"""The engine loop of vLLM 0.26.0 with n-gram speculation, for greedy requests: each
step the scheduler gives every running request its last sampled token plus its draft
tokens (num_spec_tokens at most), the target verifies them, the rejected ones are
taken back, and the n-gram proposer drafts again from the sequence so far.

It mirrors vllm/v1/core/sched/scheduler.py (Scheduler.schedule, .update_from_output,
.update_draft_token_ids) with n-gram's settings: async scheduling off and the V1
model runner (vllm/config/vllm.py: VllmConfig.__post_init__ turns async scheduling
off for "ngram", and use_v2_model_runner refuses it), no lookahead slots
(num_lookahead_tokens is num_spec_tokens only for EAGLE and draft models). The
target's greedy choices are given: request.answer[j] is its argmax for output
position j, whatever came before, as greedy decoding gives one fixed answer. No
preemption: the blocks must suffice. It does not extend lesson 3's Scheduler: vLLM
writes speculation into the bodies of Scheduler.schedule and .update_from_output,
which a subclass would have to copy whole."""

from dataclasses import dataclass, field

from ngram import propose_ngram
from spec_decode import verify


@dataclass
class Request:
    request_id: str
    prompt: list[int]
    answer: list[int]  # the target's greedy output, num_spec_tokens longer than needed
    max_tokens: int
    output: list[int] = field(default_factory=list)
    num_computed_tokens: int = 0
    spec_token_ids: list[int] = field(default_factory=list)
    blocks: int = 0

    @property
    def tokens(self) -> list[int]:
        return self.prompt + self.output


@dataclass
class SpecStep:
    scheduled: dict[str, int]  # request id -> tokens computed in the step
    drafts: dict[str, list[int]]  # request id -> draft tokens verified in the step
    accepted: dict[str, int]  # request id -> drafts accepted
    new_tokens: dict[str, list[int]]  # request id -> tokens added to its output
    blocks: dict[str, int]  # request id -> KV blocks it holds after the step
    finished: list[str]


@dataclass
class SpecStats:
    """vllm/v1/spec_decode/metrics.py: SpecDecodingStats.observe_draft, summed."""

    num_drafts: int = 0
    num_draft_tokens: int = 0
    num_accepted_tokens: int = 0
    accepted_per_pos: list[int] = field(default_factory=list)
    draft_per_pos: list[int] = field(default_factory=list)

    def observe(self, drafted: int, accepted: int):
        self.num_drafts += 1
        self.num_draft_tokens += drafted
        self.num_accepted_tokens += accepted
        for i in range(accepted):
            self.accepted_per_pos[i] += 1
        for i in range(drafted):
            self.draft_per_pos[i] += 1


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def run(
    requests: list[Request],
    num_spec_tokens: int,
    prompt_lookup_min: int,
    prompt_lookup_max: int,
    max_num_batched_tokens: int = 8192,
    block_size: int = 16,
    num_gpu_blocks: int = 10_000,
    max_model_len: int = 32768,
) -> tuple[list[SpecStep], SpecStats]:
    """Every request arrives at step 0, in order; returns the steps and the counters."""
    for r in requests:
        if len(r.answer) < r.max_tokens + num_spec_tokens or r.max_tokens < 1:
            raise ValueError(
                f"{r.request_id}: needs max_tokens >= 1 and an answer of at least "
                "max_tokens + num_spec_tokens ="
                f" {r.max_tokens + num_spec_tokens} tokens"
            )
        if len(r.prompt) >= max_model_len:
            raise ValueError(
                f"{r.request_id}: a prompt of {len(r.prompt)} tokens leaves no room"
                f" for output within max_model_len {max_model_len}"
            )
    stats = SpecStats(
        accepted_per_pos=[0] * num_spec_tokens, draft_per_pos=[0] * num_spec_tokens
    )
    waiting, running, steps = list(requests), [], []
    free = num_gpu_blocks
    while waiting or running:
        budget = max_num_batched_tokens
        scheduled, drafts = {}, {}
        # Scheduler.schedule: the running first, in order, then the waiting.
        for r in running + waiting:
            if budget == 0:
                break
            # num_tokens_with_spec - num_computed_tokens: a decode asks 1 + its drafts
            wanted = len(r.tokens) + len(r.spec_token_ids) - r.num_computed_tokens
            new = min(wanted, budget, max_model_len - r.num_computed_tokens - 1)
            # KVCacheManager.allocate_slots, num_lookahead_tokens=0 for n-gram
            need = cdiv(r.num_computed_tokens + new, block_size) - r.blocks
            if need > free:
                raise ValueError("out of KV blocks: this simulator does not preempt")
            if need > 0:  # blocks stay with the request when drafts are rejected
                free -= need
                r.blocks += need
            scheduled[r.request_id] = new
            budget -= new
            # Only the drafts that fit in the step are verified.
            spec = new + r.num_computed_tokens - len(r.tokens)
            if spec > 0:
                drafts[r.request_id] = r.spec_token_ids[:spec]
            r.spec_token_ids = []
            r.num_computed_tokens += new  # Scheduler._update_after_schedule
            if r in waiting:
                waiting.remove(r)
                running.append(r)
        step = SpecStep(scheduled, drafts, {}, {}, {}, [])
        # The model runner, then Scheduler.update_from_output.
        for r in list(running):
            if r.request_id not in scheduled or r.num_computed_tokens < len(r.tokens):
                continue  # a prompt chunk that does not reach the end samples nothing
            drafted = drafts.get(r.request_id, [])
            start = len(r.output)
            accepted, added = verify(
                r.answer[start : start + len(drafted) + 1], drafted
            )
            generated = accepted + [added]
            r.num_computed_tokens -= len(drafted) - len(accepted)
            if drafted:
                stats.observe(len(drafted), len(accepted))
                step.accepted[r.request_id] = len(accepted)
            # check_stop (vllm/v1/core/sched/utils.py) after each token: max_tokens
            # reached, or the sequence reached max_model_len.
            room = min(r.max_tokens - len(r.output), max_model_len - len(r.tokens))
            kept = generated[:room]
            r.output += kept
            step.new_tokens[r.request_id] = kept
            if len(r.output) == r.max_tokens or len(r.tokens) == max_model_len:
                running.remove(r)
                free += r.blocks
                step.finished.append(r.request_id)
                continue
            # The n-gram proposer drafts from the tokens so far
            # (Scheduler.update_draft_token_ids).
            r.spec_token_ids = propose_ngram(
                r.tokens,
                prompt_lookup_min,
                prompt_lookup_max,
                num_spec_tokens,
                max_model_len,
            )
        step.blocks = {r.request_id: r.blocks for r in running}
        steps.append(step)
    return steps, stats


if __name__ == "__main__":
    # Two requests under a budget of 6 tokens a step: the second gets what is left,
    # and its drafts are cut to fit (vLLM's spec_token_ids[:num_scheduled_spec_tokens]).
    requests = [
        Request("a", [100, 1, 2, 1, 2], [1, 2] * 8, max_tokens=10),
        Request("b", [101, 3, 4, 3, 4], [3, 4] * 8, max_tokens=10),
    ]
    steps, stats = run(requests, 4, 1, 2, max_num_batched_tokens=6, block_size=4)
    for number, step in enumerate(steps):
        print(
            f"step {number}: scheduled {step.scheduled}, drafts {step.drafts},"
            f" accepted {step.accepted}, blocks {step.blocks}"
        )
    print(stats)
