"""Lesson 10's code: the sampler's rules on the page's worked example and on edges, the
Hermes parser's whole and streamed results, the mask and its packing, the split sum, and
the GPU check's own parsers. vLLM's side of the same rules: tests/conformance/
test_sampling_and_tools_conformance.py."""

import math

import pytest
from determinism import TERMS_A, TERMS_B, split_sum
from lab_answers import lab_json_problems, logprob_problems
from sampling import (
    EXAMPLE,
    LOGITS,
    NEG_INF,
    OUTPUT,
    PROMPT,
    VOCAB,
    Params,
    apply_top_p,
    sample,
    softmax,
    top_logprobs,
)
from structured import ALLOWED, EOS, STEP_LOGITS, allowed_tokens, bitmask, bitmask_bytes, constrained_greedy
from structured import VOCAB as TOY
from tool_calls import DELTAS, OUTPUTS, parse, stream


@pytest.mark.parametrize("bad", [
    {"temperature": -0.1}, {"temperature": 2.5}, {"top_p": 0.0}, {"top_p": 1.5}, {"top_k": -2},
    {"min_p": 1.5}, {"presence_penalty": 2.5}, {"frequency_penalty": -3.0},
    {"repetition_penalty": 0.0}, {"repetition_penalty": math.inf}, {"min_tokens": -1},
])
def test_sampling_params_refuses_what_vllm_refuses(bad):
    with pytest.raises(ValueError, match="SamplingParams needs"):
        Params(**bad)


def test_tiny_temperatures_are_raised_and_zero_is_greedy():
    assert Params(temperature=0.005).temperature == 0.01
    greedy = Params(temperature=0.0, top_p=0.5, top_k=3, min_p=0.2)
    assert greedy.greedy and (greedy.top_p, greedy.top_k, greedy.min_p) == (1.0, 0, 0.0)


def test_the_worked_example_step_by_step():
    run = sample(LOGITS, EXAMPLE, PROMPT, OUTPUT)
    stages = run["stages"]
    gone = {name: [VOCAB[i] for i, x in enumerate(row) if x == NEG_INF] for name, row in stages.items()}
    assert gone["bias"] == ["<eos>"]  # min_tokens 2, one token written
    assert gone["min_p"] == [".", "<eos>"]
    assert gone["top_k"] == ["ran", ".", "<eos>"]
    assert gone["top_p"] == ["sat", "ran", ".", "<eos>"]
    # the: in the output, so divided by 1.05, then 0.5 less; cat and sat: prompt only
    assert stages["penalties"][0] == pytest.approx(2.0 / 1.05 - 0.5)
    assert stages["penalties"][2] == pytest.approx(1.2 / 1.05)
    assert VOCAB[run["greedy"]] == "a" and VOCAB[max(range(8), key=LOGITS.__getitem__)] == "the"
    assert sum(run["probs"]) == pytest.approx(1.0)


def test_greedy_ignores_temperature_and_truncation():
    base = sample(LOGITS, Params(temperature=0.0), PROMPT, OUTPUT)
    assert "temperature" not in base["stages"] and base["token"] == base["greedy"]
    assert base["processed_logprobs"] == pytest.approx(
        [math.log(p) if p else NEG_INF for p in softmax(base["stages"]["penalties"])])


def test_top_p_keeps_the_largest_and_only_zero_probabilities_at_one():
    logits = [0.0, 1.0, 5.0, -200.0]
    assert [x == NEG_INF for x in apply_top_p(logits, 1e-9)] == [True, True, False, True]
    assert apply_top_p(logits, 1.0) == logits  # no request of the batch uses top_p
    masked = apply_top_p(logits, 1.0, batch_top_p=True)  # another one does
    assert [x == NEG_INF for x in masked] == [False, False, False, True]


def test_random_sampling_is_argmax_of_p_over_q():
    params = Params(temperature=1.0)
    noise = [1.0] * 8
    noise[5] = 1e-9  # a tiny q makes p / q huge: ran wins whatever its p
    assert VOCAB[sample(LOGITS, params, noise=noise)["token"]] == "ran"
    with pytest.raises(ValueError, match="noise"):
        sample(LOGITS, params, noise=[1.0] * 7)


def test_top_logprobs_rank_counts_ties():
    got = top_logprobs([-1.0, -0.5, -0.5, -3.0], token=2, n=2)
    assert got["rank"] == 2 and got["top"] == [(1, -0.5), (2, -0.5)]


def test_hermes_whole_outputs():
    assert parse(OUTPUTS["one call"])["content"] == "I will check.\n"
    assert len(parse(OUTPUTS["two calls"])["calls"]) == 2
    assert not parse(OUTPUTS["single quotes"])["tools_called"]
    assert parse(OUTPUTS["no tags"])["content"] == OUTPUTS["no tags"]
    assert parse('<tool_call>{"name": "f", "arguments": {"x": 1}}')["calls"] == [("f", '{"x": 1}')]
    assert not parse('<tool_call>{"name": "f"}</tool_call>')["tools_called"]


def test_hermes_streaming_sends_each_part_once():
    sent = [s for s in stream(DELTAS) if s]
    content = "".join(s["content"] or "" for s in sent)
    names = [n for s in sent for _, n, _ in s["calls"] if n]
    arguments = "".join(a for s in sent for _, _, a in s["calls"] if a)
    assert content == "I will check.\n" and names == ["get_weather"]
    assert arguments == '{"city": "Paris"}'
    # every cut of the same text streams the same parts
    text = "".join(DELTAS)
    for size in (1, 2, 5):
        pieces = [s for s in stream([text[i:i + size] for i in range(0, len(text), size)]) if s]
        assert "".join(a for s in pieces for _, _, a in s["calls"] if a) == arguments


def test_the_mask_allows_only_continuations():
    assert [t for t, ok in zip(TOY, allowed_tokens('{"unit": "')) if ok] == ["cel", "fahren"]
    assert allowed_tokens(ALLOWED[0])[EOS] and not any(allowed_tokens(ALLOWED[0])[:EOS])
    with pytest.raises(ValueError, match="outside the grammar"):
        allowed_tokens("Sure")
    steps = constrained_greedy(STEP_LOGITS)
    assert steps[-1][2] in ALLOWED and steps[0][:2] == ("Sure", '{"')


def test_bitmask_packing_and_size():
    assert bitmask([True] + [False] * 31 + [True]) == [1, 1]
    assert bitmask([False] * 31 + [True]) == [-(2**31)]  # bit 31 of a signed int32
    assert bitmask_bytes(152064, 1) == math.ceil(152064 / 32) * 4
    with pytest.raises(ValueError):
        bitmask_bytes(0, 1)


def test_the_split_sum_flips_the_argmax():
    assert split_sum(TERMS_A, 1) < sum(TERMS_B) < split_sum(TERMS_A, 2)
    assert split_sum(TERMS_A, 2) == 2.0  # the exact sum: 1 + 1
    with pytest.raises(ValueError):
        split_sum(TERMS_A, 0)


def test_the_gpu_checks_read_answers():
    assert lab_json_problems('{"city": "Paris", "unit": "celsius", "temperature": 20}') == []
    assert lab_json_problems('{"city": "Paris", "unit": "kelvin", "temperature": 20}')
    assert lab_json_problems('{"city": "Paris", "unit": "celsius", "temperature": true}')
    assert lab_json_problems('{"city": "Paris", "unit": "celsius"}') == ["missing temperature"]
    assert lab_json_problems("Sure! {") and lab_json_problems('{"city": "P", "unit": "celsius", '
                                                               '"temperature": 1, "x": 0}')
    top = [{"token": "a", "logprob": -0.1}, {"token": "b", "logprob": -2.5}]
    assert logprob_problems([{"token": "a", "logprob": -0.1, "top_logprobs": top}]) == []
    assert logprob_problems([{"token": "b", "logprob": -2.5, "top_logprobs": top}])
