from kv_cache_size import ModelConfig, gib, kv_bytes

qwen = ModelConfig("Qwen2.5-7B-Instruct", num_layers=28, num_kv_heads=4, head_dim=128)
free_gib = 24 - 14  # card minus BF16 weights; activations ignored
per_sequence = gib(kv_bytes(qwen, seq_len=8192))
fit = int(free_gib / per_sequence)
print(f"{per_sequence:.2f} GiB per sequence -> {fit} sequences fit")
