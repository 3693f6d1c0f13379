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
  cdiv(tokens, block_size), usage 1 - free / (num_gpu_blocks - 1) as BlockPool.get_usage), and
  the gauges LLM.get_metrics() and GET /metrics give (vllm/v1/metrics/loggers.py, reader.py).
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


def awq_weight_bytes(layers, hidden, kv_width, intermediate, vocab, group=128) -> int:
    """A 4-bit AWQ checkpoint: linear layers at 4 bits plus a 16-bit scale and a 4-bit zero
    point per group of 128 weights; embeddings, lm_head, norms and biases stay 16-bit."""
    linear = layers * (hidden * (2 * hidden + 2 * kv_width) + 3 * hidden * intermediate)
    quantized = linear // 2 + linear // group * 2 + linear // group // 2
    sixteen_bit = 2 * vocab * hidden + layers * (2 * hidden + hidden + 2 * kv_width) + hidden
    return quantized + 2 * sixteen_bit


# The models the labs load: https://huggingface.co/<name>/blob/main/config.json
MODELS = {
    "Qwen/Qwen2.5-7B-Instruct-AWQ": Architecture(
        num_layers=28, num_kv_heads=4, head_dim=128, hidden_size=3584,
        intermediate_size=18944, vocab_size=152064, max_position_embeddings=32768,
        dtype_bytes=2, weight_bytes=awq_weight_bytes(28, 3584, 4 * 128, 18944, 152064)),
}

NON_TORCH_MEMORY = 300 * MIB  # CUDA context and libraries (stand-in estimate)
CUDA_GRAPH_MEMORY = 400 * MIB  # vLLM's estimate is applied by default (stand-in estimate)


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
    "weights": ("vllm/v1/worker/gpu_model_runner.py", 5347,
                "Model loading took %s GiB memory and %.6f seconds"),
    "available": ("vllm/v1/worker/gpu_worker.py", 560, "Available KV cache memory: %s GiB"),
    "override": ("vllm/v1/core/kv_cache_utils.py", 2115,
                 "Overriding num_gpu_blocks=%d with num_gpu_blocks_override=%d"),
    "tokens": ("vllm/v1/core/kv_cache_utils.py", 2177, "GPU KV cache size: %s tokens"),
    "concurrency": ("vllm/v1/core/kv_cache_utils.py", 2178,
                    "Maximum concurrency for %s tokens per request: %.2fx"),
}


def log_stream():
    """Where vLLM logs: stdout, unless VLLM_LOGGING_STREAM says ext://sys.stderr."""
    stream = os.environ.get("VLLM_LOGGING_STREAM", "ext://sys.stdout")
    return sys.stderr if stream == "ext://sys.stderr" else sys.stdout


def log(key: str, *args) -> None:
    """One line as vLLM's logger prints it: level, time, [file:line], message."""
    path, line, fmt = LOG_FORMATS[key]
    stamp = time.strftime("%m-%d %H:%M:%S")
    print(f"INFO {stamp} [{path.rsplit('/', 1)[1]}:{line}] {fmt % args}", file=log_stream(),
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
    config = ", ".join(f"{name}={value}" for name, value in options.items())
    log("engine", VERSION, f"model='{model}', {config}")
    backend = select_backend(options["attention_backend"], options["kv_cache_dtype"], gpu, log)
    block_size = options["block_size"] or DEFAULT_BLOCK_SIZE
    if block_size % 16:
        raise ValueError("Block size must be a multiple of 16.")
    log("weights", format_gib(arch.weight_bytes), 4.2)

    if options["kv_cache_memory_bytes"]:
        available = options["kv_cache_memory_bytes"]
    else:
        requested = math.ceil(gpu.total_memory * options["gpu_memory_utilization"])
        available = (requested - arch.weight_bytes - activation_peak(arch, options)
                     - NON_TORCH_MEMORY - CUDA_GRAPH_MEMORY)
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
    return Engine(model, options, backend, block_size, num_blocks, tokens, max_concurrency)


# -- the block pool, the scheduler and the stats (the labs that step the engine) -----------------
# The stand-in's own small arithmetic, each rule naming the vLLM 0.26.0 function it mirrors; it
# shares no code with the lessons, whose predictions the GPU checks compare with it. Modelled:
# one full-attention KV cache group, no prefix caching hits (prompts that share no block), no
# preemption (running out of blocks fails the dry run), no speculative decoding, synchronous
# scheduling (the gauge holds the slots of the prompt and every token fed back so far).

# The models never sample end-of-sequence here: a request ends at max_tokens or max_model_len.
DRY_RUN_WORDS = " (dry run) Each decode step reads the weights and every sequence's KV cache.".split(" ")


def cdiv(a: int, b: int) -> int:
    """vllm/utils/math_utils.py: cdiv."""
    return -(a // -b)


class Request:
    def __init__(self, request_id: str, prompt_token_ids: list[int], max_tokens: int,
                 ignore_eos: bool):
        self.request_id = request_id
        self.prompt_token_ids = list(prompt_token_ids)
        self.output_token_ids: list[int] = []
        self.max_tokens = max_tokens
        self.ignore_eos = ignore_eos
        self.num_computed_tokens = 0
        self.num_blocks = 0  # SingleTypeKVCacheManager.req_to_blocks[request_id], as a count
        self.finished = False

    @property
    def num_tokens(self) -> int:  # vllm/v1/request.py: Request.num_tokens
        return len(self.prompt_token_ids) + len(self.output_token_ids)


class Scheduler:
    """One engine core: its block pool, scheduler and scheduler stats."""

    def __init__(self, engine: Engine, log_stats: bool):
        self.num_gpu_blocks = engine.num_blocks
        self.block_size = engine.block_size
        self.max_model_len = engine.options["max_model_len"]
        self.max_num_batched_tokens = engine.options["max_num_batched_tokens"]
        self.max_num_seqs = engine.options["max_num_seqs"]
        self.log_stats = log_stats
        # vllm/v1/core/block_pool.py: BlockPool.__init__ takes block 0 as the null block.
        self.num_free_blocks = self.num_gpu_blocks - 1
        self.waiting: list[Request] = []
        self.running: list[Request] = []
        self.kv_cache_usage = 0.0  # the gauge: set by each step's stats (make_stats)

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
        self.waiting.append(request)

    def has_unfinished_requests(self) -> bool:
        return bool(self.waiting or self.running)

    def _allocate_slots(self, request: Request, num_new_tokens: int) -> None:
        """vllm/v1/core/kv_cache_manager.py: KVCacheManager.allocate_slots: blocks for the
        computed tokens and the new ones, cdiv(tokens, block_size)
        (single_type_kv_cache_manager.py: SingleTypeKVCacheManager.get_num_blocks_to_allocate)."""
        num_tokens_need_slot = min(request.num_computed_tokens + num_new_tokens,
                                   self.max_model_len)
        needed = cdiv(num_tokens_need_slot, self.block_size) - request.num_blocks
        if needed > self.num_free_blocks:
            raise StandInError(
                f"{request.request_id} needs {needed} more blocks and {self.num_free_blocks}"
                " are free: vLLM would preempt a request here, which the stand-in does not"
                " model (tests/stand_in_vllm/vllm/vllm/stand_in.py)")
        if needed > 0:
            self.num_free_blocks -= needed  # BlockPool.get_new_blocks
            request.num_blocks += needed

    def _free(self, request: Request) -> None:
        """vllm/v1/core/sched/scheduler.py: Scheduler._free_blocks (BlockPool.free_blocks)."""
        self.num_free_blocks += request.num_blocks
        request.num_blocks = 0

    def step(self) -> list[Request]:
        """One engine step: Scheduler.schedule (running requests first, then waiting ones,
        within max_num_batched_tokens and max_num_seqs; a prompt longer than the budget is
        prefilled in chunks), the model samples one token for each request whose tokens are
        all computed, then Scheduler.update_from_output frees finished requests' blocks
        before make_stats reads the usage. Returns the requests that got a token."""
        budget, scheduled = self.max_num_batched_tokens, []
        for request in self.running:
            if budget <= 0:
                break
            new = min(request.num_tokens - request.num_computed_tokens, budget)
            self._allocate_slots(request, new)
            scheduled.append((request, new))
            budget -= new
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            request = self.waiting.pop(0)
            new = min(request.num_tokens - request.num_computed_tokens, budget)
            self._allocate_slots(request, new)
            self.running.append(request)
            scheduled.append((request, new))
            budget -= new

        sampled = []
        for request, new in scheduled:  # execute_model, then update_from_output
            request.num_computed_tokens += new
            if request.num_computed_tokens < request.num_tokens:
                continue  # a chunk of the prompt: no token sampled yet
            request.output_token_ids.append(1000 + len(request.output_token_ids) % 100)
            sampled.append(request)
            # vllm/v1/core/sched/utils.py: check_stop (no EOS is sampled here)
            if (len(request.output_token_ids) >= request.max_tokens
                    or request.num_tokens >= self.max_model_len):
                request.finished = True
                self.running.remove(request)
                self._free(request)
        if self.log_stats:  # Scheduler.make_stats: kv_cache_usage=KVCacheManager.usage
            self.kv_cache_usage = self.get_usage()
        return sampled


def dry_run_text(token_ids: list[int]) -> str:
    """The stand-in has no tokenizer: one word of a fixed sentence per generated token."""
    return " ".join(DRY_RUN_WORDS[i % len(DRY_RUN_WORDS)] for i in range(len(token_ids)))


def dry_run_prompt_tokens(prompt) -> list[int]:
    """Token ids of a prompt: given as ids, or a text the stand-in has no tokenizer for,
    counted as one token per 4 bytes (a stand-in estimate, not a tokenizer's)."""
    if isinstance(prompt, dict):
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
METRIC_HELP = {  # name: documentation, as PrometheusStatLogger registers them
    CACHE_CONFIG_INFO: "Information of the LLMEngine CacheConfig",
    NUM_RUNNING: "Number of requests in model execution batches.",
    NUM_WAITING: "Number of requests waiting to be processed.",
    KV_CACHE_USAGE: "KV-cache usage. 1 means 100 percent usage.",
}


def gauges(engine: Engine, scheduler: Scheduler) -> list[tuple[str, dict, float]]:
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
    running = len(scheduler.running) if scheduler.log_stats else 0
    waiting = len(scheduler.waiting) if scheduler.log_stats else 0
    return [(CACHE_CONFIG_INFO, info, 1.0), (NUM_RUNNING, labels, float(running)),
            (NUM_WAITING, labels, float(waiting)),
            (KV_CACHE_USAGE, labels, scheduler.kv_cache_usage)]


def prometheus_text(engine: Engine, scheduler: Scheduler) -> str:
    """GET /metrics: the Prometheus text format (prometheus_client.generate_latest)."""
    lines = []
    for name, labels, value in gauges(engine, scheduler):
        label_text = ",".join(f'{key}="{val}"' for key, val in labels.items())
        lines += [f"# HELP {name} {METRIC_HELP[name]}", f"# TYPE {name} gauge",
                  f"{name}{{{label_text}}} {float(value)!r}"]
    return "\n".join(lines) + "\n"
