"""Weight bytes per format, the KV capacity they leave, and the decode floor.

Counted tensor by tensor from a preset's config.json (lesson 1's hf_config.py and
model_weights.py): what vLLM 0.26.0 keeps on an RTX 4090 (SM 8.9) after loading, not
a measurement. Only the decoder's linear layers are quantized; the embeddings, the
lm_head, the norms and the biases stay 16-bit (2 bytes) in every format. What a step
reads of them is lesson 1's model (decode_batch.weights_read).
"""

from dataclasses import replace

from decode_batch import BANDWIDTH, weights_read
from hf_config import bytes_per_token, read_presets
from kv_cache_size import GIB
from kv_capacity import GPU_GIB, UTILIZATION, predict
from model_weights import count, linear_layers

GROUP_SIZE = (
    128  # quantization_config "group_size" of the AWQ and GPTQ-Int4 checkpoints
)
FORMATS = {
    # fmt: what each linear layer (in_features x out_features) holds
    "bf16": "weight: 2 bytes each",
    "fp8": "weight: 1 byte each (FP8 E4M3); weight_scale: one float32 per layer",
    "awq-int4-g128": "qweight: 4 bits each; scales: fp16 and qzeros: 4 bits per group",
    "gptq-int4-g128": "qweight: 4 bits each; scales: fp16 per group",
}


def layer_bytes(inputs: int, outputs: int, fmt: str) -> int:
    """One linear layer of inputs x outputs weights, as vLLM holds it after loading."""
    return sum(layer_tensors(inputs, outputs, fmt))


def layer_tensors(inputs: int, outputs: int, fmt: str) -> list[int]:
    """The bytes of each tensor of one linear layer, as vLLM holds it after loading."""
    if fmt == "bf16":
        return [2 * inputs * outputs]
    if fmt == "fp8":
        # --quantization fp8 on a 16-bit checkpoint: one scale for the whole tensor
        # (vllm/model_executor/layers/quantization/online/fp8.py:
        # Fp8PerTensorOnlineLinearMethod.process_weights_after_loading).
        return [inputs * outputs, 4]
    if fmt not in ("awq-int4-g128", "gptq-int4-g128"):
        raise ValueError(
            f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}"
        )
    if inputs % GROUP_SIZE or outputs % 8:
        raise ValueError(
            f"a {inputs} x {outputs} layer: in_features must be a multiple of the group"
            f" size {GROUP_SIZE} and out_features of 8 (eight 4-bit values per int32)"
        )
    groups = inputs // GROUP_SIZE
    packed = inputs * outputs // 2  # qweight: eight 4-bit weights per int32
    scales = groups * outputs * 2  # one fp16 scale per group and output
    # AWQ keeps a 4-bit zero point per group and output (AutoAWQMarlinLinearMethod).
    # GPTQ's symmetric checkpoints store qzeros and g_idx too, but Marlin drops them
    # without act order (vllm/model_executor/kernels/linear/mixed_precision/marlin.py:
    # MarlinLinearKernel.process_weights_after_loading).
    zeros = [groups * outputs // 2] if fmt == "awq-int4-g128" else []
    return [packed, scales, *zeros]


def weight_bytes(preset_name: str, fmt: str) -> int:
    """A preset's weights in one format: linear layers by layer_bytes, the rest bf16."""
    presets = read_presets()
    if preset_name not in presets:
        raise ValueError(f"unknown preset {preset_name!r}; see model_presets.json")
    if fmt not in FORMATS:
        raise ValueError(
            f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}"
        )
    config = presets[preset_name].config
    linear = sum(
        n * layer_bytes(inputs, outputs, fmt)
        for _, inputs, outputs, n in linear_layers(config)
    )
    return linear + 2 * count(config).other


def kv_left(preset_name: str, fmt: str, max_model_len: int, kv_bytes: int = 2):
    """lesson 1's prediction (kv_capacity.predict) for the memory the weights leave of
    GPU_GIB x 0.92, activations and CUDA graphs left out: an upper bound."""
    if max_model_len <= 0:
        raise ValueError(f"max_model_len must be positive, got {max_model_len}")
    if kv_bytes not in (1, 2):
        raise ValueError(
            f"kv_bytes must be 2 (auto: bf16/fp16) or 1 (fp8), got {kv_bytes}"
        )
    memory = int(GPU_GIB * GIB * UTILIZATION) - weight_bytes(preset_name, fmt)
    if memory <= 0:
        raise ValueError(f"{preset_name} in {fmt} does not fit in {GPU_GIB} GiB")
    model = replace(read_presets()[preset_name].model, dtype_bytes=kv_bytes)
    return predict(model, memory, max_model_len)


def decode_floor_ms(preset_name: str, fmt: str, batch: int, context: int) -> float:
    """The shortest decode step the memory allows: every weight read once but the
    input embedding table, of which each of the `batch` sequences gathers one row
    (lesson 1's weights_read), plus each sequence's KV of `context` tokens, at
    1008 GB/s (GB = 10**9 bytes)."""
    if batch <= 0 or context <= 0:
        raise ValueError(f"batch and context must be positive, got {batch}, {context}")
    stored = weight_bytes(preset_name, fmt)  # raises on an unknown preset or format
    preset = read_presets()[preset_name]
    weights = weights_read(stored, preset.config, batch)
    kv = bytes_per_token(preset.model) * context * batch
    return (weights + kv) / BANDWIDTH * 1000


if __name__ == "__main__":
    for name in ("Qwen2.5-7B-Instruct", "Llama-3.1-8B-Instruct"):
        print(name)
        bf16 = weight_bytes(name, "bf16")
        for fmt in FORMATS:
            size = weight_bytes(name, fmt)
            print(
                f"  {fmt:<15} {size:>15,} bytes {size / GIB:>6.2f} GiB"
                f" {size / bf16:>6.1%} of bf16"
            )
