"""The self-test's answers, computed."""

from kv_cache_size import GIB
from startup_budget import capture_sizes, padded_size, qwen_budget

# 1. 256 sequences and at most 500 tokens per step.
serve = capture_sizes(max_num_seqs=256, max_num_batched_tokens=500)
print(f"1. {len(serve)} capture sizes, the largest {serve[-1]}")

# 2. A decode step of 37 sequences under LLM()'s defaults.
sizes = capture_sizes(256, 8192)
print(f"2. 37 sequences run as the graph of {padded_size(37, sizes)}")

# 3. What --enforce-eager gives the KV cache in vLLM 0.26.0 (V2 model runner).
gain = qwen_budget(enforce_eager=True).kv - qwen_budget().kv
print(f"3. {gain / GIB:.2f} GiB more KV cache")

# 4. max_num_seqs=16: how many capture sizes, and what a step of 40 tokens runs as.
small = capture_sizes(16, 8192)
runs_as = padded_size(40, small) or "eager (no graph)"
print(f"4. {len(small)} sizes {small}; 40 tokens: {runs_as}")
