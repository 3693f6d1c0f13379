"""KV cache size calculator: pure Python, runs offline on any CPU."""

from dataclasses import dataclass

GIB = 1024**3


@dataclass(frozen=True)
class ModelConfig:
    name: str
    num_layers: int  # L: transformer layers
    num_kv_heads: int  # n_kv: KV heads after grouping; equals attention heads for MHA
    head_dim: int  # d_h: width of one head
    dtype_bytes: int = 2  # bytes per cached element: BF16/FP16 = 2, FP8/INT8 = 1

    def __post_init__(self):
        for field in ("num_layers", "num_kv_heads", "head_dim", "dtype_bytes"):
            value = getattr(self, field)
            if type(value) is not int or value <= 0:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")


def kv_bytes_per_token(cfg: ModelConfig) -> int:
    # The leading 2 counts one K and one V vector per layer and KV head.
    return 2 * cfg.num_layers * cfg.num_kv_heads * cfg.head_dim * cfg.dtype_bytes


def kv_bytes(cfg: ModelConfig, seq_len: int, batch: int = 1) -> int:
    for field, value in (("seq_len", seq_len), ("batch", batch)):
        if type(value) is not int or value < 0:
            raise ValueError(f"{field} must be a non-negative integer, got {value!r}")
    return kv_bytes_per_token(cfg) * seq_len * batch


def gib(n_bytes: int) -> float:
    return n_bytes / GIB


if __name__ == "__main__":
    # Qwen2.5-7B-Instruct's config.json: 28 layers, 4 KV heads (GQA), head_dim 128.
    qwen = ModelConfig(
        "Qwen2.5-7B-Instruct", num_layers=28, num_kv_heads=4, head_dim=128
    )
    per_token = kv_bytes_per_token(qwen)
    print(f"{qwen.name}: {per_token} bytes/token = {per_token / 1024:.0f} KiB/token")
    for seq_len in (2048, 8192, 32768):
        size = gib(kv_bytes(qwen, seq_len))
        print(f"  seq_len={seq_len:>6}: {size:.2f} GiB (1 sequence)")

    # The same model if each of its 28 attention heads kept its own K and V (MHA).
    mha = ModelConfig("Qwen2.5-7B (MHA)", num_layers=28, num_kv_heads=28, head_dim=128)
    mha_per_token = kv_bytes_per_token(mha)
    ratio = mha_per_token / per_token
    print(f"MHA would be {ratio:.0f}x larger: {mha_per_token / 1024:.0f} KiB/token")
