"""KV blocks and full sequences left on an RTX 4090 after each format's weights, with
lesson 1's calculator (kv_capacity.predict): max_model_len 8192, block_size 16."""

from kv_cache_size import GIB
from quant_memory import FORMATS, GPU_GIB, UTILIZATION, kv_left, weight_bytes

MAX_MODEL_LEN = 8192

if __name__ == "__main__":
    print(f"{GPU_GIB} GiB x {UTILIZATION}, activations left out, KV in bf16 (auto)")
    for name in ("Qwen2.5-7B-Instruct", "Llama-3.1-8B-Instruct"):
        print(name)
        print(
            f"  {'format':<15} {'weights GiB':>11} {'KV blocks':>10} sequences of 8,192"
        )
        for fmt in FORMATS:
            capacity = kv_left(name, fmt, MAX_MODEL_LEN)
            sequences = capacity.num_blocks // (MAX_MODEL_LEN // 16)
            print(
                f"  {fmt:<15} {weight_bytes(name, fmt) / GIB:>11.2f}"
                f" {capacity.num_blocks:>10,} {sequences:>18}"
            )
    fp8_kv = kv_left("Qwen2.5-7B-Instruct", "awq-int4-g128", MAX_MODEL_LEN, kv_bytes=1)
    print(
        f"Qwen2.5-7B-Instruct, awq-int4-g128 with fp8 KV: {fp8_kv.num_blocks:,} blocks"
    )
