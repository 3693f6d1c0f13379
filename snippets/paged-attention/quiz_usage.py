from block_pool import BlockPool

pool = BlockPool(num_gpu_blocks=1000)  # num_gpu_blocks_override=1000
pool.allocate("request", 500 * 16)  # 500 blocks in use
print(f"usage with 500 blocks in use: {pool.usage!r}, about {pool.usage:.4f}")
print(f"back to blocks: {pool.usage * (pool.num_gpu_blocks - 1):.6f}")
print(f"the same 500 blocks out of 1,000 would read {500 / 1000}")
