# The roofline of decode: about how many tokens/s one sequence can get on an RTX 4090.
BANDWIDTH = 1008e9  # bytes/s, RTX 4090 memory bandwidth (NVIDIA Ada whitepaper)
PEAK_BF16 = 165.2e12  # FLOP/s, RTX 4090 dense BF16 tensor cores, FP32 accumulate (idem)
PARAMS = 7.61e9  # Qwen2.5-7B-Instruct's parameters (its model card)
KV_PER_TOKEN = 57344  # bytes, BF16 (the KV cache lesson)

context = 8192
# Every BF16 weight and the KV of the context are read once per step (counting the whole
# embedding table, which decode barely touches, makes this a slight underestimate).
step_bytes = PARAMS * 2 + KV_PER_TOKEN * context
step_flops = 2 * PARAMS  # one multiply-add per weight, attention left out
print(f"bytes read per decode step: {step_bytes / 1e9:.2f} GB")
print(f"bandwidth limit: about {BANDWIDTH / step_bytes:.0f} tokens/s for one sequence")
print(f"arithmetic intensity: {step_flops / step_bytes:.2f} FLOP/byte")
print(f"ridge point of the RTX 4090: {PEAK_BF16 / BANDWIDTH:.0f} FLOP/byte")
