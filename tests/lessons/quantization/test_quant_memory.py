"""quant_memory.py: each format counts what the page says, the KV and decode numbers use
lesson 1's code, and bad input raises a ValueError that names the problem."""

import pytest
from hf_config import bytes_per_token, read_presets
from kv_cache_size import GIB
from kv_capacity import predict
from model_weights import LINEAR_BYTES, count, linear_layers
from model_weights import weight_bytes as lesson1_weight_bytes
from quant_memory import (
    FORMATS,
    decode_floor_ms,
    kv_left,
    layer_bytes,
    weight_bytes,
)

PRESETS = read_presets()
QWEN = "Qwen2.5-7B-Instruct"


def test_one_layer_in_each_format():
    k, n = 256, 16  # two groups of 128 inputs, 16 outputs
    assert layer_bytes(k, n, "bf16") == 2 * k * n
    assert layer_bytes(k, n, "fp8") == k * n + 4  # one float32 scale
    # 4-bit weights, an fp16 scale per group and output, AWQ: a 4-bit zero point too.
    assert layer_bytes(k, n, "gptq-int4-g128") == k * n // 2 + 2 * 2 * n
    assert layer_bytes(k, n, "awq-int4-g128") == k * n // 2 + 2 * 2 * n + 2 * n // 2


def test_qwen_7b_tensor_by_tensor():
    h, kv, inter, vocab, layers = 3584, 512, 18944, 152064, 28
    shapes = [(h, h + 2 * kv), (h, h), (h, 2 * inter), (inter, h)]
    other = 2 * vocab * h + (2 * layers + 1) * h + layers * (h + 2 * kv)  # + biases
    for fmt in FORMATS:
        linear = layers * sum(layer_bytes(i, o, fmt) for i, o in shapes)
        assert weight_bytes(QWEN, fmt) == linear + 2 * other
    assert weight_bytes(QWEN, "awq-int4-g128") == 5_570_747_392


@pytest.mark.parametrize("name", PRESETS)
def test_bf16_and_awq_agree_with_lesson_1(name):
    # Lesson 1's per-parameter rates give the same bytes when every shape divides evenly.
    n = count(PRESETS[name].config)
    assert weight_bytes(name, "bf16") == lesson1_weight_bytes(n, "bf16")
    assert weight_bytes(name, "awq-int4-g128") == lesson1_weight_bytes(n, "awq")
    assert LINEAR_BYTES["awq"] * 8 == 4 + 20 / 128


def test_linear_layers_add_up_to_the_count():
    config = PRESETS[QWEN].config
    linear = sum(n * i * o for _, i, o, n in linear_layers(config))
    assert linear == count(config).linear


def test_kv_left_is_lesson_1s_prediction():
    memory = int(23.64 * GIB * 0.92) - weight_bytes(QWEN, "bf16")
    assert kv_left(QWEN, "bf16", 8192) == predict(PRESETS[QWEN].model, memory, 8192)
    assert kv_left(QWEN, "awq-int4-g128", 8192, kv_bytes=1).num_blocks == 38_761


def test_decode_floor():
    """Every weight once, but of the 152,064 x 3,584 bf16 input embedding table only the
    16 rows the batch gathers; lm_head in full; plus the KV."""
    kv = bytes_per_token(PRESETS[QWEN].model) * 1024 * 16
    weights = weight_bytes(QWEN, "fp8") - 152064 * 3584 * 2 + 16 * 3584 * 2
    expected = (weights + kv) / 1008e9 * 1000
    assert decode_floor_ms(QWEN, "fp8", 16, 1024) == pytest.approx(expected)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: weight_bytes("Qwen9-1T", "bf16"), "unknown preset 'Qwen9-1T'"),
        (lambda: weight_bytes(QWEN, "int3"), "unknown format 'int3'"),
        (lambda: layer_bytes(100, 16, "awq-int4-g128"), "multiple of the group size"),
        (lambda: layer_bytes(128, 12, "gptq-int4-g128"), "out_features of 8"),
        (lambda: kv_left(QWEN, "bf16", 0), "max_model_len must be positive"),
        (lambda: kv_left(QWEN, "bf16", 8192, kv_bytes=4), "kv_bytes must be"),
        (lambda: kv_left("Qwen2.5-72B-Instruct", "bf16", 8192), "does not fit"),
        (lambda: decode_floor_ms(QWEN, "bf16", 0, 1024), "must be positive"),
    ],
)
def test_bad_input_names_the_problem(call, message):
    with pytest.raises(ValueError, match=message):
        call()
