"""What vLLM 0.26.0 does with the 24 GiB while it starts: the CUDA graph capture sizes
it derives from the scheduler's limits, the captured size a batch is padded to, and
the KV cache budget left by the weights, the activation peak and non-torch memory.

The capture sizes and the padding are vLLM's own arithmetic, exactly. The parts of the
budget come from three places: the weights are lesson 4's count (quant_memory.py);
the activation peak, the non-torch memory, the CUDA context and the CUDA graph pool are
estimates (ESTIMATE in their names), which the lab replaces by what vLLM measured.
"""

import math
from dataclasses import dataclass

from hf_config import read_presets
from kv_cache_size import GIB
from quant_memory import GPU_GIB, weight_bytes

# vllm/config/vllm.py: VllmConfig._set_cudagraph_sizes
MAX_CAPTURE = 512  # the largest default capture size
PERFORMANCE_MODES = ("balanced", "interactivity", "throughput")  # PerformanceMode

# Estimates (not vLLM's arithmetic; the lab measures each one):
NON_TORCH_ESTIMATE = 0.25 * GIB  # memory outside PyTorch after the snapshot, rough
CONTEXT_ESTIMATE = 0.5 * GIB  # in use before the snapshot: the CUDA context, rough
GRAPH_ESTIMATE_PER_GRAPH = 6 * 2**20  # graph pool bytes per captured graph, rough


def capture_sizes(
    max_num_seqs: int,
    max_num_batched_tokens: int,
    num_speculative_tokens: int = 0,
    enforce_eager: bool = False,
    performance_mode: str = "balanced",
) -> list[int]:
    """The batch sizes (in tokens) vLLM captures CUDA graphs for, ascending
    (vllm/config/vllm.py: VllmConfig._set_cudagraph_sizes, with no sizes given in
    compilation_config and one GPU)."""
    for name, value in (
        ("max_num_seqs", max_num_seqs),
        ("max_num_batched_tokens", max_num_batched_tokens),
    ):
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if max_num_batched_tokens < max_num_seqs:  # SchedulerConfig.verify_max_model_len
        raise ValueError(
            f"max_num_batched_tokens ({max_num_batched_tokens}) must be at least"
            f" max_num_seqs ({max_num_seqs})"
        )
    if type(num_speculative_tokens) is not int or num_speculative_tokens < 0:
        raise ValueError(
            "num_speculative_tokens must be a non-negative integer,"
            f" got {num_speculative_tokens!r}"
        )
    if performance_mode not in PERFORMANCE_MODES:
        raise ValueError(
            f"performance_mode must be one of {', '.join(PERFORMANCE_MODES)},"
            f" got {performance_mode!r}"
        )
    if (
        enforce_eager
    ):  # VllmConfig.__post_init__: "Cudagraph is disabled under eager mode"
        return []
    # A decode step of one sequence is 1 + num_speculative_tokens tokens; twice
    # max_num_seqs such steps, at most 512, and never more than a step may hold.
    decode_query_len = 1 + num_speculative_tokens
    largest = min(max_num_seqs * decode_query_len * 2, MAX_CAPTURE)
    largest = min(max_num_batched_tokens, largest)
    if performance_mode == "interactivity":
        sizes = list(range(1, min(largest, 32) + 1))  # every size up to 32
    else:
        sizes = [size for size in (1, 2, 4) if size <= largest]
    if largest >= 8:
        sizes += range(8, min(largest + 1, 256), 8)  # step 8 below 256
    if largest >= 256:
        sizes += range(256, largest + 1, 16)  # step 16 from 256
    if max_num_batched_tokens <= largest:
        sizes.append(max_num_batched_tokens)  # a full step is captured even off-stride
    return sorted(set(sizes))


def graphs_captured(
    sizes: list[int], max_num_seqs: int, num_speculative_tokens: int = 0
) -> tuple[int, int]:
    """How many graphs the V2 model runner captures with the default cudagraph_mode
    FULL_AND_PIECEWISE (vllm/v1/worker/gpu/cudagraph_utils.py:
    CudaGraphManager._init_candidates): one PIECEWISE graph per size, for batches of
    any shape, and one FULL graph per size a decode step of max_num_seqs sequences
    can fill (sizes rounded up to whole steps of 1 + num_speculative_tokens tokens)."""
    decode_query_len = 1 + num_speculative_tokens
    most = max(sizes, default=0)
    full = {
        -(-size // decode_query_len) * decode_query_len
        for size in sizes
        if -(-size // decode_query_len) * decode_query_len
        <= min(max_num_seqs * decode_query_len, most)
    }
    return len(full), len(sizes)


def padded_size(num_tokens: int, sizes: list[int]) -> int | None:
    """The captured size a step of num_tokens tokens runs as: the smallest size that
    holds it, its extra slots padding; None when no size does (it runs eagerly)
    (vllm/v1/worker/gpu/cudagraph_utils.py: CudaGraphManager.dispatch)."""
    if type(num_tokens) is not int or num_tokens < 1:
        raise ValueError(f"num_tokens must be a positive integer, got {num_tokens!r}")
    return next((size for size in sorted(sizes) if size >= num_tokens), None)


def activation_estimate(
    preset_name: str, max_num_batched_tokens: int, max_num_seqs: int
) -> int:
    """An ESTIMATE of the profile run's activation peak. The profile run
    (vllm/v1/worker/gpu/model_runner.py: GPUModelRunner.profile_run) runs
    max_num_batched_tokens tokens, then the sampler on min(tokens, max_num_seqs) rows:
    counted here are one MLP's gate and up output and its activated half in bf16 for
    every token, plus float32 logits per row."""
    presets = read_presets()
    if preset_name not in presets:
        raise ValueError(f"unknown preset {preset_name!r}; see model_presets.json")
    config = presets[preset_name].config
    mlp = max_num_batched_tokens * 3 * config["intermediate_size"] * 2
    rows = min(max_num_batched_tokens, max_num_seqs)
    return mlp + rows * config["vocab_size"] * 4


@dataclass(frozen=True)
class Budget:
    total: int
    requested: int  # ceil(total x gpu_memory_utilization)
    weights: int
    activation: int
    non_torch: int
    kv: int  # vLLM's "Available KV cache memory"
    context: int  # in use before the worker's memory snapshot, outside `requested`
    graphs: int  # captured after the KV cache, outside `requested`
    headroom: int  # what the card has left at the end; below 0: out of memory


def kv_budget(
    total: int,
    gpu_memory_utilization: float,
    weights: int,
    activation: int,
    non_torch: int,
    context: int,
    graphs: int,
) -> Budget:
    """The KV cache memory vLLM 0.26.0 allocates, as
    vllm/v1/worker/gpu_worker.py: Worker.determine_available_memory computes it: its
    share of the card (vllm/v1/worker/utils.py: request_memory, rounded up) less the
    weights, the profiled activation peak and non-torch memory, which counts only what
    grew after the worker's memory snapshot (vllm/v1/worker/gpu_worker.py:
    Worker.init_device takes it once the CUDA context exists): the context lies outside
    the share, and request_memory refuses to start when the card's free memory at the
    snapshot is below the share. The V2 model runner
    estimates no CUDA graph memory: its
    vllm/v1/worker/gpu/model_runner.py: GPUModelRunner.profile_cudagraph_memory
    returns 0. So the graphs, captured after the KV cache is allocated, come out of
    what gpu_memory_utilization and the context leave of the card."""
    if not 0 < gpu_memory_utilization <= 1:
        raise ValueError(
            f"gpu_memory_utilization must be in (0, 1], got {gpu_memory_utilization!r}"
        )
    parts = {"weights": weights, "activation": activation, "non_torch": non_torch}
    others = {"context": context, "graphs": graphs}
    for name, value in {"total": total, **parts, **others}.items():
        if type(value) is not int or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    requested = math.ceil(total * gpu_memory_utilization)
    if total - context < requested:
        raise ValueError(
            f"free memory at start-up, {(total - context) / GIB:.2f} GiB, is below the"
            f" share of {requested / GIB:.2f} GiB: vLLM refuses to start (lower"
            " gpu_memory_utilization)"
        )
    kv = requested - sum(parts.values())
    if kv <= 0:
        raise ValueError(
            f"no memory left for the KV cache: {kv / GIB:.2f} GiB; vLLM refuses to"
            " start (increase gpu_memory_utilization or lower max_num_batched_tokens)"
        )
    return Budget(
        total, requested, weights, activation, non_torch, kv, context, graphs,
        total - requested - context - graphs,
    )  # fmt: skip


def qwen_budget(
    gpu_memory_utilization: float = 0.92,
    max_num_seqs: int = 256,
    max_num_batched_tokens: int = 8192,
    enforce_eager: bool = False,
) -> Budget:
    """The course's baseline, Qwen2.5-7B-Instruct in bf16 on a 24 GiB RTX 4090, with
    LLM()'s defaults there (8,192 tokens and 256 sequences per step)."""
    sizes = capture_sizes(max_num_seqs, max_num_batched_tokens, 0, enforce_eager)
    graphs = sum(graphs_captured(sizes, max_num_seqs)) * GRAPH_ESTIMATE_PER_GRAPH
    return kv_budget(
        GPU_GIB * GIB,
        gpu_memory_utilization,
        weight_bytes("Qwen2.5-7B-Instruct", "bf16"),
        activation_estimate(
            "Qwen2.5-7B-Instruct", max_num_batched_tokens, max_num_seqs
        ),
        int(NON_TORCH_ESTIMATE),
        int(CONTEXT_ESTIMATE),
        graphs,
    )


def gib(n_bytes: int) -> str:
    return f"{n_bytes / GIB:.2f} GiB"


if __name__ == "__main__":
    sizes = capture_sizes(max_num_seqs=256, max_num_batched_tokens=8192)
    full, piecewise = graphs_captured(sizes, max_num_seqs=256)
    print(f"{len(sizes)} capture sizes: {sizes[:6]} ... {sizes[-3:]}")
    print(f"graphs: {piecewise} PIECEWISE + {full} FULL (decode)")
    for tokens in (1, 3, 100, 300, 513):
        size = padded_size(tokens, sizes)
        runs_as = "eager (no graph)" if size is None else f"the graph of {size}"
        print(f"a step of {tokens} token{'' if tokens == 1 else 's'} runs as {runs_as}")
    budget = qwen_budget()
    print(f"requested   {gib(budget.requested)}  (0.92 x {gib(budget.total)})")
    print(f"weights     {gib(budget.weights)}")
    print(f"activation  {gib(budget.activation)}  (estimate)")
    print(f"non-torch   {gib(budget.non_torch)}  (estimate)")
    print(f"KV cache    {gib(budget.kv)}  (estimate)")
    outside = budget.total - budget.requested
    print(f"outside     {gib(outside)}  (the card less the share)")
    print(f"context     {gib(budget.context)}  (estimate: in use before the snapshot)")
    print(f"CUDA graphs {gib(budget.graphs)}  (estimate)")
    print(f"left        {gib(budget.headroom)}  (estimate)")
