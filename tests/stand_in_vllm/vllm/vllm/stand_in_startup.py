"""What vLLM 0.26.0 logs about compiling and CUDA graphs while it starts, for the dry run
(lesson 8's lab reads these lines): eager mode, torch.compile, the capture of the CUDA
graphs after the KV cache and the worker's memory summary, with the stand-in's own figures.
Like stand_in.py, it shares no code with the lessons, whose predictions the GPU checks
compare with it.
"""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

from vllm import stand_in

# The format strings and where vLLM 0.26.0 logs them (the logger call's line).
LOG_FORMATS = {
    # Worker.init_device, before the weights load; logged here, as only lesson 8 reads it
    "v2_runner": ("vllm/v1/worker/gpu_worker.py", 378, "Using V2 Model Runner"),
    "eager": ("vllm/config/vllm.py", 1163,
              "Enforce eager set, disabling torch.compile and CUDAGraphs. "
              "This is equivalent to setting -cc.mode=none -cc.cudagraph_mode=none"),
    "no_graphs": ("vllm/config/vllm.py", 1392, "Cudagraph is disabled under eager mode"),
    "dynamo": ("vllm/compilation/backends.py", 1155, "Dynamo bytecode transform time: %.2f s"),
    "compiled": ("vllm/compilation/backends.py", 393,
                 "Compiling a graph for compile range %s takes %.2f s"),
    "captured": ("vllm/v1/worker/gpu/model_runner.py", 747,
                 "Graph capturing finished in %.0f secs, took %.2f GiB"),
    "init": ("vllm/v1/engine/core.py", 340,
             "init engine (profile, create kv cache, warmup model) took %.2f s (compilation:"
             " %.2f s)"),
    "init_eager": ("vllm/v1/engine/core.py", 347,
                   "init engine (profile, create kv cache, warmup model) took %.2f s"),
}
WARNINGS = {"eager"}
GRAPH_BYTES = 5 * stand_in.MIB  # the graph pool per captured graph (stand-in estimate)
MAX_CAPTURE = 512  # vllm/config/vllm.py: VllmConfig._set_cudagraph_sizes
# Seconds the dry run reports (stand-in figures; nothing is compiled or captured here).
DYNAMO_SECONDS, INDUCTOR_SECONDS, CAPTURE_SECONDS, INIT_SECONDS = 6.0, 20.0, 12.0, 45.0


def log(key: str, *args) -> None:
    """One line as vLLM's logger prints it (stand_in.log, for these formats)."""
    path, line, fmt = LOG_FORMATS[key]
    level = "WARNING" if key in WARNINGS else "INFO"
    print(f"{level} {time.strftime('%m-%d %H:%M:%S')} [{path.rsplit('/', 1)[1]}:{line}]"
          f" {fmt % args}", file=stand_in.log_stream(), flush=True)


def capture_sizes(max_num_seqs: int, max_num_batched_tokens: int) -> list[int]:
    """vllm/config/vllm.py: VllmConfig._set_cudagraph_sizes with no sizes given, no
    speculative decoding and the balanced performance mode."""
    largest = min(max_num_seqs * 2, MAX_CAPTURE, max_num_batched_tokens)
    sizes = {size for size in (1, 2, 4) if size <= largest}
    sizes |= set(range(8, min(largest + 1, 256), 8)) | set(range(256, largest + 1, 16))
    if max_num_batched_tokens <= largest:
        sizes.add(max_num_batched_tokens)
    return sorted(sizes)


def graph_count(sizes: list[int], max_num_seqs: int) -> int:
    """vllm/v1/worker/gpu/cudagraph_utils.py: CudaGraphManager._init_candidates under
    FULL_AND_PIECEWISE: a PIECEWISE graph per size, a FULL one per size up to max_num_seqs."""
    return len(sizes) + sum(size <= max_num_seqs for size in sizes)


def after_kv_cache(engine, gpu=stand_in.RTX_4090):
    """The lines after the KV cache is allocated, and the LLMEngine's vllm_config as far as
    a lab reads it (compilation_config.cudagraph_capture_sizes)."""
    options = engine.options
    eager = bool(options["enforce_eager"])
    sizes = [] if eager else capture_sizes(options["max_num_seqs"],
                                           options["max_num_batched_tokens"])
    log("v2_runner")  # a dense model such as Qwen2.5: VllmConfig.use_v2_model_runner
    if eager:
        log("eager")
        log("no_graphs")
    else:
        log("dynamo", DYNAMO_SECONDS)
        log("compiled", f"(1, {options['max_num_batched_tokens']})", INDUCTOR_SECONDS)
    graphs = graph_count(sizes, options["max_num_seqs"]) * GRAPH_BYTES
    if sizes:
        log("captured", CAPTURE_SECONDS, graphs / stand_in.GIB)
    if not options["kv_cache_memory_bytes"]:
        # vllm/v1/worker/gpu_worker.py: Worker.compile_or_warm_up_model (an f-string)
        requested = math.ceil(gpu.total_memory * options["gpu_memory_utilization"])
        gib = stand_in.format_gib
        print(f"INFO {time.strftime('%m-%d %H:%M:%S')} [gpu_worker.py:857] Free memory on"
              f" device ({gib(gpu.total_memory)}/{gib(gpu.total_memory)} GiB) on startup."
              f" Desired GPU memory utilization is ({options['gpu_memory_utilization']},"
              f" {gib(requested)} GiB). Actual usage is {gib(engine.loaded)} GiB for weight,"
              f" {gib(engine.activation)} GiB for peak activation,"
              f" {gib(stand_in.NON_TORCH_MEMORY)} GiB for non-torch memory, and"
              f" {gib(graphs)} GiB for CUDAGraph memory.", file=stand_in.log_stream(),
              flush=True)
    if eager:
        log("init_eager", INIT_SECONDS)
    else:
        log("init", INIT_SECONDS, DYNAMO_SECONDS + INDUCTOR_SECONDS)
    compilation = SimpleNamespace(cudagraph_capture_sizes=sizes)
    return SimpleNamespace(compilation_config=compilation)
