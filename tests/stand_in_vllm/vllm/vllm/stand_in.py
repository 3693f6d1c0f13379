"""The engine of the stand-in for vLLM 0.26.0: what the real engine decides and logs at
start-up, by vLLM's own rules and arithmetic, for the models the labs load, on a pretend
RTX 4090. It never touches a GPU, and refuses to run where a real one is present or outside
the dry run (GPU_LAB_DRY_RUN=1).

Modelled, each with the vLLM source it follows (tests/test_stand_in_vllm.py checks the tables
below against the wheel's source):
- options: those of LLM(...) and `vllm serve` that the labs set; any other one fails, and so
  does any attribute of LLM or endpoint of the server that it does not model;
- scheduler defaults (vllm/engine/arg_utils.py: EngineArgs.get_batch_defaults, card under 70
  GiB): LLM() 8192 tokens per step, `vllm serve` 2048, both 256 sequences;
- the attention backend (vllm/platforms/cuda.py: _get_backend_priorities and
  CudaPlatform.get_attn_backend_cls): a pinned backend is validated, otherwise the first valid
  one by priority; FlashAttention takes an fp8 KV cache only as FlashAttention 3 on compute
  capability 9.0 (flash_attn.py: FlashAttentionBackend.supports_kv_cache_dtype). A backend
  that compiles kernels at start-up (FlashInfer) fails the dry run, as it would fail a stock
  machine without a CUDA toolkit;
- KV cache memory: ceil(total * gpu_memory_utilization) minus weights, activation peak, non-torch
  memory and CUDA graphs (vllm/v1/worker/gpu_worker.py: determine_available_memory), or exactly
  kv_cache_memory_bytes; blocks and capacity as vllm/v1/core/kv_cache_utils.py computes them.
- the block pool, the scheduler and the stats of a stepped engine (Scheduler, below: blocks
  cdiv(tokens, block_size), usage 1 - free / (num_gpu_blocks - 1) as BlockPool.get_usage; the
  token budget, max_num_seqs, chunked prefill, admission only of a sequence that fits whole,
  preemption by recompute of the last running request), its iteration details
  (compute_iteration_details) and what the frontend records of each step (StatLoggers, below:
  the Iteration lines of LoggingStatLogger, the gauges, vllm:num_preemptions and
  vllm:iteration_tokens_total of PrometheusStatLogger, by LLMEngine.step's rule or by the API
  server's), as LLM.get_metrics() and GET /metrics give them (vllm/v1/metrics/loggers.py,
  reader.py); whether the engine core runs in the lab's process (VLLM_ENABLE_V1_MULTIPROCESSING).
The weights, activation peak, non-torch memory and CUDA-graph figures are the stand-in's own
rough estimates (a real run measures them); only the arithmetic after them is vLLM's.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass

GIB = 1024**3
MIB = 1024**2
VERSION = "0.26.0"

# Files whose presence means a real NVIDIA GPU (and driver) is here.
GPU_DEVICE_FILES = ("/dev/nvidia0", "/proc/driver/nvidia/version")


class StandInError(RuntimeError):
    """The stand-in cannot, or must not, model this run."""


def refuse_unless_dry_run() -> None:
    """The stand-in runs only in the dry run, and never where the real vLLM could."""
    if os.environ.get("GPU_LAB_DRY_RUN") != "1":
        raise StandInError(
            "this is the stand-in for vLLM of the course's dry run (tests/stand_in_vllm), not"
            " vLLM: it runs only with GPU_LAB_DRY_RUN=1 (.ci/gpu-job --dry-run)")
    present = [path for path in GPU_DEVICE_FILES if os.path.exists(path)]
    if present:
        raise StandInError(
            f"the stand-in for vLLM refuses to run: a real NVIDIA GPU is present ({present[0]})."
            " Install the real vLLM (pip install -r requirements-gpu.txt) and run .ci/gpu-job"
            " without --dry-run")


# -- the machine and the models ------------------------------------------------------------------


@dataclass(frozen=True)
class Gpu:
    name: str
    capability: tuple[int, int]
    total_memory: int  # bytes, as torch sees it (nvidia-smi shows a little more)


RTX_4090 = Gpu("NVIDIA GeForce RTX 4090 (stand-in, dry run)", (8, 9), 24_210 * MIB)


@dataclass(frozen=True)
class Architecture:
    """What config.json says, and the bytes of the checkpoint's weights."""

    num_layers: int
    num_kv_heads: int
    head_dim: int
    hidden_size: int
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int
    dtype_bytes: int  # of the activations and of an `auto` KV cache (float16 for AWQ)
    weight_bytes: int
    # config.json's torch_dtype: what dtype="auto" computes in (vllm/config/model.py:
    # _get_and_verify_dtype), logged in the engine's config line as dtype=torch.<dtype>
    dtype: str = "bfloat16"


def linear_weights(layers, hidden, kv_width, intermediate) -> int:
    """The weights of the linear layers: q, k, v, o, gate, up and down of every layer."""
    return layers * (hidden * (2 * hidden + 2 * kv_width) + 3 * hidden * intermediate)


def sixteen_bit_weights(layers, hidden, kv_width, vocab) -> int:
    """What every format here keeps 16-bit: embed_tokens and lm_head (not tied), the two
    norms of each layer, the final norm and the q, k, v biases."""
    return 2 * vocab * hidden + layers * (2 * hidden + hidden + 2 * kv_width) + hidden


def resident_weight_bytes(fmt, layers, hidden, kv_width, intermediate, vocab, group=128) -> int:
    """The bytes of the weights as vLLM holds them on the GPU after loading (the stand-in's
    own count, shared with no lesson): 16-bit; online FP8 (quantization="fp8": 1 byte per
    linear weight and one float32 scale per linear layer, Fp8PerTensorOnlineLinearMethod);
    AWQ (4-bit weights, a 16-bit scale and a 4-bit zero point per group of 128); GPTQ
    symmetric without act-order (4-bit weights and a 16-bit scale per group: Marlin drops the
    checkpoint's qzeros and g_idx, process_weights_after_loading)."""
    return sum(resident_tensors(fmt, layers, hidden, kv_width, intermediate, vocab, group))


def resident_tensors(fmt, layers, hidden, kv_width, intermediate, vocab, group=128) -> list[int]:
    """resident_weight_bytes, tensor by tensor: what the caching allocator hands out."""
    if fmt not in ("bf16", "fp8", "awq", "gptq"):
        raise StandInError(f"the stand-in does not model the weight format {fmt!r}")
    sizes = [2 * vocab * hidden] * 2 + [2 * hidden] * (2 * layers + 1)  # embeddings, norms
    sizes += [2 * (hidden + 2 * kv_width)] * layers  # the fused q, k, v biases
    shapes = [(hidden, hidden + 2 * kv_width), (hidden, hidden), (hidden, 2 * intermediate),
              (intermediate, hidden)]  # qkv_proj, o_proj, gate_up_proj, down_proj
    for inputs, outputs in shapes * layers:
        weights = inputs * outputs
        sizes += {"bf16": [2 * weights], "fp8": [weights, 4],
                  "awq": [weights // 2, weights // group * 2, weights // group // 2],
                  "gptq": [weights // 2, weights // group * 2]}[fmt]
    return sizes


def allocator_bytes(size: int, max_split: int = 20 << 20) -> int:
    """What torch.cuda.memory_allocated grows by for a new tensor of `size` bytes
    (c10/cuda/CUDACachingAllocator.cpp: round_size, get_allocation_size, should_split), with
    the max_split_size vLLM 0.26.0 sets while loading (gpu_worker.py:
    Worker._scoped_allocator_max_split)."""
    rounded = max(512, (size + 511) // 512 * 512)
    if size <= 1 << 20:
        return rounded  # the small pool splits its 2 MiB segments
    segment = 20 << 20 if size < 10 << 20 else (size + (2 << 20) - 1) // (2 << 20) * (2 << 20)
    return rounded if rounded < max_split and segment - rounded > 1 << 20 else segment


def awq_weight_bytes(layers, hidden, kv_width, intermediate, vocab, group=128) -> int:
    """A 4-bit AWQ checkpoint: linear layers at 4 bits plus a 16-bit scale and a 4-bit zero
    point per group of 128 weights; embeddings, lm_head, norms and biases stay 16-bit."""
    return resident_weight_bytes("awq", layers, hidden, kv_width, intermediate, vocab, group)


# Qwen2.5-7B-Instruct's architecture (https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/blob/main/
# config.json); its AWQ and GPTQ-Int4 checkpoints keep it, in float16 instead of bfloat16.
QWEN_7B = dict(num_layers=28, num_kv_heads=4, head_dim=128, hidden_size=3584,
               intermediate_size=18944, vocab_size=152064, max_position_embeddings=32768,
               dtype_bytes=2)
QWEN_7B_SHAPE = (28, 3584, 4 * 128, 18944, 152064)

# The models the labs load: https://huggingface.co/<name>/blob/main/config.json
MODELS = {
    "Qwen/Qwen2.5-7B-Instruct-AWQ": Architecture(
        **QWEN_7B, weight_bytes=resident_weight_bytes("awq", *QWEN_7B_SHAPE), dtype="float16"),
    "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4": Architecture(
        **QWEN_7B, weight_bytes=resident_weight_bytes("gptq", *QWEN_7B_SHAPE),
        dtype="float16"),
    "Qwen/Qwen2.5-7B-Instruct": Architecture(
        **QWEN_7B, weight_bytes=resident_weight_bytes("bf16", *QWEN_7B_SHAPE)),
}
# quantization_config.quant_method of each quantized checkpoint: the method vLLM 0.26.0 picks
# (vllm/config/model.py: ModelConfig._verify_quantization, override_quantization_method).
CHECKPOINT_QUANTIZATION = {"Qwen/Qwen2.5-7B-Instruct-AWQ": "awq",
                           "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4": "gptq"}
# What the `quantization` option may name for them (AutoAWQConfig / AutoGPTQConfig
# .override_quantization_method), and the method vLLM then uses.
USER_QUANTIZATION = {"awq": ("awq", "awq_marlin", "auto_awq", "marlin"),
                     "gptq": ("gptq", "gptq_marlin", "auto_gptq", "marlin")}

NON_TORCH_MEMORY = 300 * MIB  # CUDA context and libraries (stand-in estimate)
# No CUDA graph memory is taken off the KV cache: the V2 model runner estimates none
# (GPUModelRunner.profile_cudagraph_memory returns 0); stand_in_startup.py captures them.


def architecture(model: str) -> Architecture:
    if model not in MODELS:
        raise StandInError(
            f"the stand-in for vLLM does not know the model {model!r}: add its architecture"
            f" (config.json) to MODELS in tests/stand_in_vllm/vllm/vllm/stand_in.py; it knows"
            f" {', '.join(sorted(MODELS))}")
    return MODELS[model]


# -- options ----------------------------------------------------------------------------------

# The options the stand-in models, with EngineArgs' defaults (None: resolved at start-up).
OPTIONS = {
    "max_model_len": None,
    "gpu_memory_utilization": 0.92,
    "kv_cache_dtype": "auto",
    "kv_cache_memory_bytes": None,
    "block_size": None,
    "enable_prefix_caching": None,
    "attention_backend": None,
    "max_num_batched_tokens": None,
    "max_num_seqs": None,
    "num_gpu_blocks_override": None,
    "disable_log_stats": False,  # LLM() sets True unless given; it changes no figure here
    "async_scheduling": None,  # None: on (VllmConfig.__post_init__, no incompatible option)
    "enable_logging_iteration_details": False,
    "quantization": None,  # from the checkpoint's quantization_config when None
    "enforce_eager": False,  # stand_in_startup.py: no torch.compile, no CUDA graphs
    "speculative_config": None,  # n-gram's JSON, counted by stand_in_spec.py (lesson 7)
    "tensor_parallel_size": 1,  # stand_in_parallelism.py: TP 1 only (lesson 11)
    "kv_offloading_size": None,  # stand_in_kv_offloading.py: the CPU tier (lesson 9)
    "kv_transfer_config": None,  # stand_in_disaggregation.py: ExampleConnector (lesson 12)
}

# EngineArgs.get_batch_defaults on a card under 70 GiB, by usage context.
BATCH_DEFAULTS = {
    "LLM_CLASS": {"max_num_batched_tokens": 8192, "max_num_seqs": 256},
    "OPENAI_API_SERVER": {"max_num_batched_tokens": 2048, "max_num_seqs": 256},
}
DEFAULT_BLOCK_SIZE = 16  # vllm/config/cache.py: CacheConfig.DEFAULT_BLOCK_SIZE
KV_CACHE_DTYPE_BYTES = {"auto": None, "float16": 2, "bfloat16": 2, "fp8": 1, "fp8_e4m3": 1,
                        "fp8_e5m2": 1}


def resolve(options: dict, usage_context: str) -> dict:
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise StandInError(
            f"the stand-in for vLLM does not model the option(s) {', '.join(unknown)}: model"
            " them in tests/stand_in_vllm/vllm/vllm/stand_in.py, or drop them from the lab")
    resolved = {**OPTIONS, **{k: v for k, v in options.items() if v is not None}}
    for name, value in BATCH_DEFAULTS[usage_context].items():
        if resolved[name] is None:
            resolved[name] = value
    if resolved["kv_cache_dtype"] not in KV_CACHE_DTYPE_BYTES:
        raise StandInError(f"the stand-in does not model kv_cache_dtype={resolved['kv_cache_dtype']!r}")
    return resolved


# -- attention backends -------------------------------------------------------------------------

# vllm/platforms/cuda.py: _get_backend_priorities, not MLA, compute capability major != 10.
PRIORITIES = ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION", "TURBOQUANT"]
# supported_kv_cache_dtypes of each backend class (vllm/v1/attention/backends/).
KV_CACHE_DTYPES = {
    "FLASH_ATTN": ["auto", "float16", "bfloat16"],
    "FLASHINFER": ["auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4"],
    "TRITON_ATTN": ["auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2",
                    "int4_per_token_head", "int8_per_token_head", "fp8_per_token_head"],
    "FLEX_ATTENTION": ["auto", "float16", "bfloat16"],
    "TURBOQUANT": ["turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc",
                   "turboquant_3bit_nc"],
}
# Backends that compile their kernels when the engine starts (FlashInfer's JIT needs nvcc from
# a CUDA toolkit, and ninja): a stock rented machine cannot start them.
COMPILES_AT_START = {"FLASHINFER": "FlashInfer JIT-compiles its attention kernels at start-up,"
                                   " with nvcc from a CUDA 13 toolkit and ninja"}


def invalid_reasons(backend: str, kv_cache_dtype: str, capability: tuple[int, int]) -> list[str]:
    reasons = []
    supported = kv_cache_dtype in KV_CACHE_DTYPES[backend]
    if backend == "FLASH_ATTN" and kv_cache_dtype in ("fp8", "fp8_e4m3"):
        supported = capability[0] == 9  # FlashAttention 3, compute capability 9.x only
    if not supported:
        reasons.append("kv_cache_dtype not supported")
    if backend == "FLASHINFER" and not (8, 0) <= capability <= (12, 1):
        reasons.append("compute capability not supported")
    if backend == "FLASH_ATTN" and capability < (8, 0):
        reasons.append("compute capability not supported")
    return reasons


def select_backend(pinned: str | None, kv_cache_dtype: str, gpu: Gpu, log) -> str:
    if pinned is not None and pinned.lower() == "auto":  # AttentionConfig.validate_backend_before
        pinned = None
    if pinned is not None:
        name = pinned.upper()
        if name not in KV_CACHE_DTYPES:
            raise StandInError(f"the stand-in does not model the attention backend {pinned!r}")
        reasons = invalid_reasons(name, kv_cache_dtype, gpu.capability)
        if reasons:
            raise ValueError(f"Selected backend AttentionBackendEnum.{name} is not valid for"
                             f" this configuration. Reason: {reasons}")
        log("pinned", f"AttentionBackendEnum.{name}")
        selected = name
    else:
        valid = [name for name in PRIORITIES
                 if not invalid_reasons(name, kv_cache_dtype, gpu.capability)]
        selected = valid[0]
        log("chosen", selected, "[" + ", ".join(f"'{name}'" for name in valid) + "]")
    if selected in COMPILES_AT_START:
        raise StandInError(
            f"vLLM 0.26.0 would use {selected} here (kv_cache_dtype={kv_cache_dtype!r} on"
            f" compute capability {gpu.capability[0]}.{gpu.capability[1]},"
            f" {'pinned' if pinned else 'no attention backend pinned'}):"
            f" {COMPILES_AT_START[selected]}, which a stock machine does not have. Pin"
            ' attention_backend="TRITON_ATTN" (--attention-backend TRITON_ATTN)')
    return selected


# -- quantized linear layers ---------------------------------------------------------------------

# vllm/model_executor/kernels/linear/__init__.py: _POSSIBLE_KERNELS[PlatformEnum.CUDA], the first
# kernels in priority order (choose_mp_linear_kernel takes the first whose get_min_capability
# the GPU meets and whose can_implement accepts the layer), with whether each can implement a
# 4-bit layer of group size 128 of these checkpoints on compute capability 8.x: CUTLASS W4A8
# wants FP8 activations and no zero points, AllSpark only group_size -1 on Ampere and Ada
# (allspark_utils.py: check_allspark_supported_dtype_shape) and no zero points.
MP_KERNELS = [
    ("CutlassW4A8LinearKernel", 90, False),
    ("MacheteLinearKernel", 90, True),
    ("AllSparkLinearKernel", 80, False),
    ("MarlinLinearKernel", 75, True),
]
# _POSSIBLE_FP8_KERNELS[PlatformEnum.CUDA], the first ones, with their is_supported rule by
# compute capability (scaled_mm/marlin.py: FP8 Marlin from 7.5 but not from 8.9 on unless
# VLLM_TEST_FORCE_FP8_MARLIN; flashinfer.py: 10.0 and up; cutlass.py: any CUDA GPU).
FP8_KERNELS = [
    ("MarlinFP8ScaledMMLinearKernel", lambda cc: 75 <= cc < 89),
    ("FlashInferFP8ScaledMMLinearKernel", lambda cc: cc >= 100),
    ("CutlassFP8ScaledMMLinearKernel", lambda cc: True),
]
MARLIN_WORKSPACE_SMS = 128  # an RTX 4090's SMs: marlin_make_workspace_new's int32 per SM,
# allocated by each linear layer's kernel (MarlinLinearKernel.process_weights_after_loading)
LINEAR_LAYERS_PER_LAYER = 4  # qkv_proj, o_proj, gate_up_proj, down_proj
BANDWIDTH = 1008e9  # bytes/s, an RTX 4090's memory bandwidth
DECODE_EFFICIENCY = 0.8  # share of it a decode step reaches (a stand-in estimate)
PEAK_16BIT = 165.2e12  # FLOP/s, an RTX 4090's dense 16-bit tensor cores, FP32 accumulate
MATMUL_EFFICIENCY = 0.6  # share of it a large batch's matmuls reach (a stand-in estimate)
PREFILL_SECONDS = 0.02  # a short prompt's prefill (a stand-in estimate)


def quantization_method(model: str, user: str | None) -> str | None:
    """vllm/config/model.py: ModelConfig._verify_quantization: a checkpoint's
    quantization_config decides (AutoAWQConfig / AutoGPTQConfig.override_quantization_method
    accept the user's awq/gptq names); a 16-bit checkpoint is quantized online with "fp8"."""
    checkpoint = CHECKPOINT_QUANTIZATION.get(model)
    if checkpoint is None:
        if user in (None, "fp8"):
            return user
        raise StandInError(f"the stand-in does not model quantization={user!r} for {model}")
    if user is None or user in USER_QUANTIZATION[checkpoint]:
        return checkpoint
    raise ValueError(f"Quantization method specified in the model config ({checkpoint}) does"
                     f" not match the quantization method specified in the `quantization`"
                     f" argument ({user}).")


def linear_kernel(method: str, gpu: Gpu) -> str:
    capability = 10 * gpu.capability[0] + gpu.capability[1]
    if method == "fp8":
        return next(name for name, supported in FP8_KERNELS if supported(capability))
    return next(name for name, minimum, implements in MP_KERNELS
                if minimum <= capability and implements)


def load_weights(arch: Architecture, method: str | None, gpu: Gpu) -> int:
    """What GPUModelRunner.load_model measures (DeviceMemoryProfiler): the torch memory
    allocated while loading: the weights as held, RoPE's cos/sin cache (max_position x
    head_dim in the model's dtype, rotary_embedding/base.py) and, for a Marlin kernel, its
    workspace. The kernel lines are logged as the layers are created."""
    shape = (arch.num_layers, arch.hidden_size, arch.num_kv_heads * arch.head_dim,
             arch.intermediate_size, arch.vocab_size)
    tensors = resident_tensors(method or "bf16", *shape)
    loaded = sum(allocator_bytes(size) for size in tensors)
    loaded += allocator_bytes(arch.max_position_embeddings * arch.head_dim * arch.dtype_bytes)
    # set_default_quant_scales: _k/_v/_q/_prob_scale, _k/_v_scale_cpu, q/k/v_range (float32)
    loaded += arch.num_layers * 9 * allocator_bytes(4)
    if method is not None:
        kernel = linear_kernel(method, gpu)
        if method == "fp8":
            log("fp8_kernel", kernel, "Fp8PerTensorOnlineLinearMethod")
        else:
            log(f"{method}_kernel", kernel)
        if "Marlin" in kernel:
            workspace = allocator_bytes(MARLIN_WORKSPACE_SMS * 4)
            loaded += arch.num_layers * LINEAR_LAYERS_PER_LAYER * workspace
    return loaded


# -- log lines -----------------------------------------------------------------------------------

# vLLM 0.26.0's own log messages: (file, line of the logging call, format). Checked against the
# wheel by tests/test_stand_in_vllm.py.
LOG_FORMATS = {
    "engine": ("vllm/v1/engine/core.py", 116,
               "Initializing a V1 LLM engine (v%s) with config: %s"),
    "pinned": ("vllm/platforms/cuda.py", 422, "Using %s backend."),
    "chosen": ("vllm/platforms/cuda.py", 482,
               "Using %s attention backend out of potential backends: %s."),
    "block_size": ("vllm/platforms/interface.py", 635,
                   "Setting kv cache block size to %d for %s backend."),
    # Qwen2.5 is a dense model: vLLM 0.26.0 runs it with the V2 model runner
    # (vllm/config/vllm.py: VllmConfig.use_v2_model_runner), whose load_model logs this line.
    "weights": ("vllm/v1/worker/gpu/model_runner.py", 305,
                "Model loading took %s GiB and %.6f seconds"),
    "awq_kernel": ("vllm/model_executor/layers/quantization/auto_awq.py", 473,
                   "Using %s for AutoAWQMarlinLinearMethod"),
    "gptq_kernel": ("vllm/model_executor/layers/quantization/auto_gptq.py", 357,
                    "Using %s for AutoGPTQLinearMethod"),
    "fp8_kernel": ("vllm/model_executor/kernels/linear/__init__.py", 635, "Selected %s for %s"),
    "available": ("vllm/v1/worker/gpu_worker.py", 560, "Available KV cache memory: %s GiB"),
    "override": ("vllm/v1/core/kv_cache_utils.py", 2115,
                 "Overriding num_gpu_blocks=%d with num_gpu_blocks_override=%d"),
    "tokens": ("vllm/v1/core/kv_cache_utils.py", 2177, "GPU KV cache size: %s tokens"),
    "concurrency": ("vllm/v1/core/kv_cache_utils.py", 2178,
                    "Maximum concurrency for %s tokens per request: %.2fx"),
    "async": ("vllm/config/vllm.py", 1109, "Asynchronous scheduling is %s."),
    "iteration": ("vllm/v1/metrics/loggers.py", 182,
                  "%sIteration(%d): %d context requests, %d context tokens, "
                  "%d generation requests, %d generation tokens, "
                  "iteration elapsed time: %.2f ms%s, "
                  "GPU KV cache usage: %.1f%%%s"),
    # BlockPool.reset_prefix_cache (LLM.reset_prefix_cache, POST /reset_prefix_cache)
    "reset": ("vllm/v1/core/block_pool.py", 790, "Successfully reset prefix cache"),
    "reset_failed": ("vllm/v1/core/block_pool.py", 772,
                     "Failed to reset prefix cache because some blocks (%d) are not freed yet"),
}
WARNINGS = {"reset_failed"}  # logged with logger.warning, the others with logger.info


def log_stream():
    """Where vLLM logs: stdout, unless VLLM_LOGGING_STREAM says ext://sys.stderr."""
    stream = os.environ.get("VLLM_LOGGING_STREAM", "ext://sys.stdout")
    return sys.stderr if stream == "ext://sys.stderr" else sys.stdout


def log(key: str, *args) -> None:
    """One line as vLLM's logger prints it: level, time, [file:line], message."""
    path, line, fmt = LOG_FORMATS[key]
    stamp = time.strftime("%m-%d %H:%M:%S")
    level = "WARNING" if key in WARNINGS else "INFO"
    print(f"{level} {stamp} [{path.rsplit('/', 1)[1]}:{line}] {fmt % args}", file=log_stream(),
          flush=True)


def announce() -> None:
    """The stand-in's own first line, so that no log of a dry run passes for a GPU run's."""
    stamp = time.strftime("%m-%d %H:%M:%S")
    print(f"WARNING {stamp} [stand_in.py:1] dry run: this is the stand-in for vLLM {VERSION}"
          " (tests/stand_in_vllm), no GPU; its figures are computed, not measured",
          file=log_stream(), flush=True)


def format_gib(size: int) -> str:
    """vllm/utils/mem_utils.py: format_gib."""
    return f"{round(size / GIB, 2)}"


# -- start-up ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Engine:
    model: str
    options: dict
    backend: str
    block_size: int
    num_blocks: int
    tokens: int
    max_concurrency: float
    decode_step_seconds: float = 0.01  # one decode step of one sequence
    token_flops: int = 0  # the weight matmuls of one sequence in one decode step
    loaded: int = 0  # "Model loading took": what stand_in_startup.py's summary reports
    activation: int = 0  # the profiled activation peak, likewise

    def decode_seconds(self, sequences: int) -> float:
        """One decode step of `sequences` sequences: the weights' reads, or, for a large
        batch, the 16-bit matmuls (a W4A16 kernel dequantizes and computes in 16-bit)."""
        matmuls = sequences * self.token_flops / (PEAK_16BIT * MATMUL_EFFICIENCY)
        return max(self.decode_step_seconds, matmuls)


def activation_peak(arch: Architecture, options: dict) -> int:
    """A rough stand-in for the profiled activation peak: the MLP's gate and up outputs for
    every token of a step, and float32 logits for every sequence."""
    tokens = options["max_num_batched_tokens"]
    return (tokens * 2 * arch.intermediate_size * arch.dtype_bytes
            + options["max_num_seqs"] * arch.vocab_size * 4)


def start(model: str, options: dict, usage_context: str, gpu: Gpu = RTX_4090) -> Engine:
    """What vLLM 0.26.0 logs and decides while its engine starts."""
    refuse_unless_dry_run()
    arch = architecture(model)
    options = resolve(options, usage_context)
    if options["max_model_len"] is None:
        options["max_model_len"] = arch.max_position_embeddings
    announce()
    if options["async_scheduling"] is None:  # VllmConfig.__post_init__: on, for these models
        # ... unless speculation is n-gram, which turns it off
        options["async_scheduling"] = options["speculative_config"] is None
    log("async", "enabled" if options["async_scheduling"] else "disabled")
    if options["async_scheduling"] and options["enable_logging_iteration_details"]:
        raise StandInError(
            "the stand-in schedules synchronously, as vLLM does with async_scheduling=False"
            " (--no-async-scheduling); with vLLM's default AsyncScheduler a step is scheduled"
            " before the previous step's tokens are known, and the iteration details it logs"
            " (which requests still hold seats and blocks, the KV cache usage) are not the"
            " synchronous scheduler's. The stand-in does not model that: turn async"
            " scheduling off in a lab that compares Iteration lines with a simulator")
    config = ", ".join(f"{name}={value}" for name, value in options.items())
    log("engine", VERSION, f"model='{model}', dtype=torch.{arch.dtype}, {config}")
    backend = select_backend(options["attention_backend"], options["kv_cache_dtype"], gpu, log)
    block_size = options["block_size"] or DEFAULT_BLOCK_SIZE
    if block_size % 16:
        raise ValueError("Block size must be a multiple of 16.")
    method = quantization_method(model, options["quantization"])
    loaded = load_weights(arch, method, gpu)
    log("weights", format_gib(loaded), 4.2)

    if options["kv_cache_memory_bytes"]:
        available = options["kv_cache_memory_bytes"]
    else:
        requested = math.ceil(gpu.total_memory * options["gpu_memory_utilization"])
        available = requested - loaded - activation_peak(arch, options) - NON_TORCH_MEMORY
        log("available", format_gib(available))
    if available <= 0:
        raise ValueError("No available memory for the cache blocks. Try increasing"
                         " `gpu_memory_utilization` when initializing the engine.")

    dtype_bytes = KV_CACHE_DTYPE_BYTES[options["kv_cache_dtype"]] or arch.dtype_bytes
    page_size = 2 * block_size * arch.num_kv_heads * arch.head_dim * dtype_bytes  # per layer
    num_blocks = int(available // page_size // arch.num_layers)
    if options["num_gpu_blocks_override"] is not None:  # may_override_num_blocks
        log("override", num_blocks, options["num_gpu_blocks_override"])
        num_blocks = options["num_gpu_blocks_override"]
    max_model_len = options["max_model_len"]
    max_concurrency = num_blocks / -(-max_model_len // block_size)
    tokens = int(max_concurrency * max_model_len)
    if max_concurrency < 1:
        raise ValueError(f"To serve at least one request with the models's max seq len"
                         f" ({max_model_len}), more KV cache memory is needed")
    log("tokens", f"{tokens:,}")
    log("concurrency", f"{max_model_len:,}", max_concurrency)
    decode = loaded / (BANDWIDTH * DECODE_EFFICIENCY)  # each step reads the weights once
    # a multiply-add per linear weight and per lm_head weight (one logits row per sequence)
    flops = 2 * (linear_weights(arch.num_layers, arch.hidden_size,
                                arch.num_kv_heads * arch.head_dim, arch.intermediate_size)
                 + arch.vocab_size * arch.hidden_size)
    return Engine(model, options, backend, block_size, num_blocks, tokens, max_concurrency,
                  decode, flops, loaded, activation_peak(arch, options))


# -- the block pool, the scheduler and the stats (the labs that step the engine) -----------------
# The stand-in's own small arithmetic, each rule naming the vLLM 0.26.0 function it mirrors; it
# shares no code with the lessons, whose predictions the GPU checks compare with it. Modelled:
# one full-attention KV cache group; prefix-cache hits only for a lab that sets
# enable_prefix_caching=True itself (PrefixIndex, below: lesson 5's lab). With the option left at
# its default, the stand-in counts prefix cache queries but finds no hit: the labs of lessons 2
# and 3 send prompts that share no full block, and a preempted request recomputes all it had, as
# their simulators (without prefix caching) have it; the FCFS policy;
# preemption by recompute; no speculative decoding; the V2 model runner's view of a step (vLLM's
# default for a dense model: a resumed request is sent as a new one); synchronous scheduling, as
# vLLM schedules with async_scheduling=False. vLLM's default, the AsyncScheduler, schedules step
# N+1 before step N's tokens are known: the stand-in does not model it, and refuses to log
# iteration details for it (start, above).

# The models never sample end-of-sequence here: a request ends at max_tokens or max_model_len.
DRY_RUN_WORDS = " (dry run) Each decode step reads the weights and every sequence's KV cache.".split(" ")


def cdiv(a: int, b: int) -> int:
    """vllm/utils/math_utils.py: cdiv."""
    return -(a // -b)


class Request:
    def __init__(self, request_id: str, prompt_token_ids: list[int], max_tokens: int,
                 ignore_eos: bool, skip_reading_prefix_cache: bool = False):
        self.request_id = request_id
        self.skip_reading_prefix_cache = skip_reading_prefix_cache  # prompt_logprobs asked
        self.prompt_token_ids = list(prompt_token_ids)
        self.output_token_ids: list[int] = []
        self.max_tokens = max_tokens
        self.ignore_eos = ignore_eos
        self.num_computed_tokens = 0
        self.num_blocks = 0  # SingleTypeKVCacheManager.req_to_blocks[request_id], as a count
        self.finished = False
        # PREEMPTED events recorded and not yet sent: they go with the request's next output
        # (Request.record_event, take_events in Scheduler.update_from_output).
        self.preempted_events = 0
        self.num_preemptions = 0  # vllm/v1/request.py: Request.num_preemptions
        # PrefillStats.num_cached_tokens, set when first scheduled: RequestOutput's
        self.num_cached_tokens = 0
        self.cached_prefixes: list[tuple[int, ...]] = []  # its full blocks that are cached

    @property
    def num_tokens(self) -> int:  # vllm/v1/request.py: Request.num_tokens
        return len(self.prompt_token_ids) + len(self.output_token_ids)


@dataclass
class IterationDetails:
    """vllm/v1/metrics/stats.py: SchedulerIterationDetails, as EngineCore.capture_iteration_details
    fills it in with vllm/v1/utils.py: compute_iteration_details."""

    index: int
    context_requests: int
    context_tokens: int
    generation_requests: int
    generation_tokens: int
    elapsed_ms: float = 0.0


@dataclass
class SchedulerStats:
    """vllm/v1/metrics/stats.py: SchedulerStats, the fields the stand-in models (make_stats)."""

    running: int
    waiting: int
    kv_cache_usage: float
    iteration: IterationDetails | None = None
    # PrefixCacheStats of the step (KVCacheManager.make_prefix_cache_stats), in tokens
    prefix_cache_queries: int = 0
    prefix_cache_hits: int = 0
    # The connector's lookups, (queries, hits) in tokens: stand_in_kv_offloading.py (lesson 9)
    external_prefix_cache: tuple[int, int] | None = None


@dataclass
class StepResult:
    """What one engine step hands the frontend (EngineCoreOutputs): the requests that got a
    token, in schedule order, and the scheduler's stats when stats are kept."""

    scheduled: dict[str, int]  # request id -> tokens computed in the step (num_scheduled_tokens)
    sampled: list[Request]  # one EngineCoreOutput each
    outputs: list[tuple[str, list[int], bool]]  # theirs then: id, output token ids, finished
    prompt_tokens: int  # prompts of those that got their first token (their PrefillStats)
    preemptions: int  # PREEMPTED events sent with these outputs
    stats: SchedulerStats | None


class PrefixIndex:
    """The prefix cache, as the stand-in models it, in its own terms: a cached block is known
    by the whole prefix of token ids it ends, which is what vLLM's chained block hash stands
    for (vllm/v1/core/kv_cache_utils.py: hash_block_tokens chains each full block's hash on
    its parent's); the stand-in compares the token ids themselves, no hash.

    Free cached blocks wait in least-recently-used order: a new block is taken from the free
    blocks without a hash first, then from the oldest cached one, whose prefix is forgotten
    (vllm/v1/core/block_pool.py: BlockPool.get_new_blocks, _maybe_evict_cached_block; the free
    queue holds never-cached blocks before freed cached ones). A finished request's blocks go
    back last block first (KVCacheManager.free), so its tail is forgotten first. Not modelled:
    two running requests sharing a block (the stand-in refuses a hit on a block in use)."""

    def __init__(self, block_size: int):
        self.block_size = block_size
        self.free: dict[tuple[int, ...], int] = {}  # prefix -> free blocks ending it, LRU first
        self.in_use: dict[tuple[int, ...], int] = {}  # prefix -> running blocks ending it

    def prefixes(self, token_ids: list[int], num_tokens: int) -> list[tuple[int, ...]]:
        """The prefixes that the full blocks of the first num_tokens tokens end."""
        size = self.block_size
        return [tuple(token_ids[:end]) for end in range(size, num_tokens + 1, size)]

    def longest_hit(self, prompt: list[int]) -> list[tuple[int, ...]]:
        """vllm/v1/core/kv_cache_manager.py: KVCacheManager.get_computed_blocks: the cached
        blocks from the first one on, stopping at the first miss, and never the block of the
        last prompt token, which is always computed again (max_cache_hit_length =
        num_tokens - 1)."""
        hit = []
        for prefix in self.prefixes(prompt, len(prompt) - 1):
            if prefix not in self.free:
                if prefix in self.in_use:
                    raise StandInError(
                        "the stand-in does not model two running requests sharing a cached"
                        " block: run the lab's requests one after the other")
                break
            hit.append(prefix)
        return hit

    def take(self, prefixes: list[tuple[int, ...]]) -> None:
        """Hit blocks leave the free queue (BlockPool.touch)."""
        for prefix in prefixes:
            self._drop(self.free, prefix)
            self.in_use[prefix] = self.in_use.get(prefix, 0) + 1

    def evict(self, new_blocks: int, free_blocks: int) -> None:
        """Hand out new_blocks of free_blocks free ones: the free cached ones go last, oldest
        first, and lose their prefix."""
        cached = sum(self.free.values())
        for _ in range(max(0, new_blocks - (free_blocks - cached))):
            self._drop(self.free, next(iter(self.free)))

    def cache(self, request: Request, num_tokens: int) -> None:
        """vllm/v1/core/block_pool.py: BlockPool.cache_full_blocks: every full block of the
        first num_tokens tokens (prompt and output alike) is cached."""
        tokens = request.prompt_token_ids + request.output_token_ids
        for prefix in self.prefixes(tokens, num_tokens)[len(request.cached_prefixes):]:
            request.cached_prefixes.append(prefix)
            self.in_use[prefix] = self.in_use.get(prefix, 0) + 1

    def release(self, request: Request) -> None:
        """Its cached blocks go to the end of the free queue, its last block first."""
        for prefix in reversed(request.cached_prefixes):
            self._drop(self.in_use, prefix)
            self.free[prefix] = self.free.pop(prefix, 0) + 1
        request.cached_prefixes = []

    @staticmethod
    def _drop(counts: dict, prefix: tuple[int, ...]) -> None:
        counts[prefix] -= 1
        if not counts[prefix]:
            del counts[prefix]


class Scheduler:
    """One engine core: its block pool, scheduler and scheduler stats."""

    def __init__(self, engine: Engine, log_stats: bool):
        self.num_gpu_blocks = engine.num_blocks
        self.block_size = engine.block_size
        self.max_model_len = engine.options["max_model_len"]
        self.max_num_batched_tokens = engine.options["max_num_batched_tokens"]
        self.max_num_seqs = engine.options["max_num_seqs"]
        self.log_stats = log_stats
        # EngineCore.capture_iteration_details: only with stats and the observability option.
        self.log_iterations = log_stats and bool(engine.options["enable_logging_iteration_details"])
        self.iteration_index = 0
        # vllm/v1/core/block_pool.py: BlockPool.__init__ takes block 0 as the null block.
        self.num_free_blocks = self.num_gpu_blocks - 1
        self.waiting: list[Request] = []
        self.running: list[Request] = []
        self.kv_cache_usage = 0.0  # the gauge: set by each step's stats (make_stats)
        # Prefix caching (vllm/config/cache.py: CacheConfig.enable_prefix_caching, on by
        # default): queries are counted unless it is off; hits are modelled only when the lab
        # turns it on itself (the comment above PrefixIndex says why).
        caching = engine.options["enable_prefix_caching"]
        self.counts_queries = caching is not False
        self.prefix_index = PrefixIndex(self.block_size) if caching is True else None
        self.prefix_cache_queries = self.prefix_cache_hits = 0  # this step's, in tokens
        self.cpu_tier = None  # lesson 9: --kv-offloading-size
        if engine.options.get("kv_offloading_size") is not None:
            from vllm import stand_in_kv_offloading

            self.cpu_tier = stand_in_kv_offloading.tier(engine, self.prefix_index)
        if engine.options.get("kv_transfer_config") is not None:  # lesson 12, the same calls
            from vllm import stand_in_disaggregation

            self.cpu_tier = stand_in_disaggregation.connector(engine)

    def get_usage(self) -> float:
        """vllm/v1/core/block_pool.py: BlockPool.get_usage."""
        total_gpu_blocks = self.num_gpu_blocks - 1  # subtract 1 for the null block
        if not total_gpu_blocks:
            return 0
        return 1.0 - (self.num_free_blocks / total_gpu_blocks)

    def add_request(self, request: Request) -> None:
        prompt_len = len(request.prompt_token_ids)
        if not prompt_len:
            raise ValueError("The decoder prompt cannot be empty")
        if prompt_len >= self.max_model_len:  # vllm/v1/engine/input_processor.py
            raise ValueError(f"The decoder prompt (length {prompt_len}) is longer than the"
                             f" maximum model length of {self.max_model_len}.")
        self.waiting.append(request)  # Scheduler.add_request: the back of the FCFS queue

    def has_unfinished_requests(self) -> bool:
        return bool(self.waiting or self.running)

    def _allocate_slots(self, request: Request, num_new_tokens: int,
                        full_sequence_must_fit: bool = False, hit: tuple = ()) -> bool:
        """vllm/v1/core/kv_cache_manager.py: KVCacheManager.allocate_slots: blocks for the
        computed tokens and the new ones, cdiv(tokens, block_size)
        (single_type_kv_cache_manager.py: SingleTypeKVCacheManager.get_num_blocks_to_allocate);
        False, allocating nothing, when too few are free. A waiting request must also fit
        whole (full_sequence_must_fit: SchedulerConfig.scheduler_reserve_full_isl, True).
        hit: the cached blocks a new request reuses, free blocks it takes too; then the
        blocks of the tokens computed so far and scheduled now are cached."""
        if full_sequence_must_fit:
            whole = cdiv(min(request.num_tokens, self.max_model_len), self.block_size)
            if whole - request.num_blocks > self.num_free_blocks:
                return False
        num_tokens_need_slot = min(request.num_computed_tokens + num_new_tokens,
                                   self.max_model_len)
        needed = cdiv(num_tokens_need_slot, self.block_size) - request.num_blocks
        if needed > self.num_free_blocks:
            return False
        if needed > 0:
            if self.prefix_index is not None:
                self.prefix_index.take(list(hit))
                request.cached_prefixes.extend(hit)
                self.prefix_index.evict(needed - len(hit), self.num_free_blocks - len(hit))
            self.num_free_blocks -= needed  # BlockPool.get_new_blocks
            request.num_blocks += needed
        if self.prefix_index is not None:  # KVCacheManager.allocate_slots: cache_blocks
            self.prefix_index.cache(request, min(num_tokens_need_slot, request.num_tokens))
        return True

    def _lookup(self, request: Request) -> list[tuple[int, ...]]:
        """vllm/v1/core/kv_cache_manager.py: KVCacheManager.get_computed_blocks, each time a
        waiting request is considered: its cached prefix, and PrefixCacheStats.record counts
        its tokens as queried and its hit as hits, unless it was preempted before."""
        hit = []
        if request.skip_reading_prefix_cache:  # no lookup, and no query counted
            return hit
        if self.prefix_index is not None:
            hit = self.prefix_index.longest_hit(request.prompt_token_ids
                                                + request.output_token_ids)
        if self.counts_queries and self.log_stats and not request.num_preemptions:
            self.prefix_cache_queries += request.num_tokens
            self.prefix_cache_hits += len(hit) * self.block_size
        return hit

    def reset_prefix_cache(self) -> bool:
        """vllm/v1/core/block_pool.py: BlockPool.reset_prefix_cache: only when no request
        holds a block; every cached block forgets its prefix. The counters go on."""
        held = self.num_gpu_blocks - 1 - self.num_free_blocks
        if held:
            log("reset_failed", held)
            return False
        if self.prefix_index is not None:
            self.prefix_index.free.clear()
        log("reset")
        return True

    def _free(self, request: Request) -> None:
        """vllm/v1/core/sched/scheduler.py: Scheduler._free_blocks (BlockPool.free_blocks)."""
        self.num_free_blocks += request.num_blocks
        request.num_blocks = 0
        if self.prefix_index is not None:
            self.prefix_index.release(request)

    def _preempt(self, request: Request) -> None:
        """vllm/v1/core/sched/scheduler.py: Scheduler._preempt_request: its blocks go back,
        it forgets what it computed, and waits at the front of the queue."""
        self._free(request)
        request.num_computed_tokens = 0
        request.num_preemptions += 1
        if self.log_stats:
            request.preempted_events += 1
        self.waiting.insert(0, request)

    def _schedule(self) -> tuple[dict[str, int], set[str]]:
        """vllm/v1/core/sched/scheduler.py: Scheduler.schedule: the token budget goes to the
        running requests in order (a prompt's next chunk, or one token), preempting the last
        running request while blocks run short; then, unless a request was preempted, to the
        waiting ones head first, while the budget lasts and fewer than max_num_seqs run.
        Returns the tokens per request and the requests that joined from the queue."""
        budget, scheduled, preempted = self.max_num_batched_tokens, {}, False
        index = 0
        while index < len(self.running) and budget > 0:
            request = self.running[index]
            new = min(request.num_tokens - request.num_computed_tokens, budget,
                      self.max_model_len - request.num_computed_tokens - 1)
            if new <= 0:
                index += 1
                continue
            fits = True
            while not self._allocate_slots(request, new):
                victim = self.running.pop()  # SchedulingPolicy.FCFS: the last one
                self._preempt(victim)
                preempted = True
                if victim is request:
                    fits = False
                    break
            if not fits:
                break  # it preempted itself: no running request after it runs this step
            scheduled[request.request_id] = new
            budget -= new
            index += 1
        joined = set()
        while (not preempted and self.waiting and budget > 0
               and len(self.running) < self.max_num_seqs):
            request = self.waiting[0]
            hit = self._lookup(request)
            request.num_computed_tokens = len(hit) * self.block_size
            if self.cpu_tier is not None:  # lesson 9: the CPU tier's hit, loaded
                request.num_computed_tokens = self.cpu_tier.admit(
                    request, request.num_computed_tokens, self.log_stats)
            # request.num_tokens: a preempted request recomputes its output tokens too.
            new = min(request.num_tokens - request.num_computed_tokens, budget)
            if not self._allocate_slots(request, new, full_sequence_must_fit=True, hit=hit):
                request.num_computed_tokens = 0
                break
            if not request.num_preemptions:  # PrefillStats: the first schedule only
                request.num_cached_tokens = request.num_computed_tokens
            self.running.append(self.waiting.pop(0))
            scheduled[request.request_id] = new
            joined.add(request.request_id)
            budget -= new
        return scheduled, joined

    def _details(self, scheduled: dict[str, int], joined: set[str]) -> IterationDetails:
        """vllm/v1/utils.py: compute_iteration_details: a context request is one sent as new
        (with the V2 model runner a resumed request is sent as new too) or one with no output
        token yet (a prompt's later chunk); the others are generation requests."""
        by_id = {request.request_id: request for request in self.running + self.waiting}
        context = [i for i in scheduled
                   if i in joined or not by_id[i].output_token_ids]
        generation = [i for i in scheduled if i not in context]
        return IterationDetails(self.iteration_index, len(context),
                                sum(scheduled[i] for i in context), len(generation),
                                sum(scheduled[i] for i in generation))

    def engine_step(self) -> StepResult:
        """One engine step (vllm/v1/engine/core.py: EngineCore.step): schedule; the model
        samples one token for each request whose tokens are all computed (a prompt's earlier
        chunk samples nothing); Scheduler.update_from_output frees finished requests' blocks
        before make_stats reads the usage."""
        started = time.monotonic()
        scheduled, joined = self._schedule()
        details = None
        if self.log_iterations and scheduled:  # a step of 0 tokens logs nothing
            details = self._details(scheduled, joined)
            self.iteration_index += 1
        by_id = {request.request_id: request for request in self.running}
        sampled, prompt_tokens, preemptions = [], 0, 0
        for request_id, new in scheduled.items():
            request = by_id[request_id]
            request.num_computed_tokens += new
            if request.num_computed_tokens < request.num_tokens:
                continue  # a chunk of the prompt (or of a recompute): no token sampled
            if not request.output_token_ids:  # PrefillStats: the prompt, once
                # PromptTokenStats.computed: the prompt tokens not served from the cache
                prompt_tokens += len(request.prompt_token_ids) - request.num_cached_tokens
            request.output_token_ids.append(1000 + len(request.output_token_ids) % 100)
            sampled.append(request)
            preemptions += request.preempted_events
            request.preempted_events = 0
            # vllm/v1/core/sched/utils.py: check_stop (no EOS is sampled here)
            if (len(request.output_token_ids) >= request.max_tokens
                    or request.num_tokens >= self.max_model_len):
                request.finished = True
                self.running.remove(request)
                self._free(request)
        stats = None
        if self.log_stats:  # Scheduler.make_stats: kv_cache_usage=KVCacheManager.usage
            self.kv_cache_usage = self.get_usage()
            stats = SchedulerStats(len(self.running), len(self.waiting), self.kv_cache_usage,
                                   prefix_cache_queries=self.prefix_cache_queries,
                                   prefix_cache_hits=self.prefix_cache_hits)
            self.prefix_cache_queries = self.prefix_cache_hits = 0
            if self.cpu_tier is not None:  # lesson 9
                stats.external_prefix_cache = self.cpu_tier.take_stats()
            if details is not None:
                details.elapsed_ms = (time.monotonic() - started) * 1000
                stats.iteration = details
        outputs = [(request.request_id, list(request.output_token_ids), request.finished)
                   for request in sampled]
        return StepResult(scheduled, sampled, outputs, prompt_tokens, preemptions, stats)

    def step(self) -> list[Request]:
        """One engine step; the requests that got a token."""
        return self.engine_step().sampled


# The log-probability the stand-in gives every prompt token, by the quantization of its
# weights: stand-in figures (a perplexity of e**2 for BF16), not a model's.
DRY_RUN_PROMPT_LOGPROB = {None: -2.0, "fp8": -2.01, "awq": -2.03, "gptq": -2.04}


def dry_run_prompt_logprob(engine: Engine) -> float:
    return DRY_RUN_PROMPT_LOGPROB[quantization_method(engine.model,
                                                      engine.options["quantization"])]


def dry_run_text(token_ids: list[int]) -> str:
    """The stand-in has no tokenizer: one word of a fixed sentence per generated token."""
    return " ".join(DRY_RUN_WORDS[i % len(DRY_RUN_WORDS)] for i in range(len(token_ids)))


def dry_run_prompt_tokens(prompt) -> list[int]:
    """Token ids of a prompt: given as ids, or a text the stand-in has no tokenizer for,
    counted as one token per 4 bytes (a stand-in estimate, not a tokenizer's)."""
    if isinstance(prompt, dict):
        unknown = sorted(set(prompt) - {"prompt_token_ids", "prompt"})
        if unknown:  # e.g. cache_salt, which enters the first block's hash in vLLM
            raise StandInError(f"the stand-in does not model a prompt's {', '.join(unknown)}")
        prompt = prompt.get("prompt_token_ids", prompt.get("prompt"))
    if isinstance(prompt, str):
        return [0] * max(1, cdiv(len(prompt.encode("utf-8")), 4))
    if isinstance(prompt, list) and all(isinstance(t, int) for t in prompt):
        return prompt
    raise StandInError(f"the stand-in does not model the prompt {prompt!r:.80}")


# -- metrics: vllm/v1/metrics/loggers.py (PrometheusStatLogger) -------------------------------

CACHE_CONFIG_INFO = "vllm:cache_config_info"
KV_CACHE_USAGE = "vllm:kv_cache_usage_perc"
NUM_RUNNING, NUM_WAITING = "vllm:num_requests_running", "vllm:num_requests_waiting"
NUM_PREEMPTIONS = "vllm:num_preemptions"  # a counter: its sample is vllm:num_preemptions_total
ITERATION_TOKENS = "vllm:iteration_tokens_total"  # a histogram, _total and all
METRIC_HELP = {  # name: documentation, as PrometheusStatLogger registers them
    CACHE_CONFIG_INFO: "Information of the LLMEngine CacheConfig",
    NUM_RUNNING: "Number of requests in model execution batches.",
    NUM_WAITING: "Number of requests waiting to be processed.",
    KV_CACHE_USAGE: "KV-cache usage. 1 means 100 percent usage.",
    NUM_PREEMPTIONS: "Cumulative number of preemption from the engine.",
    ITERATION_TOKENS: "Histogram of number of tokens per engine_step.",
}
# The prefix cache counters, in tokens (PrometheusStatLogger.__init__: counter_prefix_cache_*),
# set from each recorded step's SchedulerStats.prefix_cache_stats (PrometheusStatLogger.record).
PREFIX_CACHE_QUERIES, PREFIX_CACHE_HITS = "vllm:prefix_cache_queries", "vllm:prefix_cache_hits"
COUNTER_HELP = {
    PREFIX_CACHE_QUERIES: "Prefix cache queries, in terms of number of queried tokens.",
    PREFIX_CACHE_HITS: "Prefix cache hits, in terms of number of cached tokens.",
}
# histogram_iteration_tokens' buckets (PrometheusStatLogger.__init__)
ITERATION_TOKENS_BUCKETS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]


def _gauges(engine: Engine, running: int, waiting: int, usage: float
            ) -> list[tuple[str, dict, float]]:
    """The gauges the stand-in models, (name, labels, value), labels in vLLM's order:
    ["model_name", "engine"]; cache_config_info's are CacheConfig.metrics_info() (the stand-in
    gives a few of its fields: vLLM gives them all) and then "engine"."""
    labels = {"model_name": engine.model, "engine": "0"}
    info = {"block_size": str(engine.block_size),
            "gpu_memory_utilization": str(engine.options["gpu_memory_utilization"]),
            "cache_dtype": engine.options["kv_cache_dtype"],
            "num_gpu_blocks": str(engine.num_blocks),
            "num_gpu_blocks_override": str(engine.options["num_gpu_blocks_override"]),
            "engine": "0"}
    return [(CACHE_CONFIG_INFO, info, 1.0), (NUM_RUNNING, labels, float(running)),
            (NUM_WAITING, labels, float(waiting)), (KV_CACHE_USAGE, labels, usage)]


def gauges(engine: Engine, scheduler: Scheduler) -> list[tuple[str, dict, float]]:
    """The gauges of a scheduler stepped on its own, read from its last stats."""
    running = len(scheduler.running) if scheduler.log_stats else 0
    waiting = len(scheduler.waiting) if scheduler.log_stats else 0
    return _gauges(engine, running, waiting, scheduler.kv_cache_usage)


def prometheus_text(engine: Engine, scheduler: Scheduler) -> str:
    """GET /metrics: the Prometheus text format (prometheus_client.generate_latest), for the
    gauges of a scheduler stepped on its own."""
    return "\n".join(_gauge_lines(gauges(engine, scheduler))) + "\n"


def float_to_go_string(value: float) -> str:
    """How prometheus_client writes a sample's value and a bucket's bound (utils.floatToGoString):
    8 -> "8.0", infinity -> "+Inf", 1732870000.5 -> "1.7328700005e+09"."""
    value = float(value)
    if value == math.inf:
        return "+Inf"
    text = repr(value)
    dot = text.find(".")
    if value > 0 and dot > 6:
        mantissa = f"{text[0]}.{text[1:dot]}{text[dot + 1:]}".rstrip("0.")
        return f"{mantissa}e+0{dot - 1}"
    return text


class StatLoggers:
    """The frontend's stat loggers (vllm/v1/metrics/loggers.py: StatLoggerManager), recording
    the engine's steps in order: LoggingStatLogger logs each step's Iteration line (when the
    engine computed iteration details), PrometheusStatLogger sets its gauges from the
    scheduler's stats and, for a step with outputs (its IterationStats), counts preemptions and
    observes vllm:iteration_tokens_total: the prompts of the requests that got their first
    token plus the tokens generated (PromptTokenStats.computed + num_generation_tokens)."""

    def __init__(self, engine: Engine, log_stats: bool):
        self.engine, self.log_stats = engine, log_stats
        self.running = self.waiting = 0
        self.kv_cache_usage = 0.0
        self.num_preemptions = 0
        self.iteration_tokens: list[int] = []  # the histogram's observations
        self.prefix_cache = {PREFIX_CACHE_QUERIES: 0, PREFIX_CACHE_HITS: 0}
        self.created = time.time()

    def record(self, result: StepResult, iteration_stats: bool) -> None:
        """StatLoggerManager.record. LLMEngine.step records a step only when it has outputs;
        AsyncLLM's output_handler (vllm serve) records every step, with IterationStats only
        when it has outputs: the caller says which (iteration_stats)."""
        stats = result.stats
        if stats is not None:
            details = stats.iteration
            if details is not None:  # LoggingStatLogger._log_iteration_details
                log("iteration", "Engine 000: ", details.index, details.context_requests,
                    details.context_tokens, details.generation_requests,
                    details.generation_tokens, details.elapsed_ms, "",
                    stats.kv_cache_usage * 100, "")
            self.running, self.waiting = stats.running, stats.waiting
            self.kv_cache_usage = stats.kv_cache_usage
            self.prefix_cache[PREFIX_CACHE_QUERIES] += stats.prefix_cache_queries
            self.prefix_cache[PREFIX_CACHE_HITS] += stats.prefix_cache_hits
            if stats.external_prefix_cache is not None:  # lesson 9: the connector's counters
                from vllm.stand_in_kv_offloading import EXTERNAL_HITS, EXTERNAL_QUERIES

                for name, value in zip((EXTERNAL_QUERIES, EXTERNAL_HITS),
                                       stats.external_prefix_cache):
                    self.prefix_cache[name] = self.prefix_cache.get(name, 0) + value
        if iteration_stats:
            self.num_preemptions += result.preemptions
            self.iteration_tokens.append(result.prompt_tokens + len(result.sampled))

    def gauges(self) -> list[tuple[str, dict, float]]:
        return _gauges(self.engine, self.running, self.waiting, self.kv_cache_usage)

    def buckets(self) -> dict[str, int]:
        """Cumulative counts by upper bound, as prometheus_client keeps them."""
        bounds = [*ITERATION_TOKENS_BUCKETS, math.inf]
        return {float_to_go_string(le): sum(1 for n in self.iteration_tokens if n <= le)
                for le in bounds}

    def metrics(self) -> list:
        """LLM.get_metrics(): vllm/v1/metrics/reader.py: get_metrics_snapshot, for the metrics
        the stand-in models."""
        from vllm.v1.metrics.reader import Counter, Gauge, Histogram

        labels = {"model_name": self.engine.model, "engine": "0"}
        found = [Gauge(name=name, labels=dict(tags), value=value)
                 for name, tags, value in self.gauges()]
        found.append(Counter(name=NUM_PREEMPTIONS, labels=dict(labels),
                             value=self.num_preemptions))
        found.append(Histogram(name=ITERATION_TOKENS, labels=dict(labels),
                               count=len(self.iteration_tokens),
                               sum=float(sum(self.iteration_tokens)), buckets=self.buckets()))
        found += [Counter(name=name, labels=dict(labels), value=value)
                  for name, value in self.prefix_cache.items()]
        return found

    def prometheus_text(self) -> str:
        """GET /metrics: the Prometheus text format (prometheus_client.generate_latest): a
        counter is written as name_total, and the _created samples of a counter or histogram
        as gauges of their own after it."""
        tags = f'model_name="{self.engine.model}",engine="0"'
        go = float_to_go_string
        preempted, tokens = NUM_PREEMPTIONS, ITERATION_TOKENS
        lines = _gauge_lines(self.gauges())
        lines += _family(f"{preempted}_total", preempted, "counter",
                         [f"{preempted}_total{{{tags}}} {go(self.num_preemptions)}"])
        lines += _family(f"{preempted}_created", preempted, "gauge",
                         [f"{preempted}_created{{{tags}}} {go(self.created)}"])
        samples = [f'{tokens}_bucket{{{tags},le="{le}"}} {go(count)}'
                   for le, count in self.buckets().items()]
        samples += [f"{tokens}_count{{{tags}}} {go(len(self.iteration_tokens))}",
                    f"{tokens}_sum{{{tags}}} {go(sum(self.iteration_tokens))}"]
        lines += _family(tokens, tokens, "histogram", samples)
        lines += _family(f"{tokens}_created", tokens, "gauge",
                         [f"{tokens}_created{{{tags}}} {go(self.created)}"])
        for name, value in self.prefix_cache.items():
            lines += _family(f"{name}_total", name, "counter",
                             [f"{name}_total{{{tags}}} {go(value)}"])
            lines += _family(f"{name}_created", name, "gauge",
                             [f"{name}_created{{{tags}}} {go(self.created)}"])
        return "\n".join(lines) + "\n"


def _family(name: str, metric: str, kind: str, samples: list[str]) -> list[str]:
    documentation = {**METRIC_HELP, **COUNTER_HELP}.get(metric)
    if documentation is None:  # lesson 9: the connector's counters
        from vllm.stand_in_kv_offloading import COUNTER_HELP as EXTERNAL_HELP

        documentation = EXTERNAL_HELP[metric]
    return [f"# HELP {name} {documentation}", f"# TYPE {name} {kind}", *samples]


def _gauge_lines(found: list[tuple[str, dict, float]]) -> list[str]:
    lines = []
    for name, labels, value in found:
        label_text = ",".join(f'{key}="{val}"' for key, val in labels.items())
        lines += [f"# HELP {name} {METRIC_HELP[name]}", f"# TYPE {name} gauge",
                  f"{name}{{{label_text}}} {float(value)!r}"]
    return lines
