"""Calculator configs from a Hugging Face config.json, and the model presets."""

import json
from dataclasses import dataclass
from pathlib import Path

from kv_cache_size import ModelConfig, kv_bytes_per_token

PRESETS = Path(__file__).with_name("model_presets.json")


@dataclass(frozen=True)
class MLAConfig:
    """DeepSeek-style latent attention: one shared latent per token and layer."""

    name: str
    num_layers: int
    kv_lora_rank: int  # width of the compressed K/V latent
    qk_rope_head_dim: int  # width of the rotary-position part, cached beside it
    dtype_bytes: int = 2


def bytes_per_token(cfg: ModelConfig | MLAConfig) -> int:
    if isinstance(cfg, MLAConfig):
        # No factor 2: K and V are both rebuilt from the one cached latent.
        width = cfg.kv_lora_rank + cfg.qk_rope_head_dim
        return cfg.num_layers * width * cfg.dtype_bytes
    return kv_bytes_per_token(cfg)


def _field(config: dict, key: str, where: str) -> int:
    if key not in config:
        raise ValueError(f"{where}: missing field {key!r}")
    value = config[key]
    if type(value) is not int or value <= 0:
        raise ValueError(
            f"{where}: field {key!r} must be a positive integer, got {value!r}"
        )
    return value


def from_hf_config(
    config: dict | str | Path, name: str | None = None, dtype_bytes: int = 2
) -> ModelConfig | MLAConfig:
    """A config.json (its path, or the dict it holds) -> the calculator's config."""
    where = "config.json"
    if not isinstance(config, dict):
        where = str(config)
        try:
            config = json.loads(Path(config).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise ValueError(f"{where}: cannot read it as JSON: {error}") from None
        if not isinstance(config, dict):
            raise ValueError(f"{where}: expected a JSON object")
    name = name or config.get("_name_or_path", "model")
    layers = _field(config, "num_hidden_layers", where)
    if "kv_lora_rank" in config:
        rank = _field(config, "kv_lora_rank", where)
        rope = _field(config, "qk_rope_head_dim", where)
        return MLAConfig(name, layers, rank, rope, dtype_bytes)
    heads = _field(config, "num_attention_heads", where)
    kv_heads = (
        _field(config, "num_key_value_heads", where)
        if "num_key_value_heads" in config
        else heads
    )  # older MHA configs omit it
    if config.get("head_dim") is not None:
        head_dim = _field(config, "head_dim", where)
    else:
        hidden = _field(config, "hidden_size", where)
        if hidden % heads:
            raise ValueError(
                f"{where}: hidden_size {hidden} is not a multiple of"
                f" num_attention_heads {heads}; give 'head_dim'"
            )
        head_dim = hidden // heads
    return ModelConfig(name, layers, kv_heads, head_dim, dtype_bytes)


@dataclass(frozen=True)
class Preset:
    """One model of model_presets.json, as every user of the presets reads it."""

    name: str
    model: ModelConfig | MLAConfig  # what from_hf_config reads from its config.json
    attention_heads: int
    parameters_billion: float  # as its model card rounds it
    max_position_embeddings: int  # the longest context it was trained for, without YaRN
    source: str  # the config.json it was copied from
    config: dict  # the fields copied from it (model_weights.py reads the others)


def read_presets(path: Path = PRESETS) -> dict[str, Preset]:
    presets = {}
    for m in json.loads(path.read_text(encoding="utf-8"))["models"]:
        where = f"{path.name}, {m['name']}"
        presets[m["name"]] = Preset(
            m["name"],
            from_hf_config(m["config"], m["name"]),
            _field(m["config"], "num_attention_heads", where),
            m["parameters_billion"],
            _field(m["config"], "max_position_embeddings", where),
            m["source"],
            m["config"],
        )
    return presets


def presets(path: Path = PRESETS) -> dict[str, ModelConfig | MLAConfig]:
    return {name: preset.model for name, preset in read_presets(path).items()}


if __name__ == "__main__":
    # max_position_embeddings: the context length config.json gives, the default of
    # vLLM's max_model_len (a model card may advertise more, with YaRN rope scaling).
    print(
        f"{'model':<26} {'KiB/token':>9} {'max_position_embeddings':>23} GiB/sequence"
    )
    for p in read_presets().values():
        per_token = bytes_per_token(p.model)
        context = p.max_position_embeddings
        print(
            f"{p.name:<26} {per_token / 1024:>9.1f} {context:>23,}"
            f" {per_token * context / 1024**3:>12.2f}"
        )
