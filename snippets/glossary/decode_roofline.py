# The roofline of decode: about how many tokens/s one sequence can get on an RTX 4090.
from decode_batch import BANDWIDTH, PARAMETERS, PEAK_BF16, decode_step

context = 8192
# One sequence: every BF16 weight is read once per step, except the input embedding
# table, of which the step gathers one row (lesson 1's decode_step, with its
# weights_read), and the KV of its context; a multiply-add per weight of the matmuls,
# attention over each cached token.
step_bytes, weight_flops, attention_flops = decode_step(batch=1, context=context)
flops = weight_flops + attention_flops
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
# FLOP per byte per sequence, while attention reads each sequence's own KV cache (left
# out here: context 0).
batch = 1
while decode_step(batch, context=0)[1] < ridge * decode_step(batch, context=0)[0]:
    batch += 1
print(f"the weight matmuls reach it at a batch of {batch} sequences")
