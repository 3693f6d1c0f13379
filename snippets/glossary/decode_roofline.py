# The roofline of decode: about how many tokens/s one sequence can get on an RTX 4090.
from decode_batch import BANDWIDTH, PARAMETERS, PEAK_BF16, decode_step

context = 8192
# One sequence: every BF16 weight and the KV of its context are read once per step
# (counting the whole embedding table, which decode barely touches, underestimates the
# speed a little).
step_bytes, weight_flops, attention_flops = decode_step(batch=1, context=context)
print(
    f"parameters: {PARAMETERS:,}; bytes read per decode step: {step_bytes / 1e9:.2f} GB"
)
print(f"bandwidth limit: about {BANDWIDTH / step_bytes:.0f} tokens/s for one sequence")
intensity = (weight_flops + attention_flops) / step_bytes
print(f"arithmetic intensity: {intensity:.2f} FLOP/byte")
ridge = PEAK_BF16 / BANDWIDTH
print(f"ridge point of the RTX 4090: {ridge:.0f} FLOP/byte")
# A batch reads the weights once for all its sequences: the weight matmuls do about one
# FLOP per byte per sequence, while attention reads each sequence's own KV cache.
print(f"the weight matmuls reach it at a batch of about {ridge:.0f} sequences")
