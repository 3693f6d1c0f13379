"""Lesson 7's formulas and greedy verification, on cases worked by hand from vLLM 0.26.0's
rule (vllm/v1/sample/rejection_sampler.py: rejection_greedy_sample_kernel), and the
expected tokens per step against a count over every accept/reject pattern."""

import itertools

import pytest
from spec_decode import expected_tokens, verify


@pytest.mark.parametrize(
    ("target", "drafts", "accepted", "added"),
    [
        ([11, 12, 13, 99], [11, 12, 13], [11, 12, 13], 99),  # all pass: the bonus
        ([11, 12, 13, 99], [11, 42, 13], [11], 12),  # stop at the first mismatch
        ([11, 12, 13, 99], [7, 12, 13], [], 11),  # a later match does not count
        ([5], [], [], 5),  # no drafts: a plain decode step
    ],
)
def test_greedy_verification(target, drafts, accepted, added):
    assert verify(target, drafts) == (accepted, added)


def test_verification_refuses_a_target_of_the_wrong_length():
    with pytest.raises(ValueError, match="one choice more"):
        verify([1, 2], [1, 2])


@pytest.mark.parametrize(("a", "k"), [(0.0, 3), (0.3, 1), (0.7, 4), (0.9, 6), (1.0, 5)])
def test_expected_tokens_is_the_mean_over_every_pattern(a, k):
    """Each draft passes with probability a until the first rejection; a step yields the
    accepted drafts plus one token. Sum over all 2**k patterns, weighted."""
    mean = 0.0
    for pattern in itertools.product([True, False], repeat=k):
        p = 1.0
        for passed in pattern:
            p *= a if passed else 1 - a
        run = next((i for i, passed in enumerate(pattern) if not passed), k)
        mean += p * (run + 1)
    assert expected_tokens(a, k) == pytest.approx(mean)


@pytest.mark.parametrize(("a", "k"), [(-0.1, 3), (1.5, 3), (0.5, -1), (0.5, 2.0)])
def test_expected_tokens_refuses_bad_input(a, k):
    with pytest.raises(ValueError):
        expected_tokens(a, k)


@pytest.mark.parametrize(("a", "k"), [(0.3, 2), (0.7, 3), (0.9, 6)])
def test_vllms_overall_rate_is_not_the_formulas_a(a, k):
    """The page: vLLM's overall rate (accepted / draft tokens) counts the k drafts of every
    verification, those after the first rejection too, so it is (a + ... + a^k) / k, below
    a; position 0 accepts with probability a."""
    accepted = position_0 = 0.0
    for pattern in itertools.product([True, False], repeat=k):
        p = 1.0
        for passed in pattern:
            p *= a if passed else 1 - a
        accepted += p * next((i for i, passed in enumerate(pattern) if not passed), k)
        position_0 += p * pattern[0]
    overall = accepted / k
    assert overall == pytest.approx(sum(a**i for i in range(1, k + 1)) / k)
    assert overall == pytest.approx((expected_tokens(a, k) - 1) / k)
    assert overall < a
    assert position_0 == pytest.approx(a)


def test_the_engine_loop_refuses_a_prompt_without_room_for_output():
    from spec_scheduler import Request, run

    with pytest.raises(ValueError, match="no room"):
        run([Request("a", [1] * 8, [1] * 10, max_tokens=5)], 3, 1, 2, max_model_len=8)
    steps, _ = run([Request("a", [1] * 7, [1] * 10, max_tokens=5)], 3, 1, 2, max_model_len=8)
    assert [s.new_tokens["a"] for s in steps] == [[1]] and steps[-1].finished == ["a"]
