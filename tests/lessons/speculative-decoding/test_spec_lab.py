"""Lesson 7's lab, offline: what spec_metrics.problems holds vLLM's counters to, each rule
broken once; and the dry run's stand-in (tests/stand_in_vllm/vllm/vllm/stand_in_spec.py),
whose n-gram counters must keep those rules over random requests, and whose proposer,
written from vLLM's source apart from the lesson's, agrees with ngram.py."""

import random

import pytest
from ngram import propose_ngram
from spec_metrics import log_line, problems, read_counters

from coursekit import ROOT, vllm_source
from coursekit.code import load

GOOD = {"drafts": 10, "draft_tokens": 28, "accepted": 15, "per_pos": [8, 5, 2]}


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"per_pos": [8, 5]}, "2 positions"),
        ({"accepted": 16}, "positions sum to 15"),
        ({"per_pos": [5, 8, 2]}, "a later position accepts more"),
        ({"drafts": 7, "draft_tokens": 20}, "position 0 accepts 8 of 7"),
        ({"draft_tokens": 31}, "draft tokens <= 3 x drafts"),
        ({"draft_tokens": 14}, "accepted <= draft tokens"),
    ],
)
def test_each_rule_of_the_counters_fails_when_broken(change, says):
    assert problems(GOOD, 3) == []
    found = problems({**GOOD, **change}, 3)
    assert found and any(says in p for p in found), found


def test_reading_metrics_without_speculation_says_so():
    with pytest.raises(ValueError, match="is speculation on"):
        read_counters('vllm:prompt_tokens_total{engine="0"} 5.0\n')


@pytest.fixture
def spec(load_stand_in):
    return load_stand_in("vllm/vllm/stand_in_spec.py", "stand_in_spec")


def test_the_stand_in_proposes_as_the_lesson_does(spec):
    rng = random.Random(3)
    for _ in range(300):
        tokens = [rng.randrange(4) for _ in range(rng.randint(1, 40))]
        low = rng.randint(1, 3)
        high, k = rng.randint(low, 5), rng.randint(1, 5)
        assert spec.propose(tokens, low, high, k) == propose_ngram(
            tokens, low, high, k, 10_000
        ), (tokens, low, high, k)


def test_the_stand_in_counters_keep_vllms_rules(engine, spec):
    started = engine.start(
        "Qwen/Qwen2.5-7B-Instruct",
        {"max_model_len": 4096, "max_num_seqs": 8,
         "speculative_config": '{"method": "ngram", "num_speculative_tokens": 3}'},
        "OPENAI_API_SERVER",
    )
    assert started.options["async_scheduling"] is False  # n-gram turns it off
    scheduler = engine.Scheduler(started, log_stats=True)
    counters = spec.SpecCounters(spec.config(started.options["speculative_config"]))
    rng = random.Random(5)
    for i in range(6):
        # Runs of the stand-in's own output tokens (1000 + i % 100), each followed by
        # others: n-gram drafts from the prompt, some accepted, some rejected.
        prompt = []
        for start in rng.sample(range(1000, 1090), 4):
            prompt += list(range(start, start + 8)) + [rng.randrange(1000, 1100)] * 2
        scheduler.add_request(engine.Request(f"r{i}", prompt, 230, ignore_eos=True))
    while scheduler.has_unfinished_requests():
        counters.record(scheduler.engine_step())
    found = read_counters("\n".join(counters.lines("Qwen/Qwen2.5-7B-Instruct")))
    assert 0 < found["accepted"] < found["draft_tokens"], found
    assert found["per_pos"][0] > found["per_pos"][-1], found  # rejections at all positions
    assert problems(found, 3) == []


def test_the_gpu_check_reads_vllms_log_line():
    """On a line written with vLLM's format (spec_metrics.log_line, held to the wheel's
    format string by test_spec_vllm_source.py)."""
    checks = load(
        ROOT / "snippets/speculative-decoding/gpu_checks.py", "gpu_checks_of_spec", ROOT
    )
    line = "INFO 12-02 06:00:00 [metrics.py:141] " + log_line(GOOD, seconds=10.0)
    assert checks.LOGGED.findall(line) == [("15", "28")]


def v1_runner_line(lead: str, *args) -> str:
    """A line as vLLM 0.26.0 logs it, from its own format string starting with `lead`."""
    src = vllm_source.source_dir()
    formats = [fmt for path in vllm_source.files_containing(src, lead)
               for fmt in vllm_source.log_formats(path) if fmt.startswith(lead)]
    assert len(formats) == 1, f"vLLM has {len(formats)} log formats starting {lead!r}"
    return f"INFO 12-02 06:00:00 [gpu_worker.py:1] {formats[0] % args}"


def test_the_gpu_check_reads_the_v1_runners_graph_memory():
    """The V1 runner's estimate and the pool's actual size, each from a line built with the
    wheel's format string; a log without the estimate (the V2 runner's) gives None."""
    checks = load(
        ROOT / "snippets/speculative-decoding/gpu_checks.py", "gpu_checks_of_spec", ROOT
    )
    estimate = v1_runner_line("Estimated CUDA graph memory", 1.5)
    pool = v1_runner_line("CUDA graph pool memory", 1.47, 1.5, 0.03, 2.0)
    assert checks.v1_graph_memory(f"{estimate}\n{pool}\n") == (1.5, 1.47)
    assert checks.v1_graph_memory(estimate) == (1.5, None)
    assert checks.v1_graph_memory(pool) is None


def test_the_lab_asks_for_greedy_decoding_without_the_models_penalty(monkeypatch):
    """vllm serve fills a completions request's missing sampling fields from the model's
    generation_config.json (vllm/entrypoints/openai/completion/protocol.py:
    CompletionRequest.to_sampling_params): the lab sends temperature 0 and, against Qwen2.5's
    repetition penalty of 1.05, repetition_penalty 1.0."""
    import io
    import json
    import urllib.request

    import lab_spec_send

    sent = []

    def urlopen(request, timeout):
        sent.append(json.loads(request.data))
        return io.BytesIO(b'{"usage": {"prompt_tokens": 3, "completion_tokens": 256}}')

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    lab_spec_send.complete("http://127.0.0.1:8000", "Hello")
    assert (sent[0]["temperature"], sent[0]["repetition_penalty"]) == (0, 1.0)
