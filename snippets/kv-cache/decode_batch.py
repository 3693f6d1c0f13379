"""What one decode step of Qwen2.5-7B-Instruct (BF16) reads and computes on an RTX 4090.

A step reads every weight once, whatever the batch, and each sequence's own KV cache.
"""

from hf_config import bytes_per_token, read_presets
from model_weights import count

BANDWIDTH = 1008e9  # bytes/s, RTX 4090 memory bandwidth (NVIDIA Ada whitepaper)
PEAK_BF16 = 165.2e12  # FLOP/s, RTX 4090 dense BF16 tensor cores, FP32 accumulate (idem)
QWEN = read_presets()["Qwen2.5-7B-Instruct"]
PARAMETERS = count(QWEN.config).total  # 7,615,616,512
KV_PER_TOKEN = bytes_per_token(QWEN.model)  # 57,344 bytes in BF16


def decode_step(batch: int, context: int) -> tuple[int, int, int]:
    """Bytes read, FLOPs of the weight matmuls and FLOPs of attention, in one step of
    `batch` sequences of `context` tokens (counting the whole embedding table read)."""
    read = 2 * PARAMETERS + batch * context * KV_PER_TOKEN
    weight_flops = batch * 2 * PARAMETERS  # a multiply-add per weight and sequence
    # Each query head multiplies-adds q with every cached k, the scores with every v.
    per_token = QWEN.model.num_layers * QWEN.attention_heads * QWEN.model.head_dim * 4
    return read, weight_flops, batch * context * per_token


if __name__ == "__main__":
    print(f"ridge point of the RTX 4090 in BF16: {PEAK_BF16 / BANDWIDTH:.0f} FLOP/byte")
    shared = QWEN.attention_heads / QWEN.model.num_kv_heads  # query heads per KV head
    print(f"attention over a sequence's own KV: {shared:.0f} FLOP/byte at any batch")
    context = 1024  # short enough for the KV of 164 sequences to fit beside the weights
    print(f"one step, sequences of {context:,} tokens:")
    print("batch  KV GiB  GB read  weight matmuls  whole step  tokens/s at most")
    for batch in (1, 16, 64, 164):
        read, weight_flops, attention_flops = decode_step(batch, context)
        kv_gib = batch * context * KV_PER_TOKEN / 1024**3
        flops = weight_flops + attention_flops
        tokens = batch * min(BANDWIDTH / read, PEAK_BF16 / flops)
        print(
            f"{batch:>5} {kv_gib:>7.2f} {read / 1000**3:>8.2f}"
            f" {weight_flops / (2 * PARAMETERS):>10.0f} F/B {flops / read:>7.1f} F/B"
            f" {tokens:>16,.0f}"
        )
