"""What the KV cache explorer on the lesson page computes, written in Python.

The page's widget does the same arithmetic in JavaScript; the tests check that both show
the same numbers for every preset and for random settings.
"""

from dataclasses import dataclass

from hf_config import MLAConfig, bytes_per_token
from kv_cache_size import GIB, ModelConfig
from kv_capacity import predict

WEIGHT_BYTES = {"bf16": 2, "fp8": 1, "awq": 0.5}  # bytes per parameter


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


def explore(s: Settings) -> dict[str, str]:
    """The explorer's outputs, formatted as the page shows them."""
    per_token = bytes_per_token(s.model)
    kv_memory = int(s.gpu_gib * GIB * s.utilization) - s.weights_bytes
    if kv_memory <= 0:
        raise ValueError("the weights do not fit in the memory vLLM may use")
    capacity = predict(s.model, kv_memory, s.seq_len, s.block_size)
    blocks_per_sequence = -(-s.seq_len // s.block_size)
    shown = {
        "bytes_per_token": f"{per_token:,}",
        "kib_per_token": f"{per_token / 1024:.1f}",
        "gib_per_sequence": f"{per_token * s.seq_len / GIB:.2f}",
        "gib_total": f"{per_token * s.seq_len * s.batch / GIB:.2f}",
        "kv_memory_gib": f"{kv_memory / GIB:.2f}",
        "num_blocks": f"{capacity.num_blocks:,}",
        "max_concurrency": f"{capacity.max_concurrency:.2f}",
        "sequences": f"{capacity.num_blocks // blocks_per_sequence:,}",
    }
    if isinstance(s.model, ModelConfig):
        m = s.model
        shown["formula"] = (
            f"2 × {m.num_layers} × {m.num_kv_heads} × {m.head_dim}"
            f" × {m.dtype_bytes} = {per_token:,}"
        )
        mha = ModelConfig(
            "MHA", m.num_layers, s.attention_heads, m.head_dim, m.dtype_bytes
        )
        mha_capacity = predict(mha, kv_memory, s.seq_len, s.block_size)
        shown["mha_kib_per_token"] = f"{bytes_per_token(mha) / 1024:.1f}"
        shown["mha_gib_per_sequence"] = f"{bytes_per_token(mha) * s.seq_len / GIB:.2f}"
        shown["mha_sequences"] = f"{mha_capacity.num_blocks // blocks_per_sequence:,}"
    else:
        m = s.model
        shown["formula"] = (
            f"{m.num_layers} × ({m.kv_lora_rank} + {m.qk_rope_head_dim})"
            f" × {m.dtype_bytes} = {per_token:,}"
        )
    return shown


if __name__ == "__main__":
    qwen = ModelConfig("Qwen2.5-7B-Instruct", 28, 4, 128, dtype_bytes=2)
    settings = Settings(
        qwen,
        attention_heads=28,
        seq_len=8192,
        batch=1,
        gpu_gib=24,
        utilization=0.92,
        weights_bytes=int(7.61e9 * 2),
    )
    for key, value in explore(settings).items():
        print(f"{key:>20}: {value}")
