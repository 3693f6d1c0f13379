"""Calculator configs from Hugging Face config.json files that the tests write themselves."""

import json

import pytest
from hf_config import MLAConfig, bytes_per_token, from_hf_config, presets
from kv_cache_size import ModelConfig

from coursekit import ROOT

QWEN = {"num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
        "hidden_size": 3584, "max_position_embeddings": 32768}


def write(tmp_path, config) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config) if isinstance(config, dict) else config)
    return str(path)


def test_head_dim_from_hidden_size(tmp_path):
    cfg = from_hf_config(write(tmp_path, QWEN), "qwen")
    assert cfg == ModelConfig("qwen", 28, 4, 128, 2)
    assert bytes_per_token(cfg) == 57344


def test_explicit_head_dim_wins(tmp_path):
    # Qwen3-8B: hidden_size / num_attention_heads is 128 too, so make them differ.
    config = {**QWEN, "head_dim": 64}
    assert from_hf_config(write(tmp_path, config)).head_dim == 64


def test_mha_config_without_kv_heads(tmp_path):
    config = {k: v for k, v in QWEN.items() if k != "num_key_value_heads"}
    assert from_hf_config(write(tmp_path, config)).num_kv_heads == 28


def test_mla_has_no_factor_two(tmp_path):
    config = {**QWEN, "num_hidden_layers": 61, "kv_lora_rank": 512, "qk_rope_head_dim": 64}
    cfg = from_hf_config(write(tmp_path, config), "deepseek", dtype_bytes=2)
    assert cfg == MLAConfig("deepseek", 61, 512, 64, 2)
    assert bytes_per_token(cfg) == 61 * (512 + 64) * 2 == 70272


def test_dict_and_fp8(tmp_path):
    assert bytes_per_token(from_hf_config(QWEN, dtype_bytes=1)) == 28672


@pytest.mark.parametrize(("change", "message"), [
    ({"num_hidden_layers": None}, "missing field 'num_hidden_layers'"),
    ({"num_hidden_layers": 0}, "field 'num_hidden_layers' must be a positive integer, got 0"),
    ({"num_key_value_heads": 4.0}, "field 'num_key_value_heads' must be a positive integer"),
    ({"hidden_size": 3585}, "hidden_size 3585 is not a multiple of num_attention_heads 28"),
    ({"kv_lora_rank": 512}, "missing field 'qk_rope_head_dim'"),
])
def test_bad_fields_are_named(tmp_path, change, message):
    config = {**QWEN, **change}
    config = {k: v for k, v in config.items() if v is not None}
    path = write(tmp_path, config)
    with pytest.raises(ValueError, match=f"^{path}: {message}"):
        from_hf_config(path)


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_unreadable_file_is_named(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(ValueError, match=f"^{path}: "):
        from_hf_config(path)


def test_every_preset_has_its_source_and_loads():
    data = json.loads((ROOT / "snippets/kv-cache/model_presets.json").read_text())
    for model in data["models"]:
        assert model["source"].startswith("https://huggingface.co/")
        assert model["source"].endswith("/config.json")
    assert len(presets()) == len(data["models"]) >= 13


def test_head_dim_null_falls_back_to_hidden_size():
    assert from_hf_config({**QWEN, "head_dim": None}).head_dim == 128


def test_lesson_model_is_the_qwen_preset():
    """The lesson's hand-typed Qwen2.5-7B numbers are those of its config.json preset."""
    from kv_capacity import QWEN_FP8

    preset = presets()["Qwen2.5-7B-Instruct"]
    assert preset == ModelConfig("Qwen2.5-7B-Instruct", 28, 4, 128, 2)
    assert (QWEN_FP8.num_layers, QWEN_FP8.num_kv_heads, QWEN_FP8.head_dim) == (
        preset.num_layers, preset.num_kv_heads, preset.head_dim)
    for snippet in ("kv_cache_size.py", "long_context_batch.py", "fit_on_4090.py"):
        text = (ROOT / "snippets/kv-cache" / snippet).read_text()
        assert "num_layers=28, num_kv_heads=4, head_dim=128" in text, snippet
