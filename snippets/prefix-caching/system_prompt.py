"""A Qwen2.5-7B-Instruct chat service: every request starts with the same 1,000-token
system prompt (chat template included), then the user's question."""

from hf_config import read_presets
from kv_cache_size import kv_bytes
from prefix_cache import PrefixCache

SYSTEM = list(range(1000, 2000))  # 1,000 token ids
cache = PrefixCache(num_gpu_blocks=1000)
requests = [
    ("alice", SYSTEM + list(range(5000, 5030))),  # 30-token question
    ("bob", SYSTEM + list(range(6000, 6045))),  # another question, 45 tokens
    ("alice-again", SYSTEM + list(range(5000, 5030))),  # alice's prompt, resent
]
for request_id, prompt in requests:
    cached = cache.run(request_id, prompt)
    done = cache.history[-1]
    print(
        f"{request_id:12} {len(prompt):5} tokens: {cached:5} cached"
        f" ({len(done.hit_blocks)} blocks), {len(prompt) - cached:5} to prefill"
    )
print(f"system prompt: {len(SYSTEM)} tokens = {len(SYSTEM) // 16} full blocks + 8")
print(f"hit rate {cache.hits} / {cache.queries} tokens = {cache.hit_rate:.1%}")

# What bob's hit saves, in KV (lesson 1's numbers for Qwen2.5-7B-Instruct, BF16).
qwen = read_presets()["Qwen2.5-7B-Instruct"].model
saved = kv_bytes(qwen, 992)
print(f"bob's 992 cached tokens: {saved:,} bytes = {saved / 2**20:.2f} MiB of KV")
