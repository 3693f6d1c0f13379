"""The continuous batching lesson's scheduler (snippets/continuous-batching/scheduler.py)
behaves as vLLM 0.26.0's Scheduler.schedule does: every expected trace below is worked out
by hand from the vLLM function the test names, not from the simulator."""

import random
from dataclasses import replace

import long_prompt
import preemption
import pytest
import short_prompts
from block_pool import BlockPool
from scheduler import (
    AsyncScheduler,
    Request,
    Scheduler,
    SchedulerConfig,
    run,
    simulate,
    table,
    tokens_per_step,
    ttft_steps,
)

from coursekit import ROOT

FOLDER = ROOT / "snippets" / "continuous-batching"


# -- the three worked traces of the page, step by step ---------------------------------------


def test_short_prompts_trace():
    # Step 1: C joins while A and B decode; D arrives too but three requests already run
    # (max_num_seqs=3: `len(self.running) >= self.max_num_running_reqs` ends admissions).
    # A and C finish at the end of step 2, so D gets in at step 3.
    expected = [
        {"A": 20, "B": 14},
        {"A": 1, "B": 1, "C": 25},
        {"A": 1, "B": 1, "C": 1},
        {"B": 1, "D": 10},
        {"B": 1, "D": 1},
        {"D": 1},
    ]
    assert simulate(short_prompts.WORKLOAD, **short_prompts.CONFIG) == expected
    steps = run(short_prompts.WORKLOAD, **short_prompts.CONFIG)
    assert [s.waiting for s in steps] == [[], ["D"], ["D"], [], [], []]
    assert [s.finished for s in steps] == [[], [], ["A", "C"], [], ["B"], ["D"]]
    assert ttft_steps(short_prompts.WORKLOAD, steps) == {"A": 1, "B": 1, "C": 1, "D": 3}


def test_long_prompt_trace():
    # Running requests first (one token each for A and B), then L gets what is left of the
    # 64-token budget: 62, 62, then its last 26 tokens, which sample its first token.
    # S arrives at step 2, when the budget is spent: it waits behind L (FCFS).
    expected = [
        {"A": 10, "B": 12},
        {"A": 1, "B": 1, "L": 62},
        {"A": 1, "B": 1, "L": 62},
        {"A": 1, "B": 1, "L": 26, "S": 6},
        {"A": 1, "B": 1, "L": 1, "S": 1},
        {"A": 1, "B": 1},
    ]
    steps = run(long_prompt.WORKLOAD, **long_prompt.CONFIG)
    assert [s.scheduled for s in steps] == expected
    assert [s.sampled for s in steps][1:4] == [["A", "B"], ["A", "B"], ["A", "B", "L", "S"]]
    assert steps[2].waiting == ["S"]
    assert ttft_steps(long_prompt.WORKLOAD, steps) == {"A": 1, "B": 1, "L": 3, "S": 2}
    assert tokens_per_step(steps, "L") == [0, 62, 62, 26, 1, 0]


def test_preemption_trace():
    # 6 blocks, the null block aside 5: A (2 blocks), B (2) and C (1) fill them at step 0.
    # Step 2: A's 33rd token needs a third block; none is free, so the last running
    # request, C, is preempted (Scheduler._preempt_request) and its block goes to A. D
    # arrives at step 2 and is not admitted: no admissions in a step that preempted.
    # Step 3: C is at the front of the queue but needs 1 block for its 12 tokens, none is
    # free, and D waits behind it. B finishes at step 3 (2 blocks free); at step 4 C
    # recomputes its 10 prompt tokens and the 2 it had generated, and samples its third.
    expected = [
        {"A": 31, "B": 20, "C": 10},
        {"A": 1, "B": 1, "C": 1},
        {"A": 1, "B": 1},
        {"A": 1, "B": 1},
        {"A": 1, "C": 12, "D": 8},
        {"A": 1, "C": 1, "D": 1},
    ]
    steps = run(preemption.WORKLOAD, **preemption.CONFIG)
    assert [s.scheduled for s in steps] == expected
    assert [s.preempted for s in steps] == [[], [], ["C"], [], [], []]
    assert [s.waiting for s in steps] == [[], [], ["C", "D"], ["C", "D"], [], []]
    assert [s.free_blocks for s in steps] == [0, 0, 0, 2, 0, 5]
    assert steps[4].running == ["A", "C", "D"]
    assert steps[4].sampled == ["A", "C", "D"]  # the recompute samples C's third token
    assert ttft_steps(preemption.WORKLOAD, steps) == {"A": 1, "B": 1, "C": 1, "D": 3}


@pytest.mark.parametrize("module", [short_prompts, long_prompt, preemption])
def test_the_page_shows_each_trace(module):
    # The page shows the recorded output; its first lines are this table.
    steps = run(module.WORKLOAD, **module.CONFIG)
    shown = (FOLDER / f"{module.__name__}.out").read_text("utf-8")
    assert shown.startswith(table(module.WORKLOAD, steps) + "\n")


# -- the rules, one by one ----------------------------------------------------------------------


def test_one_step_mixes_prefill_and_decode():
    # NOTE(woosuk) in Scheduler.schedule: no prefill phase, no decode phase.
    steps = run(long_prompt.WORKLOAD, **long_prompt.CONFIG)
    assert steps[1].decoding == ["A", "B"]
    assert steps[1].computed_before == {"A": 10, "B": 12, "L": 0}
    assert steps[2].computed_before == {"A": 11, "B": 13, "L": 62}


def test_the_prompt_step_samples_the_first_token_and_max_tokens_ends_it():
    # The model runner discards what a partial chunk samples; check_stop ends a request
    # at max_tokens output tokens.
    steps = run([Request("R", 40, 3)], max_num_batched_tokens=16, max_num_seqs=1)
    assert [s.scheduled for s in steps] == [{"R": 16}, {"R": 16}, {"R": 8}, {"R": 1}, {"R": 1}]
    assert [s.sampled for s in steps] == [[], [], ["R"], ["R"], ["R"]]
    assert steps[-1].finished == ["R"]


def test_arrival_step_is_the_first_step_a_request_can_run():
    steps = run([Request("R", 5, 2, arrival_step=3)], max_num_batched_tokens=8, max_num_seqs=1)
    assert [s.scheduled for s in steps] == [{}, {}, {}, {"R": 5}, {"R": 1}]
    assert ttft_steps([Request("R", 5, 2, arrival_step=3)], steps) == {"R": 1}


def test_waiting_requests_are_admitted_first_come_first_served():
    # Same arrival step: list order; otherwise arrival order, whatever the list order.
    requests = [Request("late", 4, 1, arrival_step=1), Request("x", 4, 1), Request("y", 4, 1)]
    steps = run(requests, max_num_batched_tokens=4, max_num_seqs=4)
    assert [s.scheduled for s in steps] == [{"x": 4}, {"y": 4}, {"late": 4}]


def test_long_prefill_token_threshold_caps_every_chunk():
    # `0 < threshold < num_new_tokens` caps running and waiting requests alike.
    requests = [Request("L", 50, 1), Request("M", 30, 1)]
    got = simulate(requests, max_num_batched_tokens=64, max_num_seqs=2,
                   long_prefill_token_threshold=20)
    assert got == [{"L": 20, "M": 20}, {"L": 20, "M": 10}, {"L": 10}]


def test_without_chunked_prefill_a_prompt_that_does_not_fit_stops_admissions():
    # vLLM's test_schedule_order: with chunking off the second long prompt is not
    # split, and the short ones behind it are not scheduled either, though they fit.
    requests = [Request("L1", 80, 5), Request("L2", 80, 5), Request("S1", 10, 5),
                Request("S2", 10, 5)]
    on = simulate(requests, max_num_batched_tokens=100, max_num_seqs=3)
    off = simulate(requests, max_num_batched_tokens=100, max_num_seqs=3,
                   enable_chunked_prefill=False)
    assert on[0] == {"L1": 80, "L2": 20}
    assert off[0] == {"L1": 80}
    assert off[1] == {"L1": 1, "L2": 80, "S1": 10}
    assert off[2] == {"L1": 1, "L2": 1, "S1": 1}  # max_num_seqs=3: S2 waits
    assert off[5] == {"L2": 1, "S1": 1, "S2": 10}  # L1 finished at step 4


def test_the_last_running_request_is_preempted_until_the_first_fits():
    # A is first in the running list and needs 2 new blocks (8 tokens of 4-token blocks)
    # with none free: C, then B are preempted (running.pop()), each put at the front of
    # the queue, so B ends up ahead of C. They recompute prompt + generated token.
    requests = [Request("A", 16, 1), Request("B", 3, 2), Request("C", 3, 2)]
    steps = run(requests, max_num_batched_tokens=14, max_num_seqs=3, num_gpu_blocks=5,
                block_size=4, long_prefill_token_threshold=8)
    assert [s.scheduled for s in steps] == [{"A": 8, "B": 3, "C": 3}, {"A": 8},
                                            {"B": 4, "C": 4}]
    assert steps[1].preempted == ["C", "B"]
    assert steps[1].waiting == ["B", "C"]
    assert steps[1].finished == ["A"]
    assert [s.sampled for s in steps] == [["B", "C"], ["A"], ["B", "C"]]


def test_the_request_being_scheduled_can_preempt_itself():
    # B is last in the running list and needs a new block when none is free: it is the
    # one popped (`if preempted_req == request: break`); A, before it, was scheduled.
    requests = [Request("A", 14, 4), Request("B", 16, 8)]
    steps = run(requests, max_num_batched_tokens=32, max_num_seqs=2, num_gpu_blocks=3)
    assert steps[0].scheduled == {"A": 14, "B": 16}
    assert steps[1].scheduled == {"A": 1}
    assert steps[1].preempted == ["B"]
    assert steps[1].waiting == ["B"]
    # B comes back once A has finished and freed its block: prompt + 1 generated token.
    back = next(s for s in steps if "B" in s.scheduled and s.step > 1)
    assert back.scheduled == {"B": 17}
    assert back.step == 4


def test_a_waiting_request_needs_blocks_for_its_whole_sequence():
    # KVCacheManager.allocate_slots(full_sequence_must_fit=True), from
    # SchedulerConfig.scheduler_reserve_full_isl (default True): S's first chunk (2 tokens,
    # 1 block) would fit in the one free block, but its 20 tokens need 2, so it waits.
    requests = [Request("R", 30, 3), Request("S", 20, 1)]
    got = simulate(requests, max_num_batched_tokens=32, max_num_seqs=2, num_gpu_blocks=4)
    assert got == [{"R": 30}, {"R": 1}, {"R": 1}, {"S": 20}]
    scheduler = Scheduler(SchedulerConfig(max_num_batched_tokens=32, max_num_seqs=2), BlockPool(4))
    for request in requests:
        scheduler.add_request(request)
    assert scheduler.schedule() == ({"R": 30}, [])
    assert scheduler.kv_cache_manager.num_free_blocks == 1
    assert [state.id for state in scheduler.waiting] == ["S"]


def test_a_chunked_recompute_samples_only_when_it_catches_up():
    # After preemption B recomputes its 4 prompt tokens and the 5 it had generated
    # (request.num_tokens = 9) in chunks of the 8-token budget: the first chunk passes
    # the prompt but samples nothing; the second, of 1 token, samples B's 6th token.
    requests = [Request("A", 4, 10), Request("B", 4, 10)]
    steps = run(requests, max_num_batched_tokens=8, max_num_seqs=2, num_gpu_blocks=6,
                block_size=4)
    assert steps[5].preempted == ["B"]  # A's 9th token takes the last block, B's none
    assert [s.scheduled for s in steps[9:12]] == [{"A": 1}, {"B": 8}, {"B": 1}]
    assert [s.sampled for s in steps[9:12]] == [["A"], [], ["B"]]


def test_running_requests_are_served_in_order_while_the_budget_lasts():
    # `while req_index < len(self.running) and token_budget > 0`: L, first in the
    # running list and still prefilling, takes the whole budget; A, decoding behind it,
    # gets nothing in that step (and no 0-token entry).
    config = SchedulerConfig(max_num_batched_tokens=8, max_num_seqs=2, long_prefill_token_threshold=6)
    scheduler = Scheduler(config, BlockPool(10))
    scheduler.add_request(Request("L", 30, 1))
    scheduler.add_request(Request("A", 2, 5))
    assert scheduler.schedule() == ({"L": 6, "A": 2}, [])
    scheduler.update_from_output({"L": 6, "A": 2})
    scheduler.config = replace(config, long_prefill_token_threshold=0)
    assert scheduler.schedule() == ({"L": 8}, [])


def test_no_request_is_admitted_in_a_step_that_preempted(monkeypatch):
    # `if not preempted_reqs` guards the WAITING loop of Scheduler.schedule. Under FCFS the
    # last request preempted is at the queue's front and cannot fit again in the same step
    # (its whole sequence needs more blocks than are left), which hides the rule; so here
    # the victim goes to the back of the queue, leaving at the front a request that fits.
    scheduler = Scheduler(SchedulerConfig(max_num_batched_tokens=32, max_num_seqs=3), BlockPool(4))
    for request in (Request("A", 16, 4), Request("B", 16, 4)):
        scheduler.add_request(request)
    assert scheduler.schedule() == ({"A": 16, "B": 16}, [])
    scheduler.update_from_output({"A": 16, "B": 16})
    scheduler.add_request(Request("S", 4, 1))
    preempt = scheduler._preempt_request

    def to_the_back(state):
        preempt(state)
        scheduler.waiting.rotate(-1)

    monkeypatch.setattr(scheduler, "_preempt_request", to_the_back)
    # A's 17th token takes the last free block; B's then finds none and B, the last
    # running request, preempts itself: its block is free, and S would fit in it.
    assert scheduler.schedule() == ({"A": 1}, ["B"])
    assert [state.id for state in scheduler.waiting] == ["S", "B"]
    assert scheduler.kv_cache_manager.num_free_blocks == 1


@pytest.mark.parametrize("seed", range(40))
def test_random_workloads_keep_every_limit(seed):
    rng = random.Random(seed)
    requests = [Request(f"r{i}", rng.randint(1, 90), rng.randint(1, 12), rng.randint(0, 15))
                for i in range(rng.randint(1, 12))]
    budget = rng.choice([8, 16, 32, 64])
    seqs = rng.randint(1, min(budget, 6))
    blocks = rng.choice([None, 8, 12, 40])
    threshold = rng.choice([0, 0, 5, 24])
    config = dict(max_num_batched_tokens=budget, max_num_seqs=seqs, block_size=16,
                  long_prefill_token_threshold=threshold)
    try:
        steps = run(requests, num_gpu_blocks=blocks, **config)
    except ValueError as error:  # a request that could never fit this pool
        assert blocks is not None and "could never finish" in str(error)
        return
    sampled = {r.request_id: 0 for r in requests}
    first_seen = []
    for step in steps:
        assert sum(step.scheduled.values()) <= budget
        assert len(step.running) <= seqs
        assert all(n > 0 for n in step.scheduled.values())
        if threshold:
            assert all(n <= threshold for n in step.scheduled.values())
        if step.preempted:  # no admissions in a step that preempted
            assert all(i in steps[step.step - 1].running for i in step.scheduled)
        for request_id in step.sampled:
            sampled[request_id] += 1
        first_seen += [i for i in step.scheduled if i not in first_seen]
    assert sampled == {r.request_id: r.max_tokens for r in requests}
    # FCFS: requests first run in arrival order (list order within a step).
    arrival = [r.request_id for r in sorted(requests, key=lambda r: r.arrival_step)]
    assert first_seen == arrival
    if blocks is None:  # blocks never run out: every token is computed once
        assert not any(step.preempted for step in steps)
        for r in requests:
            assert sum(tokens_per_step(steps, r.request_id)) == r.prompt_tokens + r.max_tokens - 1


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: Request("", 4, 1), "request_id must be a non-empty string"),
        (lambda: Request("a", 0, 1), "prompt_tokens of request 'a' must be an integer of at least 1"),
        (lambda: Request("a", 4, 0), "max_tokens of request 'a' must be an integer of at least 1"),
        (lambda: Request("a", 4, 1, -1), "arrival_step of request 'a'"),
        (lambda: simulate([Request("a", 4, 1), Request("a", 5, 1)]), "unique: a repeat"),
        (lambda: simulate([], max_num_batched_tokens=0), "max_num_batched_tokens must be"),
        (lambda: simulate([], max_num_seqs=0), "max_num_seqs must be"),
        (lambda: simulate([], max_num_batched_tokens=64), "must be greater than or equal to max_num_seqs"),
        (lambda: simulate([], long_prefill_token_threshold=-1), "long_prefill_token_threshold"),
        (lambda: simulate([], num_gpu_blocks=0), "num_gpu_blocks must be"),
        (lambda: simulate([], block_size=0), "block_size must be"),
        (lambda: simulate([Request("a", 4, 1)], block_size=0), "block_size must be"),
        (lambda: simulate([Request("big", 40, 10)], num_gpu_blocks=3),
         "request 'big' needs 4 blocks for its 49 tokens, the pool has 2"),
        (lambda: simulate([Request("long", 90, 20)], max_num_batched_tokens=100,
                          max_num_seqs=1, enable_chunked_prefill=False),
         "request 'long' has 110 tokens (prompt_tokens + max_tokens), more than"
         " max_num_batched_tokens=100"),
    ],
)
def test_bad_input_names_the_problem(make, message):
    with pytest.raises(ValueError, match=None) as error:
        make()
    assert message in str(error.value)


def test_requests_that_just_fit_run():
    # 33 tokens held at most (32 + 2 - 1): 3 blocks of 16, and 3 usable of 4.
    assert simulate([Request("a", 32, 2)], num_gpu_blocks=4)[-1] == {"a": 1}
    # Without chunking a request of exactly the budget is accepted (max_model_len).
    got = simulate([Request("a", 98, 2)], max_num_batched_tokens=100, max_num_seqs=1,
                   enable_chunked_prefill=False)
    assert got == [{"a": 98}, {"a": 1}]


def test_async_scheduling_is_a_subclass_that_adds_placeholders():
    # vllm/v1/core/sched/async_scheduler.py: AsyncScheduler._update_after_schedule: a request
    # that samples gets a placeholder for its token until the step's output is processed.
    config = SchedulerConfig(max_num_batched_tokens=32, max_num_seqs=2)
    for scheduler_cls, placeholders in ((Scheduler, [0, 0]), (AsyncScheduler, [1, 0])):
        scheduler = scheduler_cls(config, BlockPool(10))
        scheduler.add_request(Request("A", 4, 3))
        scheduled, _ = scheduler.schedule()
        state = scheduler.running[0]
        before = state.num_output_placeholders
        scheduler.update_from_output(scheduled)
        assert [before, state.num_output_placeholders] == placeholders, scheduler_cls
