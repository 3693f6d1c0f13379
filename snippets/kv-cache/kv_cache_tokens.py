from kv_capacity import reported_tokens

# vLLM's "GPU KV cache size" is int(blocks / ceil(max_model_len / 16) * max_model_len),
# computed in floating point: blocks x 16 only where that arithmetic comes out exact.
for num_blocks, max_model_len in ((32440, 8192), (32001, 8000), (32440, 8190)):
    tokens, concurrency = reported_tokens(num_blocks, max_model_len)
    print(
        f"{num_blocks:,} blocks, max_model_len {max_model_len:,}: {tokens:,} tokens,"
        f" {concurrency:.2f}x (blocks x 16 = {num_blocks * 16:,})"
    )
