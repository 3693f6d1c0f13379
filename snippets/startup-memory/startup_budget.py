"""What vLLM 0.26.0 does with an RTX 4090's memory while it starts: the CUDA graph
capture sizes it derives from the scheduler's limits, the graphs its V2 model runner
captures for them, the graph a step runs on (and the size it is padded to), and the KV
cache budget left by the weights, the activation peak and non-torch memory.

The capture sizes, the graphs and the dispatch are vLLM's own arithmetic, exactly, for
what the V2 model runner (the course's model's) does on one GPU, with no LoRA and no
breakable graphs (VLLM_USE_BREAKABLE_CUDAGRAPH off, its default). cudagraph_mode is the
mode the runner ends up with: vLLM may lower the one asked for when the attention
backend cannot run it in a graph (CompilationConfig.resolve_cudagraph_mode_and_sizes),
which this file does not check. Speculative decoding is modeled as the V2 runner runs it
(1 + k tokens per decode step); methods that send vLLM to the V1 runner (n-gram, draft
model) round the sizes differently and dispatch with the V1 runner's dispatcher, which
this file does not model. The parts of the budget come from three places: the weights
are what lesson 4 counts vLLM 0.26.0 logs for them (load_memory.loaded_bytes); the
activation peak, the non-torch memory, the CUDA context and the CUDA graph pool are
estimates (ESTIMATE in their names), which the lab replaces by what vLLM measured."""

import math
from dataclasses import dataclass

from hf_config import read_presets
from kv_cache_size import GIB
from load_memory import loaded_bytes
from quant_memory import GPU_GIB
from speedup import V1_GRAPHS_GIB

# vllm/config/vllm.py: VllmConfig._set_cudagraph_sizes
MAX_CAPTURE = 512  # the largest default capture size
PERFORMANCE_MODES = ("balanced", "interactivity", "throughput")  # PerformanceMode
# vllm/config/compilation.py: CUDAGraphMode: (decode_mode(), mixed_mode()); the two
# tuple modes run decode-only batches on a routine of their own (separate_routine).
CUDAGRAPH_MODES = {
    "NONE": ("NONE", "NONE"),
    "PIECEWISE": ("PIECEWISE", "PIECEWISE"),
    "FULL": ("FULL", "FULL"),
    "FULL_DECODE_ONLY": ("FULL", "NONE"),
    "FULL_AND_PIECEWISE": ("FULL", "PIECEWISE"),  # the default (-O2)
}
SEPARATE_ROUTINE = ("FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")

# Estimates (not vLLM's arithmetic; the lab measures each one):
NON_TORCH_ESTIMATE = 0.25 * GIB  # memory outside PyTorch after the snapshot, rough
CONTEXT_ESTIMATE = 0.5 * GIB  # in use before the snapshot: the CUDA context, rough
GRAPH_ESTIMATE_PER_GRAPH = 6 * 2**20  # graph pool bytes per captured graph, rough


def _check_mode(cudagraph_mode: str) -> None:
    if cudagraph_mode not in CUDAGRAPH_MODES:
        raise ValueError(
            f"cudagraph_mode must be one of {', '.join(CUDAGRAPH_MODES)},"
            f" got {cudagraph_mode!r}"
        )


def capture_sizes(
    max_num_seqs: int,
    max_num_batched_tokens: int,
    num_speculative_tokens: int = 0,
    enforce_eager: bool = False,
    performance_mode: str = "balanced",
    cudagraph_mode: str = "FULL_AND_PIECEWISE",
    max_cudagraph_capture_size: int | None = None,
    cudagraph_capture_sizes: list[int] | None = None,
) -> list[int]:
    """The batch sizes (in tokens) vLLM captures CUDA graphs for, ascending
    (vllm/config/vllm.py: VllmConfig._set_cudagraph_sizes, one GPU).
    max_cudagraph_capture_size and cudagraph_capture_sizes are the compilation
    config's two knobs (`-cc.max_cudagraph_capture_size=64`); None: not given."""
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
    _check_mode(cudagraph_mode)
    if max_cudagraph_capture_size is not None and (
        type(max_cudagraph_capture_size) is not int or max_cudagraph_capture_size < 1
    ):
        raise ValueError(
            "max_cudagraph_capture_size must be a positive integer,"
            f" got {max_cudagraph_capture_size!r}"
        )
    if cudagraph_capture_sizes is not None and (
        not cudagraph_capture_sizes
        or any(type(size) is not int or size < 1 for size in cudagraph_capture_sizes)
    ):  # vLLM asserts "should contain at least one element"
        raise ValueError(
            "cudagraph_capture_sizes must be a non-empty list of positive integers,"
            f" got {cudagraph_capture_sizes!r}"
        )
    # VllmConfig.__post_init__: "Cudagraph is disabled under eager mode"; with
    # cudagraph_mode NONE the list is empty too ("no cudagraph in use").
    if enforce_eager or cudagraph_mode == "NONE":
        return []
    # A decode step of one sequence is 1 + num_speculative_tokens tokens; twice
    # max_num_seqs such steps, at most 512, and never more than a step may hold.
    largest = max_cudagraph_capture_size
    if largest is None:
        decode_query_len = 1 + num_speculative_tokens
        largest = min(max_num_seqs * decode_query_len * 2, MAX_CAPTURE)
    largest = min(max_num_batched_tokens, largest)
    if cudagraph_capture_sizes is not None:  # given by hand: only capped by a step
        sizes = sorted(
            {s for s in cudagraph_capture_sizes if s <= max_num_batched_tokens}
        )
        given, largest_given = max_cudagraph_capture_size, sizes[-1] if sizes else 0
        if given is not None and given != largest_given:
            raise ValueError(
                f"customized max_cudagraph_capture_size(={given}) should be consistent"
                f" with the max value of cudagraph_capture_sizes(={largest_given})"
            )
        return sizes
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


@dataclass(frozen=True)
class Graph:
    """One captured graph (vllm/v1/worker/gpu/cudagraph_utils.py:
    BatchExecutionDescriptor): its mode, its token count, and what a batch must look
    like to run on it."""

    mode: str  # "FULL" or "PIECEWISE"
    num_tokens: int
    num_reqs: int | None  # most requests it holds; None: any number (PIECEWISE)
    uniform: int | None  # every request's token count it expects; None: any


def graphs_to_capture(
    sizes: list[int],
    max_num_seqs: int,
    num_speculative_tokens: int = 0,
    cudagraph_mode: str = "FULL_AND_PIECEWISE",
) -> list[Graph]:
    """The graphs the V2 model runner captures, in the order its dispatch tries them
    (vllm/v1/worker/gpu/cudagraph_utils.py: CudaGraphManager._init_candidates). With a
    separate decode routine, each size rounded up to whole decode steps of
    1 + num_speculative_tokens tokens gets a FULL graph for uniform decode batches, if
    max_num_seqs such steps and the largest size hold it; each size gets a graph of the
    mixed mode: PIECEWISE (any batch) or FULL (at most max_num_seqs requests)."""
    _check_mode(cudagraph_mode)
    decode_mode, mixed_mode = CUDAGRAPH_MODES[cudagraph_mode]
    if not sizes or cudagraph_mode == "NONE":
        return []
    decode_query_len = 1 + num_speculative_tokens
    largest = max(
        sizes
    )  # max_cudagraph_capture_size, as _set_cudagraph_sizes leaves it
    graphs = []
    for size in sorted(sizes):
        if cudagraph_mode in SEPARATE_ROUTINE and decode_mode == "FULL":
            rounded = -(-size // decode_query_len) * decode_query_len  # round_up
            full = Graph("FULL", rounded, rounded // decode_query_len, decode_query_len)
            if (
                rounded <= max_num_seqs * decode_query_len
                and rounded <= largest
                and full not in graphs
            ):
                graphs.append(full)
        if mixed_mode != "NONE":
            num_reqs = min(size, max_num_seqs) if mixed_mode == "FULL" else None
            graphs.append(Graph(mixed_mode, size, num_reqs, None))
    return graphs


def graphs_captured(
    sizes: list[int],
    max_num_seqs: int,
    num_speculative_tokens: int = 0,
    cudagraph_mode: str = "FULL_AND_PIECEWISE",
) -> tuple[int, int]:
    """How many FULL and how many PIECEWISE graphs graphs_to_capture captures."""
    graphs = graphs_to_capture(
        sizes, max_num_seqs, num_speculative_tokens, cudagraph_mode
    )
    full = sum(graph.mode == "FULL" for graph in graphs)
    return full, len(graphs) - full


def dispatch(query_lens: list[int], graphs: list[Graph]) -> Graph | None:
    """The graph a step runs on, given each request's token count this step; its extra
    token slots are padding. None: the step runs eagerly, with no graph and no padding
    (vllm/v1/worker/gpu/cudagraph_utils.py: CudaGraphManager.dispatch). Only the graphs
    of the smallest captured token count that holds the step are candidates, first
    match wins; if none fits (a FULL decode graph and a batch that is not uniform
    decode), the step runs eagerly even when a larger graph would fit."""
    if not query_lens or any(type(n) is not int or n < 1 for n in query_lens):
        raise ValueError(f"query_lens must be positive integers, got {query_lens!r}")
    num_reqs, num_tokens, longest = len(query_lens), sum(query_lens), max(query_lens)
    # vllm/v1/worker/gpu/cudagraph_utils.py: get_uniform_token_count
    uniform = longest if num_tokens == longest * num_reqs else None
    counts = [graph.num_tokens for graph in graphs if graph.num_tokens >= num_tokens]
    if not counts:
        return None
    for graph in graphs:
        if graph.num_tokens == min(counts) and (
            (graph.uniform is None or graph.uniform == uniform)
            and (graph.num_reqs is None or graph.num_reqs >= num_reqs)
        ):
            return graph
    return None


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
    cudagraph_mode: str = "FULL_AND_PIECEWISE",
    max_cudagraph_capture_size: int | None = None,
) -> Budget:
    """The course's baseline, Qwen2.5-7B-Instruct in bf16 on an RTX 4090, with
    LLM()'s defaults there (8,192 tokens and 256 sequences per step)."""
    sizes = capture_sizes(
        max_num_seqs,
        max_num_batched_tokens,
        enforce_eager=enforce_eager,
        cudagraph_mode=cudagraph_mode,
        max_cudagraph_capture_size=max_cudagraph_capture_size,
    )
    count = sum(graphs_captured(sizes, max_num_seqs, 0, cudagraph_mode))
    return kv_budget(
        int(GPU_GIB * GIB),
        gpu_memory_utilization,
        loaded_bytes("Qwen2.5-7B-Instruct", "bf16"),
        activation_estimate(
            "Qwen2.5-7B-Instruct", max_num_batched_tokens, max_num_seqs
        ),
        int(NON_TORCH_ESTIMATE),
        int(CONTEXT_ESTIMATE),
        count * GRAPH_ESTIMATE_PER_GRAPH,
    )


def gib(n_bytes: int) -> str:
    return f"{n_bytes / GIB:.2f} GiB"


def runs_on(query_lens: list[int], graphs: list[Graph]) -> str:
    graph = dispatch(query_lens, graphs)
    if graph is None:
        return "eager (no graph, no padding)"
    return f"{graph.mode} graph of {graph.num_tokens}"


if __name__ == "__main__":
    sizes = capture_sizes(max_num_seqs=256, max_num_batched_tokens=8192)
    graphs = graphs_to_capture(sizes, max_num_seqs=256)
    full, piecewise = graphs_captured(sizes, max_num_seqs=256)
    print(f"{len(sizes)} capture sizes: {sizes[:6]} ... {sizes[-3:]}")
    print(f"graphs: {piecewise} PIECEWISE + {full} FULL (decode)")
    steps = {  # each request's tokens this step
        "decode, 1 sequence": [1],
        "decode, 3 sequences": [1] * 3,
        "decode, 37 sequences": [1] * 37,
        "mixed, 3 tokens (1 + 2)": [1, 2],
        "mixed, 100 tokens": [1] * 10 + [90],
        "prefill, 300 tokens": [300],
        "prefill, 513 tokens": [513],
    }
    for name, query_lens in steps.items():
        print(f"  {name:25} -> {runs_on(query_lens, graphs)}")
    k = 2  # speculative tokens per step, as the V2 runner runs them (EAGLE, MTP)
    spec_sizes = capture_sizes(256, 8192, num_speculative_tokens=k)
    spec = graphs_to_capture(spec_sizes, 256, num_speculative_tokens=k)
    full, piecewise = graphs_captured(spec_sizes, 256, num_speculative_tokens=k)
    print(f"{k} speculative tokens: {piecewise} PIECEWISE + {full} FULL (decode)")
    spec_steps = {
        "decode, 1 sequence (1 + 2)": [1 + k],
        "mixed, 3 tokens (1 + 2)": [1, 2],
        "decode, 2 sequences (3 + 3)": [1 + k] * 2,
        "mixed, 5 tokens (3 + 2)": [1 + k, 2],
    }
    for name, query_lens in spec_steps.items():
        print(f"  {name:27} -> {runs_on(query_lens, spec)}")
    none = capture_sizes(256, 8192, cudagraph_mode="NONE")
    print(f"cudagraph_mode NONE: {len(none)} sizes; every step runs eagerly")
    small = capture_sizes(256, 8192, max_cudagraph_capture_size=64)
    full, piecewise = graphs_captured(small, 256)
    graph_bytes = (full + piecewise) * GRAPH_ESTIMATE_PER_GRAPH
    print(
        f"max_cudagraph_capture_size=64: {len(small)} sizes, {piecewise} PIECEWISE +"
        f" {full} FULL, {gib(graph_bytes)} (estimate)"
    )
    budget = qwen_budget()
    print("the V2 model runner's budget (Qwen2.5's): it estimates no graph memory")
    print(f"requested   {gib(budget.requested)}  (0.92 x {gib(budget.total)})")
    print(f"weights     {gib(budget.weights)}")
    print(f"activation  {gib(budget.activation)}  (estimate)")
    print(f"non-torch   {gib(budget.non_torch)}  (estimate)")
    print(f"KV cache    {gib(budget.kv)}  (estimate)")
    outside = budget.total - budget.requested
    print(f"outside     {gib(outside)}  (the card less the share)")
    print(f"context     {gib(budget.context)}  (estimate: in use before the snapshot)")
    print(f"CUDA graphs {gib(budget.graphs)}  (estimate: captured outside the share)")
    print(f"left        {gib(budget.headroom)}  (estimate)")
    low, high = (budget.kv - graphs * GIB for graphs in reversed(V1_GRAPHS_GIB))
    print("the V1 runner (n-gram, VLLM_USE_V2_MODEL_RUNNER=0) takes its graph estimate")
    print(f"  off the KV cache: at lesson 7's published {V1_GRAPHS_GIB[0]} to"
          f" {V1_GRAPHS_GIB[1]} GiB, {gib(low)} to {gib(high)} (estimate)")  # fmt: skip
