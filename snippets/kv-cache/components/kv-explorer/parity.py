"""The explorer's parity contract: for each link, what the page must show.

tests/test_components.py opens the page with each of cases() in its link and compares
what every [data-key] output shows with expected(state), which explorer.py computes.
"""

import random
from dataclasses import replace

from explorer import (
    Settings,
    custom_weight_bytes,
    explore,
    preset_weight_bytes,
    shown,
)
from hf_config import read_presets
from kv_cache_size import GIB, ModelConfig

DEFAULTS = {
    "kv_dtype": "2",
    "gpu": "80",
    "weight_dtype": "awq",
    "seq_len": "8192",
    "batch": "4",
    "utilization": "0.92",
    "block_size": "16",
}
# A wrong formula the check must catch: script.js without the factor 2 for K and V.
BROKEN = ("2 * v.layers * v.kv_heads", "v.layers * v.kv_heads")


def random_state(rng: random.Random) -> dict[str, str]:
    layers = rng.randint(1, 96)
    heads = rng.choice([8, 16, 28, 32, 40, 64, 128])
    state = {
        "model": "custom",
        "layers": layers,
        "attention_heads": heads,
        "kv_heads": rng.choice([h for h in (1, 2, 4, 8, 16, heads) if h <= heads]),
        "head_dim": rng.choice([64, 80, 96, 128, 256]),
        "kv_dtype": rng.choice(["2", "1:fp8", "1:int8"]),
        "seq_len": rng.randint(1, 131072),
        "batch": rng.randint(1, 64),
        "gpu": "custom",
        "gpu_gib": round(rng.uniform(8, 192), 2),
        "utilization": round(rng.uniform(0.5, 1.0), 3),
        "block_size": rng.choice([8, 16, 32, 64]),
    }
    if rng.random() < 0.5:
        state |= {
            "weight_dtype": "custom",
            "weights_gib": round(rng.uniform(0.5, 60), 2),
        }
    else:
        state |= {
            "weight_dtype": rng.choice(["bf16", "fp8", "awq"]),
            "params_billion": round(rng.uniform(0.5, 80), 2),
        }
    return {key: str(value) for key, value in state.items()}


def cases() -> list[dict[str, str]]:
    """Every preset with the same settings, then 40 random custom models."""
    presets = [DEFAULTS | {"model": name} for name in read_presets()]
    return presets + [random_state(random.Random(seed)) for seed in range(40)]


def settings(state: dict[str, str]) -> Settings:
    """The settings a link gives the page, as the page reads its form."""
    dtype = int(state["kv_dtype"].split(":")[0])
    preset = read_presets().get(state["model"])
    if preset:
        model = replace(preset.model, dtype_bytes=dtype)
        heads = preset.attention_heads
    else:
        shape = [int(state[key]) for key in ("layers", "kv_heads", "head_dim")]
        model = ModelConfig("custom", *shape, dtype)
        heads = int(state["attention_heads"])
    if state["weight_dtype"] == "custom":
        weights = int(float(state["weights_gib"]) * GIB)
    elif preset:  # counted from its architecture
        weights = preset_weight_bytes(preset, state["weight_dtype"])
    else:
        weights = custom_weight_bytes(
            float(state["params_billion"]), state["weight_dtype"]
        )
    gpu = state["gpu_gib"] if state["gpu"] == "custom" else state["gpu"]
    return Settings(
        model,
        heads,
        int(state["seq_len"]),
        int(state["batch"]),
        float(gpu),
        float(state["utilization"]),
        weights,
        int(state["block_size"]),
    )


def expected(state: dict[str, str]) -> dict[str, str] | str:
    """What each output shows, or "error" where the page shows its error instead."""
    try:
        return shown(explore(settings(state)))
    except ValueError:
        return "error"
