"""What speculation does to decode speed on one RTX 4090, Qwen2.5-7B-Instruct in BF16:
the course's step-time model (lesson 1: a step takes the larger of its bytes over the
memory bandwidth and its FLOPs over the peak BF16 rate, from decode_batch.weights_read
and matmul_flops) applied to a verification step, with the proposal's cost on top.

A verification step of `batch` requests computes k + 1 tokens each (the last sampled
token and k drafts) and, unlike a plain decode step, a logits row for every one of them
(vllm/v1/spec_decode/metadata.py: SpecDecodeMetadata, target_logits_indices and
bonus_logits_indices): lesson 3's step_seconds counts one row per request, so it is not
used here. The n-gram proposer runs on the CPU and costs the GPU nothing in this model;
a draft model runs k decode steps of its own. Every time printed is an estimate, a lower
bound of what the GPU must do; the CPU, the kernel launches and the sampler are left
out.

The model holds only for batches whose KV the card holds: rows past KV_BLOCKS are marked
as not reachable, and the cap is an upper bound (see KV_BLOCKS)."""

from decode_batch import BANDWIDTH, PEAK_BF16, QWEN, matmul_flops, weights_read
from hf_config import bytes_per_token, read_presets
from kv_cache_size import GIB
from kv_capacity import BLOCK_SIZE, GPU_GIB, blocks_per_sequence
from lab_tasks import CONCURRENCY, MAX_TOKENS, TASKS
from model_weights import count
from quant_memory import kv_left
from spec_decode import expected_tokens

DRAFT = read_presets()["Qwen2.5-0.5B-Instruct"]  # same tokenizer as the 7B

# The KV budget, an upper bound: what an RTX 4090 x gpu_memory_utilization 0.92 leaves
# after the bf16 weights, in blocks of 16 tokens (lesson 4's kv_left). vLLM also takes
# the profiled activation peak and non-torch memory out of it, and on the V1 model
# runner, which n-gram and a draft model run on, a CUDA-graph estimate too
# (vllm/v1/worker/gpu_worker.py: Worker.determine_available_memory): fewer blocks still,
# which only the lab's start-up log tells.
KV_BLOCKS = kv_left("Qwen2.5-7B-Instruct", "bf16", 4096).num_blocks
# The CUDA graph pool of the V1 runner for a 7B model with its 67 default capture sizes,
# in published logs: "took 1.44 GiB" (vLLM release 0.8.4, an RTX 3090) and "took 1.56
# GiB" (2025, a slice of an A100): someone else's measurements, which the V1 runner's
# estimate (GPUModelRunner.profile_cudagraph_memory) approximates and takes off the KV.
V1_GRAPHS_GIB = (1.44, 1.56)


def most_sequences(tokens: int, blocks: int = KV_BLOCKS) -> int:
    """How many sequences of `tokens` tokens each `blocks` blocks hold at once."""
    return blocks // blocks_per_sequence(tokens)


def forward_seconds(preset, batch: int, context: int, new: int) -> float:
    """One forward pass of `preset` in BF16 over `new` tokens for each of `batch`
    requests that have `context` tokens in the KV cache, every token with its logits."""
    if batch < 1 or context < 0 or new < 1:
        raise ValueError(
            f"need batch >= 1, context >= 0, new >= 1: {batch}, {context}, {new}"
        )
    tokens = batch * new
    weights = 2 * count(preset.config).total
    kv = batch * (context + new) * bytes_per_token(preset.model)
    read = weights_read(weights, preset.config, tokens) + kv
    # The j-th new token attends to context + j tokens (causal).
    pairs = batch * (new * context + new * (new + 1) // 2)
    heads = preset.attention_heads * preset.model.head_dim * preset.model.num_layers * 4
    flops = matmul_flops(preset.config, tokens, tokens) + pairs * heads
    return max(read / BANDWIDTH, flops / PEAK_BF16)


def step_seconds(batch: int, context: int, k: int, draft_model: bool) -> float:
    """A decode step with k drafts per request (k = 0: plain decoding)."""
    verify = forward_seconds(QWEN, batch, context, k + 1)
    if not draft_model or k == 0:
        return verify
    return verify + k * forward_seconds(DRAFT, batch, context, 1)


def speedup(a: float, k: int, batch: int, context: int, draft_model: bool) -> float:
    """Tokens per second with speculation over tokens per second without."""
    plain = step_seconds(batch, context, 0, draft_model)
    return expected_tokens(a, k) * plain / step_seconds(batch, context, k, draft_model)


def table(context: int, k: int, batches) -> list[str]:
    """The speed-up table's rows: n-gram's speed-up (the draft model's in brackets) at
    a = 0.5, 0.7 and 0.9, or, past what the KV budget holds, why the row is missing."""
    cap = most_sequences(context + k + 1)
    rows = []
    for batch in batches:
        if batch > cap:
            rows.append(
                f"{batch:>7}  not reachable on one RTX 4090: KV holds at most"
                f" {cap} sequences"
            )
            continue
        cells = []
        for a in (0.5, 0.7, 0.9):
            ngram, draft = (speedup(a, k, batch, context, d) for d in (False, True))
            cells.append(f"{ngram:.2f} ({draft:.2f})")
        rows.append(f"{batch:>7}  " + "".join(f"{c:<15}" for c in cells).rstrip())
    return rows


if __name__ == "__main__":
    context, k = 1024, 3
    plain = step_seconds(1, context, 0, False)
    print(f"context {context} tokens, k = {k} drafts (estimates)")
    print(f"plain decode step at batch 1: {plain * 1000:.2f} ms")
    print(
        "verification step, 4 tokens:"
        f" {step_seconds(1, context, k, False) * 1000:.2f} ms"
    )
    print(
        "0.5B draft, 3 steps + verify:"
        f" {step_seconds(1, context, k, True) * 1000:.2f} ms"
    )
    cap = most_sequences(context + k + 1)
    print(
        f"KV budget (upper bound): 0.92 x {GPU_GIB} GiB less the bf16 weights ="
        f" {KV_BLOCKS:,} blocks of {BLOCK_SIZE} tokens"
    )
    print(
        f"a verification step holds {context:,} + {k + 1} tokens ="
        f" {blocks_per_sequence(context + k + 1)} blocks a sequence:"
        f" at most {cap} sequences"
    )
    block_bytes = BLOCK_SIZE * bytes_per_token(QWEN.model)
    v1 = [most_sequences(context + k + 1, KV_BLOCKS - int(g * GIB) // block_bytes)
          for g in V1_GRAPHS_GIB]  # fmt: skip
    low, high = V1_GRAPHS_GIB
    print(f"less the V1 runner's CUDA graphs, {low} to {high} GiB (published logs,"
          f" estimate): at most {min(v1)} to {max(v1)} sequences")  # fmt: skip
    print("speed-up, n-gram (0.5B draft model)")
    print("  batch     a=0.5          a=0.7          a=0.9")
    for row in table(context, k, (1, 8, 32, 64, 128, 164)):
        print(row)
    # The lab (lab_tasks.py): at most one token per byte of prompt (Qwen2.5's tokenizer
    # is byte-level BPE), plus the output; --max-num-seqs 32 caps its concurrency.
    prompt = max(len(text.encode()) for text in TASKS.values())
    each, n = blocks_per_sequence(prompt + MAX_TOKENS), max(CONCURRENCY)
    print(
        f"the lab: {n} requests of at most {prompt:,} + {MAX_TOKENS} tokens,"
        f" {each} blocks each: {n * each:,} blocks, {n * each / KV_BLOCKS:.0%} of"
        " the budget"
    )


def predicted_ratio(
    batch: int, context: int, k: int, tokens: int, drafts: int, accepted: int
) -> float:
    """Plain time over speculative time for `tokens` output tokens of which the counters
    say `drafts` steps verified drafts and `accepted` drafts passed: each such step
    costs a verification step, every other token a plain step (n-gram: no GPU
    proposal cost). A request's last verification may pass max_tokens: vLLM counts its
    accepted drafts (Scheduler.update_from_output) but keeps only the tokens up to
    max_tokens, so the plain steps are at least 0."""
    if min(tokens, drafts, accepted) < 0:
        raise ValueError(f"counters cannot be negative: {tokens}, {drafts}, {accepted}")
    plain_steps = max(tokens - accepted - drafts, 0)
    plain = step_seconds(batch, context, 0, False)
    spec = drafts * step_seconds(batch, context, k, False) + plain_steps * plain
    return tokens * plain / spec
