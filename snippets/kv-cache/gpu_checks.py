"""What the GPU job checks of the KV cache lab on the RTX 4090 (see coursekit.gpu_labs).

The machine passes the lab's own prerequisite check (check_gpu.py). vLLM uses the
attention backend the page names, and the capacity it reports is predicted with the
lesson's own calculator: within the rounding of the "Available KV cache memory" log
line when vLLM sizes the KV cache itself, and exactly when kv_cache_memory_bytes
fixes it.
"""

from coursekit import ROOT
from coursekit.vllm_claims import llm_options, serve_options
from kv_cache_size import GIB
from kv_capacity import QWEN_FP8, predict, predict_from_log, read_startup_log

EXACT_KV_MEMORY = 4 * GIB  # kv_cache_memory_bytes for the exact check: 9,362 blocks
PROMPT = "Why is LLM decode memory-bound?"
# What vLLM logs for the pinned backend
# (vllm/platforms/cuda.py: CudaPlatformBase.get_attn_backend_cls).
BACKEND_LINE = "Using AttentionBackendEnum.TRITON_ATTN backend."


def check_gpu_py(lab):
    """The machine has what the lab needs, and torch sees the GPU."""
    run = lab.run_python("check_gpu.py", "--installed")
    assert run.stdout.rstrip().endswith("ready for the GPU labs"), run.stdout


def capacity_matches_the_prediction(lab, title, log_text):
    """vLLM uses the backend the page names, and its reported capacity is in the
    calculator's range for the logged memory."""
    assert BACKEND_LINE in log_text, f"{title}: vLLM did not log {BACKEND_LINE!r}"
    log = read_startup_log(log_text)
    low, high = predict_from_log(QWEN_FP8, log)
    lab.report(
        title,
        {
            "Available KV cache memory": f"{log.available_gib} GiB",
            "reported GPU KV cache size": f"{log.tokens:,} tokens",
            "predicted": f"{low.tokens:,} to {high.tokens:,} tokens",
            "reported maximum concurrency": f"{log.max_concurrency:.2f}x",
        },
    )
    assert low.tokens <= log.tokens <= high.tokens, (
        f"{title}: vLLM reports {log.tokens:,} tokens, the calculator predicts"
        f" {low.tokens:,} to {high.tokens:,}"
    )
    # vLLM prints the concurrency with two decimals.
    assert (
        low.max_concurrency - 0.005
        <= log.max_concurrency
        <= high.max_concurrency + 0.005
    ), f"{title}: vLLM reports {log.max_concurrency}x sequences"


def serve_kv_py(lab):
    """The Python lab generates text and its capacity is the predicted one; with
    kv_cache_memory_bytes=4 GiB (the lab's other keywords unchanged), exactly."""
    run = lab.run_python("serve_kv.py")
    assert run.stdout.strip(), "serve_kv.py printed no generated text"
    capacity_matches_the_prediction(
        lab, "serve_kv.py (gpu_memory_utilization=0.90)", run.log
    )

    keywords = llm_options(lab.folder / "serve_kv.py", ROOT)
    keywords["kv_cache_memory_bytes"] = EXACT_KV_MEMORY
    code = "from vllm import LLM\n\nif __name__ == '__main__':\n"
    code += f"    LLM(**{keywords!r})\n"
    log = read_startup_log(lab.run_code(code, name="kv_cache_memory_bytes").log)
    expected = predict(
        QWEN_FP8, EXACT_KV_MEMORY, keywords["max_model_len"], log.block_size
    )
    lab.report(
        f"kv_cache_memory_bytes={EXACT_KV_MEMORY:,}",
        {
            "block size": log.block_size,
            "reported GPU KV cache size": f"{log.tokens:,} tokens",
            "predicted": f"{expected.tokens:,} tokens ({expected.num_blocks:,} blocks)",
        },
    )
    assert log.tokens == expected.tokens, (
        f"kv_cache_memory_bytes={EXACT_KV_MEMORY:,}: vLLM reports"
        f" {log.tokens:,} tokens, the calculator predicts {expected.tokens:,}"
    )


def serve_kv_sh(lab):
    """The command-line twin serves the model, answers /v1/completions, and its capacity
    is the predicted one too."""
    model = serve_options(lab.folder / "serve_kv.sh")["model"]
    with lab.serve("serve_kv.sh") as server:
        served = [entry["id"] for entry in server.get("/v1/models")["data"]]
        assert served == [model], f"serve_kv.sh serves {served}, not {model}"
        body = {"model": model, "prompt": PROMPT, "max_tokens": 32}
        answer = server.post("/v1/completions", body)
        assert answer["choices"][0]["text"].strip(), f"an empty completion: {answer}"
        capacity_matches_the_prediction(lab, "serve_kv.sh", server.log)


CHECKS = {
    "check_gpu.py": check_gpu_py,
    "serve_kv.py": serve_kv_py,
    "serve_kv.sh": serve_kv_sh,
}
