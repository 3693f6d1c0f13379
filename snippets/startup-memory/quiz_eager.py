"""Self-test 3: what --enforce-eager gives the KV cache in vLLM 0.26.0 (V2 runner)."""

from kv_cache_size import GIB
from startup_budget import qwen_budget

gain = qwen_budget(enforce_eager=True).kv - qwen_budget().kv
print(f"{gain / GIB:.2f} GiB more KV cache")
