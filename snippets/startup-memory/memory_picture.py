"""The memory of an RTX 4090 after vLLM 0.26.0 has started Qwen2.5-7B-Instruct with
LLM()'s defaults, one character per 0.75 GiB (the budget of startup_budget.py): 32
characters for the card, narrow enough for a phone."""

from kv_cache_size import GIB
from startup_budget import qwen_budget

STEP = 3 * GIB // 4  # bytes per character

budget = qwen_budget()
parts = [
    ("W", "weights", budget.weights),
    ("A", "activation peak (estimate)", budget.activation),
    ("N", "non-torch (estimate)", budget.non_torch),
    ("K", "KV cache (estimate)", budget.kv),
    ("C", "CUDA context (estimate)", budget.context),
    ("G", "CUDA graphs (estimate)", budget.graphs),
    (".", "left free (estimate)", budget.headroom),
]
# at least one character for every part there is
bar = "".join(mark * max(round(size / STEP), size > 0) for mark, _, size in parts)
request = round(budget.requested / STEP)
print(f"one character per {STEP / GIB} GiB")
print("gpu_memory_utilization 0.92:")
print("|" + "-" * (request - 2) + "|")
print(bar)
for mark, name, size in parts:
    print(f"{mark}  {size / GIB:5.2f} GiB  {name}")
