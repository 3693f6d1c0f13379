"""The lab's predictions, per TP size: the KV cache tokens and concurrency vLLM logs
with kv_cache_memory_bytes fixed per GPU (exact: no profiling enters), and what the log
says about the all-reduce. Run: python lab_tp_check.py [LOG]"""

import sys
from pathlib import Path

from hf_config import read_presets
from kv_capacity import read_startup_log
from tp_memory import kv_tokens, layout

QWEN = read_presets()["Qwen2.5-7B-Instruct"].config
KV_CACHE_MEMORY_BYTES = 4 * 1024**3  # lab_tp.py's, per GPU
MAX_MODEL_LEN = 8192
# vllm/distributed/device_communicators/custom_all_reduce.py: CustomAllreduce.__init__
NO_P2P = (
    "Custom allreduce is disabled because your platform lacks GPU P2P capability"
    " or P2P test failed."
)


def predicted(tp: int):
    """kv_tokens for the lab's model and KV memory: the same on every GPU."""
    return kv_tokens(QWEN, layout(QWEN, tp)[0], KV_CACHE_MEMORY_BYTES, MAX_MODEL_LEN)


def compare(tp: int, log: str) -> tuple[dict, list[str]]:
    """Rows for the job summary, and what differs from the prediction."""
    seen, want = read_startup_log(log), predicted(tp)
    rows = {
        "GPU KV cache size, tokens": f"{seen.tokens:,} (predicted {want.tokens:,})",
        "maximum concurrency": f"{seen.max_concurrency:.2f}x"
        f" (predicted {want.max_concurrency:.2f}x)",
    }
    problems = []
    if seen.tokens != want.tokens:
        problems.append(f"TP {tp}: {seen.tokens:,} tokens, predicted {want.tokens:,}")
    if tp > 1:
        custom = "off (no P2P): NCCL" if NO_P2P in log else "custom all-reduce"
        rows["all-reduce"] = custom
    return rows, problems


if __name__ == "__main__":
    for tp in (1, 2):
        want = predicted(tp)
        print(
            f"TP {tp}: {want.num_blocks:,} blocks per GPU, GPU KV cache size:"
            f" {want.tokens:,} tokens, {want.max_concurrency:.2f}x of {MAX_MODEL_LEN:,}"
        )
    if len(sys.argv) > 1:
        rows, problems = compare(1, Path(sys.argv[1]).read_text(encoding="utf-8"))
        print("\n".join(f"{k}: {v}" for k, v in rows.items()))
        sys.exit("\n".join(problems) or None)
