from kv_cache_size import ModelConfig, gib, kv_bytes

qwen = ModelConfig("Qwen2.5-7B-Instruct", num_layers=28, num_kv_heads=4, head_dim=128)
total = kv_bytes(qwen, seq_len=32768, batch=8)
print(f"8 sequences x 32768 tokens: {gib(total):.0f} GiB of KV cache")
