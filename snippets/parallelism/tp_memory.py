"""What each GPU holds when vLLM 0.26.0 splits a dense model (Qwen2, Qwen3, Llama,
Mistral) over GPUs with tensor parallelism (TP) and pipeline parallelism (PP), counted
from config.json, and which sizes vLLM refuses.

A decoder layer is split as Megatron-LM splits it (vllm/model_executor/models/qwen2.py:
Qwen2Attention, Qwen2MLP): qkv_proj and gate_up_proj by output columns
(vllm/model_executor/layers/linear.py: QKVParallelLinear, MergedColumnParallelLinear),
o_proj and down_proj by input rows (RowParallelLinear), norms copied to every rank; the
embedding and lm_head by vocabulary rows, padded
(vllm/model_executor/layers/vocab_parallel_embedding.py: VocabParallelEmbedding).
Weights are counted as tensors in 16-bit; the allocator rounds a bit more (lesson 4)."""

from dataclasses import dataclass

from hf_config import read_presets
from kv_cache_size import GIB, ModelConfig
from kv_capacity import predict

# vllm/model_executor/layers/vocab_parallel_embedding.py: DEFAULT_VOCAB_PADDING_SIZE
VOCAB_PADDING = 64
DENSE = (
    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",
    "LlamaForCausalLM",
    "MistralForCausalLM",
)


def pad_vocab_size(vocab_size: int, pad_to: int = VOCAB_PADDING) -> int:
    """vocab_parallel_embedding.py: pad_vocab_size: up to a multiple of pad_to (not of
    pad_to x TP: the padded table must then divide by TP, or vLLM stops)."""
    return -(-vocab_size // pad_to) * pad_to


def vocab_rows(vocab_size: int, tp: int, rank: int) -> tuple[int, int]:
    """(rows this rank holds, rows of real tokens among them): every rank holds
    padded / tp rows; the padding sits at the end, on the last ranks
    (VocabParallelEmbedding._get_indices, no added vocabulary)."""
    padded = pad_vocab_size(vocab_size)
    if padded % tp:
        raise ValueError(f"{padded} is not divisible by {tp}")  # vLLM's divide
    per_rank = padded // tp
    start = rank * per_rank
    return per_rank, max(0, min(start + per_rank, vocab_size) - start)


def kv_heads_per_rank(total_kv_heads: int, tp: int) -> int:
    """vllm/config/model.py: ModelConfig.get_num_kv_heads: at least one per GPU."""
    return max(1, total_kv_heads // tp)


def kv_head_replicas(total_kv_heads: int, tp: int) -> int:
    """How many GPUs hold a copy of each KV head (QKVParallelLinear's
    num_kv_head_replicas): when TP exceeds the KV heads, tp / kv_heads GPUs each."""
    return tp // total_kv_heads if tp >= total_kv_heads else 1


def refusal(config: dict, tp: int) -> str | None:
    """The error vLLM stops with for this TP size, or None, in the order it checks:
    the config (ModelConfig.verify_with_parallel_config) before any weight exists, then
    the layers as they are built (Qwen2Attention's asserts, then
    vllm/distributed/utils.py: divide in MergedColumnParallelLinear and in
    VocabParallelEmbedding: "X is not divisible by Y")."""
    if type(tp) is not int or tp < 1:
        raise ValueError(f"tensor parallel size must be a positive integer, got {tp!r}")
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    if heads % tp:
        return (
            f"ValueError: Total number of attention heads ({heads}) must be divisible"
            f" by tensor parallel size ({tp})."
        )
    if (kv >= tp and kv % tp) or (kv < tp and tp % kv):
        return f"AssertionError at model build: {kv} KV heads and TP {tp}"
    inter, padded = config["intermediate_size"], pad_vocab_size(config["vocab_size"])
    for size in (inter, padded):
        if size % tp:
            return f"AssertionError at model build: {size} is not divisible by {tp}"
    return None


def pp_indices(
    num_layers: int, pp_rank: int, pp_size: int, partition: str | None = None
) -> tuple[int, int]:
    """vllm/distributed/utils.py: get_pp_indices: the layers [start, end) of a stage.
    Even split; the remainder goes one each to the stages before the last, from the
    second-to-last backwards. partition: the value of VLLM_PP_LAYER_PARTITION, e.g.
    "10,18"."""
    if not 0 <= pp_rank < pp_size:
        raise ValueError(f"pp_rank must be in [0, {pp_size}), got {pp_rank}")
    if partition is not None:
        try:
            parts = [int(layers) for layers in partition.split(",")]
        except ValueError:
            raise ValueError(f"Invalid partition string: {partition}") from None
        if len(parts) != pp_size:
            raise ValueError(f"len(partitions)={len(parts)} does not match {pp_size=}.")
        if sum(parts) != num_layers:
            raise ValueError(
                f"sum(partitions)={sum(parts)} does not match"
                f" num_hidden_layers={num_layers}."
            )
    else:
        parts = [num_layers // pp_size] * pp_size
        for i in range(2, num_layers % pp_size + 2):
            parts[-i] += 1
    start = sum(parts[:pp_rank])
    return start, start + parts[pp_rank]


@dataclass(frozen=True)
class Rank:
    """What one GPU holds: stage pp_rank, tensor rank tp_rank."""

    pp_rank: int
    tp_rank: int
    layers: tuple[int, int]  # [start, end) of the decoder layers
    heads: int  # attention (query) heads
    kv_heads: int  # KV heads it computes and caches
    vocab_rows: int  # rows of the embedding / lm_head slice (0: this stage has none)
    parameters: int  # what it holds, all 16-bit

    @property
    def weight_bytes(self) -> int:
        return 2 * self.parameters


def _dense(config: dict) -> dict:
    arch = config.get("architectures", [""])[0]
    if arch not in DENSE or "num_experts" in config or "kv_lora_rank" in config:
        raise ValueError(
            f"tp_memory counts dense {', '.join(DENSE)} models, not {arch}"
        )
    h, heads = config["hidden_size"], config["num_attention_heads"]
    return {
        "h": h,
        "head_dim": config.get("head_dim") or h // heads,
        "heads": heads,
        "kv": config.get("num_key_value_heads", heads),
        "inter": config["intermediate_size"],
        "arch": arch,
    }


def layer_parameters(config: dict, tp: int) -> int:
    """One decoder layer's parameters on one TP rank."""
    c = _dense(config)
    h, d = c["h"], c["head_dim"]
    q, kv = c["heads"] // tp * d, kv_heads_per_rank(c["kv"], tp) * d
    qkv = h * (q + 2 * kv)  # column-parallel: this rank's heads, KV heads repeated
    o = q * h  # row-parallel: this rank's slice of the heads' outputs
    mlp = 3 * h * (c["inter"] // tp)  # gate and up by columns, down by rows
    norms = 2 * h  # input and post-attention RMSNorm, on every rank
    bias = q + 2 * kv if c["arch"] == "Qwen2ForCausalLM" else 0  # q, k, v biases
    if config.get("attention_bias"):  # and o_proj's bias, not split (RowParallelLinear)
        bias = q + 2 * kv + h
    qk_norm = 2 * d if c["arch"] == "Qwen3ForCausalLM" else 0  # per-head q/k norms
    return qkv + o + mlp + norms + bias + qk_norm


def layout(config: dict, tp: int = 1, pp: int = 1) -> list[Rank]:
    """Every GPU's share, stage by stage, rank by rank. Raises ValueError with vLLM's
    error for a TP size it refuses."""
    why = refusal(config, tp)
    if why:
        raise ValueError(f"vLLM refuses TP {tp}: {why}")
    layers = config["num_hidden_layers"]
    if type(pp) is not int or not 1 <= pp <= layers:
        raise ValueError(
            f"pipeline size must be an integer from 1 to {layers}, got {pp}"
        )
    c, tied = _dense(config), bool(config.get("tie_word_embeddings"))
    ranks = []
    for stage in range(pp):
        start, end = pp_indices(layers, stage, pp)
        first, last = stage == 0, stage == pp - 1
        for rank in range(tp):
            rows, _ = vocab_rows(config["vocab_size"], tp, rank)
            # Qwen2Model: the embedding on the first stage (and on the last when lm_head
            # is that table); Qwen2ForCausalLM: lm_head and the final norm on the last.
            tables = (first or (tied and last)) + (last and not tied)
            n = (end - start) * layer_parameters(config, tp)
            n += tables * rows * c["h"] + (c["h"] if last else 0)
            ranks.append(
                Rank(
                    stage,
                    rank,
                    (start, end),
                    c["heads"] // tp,
                    kv_heads_per_rank(c["kv"], tp),
                    rows if tables else 0,
                    n,
                )
            )
    return ranks


def kv_tokens(config: dict, rank: Rank, kv_memory_bytes: int, max_model_len: int):
    """kv_capacity.predict for one GPU: its layers and its KV heads. vLLM gives every
    worker the smallest block count among them (vllm/v1/core/kv_cache_utils.py:
    get_kv_cache_configs), so the engine holds what its fullest GPU holds."""
    c = _dense(config)
    layers = rank.layers[1] - rank.layers[0]
    cfg = ModelConfig("rank", layers, rank.kv_heads, c["head_dim"])
    return predict(cfg, kv_memory_bytes, max_model_len)


def gib(n_bytes: int) -> str:
    return f"{n_bytes / GIB:6.2f} GiB"


if __name__ == "__main__":
    for name in ("Qwen2.5-7B-Instruct", "Qwen2.5-32B-Instruct", "Qwen2.5-72B-Instruct"):
        config = read_presets()[name].config
        vocab = config["vocab_size"]
        print(
            f"{name}: {config['num_attention_heads']} heads,"
            f" {config['num_key_value_heads']} KV heads, vocab {vocab:,}"
            f" (padded {pad_vocab_size(vocab):,})"
        )
        print("  TP  per GPU: weights  heads  KV heads  KV copies  vocab rows")
        for tp in (1, 2, 4, 7, 8, 16):
            why = refusal(config, tp)
            if why:
                print(f"  {tp:>2}  refused: {why}")
                continue
            r = layout(config, tp)[0]
            copies = kv_head_replicas(config["num_key_value_heads"], tp)
            print(
                f"  {tp:>2}  {gib(r.weight_bytes):>19} {r.heads:>6} {r.kv_heads:>9}"
                f" {copies:>10} {r.vocab_rows:>11,}"
            )
    qwen = read_presets()["Qwen2.5-7B-Instruct"].config
    print("Qwen2.5-7B-Instruct, 28 layers over PP stages (get_pp_indices):")
    for pp in (2, 3, 4, 8):
        stages = [pp_indices(28, stage, pp) for stage in range(pp)]
        print(f"  PP {pp}: " + " ".join(f"[{a},{b})" for a, b in stages))
    print(f"  PP 2, VLLM_PP_LAYER_PARTITION=10,18: {pp_indices(28, 1, 2, '10,18')}")
