"""The KV cache lesson's two charts, computed with the lesson's own code.

coursekit/charts.py draws them (npm run charts) into charts/<name>.<language>.svg;
the tests find an SVG stale when its numbers or labels no longer match these.
"""

from dataclasses import replace

from explorer import preset_weight_bytes
from hf_config import bytes_per_token, presets, read_presets
from kv_cache_size import GIB, ModelConfig
from kv_capacity import GPU_GIB, UTILIZATION, predict

CONTEXTS = [2**k for k in range(10, 18)]  # 1,024 to 131,072 tokens
QWEN_CONTEXTS = CONTEXTS[:6]  # up to Qwen2.5-7B's own 32,768
MODELS = [
    "Qwen2.5-7B-Instruct",
    "Llama-3.1-8B-Instruct",
    "Qwen2.5-72B-Instruct",
    "Llama-2-7B (MHA)",
    "DeepSeek-V3 (MLA)",
]

# The second chart: Qwen2.5-7B served by vLLM on one RTX 4090, activations left out.
MAX_NUM_SEQS = 256  # vLLM 0.26.0 runs at most 256 sequences at once on this card
WEIGHTS = {  # precision (explorer.py): label, and what kv_cache_dtype="auto" is
    "bf16": ({"zh": "BF16 权重", "en": "BF16 weights"}, "BF16"),
    "awq": ({"zh": "AWQ 4-bit 权重", "en": "AWQ 4-bit weights"}, "FP16"),
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
    """Full-length sequences vLLM runs at once: as many as fit, at most MAX_NUM_SEQS."""
    kv_memory = int(GPU_GIB * GIB * UTILIZATION) - weights_bytes
    fit = [int(predict(model, kv_memory, n).max_concurrency) for n in QWEN_CONTEXTS]
    return [min(n, MAX_NUM_SEQS) for n in fit]


def sequences_on_24gb() -> dict:
    preset = read_presets()["Qwen2.5-7B-Instruct"]
    series = []
    for precision, (weights_label, auto) in WEIGHTS.items():
        weights_bytes = preset_weight_bytes(preset, precision)
        for dtype_bytes, kv in ((2, f"auto ({auto})"), (1, "fp8")):
            model = replace(preset.model, dtype_bytes=dtype_bytes)
            label = {
                language: f"{weights_label[language]} · KV {kv}"
                for language in ("zh", "en")
            }
            y = sequences_that_fit(model, weights_bytes)
            series.append({"label": label, "x": QWEN_CONTEXTS, "y": y})
    return {
        "title": {
            "zh": f"Qwen2.5-7B 在一张 RTX 4090（{GPU_GIB} GiB）上"
            "（gpu_memory_utilization 0.92，不计激活）",
            "en": f"Qwen2.5-7B on one RTX 4090 ({GPU_GIB} GiB)"
            " (gpu_memory_utilization 0.92, activations left out)",
        },
        "x": context_axis(QWEN_CONTEXTS),
        "y": {
            "label": {
                "zh": f"同时运行的满长序列（max_num_seqs 上限 {MAX_NUM_SEQS}）",
                "en": f"Full-length sequences at once (max_num_seqs: {MAX_NUM_SEQS})",
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
