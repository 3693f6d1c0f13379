"""The calculator of the KV cache lesson, used as a module."""

import pytest
from kv_cache_size import ModelConfig, gib, kv_bytes, kv_bytes_per_token

QWEN = dict(name="Qwen2.5-7B-Instruct", num_layers=28, num_kv_heads=4, head_dim=128)


def test_formula():
    qwen = ModelConfig(**QWEN)
    assert kv_bytes_per_token(qwen) == 2 * 28 * 4 * 128 * 2 == 57344
    assert kv_bytes(qwen, seq_len=32768, batch=8) == 57344 * 32768 * 8
    assert gib(kv_bytes(qwen, 32768)) == 1.75
    assert kv_bytes_per_token(ModelConfig(**QWEN, dtype_bytes=1)) == 57344 // 2


@pytest.mark.parametrize("field", ["num_layers", "num_kv_heads", "head_dim", "dtype_bytes"])
@pytest.mark.parametrize("value", [0, -1, 2.0, "8", True, None])
def test_bad_model_numbers_name_the_field(field, value):
    with pytest.raises(ValueError, match=rf"^{field} must be a positive integer, got {value!r}$"):
        ModelConfig(**{**QWEN, field: value})


@pytest.mark.parametrize("field", ["seq_len", "batch"])
@pytest.mark.parametrize("value", [-1, 1.5, "1", False])
def test_bad_lengths_name_the_field(field, value):
    arguments = {"seq_len": 8, "batch": 1, field: value}
    with pytest.raises(ValueError, match=rf"^{field} must be a non-negative integer"):
        kv_bytes(ModelConfig(**QWEN), **arguments)


def test_empty_sequence_is_allowed():
    assert kv_bytes(ModelConfig(**QWEN), seq_len=0, batch=4) == 0
