"""What the KV cache explorer on the lesson page computes, written in Python.

The page's widget does the same arithmetic in JavaScript; the tests check that both show
the same numbers for every preset and for random settings.
"""

from dataclasses import dataclass

from hf_config import MLAConfig, Preset, bytes_per_token, read_presets
from kv_cache_size import GIB, ModelConfig
from kv_capacity import GPU_GIB, predict
from model_weights import LINEAR_BYTES, count, linear_layers, weight_bytes

WEIGHT_BYTES = (
    LINEAR_BYTES  # bytes per parameter, when only the parameter count is known
)
# FP8 keeps one float32 scale per linear layer (vllm/model_executor/layers/
# quantization/online/fp8.py: Fp8PerTensorOnlineLinearMethod).
FP8_SCALE_BYTES = 4


def preset_weight_bytes(preset: Preset, precision: str) -> int:
    """A preset's weights, from its layers (model_weights.py): the linear layers at
    WEIGHT_BYTES[precision] per weight plus FP8's scales, the rest 16-bit. Lesson 4's
    quant_memory.py counts the same bytes tensor by tensor."""
    layers = sum(n for *_, n in linear_layers(preset.config))
    scales = FP8_SCALE_BYTES * layers if precision == "fp8" else 0
    return weight_bytes(count(preset.config), precision) + scales


def custom_weight_bytes(parameters_billion: float, precision: str) -> int:
    """A custom model's weights from its parameter count alone, all of them quantized
    (too low: embeddings and lm_head stay 16-bit in FP8 and AWQ checkpoints)."""
    return int(parameters_billion * 1e9 * WEIGHT_BYTES[precision])


@dataclass(frozen=True)
class Settings:
    model: ModelConfig | MLAConfig
    attention_heads: int  # for the MHA comparison
    seq_len: int
    batch: int
    gpu_gib: float  # memory of the card
    utilization: float  # vLLM's gpu_memory_utilization
    weights_bytes: int
    block_size: int = 16


@dataclass(frozen=True)
class Fit:
    """One way of caching K and V, and how much of it the KV memory holds: None for
    the last three when the weights leave no memory for KV."""

    bytes_per_token: int
    gib_per_sequence: float
    num_blocks: int | None
    max_concurrency: float | None  # as vLLM computes it
    sequences: int | None  # full-length sequences that fit at once


@dataclass(frozen=True)
class Exploration:
    model: ModelConfig | MLAConfig
    cache: Fit
    gib_total: float  # the whole batch
    weights_gib: float
    kv_memory_gib: float | None  # None when the weights do not fit
    mha: Fit | None  # the same model with MHA; None for latent attention


def explore(s: Settings) -> Exploration:
    """The explorer's numbers; shown() formats them as the page does. When the
    weights do not fit in the memory vLLM may use, what needs the card is None."""
    kv_memory = int(s.gpu_gib * GIB * s.utilization) - s.weights_bytes
    fits = kv_memory > 0
    blocks_per_sequence = -(-s.seq_len // s.block_size)

    def fit(model: ModelConfig | MLAConfig) -> Fit:
        per_token = bytes_per_token(model)
        per_sequence = per_token * s.seq_len / GIB
        if not fits:
            return Fit(per_token, per_sequence, None, None, None)
        capacity = predict(model, kv_memory, s.seq_len, s.block_size)
        return Fit(
            per_token,
            per_sequence,
            capacity.num_blocks,
            capacity.max_concurrency,
            capacity.num_blocks // blocks_per_sequence,
        )

    cache, mha, m = fit(s.model), None, s.model
    if isinstance(m, ModelConfig):  # the same layers, a K and V per attention head
        heads = s.attention_heads
        mha = fit(ModelConfig("MHA", m.num_layers, heads, m.head_dim, m.dtype_bytes))
    gib_total = cache.bytes_per_token * s.seq_len * s.batch / GIB
    kv_memory_gib = kv_memory / GIB if fits else None
    return Exploration(m, cache, gib_total, s.weights_bytes / GIB, kv_memory_gib, mha)


def shown(e: Exploration) -> dict[str, str]:
    """The outputs as the page shows them: "—" where one does not apply (MHA, for
    latent attention) or cannot be computed (what needs the card, when the weights
    do not fit)."""
    m, per_token, mha = e.model, e.cache.bytes_per_token, e.mha

    def show(value: float | None, spec: str) -> str:
        return "—" if value is None else format(value, spec)

    if isinstance(m, ModelConfig):
        formula = f"2 × {m.num_layers} × {m.num_kv_heads} × {m.head_dim}"
    else:
        formula = f"{m.num_layers} × ({m.kv_lora_rank} + {m.qk_rope_head_dim})"
    return {
        "bytes_per_token": f"{per_token:,}",
        "kib_per_token": f"{per_token / 1024:.1f}",
        "gib_per_sequence": f"{e.cache.gib_per_sequence:.2f}",
        "gib_total": f"{e.gib_total:.2f}",
        "weight_memory_gib": f"{e.weights_gib:.2f}",
        "kv_memory_gib": show(e.kv_memory_gib, ".2f"),
        "num_blocks": show(e.cache.num_blocks, ","),
        "max_concurrency": show(e.cache.max_concurrency, ".2f"),
        "sequences": show(e.cache.sequences, ","),
        "formula": f"{formula} × {m.dtype_bytes} = {per_token:,}",
        "mha_kib_per_token": show(mha.bytes_per_token / 1024 if mha else None, ".1f"),
        "mha_gib_per_sequence": show(mha.gib_per_sequence if mha else None, ".2f"),
        "mha_sequences": show(mha.sequences if mha else None, ","),
    }


if __name__ == "__main__":
    qwen = read_presets()["Qwen2.5-7B-Instruct"]
    settings = Settings(
        qwen.model,
        qwen.attention_heads,
        seq_len=8192,
        batch=1,
        gpu_gib=GPU_GIB,
        utilization=0.92,
        weights_bytes=preset_weight_bytes(qwen, "bf16"),
    )
    for key, value in shown(explore(settings)).items():
        print(f"{key:>20}: {value}")
