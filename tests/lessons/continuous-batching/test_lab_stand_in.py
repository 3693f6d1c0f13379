"""The dry run's stand-in for vLLM (tests/stand_in_vllm) logs the continuous batching lab's
Iteration lines and exports its metrics from a scheduler of its own, written from vLLM
0.26.0's source and sharing no code with the lesson's scheduler.py: on the small workloads
worked out by hand in test_lab_trace.py it logs the hand-worked lines, and on random
workloads it agrees with what lab_trace.py predicts from scheduler.py, step by step. Its
LLM() path records only steps with outputs, its engine core runs ahead of a lab unless
VLLM_ENABLE_V1_MULTIPROCESSING=0, and it refuses to log iteration details for the
asynchronous scheduler it does not model."""

import os
import random
import subprocess
import sys

import pytest
from lab_trace import Iteration, Lab, iterations, predict_metrics, read_iterations, read_metrics
from scheduler import Request

MODEL = "Qwen/Qwen2.5-7B-Instruct-AWQ"


def stand_in_run(engine, capsys, lab, every_step=True):
    """Run a lab's requests through the stand-in's engine core and frontend, each added
    before the step it arrives at; its Iteration lines and its /metrics text."""
    started = engine.start(MODEL, {
        "max_model_len": lab.max_model_len, "num_gpu_blocks_override": lab.num_gpu_blocks,
        "max_num_batched_tokens": lab.max_num_batched_tokens,
        "max_num_seqs": lab.max_num_seqs, "async_scheduling": False,
        "enable_logging_iteration_details": True}, "LLM_CLASS")
    capsys.readouterr()
    core, stats = engine.Scheduler(started, log_stats=True), engine.StatLoggers(started, True)
    pending = sorted(lab.requests, key=lambda r: r.arrival_step)
    step = 0
    while pending or core.has_unfinished_requests():
        while pending and pending[0].arrival_step <= step:
            request = pending.pop(0)
            core.add_request(engine.Request(request.request_id, [7] * request.prompt_tokens,
                                            request.max_tokens, ignore_eos=True))
        result = core.engine_step()
        if every_step:  # vllm serve: AsyncLLM's output handler
            stats.record(result, iteration_stats=bool(result.sampled))
        elif result.sampled:  # LLM(): LLMEngine.step
            stats.record(result, iteration_stats=True)
        step += 1
    return read_iterations(capsys.readouterr().out), stats.prometheus_text()


def tiny(*requests, blocks=10, budget=16):
    return Lab("tiny.py", requests, budget, 4, blocks, 64)


# The hand-worked lines of test_lab_trace.py.
HAND = {
    "chunks beside a decode": (
        tiny(Request("A", 10, 3), Request("L", 40, 2, arrival_step=1)),
        [Iteration(0, 1, 10, 0, 0, "11.1"), Iteration(1, 1, 15, 1, 1, "22.2"),
         Iteration(2, 1, 15, 1, 1, "22.2"), Iteration(3, 1, 10, 0, 0, "33.3"),
         Iteration(4, 0, 0, 1, 1, "0.0")], [11, 1, 1, 41, 1], 0),
    "a preemption": (
        tiny(Request("A", 16, 3), Request("B", 16, 3), blocks=4, budget=64),
        [Iteration(0, 2, 32, 0, 0, "66.7"), Iteration(1, 0, 0, 1, 1, "66.7"),
         Iteration(2, 0, 0, 1, 1, "0.0"), Iteration(3, 1, 17, 0, 0, "66.7"),
         Iteration(4, 0, 0, 1, 1, "0.0")], [34, 1, 1, 1, 1], 1),
}


@pytest.mark.parametrize("name", HAND)
def test_it_logs_the_hand_worked_lines(engine, capsys, name):
    lab, lines, observed, preemptions = HAND[name]
    logged, text = stand_in_run(engine, capsys, lab)
    assert logged == lines
    metrics = read_metrics(text)
    assert (metrics.count, metrics.sum, metrics.preemptions) == (
        len(observed), float(sum(observed)), preemptions)


def test_its_llm_path_logs_only_steps_with_outputs(engine, capsys):
    lab = tiny(Request("L", 40, 1))
    assert stand_in_run(engine, capsys, lab, every_step=False)[0] == [
        Iteration(2, 1, 8, 0, 0, "0.0")]
    assert [line.index for line in stand_in_run(engine, capsys, lab)[0]] == [0, 1, 2]


def random_lab(seed):
    """A few requests, small budgets and pools: chunks, full seats, preemptions."""
    rng = random.Random(seed)
    blocks = rng.randint(3, 10)
    most = 16 * (blocks - 1)  # the tokens a request may hold: the pool (block 0 is null)
    requests = []
    for n in range(rng.randint(1, 6)):
        tokens = rng.randint(1, min(24, most))
        prompt = rng.randint(1, max(1, min(60, most - tokens)))
        requests.append(Request(f"R{n}", prompt, tokens, rng.randint(0, 6)))
    budget = rng.randint(4, 64)
    return Lab("random.py", tuple(requests), budget, rng.randint(1, 4), blocks, 16 * blocks)


# 300 seeded workloads, 25 to a test (a test each cost pytest-xdist more than running it). The
# stand-in keeps no state between runs: each starts its own engine core.
SEEDS = [range(start, start + 25) for start in range(0, 300, 25)]


@pytest.mark.parametrize("seeds", SEEDS, ids=lambda seeds: f"{seeds.start}-{seeds.stop - 1}")
def test_it_agrees_with_the_lesson_simulator_on_random_workloads(engine, capsys, seeds):
    """Two implementations of the same vLLM rules: the stand-in's and scheduler.py (with
    lab_trace.py's reading of a trace). Chunks, seats, blocks, preemptions, arrivals."""
    for seed in seeds:
        lab = random_lab(seed)
        steps = lab.steps()
        logged, text = stand_in_run(engine, capsys, lab)
        assert logged == iterations(lab, steps, every_step=True), (seed, lab)
        assert read_metrics(text) == predict_metrics(lab, steps), (seed, lab)


def test_it_refuses_to_log_iteration_details_for_the_async_scheduler(engine):
    with pytest.raises(engine.StandInError, match="schedules synchronously, as vLLM does"
                       r" with async_scheduling=False \(--no-async-scheduling\)"):
        engine.start(MODEL, {"enable_logging_iteration_details": True}, "OPENAI_API_SERVER")
    started = engine.start(MODEL, {}, "OPENAI_API_SERVER")  # lesson 2's labs: no details
    assert started.options["async_scheduling"] is True


LAB = """\
import os
{env}
from vllm import LLM, SamplingParams

if __name__ == "__main__":
    llm = LLM(model="{model}", max_model_len=256, max_num_batched_tokens=64, max_num_seqs=4,
              num_gpu_blocks_override=64, async_scheduling=False,
              enable_logging_iteration_details=True, disable_log_stats=False)
    engine = llm.llm_engine
    params = SamplingParams(max_tokens=3, ignore_eos=True)
    engine.add_request("A", {{"prompt_token_ids": [5] * 10}}, params)
    engine.add_request("B", {{"prompt_token_ids": [6] * 20}}, params)
    while engine.has_unfinished_requests():
        print(sorted((o.request_id, len(o.outputs[0].token_ids)) for o in engine.step()))
"""


@pytest.mark.parametrize(("env", "first"), [
    ("", [("A", 1)]),  # the engine core's own process stepped as soon as A reached it
    ('os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"', [("A", 1), ("B", 1)]),
])
def test_its_engine_core_runs_ahead_unless_it_is_in_process(stand_in_vllm, tmp_path, env,
                                                           first):
    lab = tmp_path / "lab.py"
    lab.write_text(LAB.format(env=env, model=MODEL))
    env = {**os.environ, "VLLM_LOGGING_STREAM": "ext://sys.stderr"}
    run = subprocess.run([sys.executable, str(lab)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == str(first)
    assert "Asynchronous scheduling is disabled." in run.stderr
    logged = read_iterations(run.stderr)
    assert logged[0] == Iteration(0, len(first), sum(10 if r == "A" else 20 for r, _ in first),
                                  0, 0, "4.8" if len(first) == 2 else "1.6")
