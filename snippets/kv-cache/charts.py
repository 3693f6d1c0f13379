"""The KV cache lesson's two charts, computed with the lesson's own code.

coursekit/charts.py draws them (npm run charts) into charts/<name>.<language>.svg;
the tests find an SVG stale when its numbers or labels no longer match these.
"""

from dataclasses import replace

from hf_config import bytes_per_token, presets
from kv_cache_size import GIB, ModelConfig
from kv_capacity import predict

CONTEXTS = [2**k for k in range(10, 18)]  # 1,024 to 131,072 tokens
QWEN_CONTEXTS = CONTEXTS[:6]  # up to Qwen2.5-7B's own 32,768
MODELS = [
    "Qwen2.5-7B-Instruct",
    "Llama-3.1-8B-Instruct",
    "Qwen2.5-72B-Instruct",
    "Llama-2-7B (MHA)",
    "DeepSeek-V3 (MLA)",
]

# The second chart: Qwen2.5-7B served by vLLM on one 24 GB card, activations left out.
QWEN_PARAMETERS = 7.61e9
GPU_GIB, UTILIZATION = 24, 0.92
WEIGHTS = {  # bytes per parameter, label
    "bf16": (2, {"zh": "BF16 权重", "en": "BF16 weights"}),
    "awq": (0.5, {"zh": "AWQ 4-bit 权重", "en": "AWQ 4-bit weights"}),
}
KV_DTYPES = {  # bytes per element, label
    2: {"zh": "BF16 KV 缓存", "en": "BF16 KV cache"},
    1: {"zh": "FP8 KV 缓存", "en": "FP8 KV cache"},
}

CONTEXT = {"zh": "上下文长度（token）", "en": "Context length (tokens)"}


def context_axis(contexts: list[int]) -> dict:
    ticks = [f"{n // 1024}k" for n in contexts]
    return {"label": CONTEXT, "scale": "log", "ticks": [contexts, ticks]}


def kv_vs_context() -> dict:
    configs = presets()
    return {
        "title": {
            "zh": "KV 缓存随上下文长度增长",
            "en": "The KV cache grows with the context",
        },
        "x": context_axis(CONTEXTS),
        "y": {
            "label": {
                "zh": "每条序列的 KV 缓存（GiB，BF16）",
                "en": "KV cache per sequence (GiB, BF16)",
            },
            "scale": "log",
        },
        "series": [
            {
                "label": name,
                "x": CONTEXTS,
                "y": [
                    round(bytes_per_token(configs[name]) * n / GIB, 4) for n in CONTEXTS
                ],
            }
            for name in MODELS
        ],
    }


def sequences_that_fit(model: ModelConfig, weights_bytes: int) -> list[int]:
    kv_memory = int(GPU_GIB * GIB * UTILIZATION) - weights_bytes
    return [int(predict(model, kv_memory, n).max_concurrency) for n in QWEN_CONTEXTS]


def sequences_on_24gb() -> dict:
    qwen = presets()["Qwen2.5-7B-Instruct"]
    series = []
    for bytes_per_parameter, weights_label in WEIGHTS.values():
        weights_bytes = int(QWEN_PARAMETERS * bytes_per_parameter)
        for dtype_bytes, kv_label in KV_DTYPES.items():
            model = replace(qwen, dtype_bytes=dtype_bytes)
            label = {
                language: f"{weights_label[language]} · {kv_label[language]}"
                for language in ("zh", "en")
            }
            y = sequences_that_fit(model, weights_bytes)
            series.append({"label": label, "x": QWEN_CONTEXTS, "y": y})
    return {
        "title": {
            "zh": "Qwen2.5-7B 在一张 24 GB 显卡上"
            "（gpu_memory_utilization 0.92，不计激活）",
            "en": "Qwen2.5-7B on one 24 GB card"
            " (gpu_memory_utilization 0.92, activations left out)",
        },
        "x": context_axis(QWEN_CONTEXTS),
        "y": {
            "label": {
                "zh": "能同时放下的满长序列",
                "en": "Full-length sequences that fit at once",
            },
            "scale": "log",
        },
        "series": series,
    }


def charts() -> dict[str, dict]:
    return {
        "kv-vs-context": kv_vs_context(),
        "sequences-on-24gb": sequences_on_24gb(),
    }
