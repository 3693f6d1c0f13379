"""How vLLM 0.26.0 chooses max_num_batched_tokens and max_num_seqs when they are
not given, on one NVIDIA GPU: vllm/engine/arg_utils.py:
EngineArgs.get_batch_defaults and _set_default_max_num_seqs_and_batched_tokens_args.
"""

GIB = 1024**3
# get_batch_defaults: (max_num_batched_tokens, max_num_seqs) by entry point, for GPUs
# of at least 70 GiB that are not an A100, and for every other GPU.
LARGE = {"LLM()": (16384, 1024), "vllm serve": (8192, 1024)}
OTHER = {"LLM()": (8192, 256), "vllm serve": (2048, 256)}
# Any other entry point (vllm run-batch, LLMEngine and AsyncLLM built directly) falls
# back to SchedulerConfig.DEFAULT_MAX_NUM_BATCHED_TOKENS and DEFAULT_MAX_NUM_SEQS.
FALLBACK = (2048, 128)
GPUS = {  # name as torch reports it, nominal memory in GiB
    "NVIDIA GeForce RTX 4090": 24,
    "NVIDIA A100-SXM4-80GB": 80,
    "NVIDIA H100 80GB HBM3": 80,
}


def batch_defaults(
    entry: str,
    gpu: str,
    memory_gib: float,
    max_model_len: int,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    enable_chunked_prefill: bool = True,
    performance_mode: str = "balanced",
) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) as the engine resolves them."""
    large = memory_gib * GIB >= 70 * GIB and "a100" not in gpu.lower()
    tokens, seqs = (LARGE if large else OTHER).get(entry, FALLBACK)
    budget = tokens if max_num_batched_tokens is None else max_num_batched_tokens
    running = seqs if max_num_seqs is None else max_num_seqs
    if performance_mode == "throughput":  # doubles what was not given
        budget *= 2 if max_num_batched_tokens is None else 1
        running *= 2 if max_num_seqs is None else 1
    if max_num_batched_tokens is None:
        if not enable_chunked_prefill:  # a whole prompt must fit in one step
            budget = max(max_model_len, budget)
        budget = min(running * max_model_len, budget)
    if max_num_seqs is None:
        running = min(running, budget)
    return budget, running


if __name__ == "__main__":
    print(f"{'GPU':<24} {'GiB':>3}  {'LLM()':>12}  {'vllm serve':>12}  (tokens/seqs)")
    for gpu, gib in GPUS.items():
        cells = [
            "{} / {}".format(*batch_defaults(entry, gpu, gib, 32768))
            for entry in ("LLM()", "vllm serve")
        ]
        print(f"{gpu:<24} {gib:>3}  {cells[0]:>12}  {cells[1]:>12}")
    print("vllm run-batch, or LLMEngine built directly: {} / {}".format(*FALLBACK))
    card = ("NVIDIA GeForce RTX 4090", 24)
    print("RTX 4090, `vllm serve`, max_model_len=32768, when ...")
    cases = {
        "max_num_batched_tokens=64 only": dict(max_num_batched_tokens=64),
        "enable_chunked_prefill=False": dict(enable_chunked_prefill=False),
        'performance_mode="throughput"': dict(performance_mode="throughput"),
    }
    for name, given in cases.items():
        budget, running = batch_defaults("vllm serve", *card, 32768, **given)
        print(f"  {name:<30} -> {budget} tokens per step, {running} sequences")
