"""What vLLM's "Model loading took X GiB" counts, part by part, in each weight format.

The figure is what PyTorch has allocated after loading minus before
(vllm/utils/mem_utils.py: DeviceMemoryProfiler), and PyTorch's caching allocator counts
the blocks it hands out, not the tensors' bytes (c10/cuda/CUDACachingAllocator.cpp):
- a tensor of up to 1 MiB takes a block of its size rounded up to 512 bytes;
- a larger one gets a new segment, 20 MiB when it is under 10 MiB, else its size rounded
  up to 2 MiB, and keeps the whole segment unless the rest is over 1 MiB and the tensor
  is smaller than max_split_size (then the block is split and the rest stays free).
vLLM 0.26.0 loads with max_split_size 20 MiB (vllm/v1/worker/gpu_worker.py:
Worker._scoped_allocator_max_split), so a tensor of 20 MiB or more keeps its whole
segment; PyTorch's default has no limit, as older vLLM versions loaded.

Besides the weights (quant_memory.layer_tensors for the linear layers, 16-bit for the
rest), loading keeps RoPE's cos/sin table in the model's dtype, max_position_embeddings
x head_dim values, one for all layers
(vllm/model_executor/layers/rotary_embedding/base.py: RotaryEmbeddingBase); nine float32
scalars per attention layer (vllm/model_executor/layers/attention/attention.py:
set_default_quant_scales); and for Marlin (AWQ, GPTQ) a workspace of one int32 per SM
for each linear layer (vllm/model_executor/kernels/linear/mixed_precision/marlin.py:
MarlinLinearKernel.process_weights_after_loading). Tensors that FP8 and Marlin replace
while loading are freed, and not counted."""

from hf_config import read_presets
from kv_cache_size import GIB
from model_weights import grouped_attention, linear_layers
from quant_memory import FORMATS, layer_tensors, weight_bytes

MIB = 1024**2
NO_LIMIT = None  # PyTorch's default max_split_size
LOAD_MAX_SPLIT = 20 * MIB
ROUNDING_GIB = 0.005  # the log prints GiB with two decimals
SMS = 128  # an RTX 4090's streaming multiprocessors (AD102 as sold in the RTX 4090)


def allocator_charge(size: int, max_split: int | None = NO_LIMIT) -> int:
    """The bytes PyTorch counts as allocated for a new tensor of `size` bytes."""
    block = -(-size // 512) * 512
    if size <= MIB:
        return block
    segment = 20 * MIB if size < 10 * MIB else -(-size // (2 * MIB)) * (2 * MIB)
    split = (max_split is None or block < max_split) and segment - block > MIB
    return block if split else segment


def weight_tensors(preset_name: str, fmt: str) -> list[int]:
    """The bytes of each weight tensor vLLM holds after loading: the embedding, the
    lm_head unless tied, each linear layer's tensors, and the 16-bit norms and
    biases."""
    config = read_presets()[preset_name].config
    h, layers = config["hidden_size"], config["num_hidden_layers"]
    sizes = [2 * config["vocab_size"] * h] * (
        1 if config.get("tie_word_embeddings") else 2
    )
    sizes += [size for _, inputs, outputs, n in linear_layers(config) for _ in range(n)
              for size in layer_tensors(inputs, outputs, fmt)]  # fmt: skip
    sizes += [2 * h] * (2 * layers + 1)  # the norms
    bias = grouped_attention(config) // layers
    sizes += [2 * bias] * layers if bias else []
    assert sum(sizes) == weight_bytes(preset_name, fmt), "a tensor is missing"
    return sizes


def loading_parts(preset_name: str, fmt: str, max_split: int | None) -> dict[str, int]:
    """The parts of "Model loading took", in bytes."""
    config = read_presets()[preset_name].config
    weights = weight_tensors(preset_name, fmt)
    head_dim = (
        config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    )
    layers = config["num_hidden_layers"]
    marlin = (
        sum(n for *_, n in linear_layers(config)) if fmt.endswith("int4-g128") else 0
    )
    return {
        "weights": sum(weights),
        "rounding": sum(
            allocator_charge(t, max_split) - t for t in weights
        ),  # the allocator's
        "rope": allocator_charge(
            2 * config["max_position_embeddings"] * head_dim, max_split
        ),
        "scalars": 9 * layers * allocator_charge(4),
        "marlin": marlin * allocator_charge(SMS * 4),
    }


def loaded_bytes(preset_name: str, fmt: str) -> int:
    """What vLLM 0.26.0's "Model loading took" counts, in bytes: what the KV cache's
    budget takes off for the weights (vllm/v1/worker/gpu_worker.py:
    Worker.determine_available_memory)."""
    return sum(loading_parts(preset_name, fmt, LOAD_MAX_SPLIT).values())


def loading_figures(preset_name: str, fmt: str) -> tuple[float, float]:
    """What "Model loading took" shows, in GiB: as vLLM 0.26.0 counts it, and as
    PyTorch's default allocator would, as older vLLM loaded."""
    splits = (LOAD_MAX_SPLIT, NO_LIMIT)
    return tuple(sum(loading_parts(preset_name, fmt, s).values()) / GIB for s in splits)


def logged_as_counted(logged_gib: float, preset_name: str, fmt: str) -> bool:
    """Whether a logged figure is either of loading_figures, as the log rounds it: to
    two decimals (vllm/utils/mem_utils.py: format_gib)."""
    figures = loading_figures(preset_name, fmt)
    return any(abs(logged_gib - figure) <= ROUNDING_GIB + 1e-9 for figure in figures)


if __name__ == "__main__":
    splits = (NO_LIMIT, LOAD_MAX_SPLIT)
    for name in ("Qwen2.5-7B-Instruct", "Llama-3.1-8B-Instruct"):
        print(
            f"{name}, MiB; the allocator without a split limit / with 0.26.0's 20 MiB"
        )
        print("format            weights  rounding RoPE scalars Marlin  GiB logged")
        for fmt in FORMATS:
            old, new = (loading_parts(name, fmt, split) for split in splits)
            rounding = f"{old['rounding'] / MIB:.1f}/{new['rounding'] / MIB:.1f}"
            gib = f"{sum(old.values()) / GIB:.4f}/{sum(new.values()) / GIB:.4f}"
            print(f"{fmt:<15} {old['weights'] / MIB:>9.2f} {rounding:>9}"
                  f" {old['rope'] / MIB:>4.0f} {old['scalars'] / MIB:>7.2f}"
                  f" {old['marlin'] / MIB:>6.2f}  {gib} GiB")  # fmt: skip
    qwen = [loading_parts("Qwen2.5-7B-Instruct", "bf16", split) for split in splits]
    logged = [f"{sum(parts.values()) / GIB:.2f}" for parts in qwen]
    print(f"Qwen2.5-7B-Instruct, bf16, as the log rounds it (format_gib):"
          f" {logged[0]} / {logged[1]} GiB")  # fmt: skip
    o_proj = 2 * 3584 * 3584
    print(f"one o_proj: {o_proj / MIB:.2f} MiB, charged"
          f" {allocator_charge(o_proj, NO_LIMIT) / MIB:.2f} / "
          f"{allocator_charge(o_proj, LOAD_MAX_SPLIT) / MIB:.2f} MiB")  # fmt: skip
    llama = loading_parts("Llama-3.1-8B-Instruct", "bf16", NO_LIMIT)
    older = sum(llama.values()) - llama["scalars"]
    print(f"Llama-3.1-8B-Instruct, bf16, without the scalars: {older / GIB:.4f} GiB")
