"""Weights counted from the presets' architectures (model_weights.py): the counts agree with
the model cards, and the quantized sizes follow the rules the lesson states."""

import pytest
from hf_config import read_presets
from model_weights import LINEAR_BYTES, Parameters, count, weight_bytes

PRESETS = read_presets()


@pytest.mark.parametrize("name", PRESETS)
def test_count_agrees_with_the_model_card(name):
    # The cards round; Qwen2.5-32B's says 32.5B for 32.76B, the furthest off (0.8 %).
    preset = PRESETS[name]
    total = count(preset.config).total
    assert abs(total / 1e9 - preset.parameters_billion) <= 0.01 * preset.parameters_billion


def test_qwen_7b_tensor_by_tensor():
    # 28 layers of q (with bias), k, v (with bias), o, gate, up, down and two norms, untied
    # embeddings and lm_head of 152,064 x 3,584, one final norm.
    h, kv, inter, vocab = 3584, 512, 18944, 152064
    layer = (h * h + h) + 2 * (h * kv + kv) + h * h + 3 * h * inter + 2 * h
    expected = 28 * layer + 2 * vocab * h + h
    assert count(PRESETS["Qwen2.5-7B-Instruct"].config).total == expected == 7_615_616_512


def test_quantization_keeps_the_rest_16_bit():
    p = Parameters(linear=128 * 1000, other=500)
    assert weight_bytes(p, "bf16") == 2 * 128_500
    assert weight_bytes(p, "fp8") == 128_000 + 1000
    # 4 bits per weight, and a 16-bit scale and 4-bit zero point per group of 128.
    assert weight_bytes(p, "awq") == 1000 * (64 + 2 + 0.5) + 1000
    assert LINEAR_BYTES["awq"] * 8 == 4 + 20 / 128


def test_tied_embeddings_are_counted_once():
    config = dict(PRESETS["Qwen2.5-7B-Instruct"].config)
    untied = count(config).total
    config["tie_word_embeddings"] = True
    assert untied - count(config).total == 152064 * 3584


def test_other_mixtures_of_experts_are_refused():
    with pytest.raises(ValueError, match="DeepSeek's experts only"):
        count({**PRESETS["Mistral-7B-Instruct-v0.3"].config, "num_local_experts": 8})

