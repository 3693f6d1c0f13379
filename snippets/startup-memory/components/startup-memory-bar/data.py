"""What the bar computes with: the lesson's baseline (startup_budget.qwen_budget) in
numbers, and each field's limits."""

from hf_config import read_presets
from kv_cache_size import GIB
from load_memory import loaded_bytes
from quant_memory import GPU_GIB
from startup_budget import (
    CONTEXT_ESTIMATE,
    GRAPH_ESTIMATE_PER_GRAPH,
    MAX_CAPTURE,
    NON_TORCH_ESTIMATE,
)

MODEL = "Qwen2.5-7B-Instruct"
# Each field's limits: (least, most); the utilization in hundredths.
LIMITS = {
    "gpu_memory_utilization": (0.5, 0.99),
    "max_num_seqs": (1, 1024),
    "max_num_batched_tokens": (1, 65536),
}


def data(options: dict) -> dict:
    config = read_presets()[MODEL].config
    return {
        "total": int(GPU_GIB * GIB),
        "weights": loaded_bytes(MODEL, "bf16"),
        "intermediate_size": config["intermediate_size"],
        "vocab_size": config["vocab_size"],
        "non_torch": int(NON_TORCH_ESTIMATE),
        "context": int(CONTEXT_ESTIMATE),
        "graph_bytes": GRAPH_ESTIMATE_PER_GRAPH,
        "max_capture": MAX_CAPTURE,
        "limits": LIMITS,
    }
