"""Self-test: n-gram speculation with k = 3 on a task where a = 0.5, contexts of 1,024
tokens. From which batch size on does the model predict it slows decoding down, and
does the KV cache hold that many sequences?"""

from decode_batch import QWEN
from hf_config import bytes_per_token
from kv_cache_size import GIB
from speedup import KV_BLOCKS, blocks_per_sequence, most_sequences, speedup

tokens = 1024 + 3 + 1  # the context and the verification step's 4 tokens
cap = most_sequences(tokens)
slower = next(b for b in range(1, cap + 1) if speedup(0.5, 3, b, 1024, False) < 1)
print(f"first batch size slower than plain decoding: {slower}")
print(f"speed-up there: {speedup(0.5, 3, slower, 1024, False):.3f}")
print(f"positions computed per verification step: {slower * (3 + 1)}")
print(f"one smaller: {speedup(0.5, 3, slower - 1, 1024, False):.3f}")
need = slower * blocks_per_sequence(tokens)
spare = (KV_BLOCKS - need) * 16 * bytes_per_token(QWEN.model)
print(f"KV blocks at that batch: {need:,} of at most {KV_BLOCKS:,} ({cap} sequences)")
print(f"left for activations, non-torch memory, CUDA graphs: {spare / GIB:.2f} GiB")
