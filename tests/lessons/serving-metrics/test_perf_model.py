"""perf_model.py: Poisson arrivals as vllm bench serve stretches them, lesson 3's scheduler
driven by the clock, and a workload of hundreds of requests simulated in well under the
seconds a test may take (measured here)."""

import time

import perf_model
import pytest
from perf_model import NUM_PROMPTS, arrivals, predict_rate, serve
from prefix_cache import PrefixCache


def test_arrivals_are_seeded_and_end_at_count_over_rate():
    times = arrivals(4.0, 200)
    assert times == arrivals(4.0, 200) != arrivals(4.0, 200, seed=1)
    assert times == sorted(times) and times[-1] == pytest.approx(200 / 4.0)


def test_hundreds_of_requests_simulate_in_a_fraction_of_a_second():
    started = time.perf_counter()
    stats = predict_rate(8.0)
    elapsed = time.perf_counter() - started
    assert len(stats["requests"]) == NUM_PROMPTS
    assert elapsed < 3.0, f"{NUM_PROMPTS} requests took {elapsed:.2f} s to simulate"


def test_every_request_gets_all_its_tokens_after_it_was_sent():
    sent = arrivals(2.0, 50)
    requests, duration = serve(sent, input_len=100, output_len=7)
    assert [r["output_tokens"] for r in requests] == [7] * 50
    assert all(r["ttft"] > 0 and len(r["itls"]) == 6 for r in requests)
    assert duration >= max(s + r["e2el"] for s, r in zip(sent, requests)) - 1e-9


def test_past_the_knee_throughput_stops_and_ttft_explodes():
    low, high, higher = (predict_rate(rate) for rate in (2.0, 12.0, 16.0))
    assert low["request_throughput"] == pytest.approx(2.0, rel=0.05)
    assert higher["request_throughput"] == pytest.approx(high["request_throughput"],
                                                         rel=0.02)  # fmt: skip
    assert higher["p99_ttft_ms"] > 10 * low["p99_ttft_ms"]


def test_the_model_keeps_prefix_caching_on_and_async_scheduling_off(monkeypatch):
    made = []
    original = perf_model.Scheduler

    def spy(config, kv_cache_manager):
        made.append((config, kv_cache_manager))
        return original(config, kv_cache_manager)

    monkeypatch.setattr(perf_model, "Scheduler", spy)
    serve([0.0], input_len=10, output_len=2)
    config, kv_cache_manager = made[0]
    assert isinstance(kv_cache_manager, PrefixCache)
    assert config.async_scheduling is False


def test_bad_rates_are_refused():
    with pytest.raises(ValueError, match="request rate must be a number above 0"):
        arrivals(0, 10)
    with pytest.raises(ValueError, match="count must be an integer"):
        arrivals(1.0, 0)


def test_step_costs_time_only_batches_the_labs_kv_cache_holds(capsys):
    """The lab's --kv-cache-memory-bytes 7 GiB is 8,192 blocks of 16 tokens; a request of
    1,024 + 128 tokens takes 72 of them at its end, so 113 fit at once. step_costs.py times
    decode steps up to that batch and marks a larger one as not reachable."""
    import runpy

    import step_costs

    assert perf_model.NUM_GPU_BLOCKS == 8192 and step_costs.BLOCKS_PER_REQUEST == 72
    assert step_costs.MOST_REQUESTS == 113
    runpy.run_path(step_costs.__file__, run_name="__main__")
    lines = [line for line in capsys.readouterr().out.splitlines() if "a decode step, batch" in line]
    timed = [int(line.split("batch")[1].split(":")[0]) for line in lines if "ms," in line]
    assert timed and max(timed) == 113
    assert [line for line in lines if "not reachable" in line] == [
        "a decode step, batch 256: not reachable: 8,192 blocks hold 113 requests of 72 blocks"]
