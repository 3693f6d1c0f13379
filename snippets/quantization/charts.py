"""This lesson's charts, computed with quant_memory.py; coursekit/charts.py draws them
(npm run charts)."""

from kv_cache_size import GIB
from quant_memory import FORMATS, decode_floor_ms, kv_left, weight_bytes

MODELS = ["Qwen2.5-7B-Instruct", "Llama-3.1-8B-Instruct"]
X = list(range(len(FORMATS)))
FORMAT_AXIS = {
    "label": {"zh": "权重格式", "en": "Weight format"},
    "ticks": [X, list(FORMATS)],
}


def per_format(title: dict, y_label: dict, value) -> dict:
    return {
        "title": title,
        "x": FORMAT_AXIS,
        "y": {"label": y_label},
        "series": [
            {"label": name, "x": X, "y": [value(name, fmt) for fmt in FORMATS]}
            for name in MODELS
        ],
    }


def charts() -> dict[str, dict]:
    return {
        "quant-weight-gib": per_format(
            {"zh": "每种格式的权重大小", "en": "Weights per format"},
            {"zh": "权重（GiB）", "en": "Weights (GiB)"},
            lambda name, fmt: round(weight_bytes(name, fmt) / GIB, 2),
        ),
        "quant-kv-left": per_format(
            {
                "zh": "24 GiB × 0.92 剩下的 KV 能放几条 8,192 token 的序列（不计激活）",
                "en": "Sequences of 8,192 tokens the KV memory left of 24 GiB × 0.92"
                " holds (activations left out)",
            },
            {"zh": "满长序列（KV 为 bf16）", "en": "Full-length sequences (bf16 KV)"},
            lambda name, fmt: kv_left(name, fmt, 8192).num_blocks // 512,
        ),
        "quant-decode-floor": per_format(
            {
                "zh": "batch 1、1,024 token 时一步 decode 的带宽下限（1008 GB/s）",
                "en": "Decode floor of one step, batch 1, 1,024 tokens (1008 GB/s)",
            },
            {"zh": "每步毫秒数（下限）", "en": "Milliseconds per step (floor)"},
            lambda name, fmt: round(decode_floor_ms(name, fmt, 1, 1024), 2),
        ),
    }
