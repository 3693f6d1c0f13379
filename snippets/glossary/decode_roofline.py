# The roofline of decode: about how many tokens/s one sequence can get on an RTX 4090.
from decode_batch import (
    ATTENTION,
    BANDWIDTH,
    KV_PER_TOKEN,
    PARAMETERS,
    PEAK_BF16,
    QWEN,
    matmul_flops,
    weights_read,
)

context = 8192
# One sequence: every BF16 weight is read once per step, except the input embedding
# table, of which the step gathers one row (lesson 1's weights_read), and the KV of its
# context; a multiply-add per weight of the matmuls, attention over each cached token.
step_bytes = (
    weights_read(2 * PARAMETERS, QWEN.config, tokens=1) + context * KV_PER_TOKEN
)
flops = matmul_flops(QWEN.config, tokens=1, logits=1) + context * ATTENTION
print(
    f"parameters: {PARAMETERS:,}; bytes read per decode step: {step_bytes / 1e9:.2f} GB"
)
print(
    f"bandwidth limit: at most {BANDWIDTH / step_bytes:.0f} tokens/s for one sequence"
)
print(f"arithmetic intensity: {flops / step_bytes:.2f} FLOP/byte")
ridge = PEAK_BF16 / BANDWIDTH
print(f"ridge point of the RTX 4090: {ridge:.0f} FLOP/byte")
# A batch reads the weights once for all its sequences: the weight matmuls do about one
# FLOP per byte per sequence, while attention reads each sequence's own KV cache.
batch = 1
while matmul_flops(QWEN.config, batch, batch) < ridge * weights_read(
    2 * PARAMETERS, QWEN.config, batch
):
    batch += 1
print(f"the weight matmuls reach it at a batch of {batch} sequences")
