from block_pool import BLOCK_SIZE, BlockPool
from fragmentation import per_block

pool = BlockPool(num_gpu_blocks=1000)
prompt = pool.allocate("request", 1000)  # prefill: the prompt's 1,000 tokens
print(f"prompt of 1,000 tokens: {len(prompt)} blocks")
# The last generated token is never fed back, so its K and V never need a slot.
for tokens in (1000 + 199, 1000 + 200):
    pool.allocate("request", tokens)
    blocks = len(pool.block_table("request"))
    size = f"{blocks * per_block:,} bytes = {blocks * per_block / 1024**2:.1f} MiB"
    empty = blocks * BLOCK_SIZE - tokens
    print(f"{tokens:,} tokens: {blocks} blocks = {size}, empty slots: {empty}")
