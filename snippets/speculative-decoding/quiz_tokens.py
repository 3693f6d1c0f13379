"""Self-test: each draft is accepted with probability 0.8. How many tokens does a
verification step yield with k = 2, 4 and 8, and what is the most it can ever yield?"""

from spec_decode import expected_tokens

for k in (2, 4, 8):
    print(f"k = {k}: {expected_tokens(0.8, k):.2f} tokens per step")
print(f"k -> infinity: 1 / (1 - a) = {1 / (1 - 0.8):.2f}")
