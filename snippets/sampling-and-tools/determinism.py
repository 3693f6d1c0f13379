"""Why temperature 0 can change with the batch: floating-point addition is not
associative, and a batched kernel picks how to split a sum (tiles, split-K, the number
of blocks) by the batch's shape. Two logits that differ by less than the rounding flip
the argmax. Exact, with Python floats (float64; bf16/fp32 on a GPU round far sooner).

vLLM 0.26.0's answer is VLLM_BATCH_INVARIANT=1 (vllm/envs.py), read by
vllm/model_executor/layers/batch_invariant.py: init_batch_invariance: kernels whose
reduction order does not depend on the batch (Triton matmul, softmax, log_softmax, mean,
RMSNorm), split-KV attention off. enable_batch_invariant_mode takes its Triton matmul
path for is_device_capability_family(80), which is every 8.x GPU: an RTX 4090 (SM 8.9)
is one."""

from sampling import argmax


def split_sum(values: list[float], splits: int) -> float:
    """A split reduction: `splits` workers each add up every splits-th term, then the
    partial sums are added (split-K in a matmul: more splits for a small batch)."""
    if type(splits) is not int or splits <= 0:
        raise ValueError(f"splits must be a positive int, got {splits!r}")
    return sum(sum(values[i::splits]) for i in range(splits))


# Two tokens' dot products, as the terms a matmul adds up.
TERMS_A = [1e16, 1.0, -1e16, 1.0]  # exactly 2.0
TERMS_B = [1.5]  # token B's logit: 1.5

if __name__ == "__main__":
    b = sum(TERMS_B)
    for splits in (1, 2):
        a = split_sum(TERMS_A, splits)
        winner = "AB"[argmax([a, b])]
        print(f"{splits} split(s): logit A = {a}, logit B = {b} -> argmax {winner}")
