"""serving_metrics.py computes what `vllm bench serve` computes with numpy, to the last bit:
mean (pairwise summation), std, median and percentile (linear interpolation) against numpy
itself on random series; TPOT, goodput and the one-token rule as calculate_metrics has them;
bad input gets a ValueError naming what is wrong."""

import random

import numpy as np
import pytest
from serving_metrics import goodput, mean, median, percentile, request_metrics, std, summary


def series(rng, n):
    scale = rng.choice([1e-3, 1.0, 37.0])
    return [rng.expovariate(1.0) * scale for _ in range(n)]


@pytest.mark.parametrize("seed", range(40))
def test_statistics_are_numpys_to_the_last_bit(seed):
    rng = random.Random(seed)
    for n in (1, 2, 7, 8, 9, 127, 128, 129, 300, rng.randint(1, 3000)):
        values = series(rng, n)
        assert mean(values) == np.mean(values)
        assert std(values) == np.std(values)
        assert median(values) == np.median(values)
        for p in (0, 1, 25, 50, 90, 99, 99.9, 100, rng.uniform(0, 100)):
            assert percentile(values, p) == np.percentile(values, p), (n, p)


def test_empty_metrics_are_zero_as_vllm_reports_them():
    assert mean([]) == std([]) == median([]) == percentile([], 99) == 0.0


def test_one_token_request_has_tpot_zero_and_no_tpot_statistic():
    one = request_metrics(1.0, [1.5])
    assert one == {"ttft": 0.5, "tpot": 0.0, "itls": [], "e2el": 0.5, "output_tokens": 1}
    two = request_metrics(0.0, [0.5, 0.5, 1.25])
    assert two["tpot"] == 0.375 and two["itls"] == [0.0, 0.75]
    stats = summary([one, two])
    assert stats["mean_tpot_ms"] == 375.0  # the one-token request is left out
    assert stats["mean_ttft_ms"] == 500.0
    # ... but counts with TPOT 0 for goodput: both meet a 100 ms TPOT SLO? one does.
    assert goodput([one, two], {"tpot": 100}, 2.0) == 0.5
    assert goodput([one, two], {"ttft": 500, "tpot": 375}, 1.0) == 2.0


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="at least one token"):
        request_metrics(0.0, [])
    with pytest.raises(ValueError, match="go back in time"):
        request_metrics(1.0, [0.5])
    with pytest.raises(ValueError, match="token_times must be numbers"):
        request_metrics(0.0, ["1"])
    with pytest.raises(ValueError, match="percentile is a number from 0 to 100"):
        percentile([1.0], 101)
    with pytest.raises(ValueError, match="an SLO is one of ttft, tpot, e2el"):
        goodput([], {"itl": 5}, 1.0)
    with pytest.raises(ValueError, match="duration must be more than 0"):
        goodput([], {"ttft": 5}, 0)


def test_tpot_divides_by_the_token_count_not_the_chunks():
    """vllm/benchmarks/serve.py: calculate_metrics divides by the usage's completion_tokens:
    three chunks carrying 7 tokens (speculative decoding, stream_interval) give TPOT over 6
    gaps, while the ITLs stay one per chunk."""
    chunks = [0.5, 0.6, 0.9]
    by_chunk, by_usage = request_metrics(0.0, chunks), request_metrics(0.0, chunks, output_tokens=7)
    assert by_chunk["tpot"] == pytest.approx(0.4 / 2) and by_usage["tpot"] == pytest.approx(0.4 / 6)
    assert by_usage["itls"] == by_chunk["itls"] and by_usage["output_tokens"] == 7
    for bad in (2, 0, 2.5, True, "7"):
        with pytest.raises(ValueError, match="output_tokens must be a whole number of at least 3"):
            request_metrics(0.0, chunks, output_tokens=bad)
