"""What one decode step of Qwen2.5-7B-Instruct (BF16) reads and computes on an RTX 4090.

A step reads every weight once, whatever the batch, except the input embedding table,
of which it gathers one row per sequence; and each sequence's own KV cache.
weights_read and matmul_flops are the course's one model of a step's weights (lesson 3's
step times, lesson 4's decode floor and the glossary's roofline use them too).
"""

from hf_config import bytes_per_token, read_presets
from kv_cache_size import GIB
from kv_capacity import GPU_GIB, UTILIZATION, blocks_per_sequence, predict
from model_weights import count

BANDWIDTH = 1008e9  # bytes/s, RTX 4090 memory bandwidth (NVIDIA Ada whitepaper)
PEAK_BF16 = 165.2e12  # FLOP/s, RTX 4090 dense BF16 tensor cores, FP32 accumulate (idem)
QWEN = read_presets()["Qwen2.5-7B-Instruct"]
PARAMETERS = count(QWEN.config).total  # 7,615,616,512
KV_PER_TOKEN = bytes_per_token(QWEN.model)  # 57,344 bytes in BF16
# A query token against a context token, all layers: q.k and the weighted v.
ATTENTION = QWEN.model.num_layers * QWEN.attention_heads * QWEN.model.head_dim * 4


def weights_read(weights: int, config: dict, tokens: int) -> int:
    """The bytes of weights a step of `tokens` new tokens reads at least, out of
    `weights` in memory: every weight once, except the input embedding table (16-bit,
    vocab_size x hidden_size), of which the step gathers one row per token
    (vllm/model_executor/layers/vocab_parallel_embedding.py:
    UnquantizedEmbeddingMethod.embedding, F.embedding). When lm_head is that same
    table (tie_word_embeddings), lm_head reads all of it anyway."""
    if tokens <= 0:
        raise ValueError(f"a step computes at least one token, got {tokens}")
    if config.get("tie_word_embeddings"):
        return weights
    row = 2 * config["hidden_size"]
    return weights - config["vocab_size"] * row + tokens * row


def matmul_flops(config: dict, tokens: int, logits: int) -> int:
    """The FLOPs of a step's weight matmuls: a multiply-add (2 FLOPs) per weight of
    the decoder's linear layers and new token, and per lm_head weight and logits row.
    vLLM computes one logits row per request in the step, at its last token
    (vllm/v1/worker/gpu/model_runner.py: GPUModelRunner.prepare_inputs, .sample). The
    embedding is a gather, no FLOPs; norms, biases and activations are left out."""
    lm_head = config["vocab_size"] * config["hidden_size"]
    return 2 * count(config).linear * tokens + 2 * lm_head * logits


def most_sequences(context: int) -> int:
    """How many sequences of `context` tokens fit at once: their KV blocks beside the
    BF16 weights in GPU_GIB x UTILIZATION. An upper bound: vLLM also keeps activations
    and CUDA graphs there (lesson 8 takes them out)."""
    kv_memory = int(GPU_GIB * GIB * UTILIZATION) - 2 * PARAMETERS
    blocks = predict(QWEN.model, kv_memory, context).num_blocks
    return blocks // blocks_per_sequence(context)


def decode_step(batch: int, context: int) -> tuple[int, int, int]:
    """Bytes read, FLOPs of the weight matmuls and FLOPs of attention, in one step of
    `batch` sequences of `context` tokens: one new token and one logits row each."""
    read = weights_read(2 * PARAMETERS, QWEN.config, batch)
    read += batch * context * KV_PER_TOKEN
    weight_flops = matmul_flops(QWEN.config, batch, batch)
    # Each query head multiplies-adds q with every cached k, the scores with every v.
    return read, weight_flops, batch * context * ATTENTION


if __name__ == "__main__":
    print(f"ridge point of the RTX 4090 in BF16: {PEAK_BF16 / BANDWIDTH:.0f} FLOP/byte")
    shared = QWEN.attention_heads / QWEN.model.num_kv_heads  # query heads per KV head
    print(f"attention over a sequence's own KV: {shared:.0f} FLOP/byte at any batch")
    table = QWEN.config["vocab_size"] * QWEN.config["hidden_size"] * 2
    row = weights_read(table, QWEN.config, 1)  # the table alone, one token
    print(f"embedding table: {table:,} bytes; a step reads a {row:,}-byte row of it")
    print("per sequence (the lm_head matrix of the same size is read whole)")
    context = 1024
    most = most_sequences(context)
    print(f"one step, sequences of {context:,} tokens"
          f" (at most {most} fit beside the weights):")  # fmt: skip
    print("batch  KV GiB  GB read  weight matmuls  whole step  tokens/s at most")
    for batch in (1, 16, 64, most, 164):
        if batch > most:
            print(f"{batch:>5}  not reachable: {GPU_GIB} GiB x {UTILIZATION} holds"
                  f" the KV of {most} sequences of {context:,} tokens")  # fmt: skip
            continue
        read, weight_flops, attention_flops = decode_step(batch, context)
        kv_gib = batch * context * KV_PER_TOKEN / 1024**3
        weights = read - batch * context * KV_PER_TOKEN
        flops = weight_flops + attention_flops
        tokens = batch * min(BANDWIDTH / read, PEAK_BF16 / flops)
        print(
            f"{batch:>5} {kv_gib:>7.2f} {read / 1000**3:>8.2f}"
            f" {weight_flops / weights:>10.0f} F/B {flops / read:>7.1f} F/B"
            f" {tokens:>16,.0f}"
        )
