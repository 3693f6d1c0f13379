"""The KV cache budget of each RTX 4090 when a model is split over several, and the
tokens it holds: lesson 8's budget (startup_budget.kv_budget) per GPU, with that GPU's
weights (tp_memory.layout) and lesson 1's blocks (kv_capacity.predict) of its KV heads.

Estimates, as in lesson 8: the activation peak (the whole model's MLP, an upper bound
for a rank that holds 1/TP of it), non-torch memory, the CUDA context and the CUDA
graphs. Not counted: the buffers NCCL allocates for its all-reduces, which grow with
TP."""

from hf_config import read_presets
from kv_cache_size import GIB
from kv_capacity import GPU_GIB
from startup_budget import (
    CONTEXT_ESTIMATE,
    GRAPH_ESTIMATE_PER_GRAPH,
    NON_TORCH_ESTIMATE,
    activation_estimate,
    capture_sizes,
    graphs_captured,
    kv_budget,
)
from tp_memory import kv_tokens, layout

MAX_MODEL_LEN = 8192
MAX_NUM_SEQS, MAX_NUM_BATCHED_TOKENS = 256, 8192  # LLM()'s defaults on a 4090


def gpu_budget(name: str, tp: int, pp: int = 1, utilization: float = 0.92):
    """(per-GPU Budget, tokens the engine holds, max concurrency at MAX_MODEL_LEN)
    for preset `name` split TP x PP over RTX 4090s; ValueError where it does not fit."""
    config = read_presets()[name].config
    fullest = max(layout(config, tp, pp), key=lambda rank: rank.weight_bytes)
    sizes = capture_sizes(MAX_NUM_SEQS, MAX_NUM_BATCHED_TOKENS)
    graphs = sum(graphs_captured(sizes, MAX_NUM_SEQS)) * GRAPH_ESTIMATE_PER_GRAPH
    budget = kv_budget(
        int(GPU_GIB * GIB),
        utilization,
        fullest.weight_bytes,
        activation_estimate(name, MAX_NUM_BATCHED_TOKENS, MAX_NUM_SEQS),
        int(NON_TORCH_ESTIMATE),
        int(CONTEXT_ESTIMATE),
        graphs,
    )
    tokens = min(
        kv_tokens(config, rank, budget.kv, MAX_MODEL_LEN).tokens
        for rank in layout(config, tp, pp)
    )
    return budget, tokens, tokens / MAX_MODEL_LEN


if __name__ == "__main__":
    print(f"per RTX 4090 ({GPU_GIB} GiB x 0.92), max_model_len {MAX_MODEL_LEN:,}:")
    print(
        "model                  TP PP  weights/GPU  KV/GPU (estimate)   tokens  x8192"
    )
    for name, tp, pp in (
        ("Qwen2.5-7B-Instruct", 1, 1),
        ("Qwen2.5-7B-Instruct", 2, 1),
        ("Qwen2.5-7B-Instruct", 1, 2),
        ("Qwen2.5-32B-Instruct", 2, 1),
        ("Qwen2.5-32B-Instruct", 4, 1),
        ("Qwen2.5-32B-Instruct", 2, 2),
        ("Qwen2.5-72B-Instruct", 8, 1),
    ):
        short = name.removesuffix("-Instruct")
        try:
            budget, tokens, concurrency = gpu_budget(name, tp, pp)
        except ValueError as error:
            why = str(error).split(";")[0]
            print(f"{short:<22} {tp:>2} {pp:>2}  does not fit: {why}")
            continue
        print(
            f"{short:<22} {tp:>2} {pp:>2} {budget.weights / GIB:>8.2f} GiB"
            f" {budget.kv / GIB:>8.2f} GiB {tokens:>17,} {concurrency:>6.1f}"
        )
