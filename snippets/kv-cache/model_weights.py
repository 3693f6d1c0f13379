"""How much memory a model's weights take, counted tensor by tensor from config.json.

An estimate of what vLLM loads, not a measurement. FP8 and AWQ quantize the decoder's
linear layers (attention and MLP, every expert of a mixture of experts); the embeddings,
the lm_head, the norms, the biases and the router stay 16-bit. Left out: what vLLM
allocates beside the weights, FP8's scales (one per tensor or channel) and DeepSeek-V3's
multi-token-prediction layer, which vLLM loads only for speculative decoding.
"""

from dataclasses import dataclass

from hf_config import read_presets
from kv_cache_size import GIB

GROUP_SIZE = 128  # AWQ checkpoints' quantization_config: 4 bits, groups of 128 weights
# Bytes per quantized linear weight: AWQ stores 4 bits, plus a 16-bit scale and a 4-bit
# zero point that GROUP_SIZE weights share.
LINEAR_BYTES = {"bf16": 2, "fp8": 1, "awq": (4 + (16 + 4) / GROUP_SIZE) / 8}
OTHER_BYTES = 2  # what stays 16-bit


@dataclass(frozen=True)
class Parameters:
    linear: int  # the decoder's matrices: what a quantization method quantizes
    other: int  # embeddings, lm_head, norms, biases and router: kept 16-bit

    @property
    def total(self) -> int:
        return self.linear + self.other


def count(config: dict) -> Parameters:
    """The parameters of a dense (GQA or MHA) model or DeepSeek-V3, from config.json."""
    h, layers = config["hidden_size"], config["num_hidden_layers"]
    embeddings = config["vocab_size"] * h
    lm_head = 0 if config.get("tie_word_embeddings") else embeddings
    norms = 2 * layers * h + h  # two per layer, one after the last layer
    if "kv_lora_rank" in config:
        attention_other = layers * (config["q_lora_rank"] + config["kv_lora_rank"])
        dense = config["first_k_dense_replace"]
        router = (layers - dense) * (h + 1) * config["n_routed_experts"]  # gate, bias
    else:
        attention_other, router = grouped_attention(config), 0
    linear = sum(
        n * inputs * outputs for _, inputs, outputs, n in linear_layers(config)
    )
    other = embeddings + lm_head + norms + attention_other + router
    return Parameters(linear, other)


def linear_layers(config: dict) -> list[tuple[str, int, int, int]]:
    """The decoder's matrices as (name, in_features, out_features, how many), with
    vLLM's fused names (qkv_proj, gate_up_proj): what quantization quantizes."""
    if "num_local_experts" in config or "num_experts" in config:
        raise ValueError("count() knows DeepSeek's experts only (n_routed_experts)")
    c, h, layers = config, config["hidden_size"], config["num_hidden_layers"]
    if "kv_lora_rank" not in c:
        heads = c["num_attention_heads"]
        q = heads * (c.get("head_dim") or h // heads)
        kv = c.get("num_key_value_heads", heads) * (c.get("head_dim") or h // heads)
        return [
            ("qkv_proj", h, q + 2 * kv, layers),
            ("o_proj", q, h, layers),
            ("gate_up_proj", h, 2 * c["intermediate_size"], layers),
            ("down_proj", c["intermediate_size"], h, layers),
        ]
    # MLA (vllm/model_executor/models/deepseek_v2.py: DeepseekV2MLAAttention) and
    # DeepSeek's MLP: dense in the first layers, then routed and shared experts.
    heads, rank_q, rank_kv = (
        c["num_attention_heads"],
        c["q_lora_rank"],
        c["kv_lora_rank"],
    )
    nope, rope, v = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    dense, moe = c["first_k_dense_replace"], c["moe_intermediate_size"]
    experts = (layers - dense) * (c["n_routed_experts"] + c["n_shared_experts"])
    return [
        ("q_a_proj", h, rank_q, layers),  # q: down to its latent, then up
        ("q_b_proj", rank_q, heads * (nope + rope), layers),
        ("kv_a_proj_with_mqa", h, rank_kv + rope, layers),  # the cached latent, rope
        ("kv_b_proj", rank_kv, heads * (nope + v), layers),  # K and V, from the latent
        ("o_proj", heads * v, h, layers),
        ("gate_up_proj", h, 2 * c["intermediate_size"], dense),
        ("down_proj", c["intermediate_size"], h, dense),
        ("experts.gate_up_proj", h, 2 * moe, experts),
        ("experts.down_proj", moe, h, experts),
    ]


def grouped_attention(c: dict) -> int:
    """The parameters of MHA/GQA attention besides its matrices, all layers."""
    h, heads = c["hidden_size"], c["num_attention_heads"]
    q = heads * (c.get("head_dim") or h // heads)
    kv = c.get("num_key_value_heads", heads) * (c.get("head_dim") or h // heads)
    architecture = c.get("architectures", [""])[0]
    # Qwen2 has q, k and v biases (vllm/model_executor/models/qwen2.py: Qwen2Attention);
    # with attention_bias, Llama-style models have those and an o bias (llama.py).
    bias = q + 2 * kv if architecture == "Qwen2ForCausalLM" else 0
    bias = q + 2 * kv + h if c.get("attention_bias") else bias
    # Qwen3 normalizes each head's q and k (vllm/model_executor/models/qwen3.py).
    norms = 2 * q // heads if architecture == "Qwen3ForCausalLM" else 0
    return c["num_hidden_layers"] * (bias + norms)


def weight_bytes(parameters: Parameters, precision: str) -> int:
    """The weights in bytes with the linear layers in bf16, fp8 or awq."""
    linear = parameters.linear * LINEAR_BYTES[precision]
    return int(linear + parameters.other * OTHER_BYTES)


if __name__ == "__main__":
    print(f"{'model':<26} {'parameters':>15} {'card':>6}  GiB: BF16     FP8     AWQ")
    for p in read_presets().values():
        n = count(p.config)
        gib = [weight_bytes(n, precision) / GIB for precision in LINEAR_BYTES]
        print(
            f"{p.name:<26} {n.total:>15,} {p.parameters_billion:>6}"
            f" {gib[0]:>10.2f} {gib[1]:>7.2f} {gib[2]:>7.2f}"
        )
    # File sizes are in GB (1000**3 bytes), GPU memory and vLLM's log in GiB (1024**3).
    qwen = count(read_presets()["Qwen2.5-7B-Instruct"].config)
    for precision in ("bf16", "awq"):
        size = weight_bytes(qwen, precision)
        print(
            f"Qwen2.5-7B-Instruct, {precision}: {size:,} bytes"
            f" = {size / 1000**3:.2f} GB = {size / GIB:.2f} GiB"
        )
