from kv_cache_size import ModelConfig, kv_bytes_per_token

model = ModelConfig("quiz model", num_layers=32, num_kv_heads=8, head_dim=128)
per_token = kv_bytes_per_token(model)
print(f"{per_token} bytes = {per_token // 1024} KiB per token")
