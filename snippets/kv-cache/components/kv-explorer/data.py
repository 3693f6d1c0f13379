"""The explorer's form, and the presets it fills in, read by the lesson's own code.

The fence names the preset shown first (`model: ...`). Each preset comes with the
numbers it puts in the form, read from its config.json by hf_config.py, and its weights
in each precision, counted layer by layer by explorer.py, so the page's script only
copies them.
"""

from coursekit.components import fence_choice
from explorer import WEIGHT_BYTES, preset_weight_bytes
from hf_config import MLAConfig, Preset, read_presets
from kv_capacity import GPU_GIB
from model_weights import count

GPUS = {
    "RTX 4090 (24 GB)": GPU_GIB,  # as CUDA reports it; the others at their nominal size
    "RTX 3090 (24 GB)": 24,
    "L40S (48 GB)": 48,
    "A100 (80 GB)": 80,
    "H100 (80 GB)": 80,
}
KV_DTYPES = {"2": "BF16 / FP16", "1:fp8": "FP8", "1:int8": "INT8"}  # bytes[:name]
WEIGHT_NAMES = {"bf16": "BF16", "fp8": "FP8", "awq": "AWQ 4-bit"}
# (input, kind, default, maximum) in the order the form shows them; kind decides the
# check. The fence's preset replaces the defaults of the fields it fills in. The maxima
# are far above any real model or card; below them every integer the page computes is
# exact in JavaScript (at most 2**53 - 1), but for the KV of a whole sequence or batch,
# which script.js checks.
FIELDS = [
    ("layers", "int", 28, 1000),
    ("kv_heads", "int", 4, 1000),
    ("head_dim", "int", 128, 4096),
    ("attention_heads", "int", 28, 1000),
    ("kv_lora_rank", "int", 512, 65536),
    ("qk_rope_head_dim", "int", 64, 4096),
    ("seq_len", "int", 8192, 10_000_000),
    ("batch", "int", 1, 100_000),
    ("gpu_gib", "number", GPU_GIB, 100_000),
    ("params_billion", "number", 7.61, 100_000),
    ("weights_gib", "number", 14, 100_000),
    ("utilization", "fraction", 0.92, 1),
    ("block_size", "int", 16, 1024),
]
# The results, in the order the table shows them: the keys of explorer.shown().
OUTPUTS = [
    "bytes_per_token",
    "kib_per_token",
    "gib_per_sequence",
    "gib_total",
    "weight_memory_gib",
    "kv_memory_gib",
    "num_blocks",
    "max_concurrency",
    "sequences",
    "formula",
    "mha_kib_per_token",
    "mha_gib_per_sequence",
    "mha_sequences",
]


def form_fields(preset: Preset) -> dict[str, int | float]:
    """What choosing a preset puts in the form (the parameter count, for a custom model
    made from it)."""
    m = preset.model
    if isinstance(m, MLAConfig):
        shape = {"kv_lora_rank": m.kv_lora_rank, "qk_rope_head_dim": m.qk_rope_head_dim}
    else:
        shape = {"kv_heads": m.num_kv_heads, "head_dim": m.head_dim}
    return {
        "layers": m.num_layers,
        **shape,
        "attention_heads": preset.attention_heads,
        "params_billion": round(count(preset.config).total / 1e9, 2),
    }


def data(options: dict) -> dict:
    presets = read_presets()
    fence_choice(options, "model", presets)
    if set(WEIGHT_NAMES) != set(WEIGHT_BYTES):
        raise ValueError("WEIGHT_NAMES and explorer.WEIGHT_BYTES name other precisions")
    first = form_fields(presets[options["model"]])
    maxima = {name: maximum for name, _, _, maximum in FIELDS}
    for p in presets.values():
        for name, value in form_fields(p).items():
            if not 0 < value <= maxima[name]:
                raise ValueError(f"{p.name}: {name} {value} is outside the form")
    return {
        "presets": [
            {
                "name": p.name,
                "mla": isinstance(p.model, MLAConfig),
                "fields": form_fields(p),
                "weights": {w: preset_weight_bytes(p, w) for w in WEIGHT_NAMES},
            }
            for p in presets.values()
        ],
        "weight_bytes": WEIGHT_BYTES,
        # Each drop-down list's choices as (value, text); "custom" comes after them.
        "choices": {
            "model": [(name, name) for name in presets],
            "kv_dtype": list(KV_DTYPES.items()),
            "gpu": [(str(gib), name) for name, gib in GPUS.items()],
            "weight_dtype": list(WEIGHT_NAMES.items()),
        },
        "inputs": [
            {"name": name, "kind": kind, "value": first.get(name, default), "max": top}
            for name, kind, default, top in FIELDS
        ],
        "outputs": OUTPUTS,
    }
