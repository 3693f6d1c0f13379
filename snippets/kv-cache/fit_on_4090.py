from hf_config import read_presets
from kv_cache_size import GIB, ModelConfig, gib, kv_bytes
from kv_capacity import GPU_GIB
from model_weights import count, weight_bytes

qwen = ModelConfig("Qwen2.5-7B-Instruct", num_layers=28, num_kv_heads=4, head_dim=128)
parameters = count(read_presets()["Qwen2.5-7B-Instruct"].config)
weights = weight_bytes(parameters, "bf16")  # 2 bytes per parameter
gb = weights / 1000**3  # file sizes come in GB, GPU memory in GiB: never mix them
print(f"{parameters.total:,} parameters: {gb:.2f} GB = {gib(weights):.2f} GiB")

card = int(GPU_GIB * GIB)  # the RTX 4090's, as CUDA reports it; activations ignored
per_sequence = kv_bytes(qwen, seq_len=8192)
padding = -8192 % 16  # tokens of the last 16-token block left empty: none at 8,192
free = card - weights
print(f"{gib(card):.2f} GiB - {gib(weights):.2f} GiB = {gib(free):.2f} GiB left")
print(f"{gib(per_sequence):.4f} GiB per sequence, {padding} tokens of block padding")
print(f"-> {free // per_sequence} sequences fit")

# vLLM claims only gpu_memory_utilization (0.92 unless set) of the card.
usable = int(card * 0.92)
fit = (usable - weights) // per_sequence
print(f"0.92 x {GPU_GIB} GiB leaves {gib(card - usable):.2f} GiB unused -> {fit} fit")
