"""A real tensor-parallel run on the CPU: one Qwen2-shaped decoder layer with random
weights, split over 2 and 4 processes as Megatron-LM (and vLLM) split it, talking
through torch.distributed's gloo backend. Each run's output is compared with the
same layer in one process, and every all-reduce is counted with its bytes.

The split (vllm/model_executor/models/qwen2.py: Qwen2DecoderLayer): qkv_proj and
gate_up_proj by output columns, o_proj and down_proj by input rows, each row-parallel
output summed by one all-reduce; norms and residuals on every rank. A rank holds
query heads rank * heads / tp onward and the KV heads they read; when TP exceeds the
KV heads, tp / kv ranks hold a copy of each (QKVParallelLinear: num_kv_head_replicas).

Needs PyTorch (the CPU build is enough): pip install -r requirements.txt."""

import math
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from tp_comm import allreduce_bytes
from tp_memory import kv_head_replicas, kv_heads_per_rank, layer_parameters

CONFIG = {  # a Qwen2 config, shrunk: the split is the same at any size
    "architectures": ["Qwen2ForCausalLM"],
    "hidden_size": 64,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "intermediate_size": 160,
    "num_hidden_layers": 1,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1e6,
}
TOKENS = 5
# float32 keeps about 7 significant digits (eps 1.2e-7). A row-parallel output is the
# same products summed in tp pieces, then the pieces added: the rounding differs, the
# arithmetic does not. 1e-5 leaves room for that and would miss no real mistake: a
# wrong split is off by the size of the outputs themselves (about 1).
TOLERANCE = 1e-5


def weights(seed: int = 0) -> dict[str, torch.Tensor]:
    """The whole layer, float32, from one seed: every process makes the same."""
    h, heads = CONFIG["hidden_size"], CONFIG["num_attention_heads"]
    d, kv = h // heads, CONFIG["num_key_value_heads"]
    inter = CONFIG["intermediate_size"]
    g = torch.Generator().manual_seed(seed)
    shapes = {
        "q": (heads * d, h), "q_bias": (heads * d,),
        "k": (kv * d, h), "k_bias": (kv * d,),
        "v": (kv * d, h), "v_bias": (kv * d,),
        "o": (h, heads * d),
        "gate": (inter, h), "up": (inter, h), "down": (h, inter),
        "input_norm": (h,), "post_norm": (h,),
    }  # fmt: skip
    return {
        name: torch.randn(shape, generator=g) / math.sqrt(shape[-1])
        for name, shape in shapes.items()
    }


def shard(w: dict[str, torch.Tensor], tp: int, rank: int) -> dict[str, torch.Tensor]:
    """What one rank holds: its rows of the column-parallel weights and biases, its
    columns of the row-parallel ones, the norms whole."""
    heads, kv = CONFIG["num_attention_heads"], CONFIG["num_key_value_heads"]
    d = CONFIG["hidden_size"] // heads
    q = slice(rank * heads // tp * d, (rank + 1) * heads // tp * d)
    first = rank // kv_head_replicas(kv, tp) * kv_heads_per_rank(kv, tp)
    k = slice(first * d, (first + kv_heads_per_rank(kv, tp)) * d)
    per = CONFIG["intermediate_size"] // tp
    f = slice(rank * per, (rank + 1) * per)
    return {
        "q": w["q"][q], "q_bias": w["q_bias"][q],
        "k": w["k"][k], "k_bias": w["k_bias"][k],
        "v": w["v"][k], "v_bias": w["v_bias"][k],
        "o": w["o"][:, q],
        "gate": w["gate"][f], "up": w["up"][f], "down": w["down"][:, f],
        "input_norm": w["input_norm"], "post_norm": w["post_norm"],
    }  # fmt: skip


def rms_norm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    variance = x.pow(2).mean(-1, keepdim=True)
    return x * torch.rsqrt(variance + CONFIG["rms_norm_eps"]) * weight


def rope(x: torch.Tensor) -> torch.Tensor:
    """Rotary embedding, NeoX style (the halves rotated), positions 0..tokens-1."""
    tokens, _, d = x.shape
    freqs = CONFIG["rope_theta"] ** (-torch.arange(0, d, 2) / d)
    angles = torch.outer(torch.arange(tokens), freqs)
    cos, sin = angles.cos()[:, None], angles.sin()[:, None]
    first, second = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([first * cos - second * sin, second * cos + first * sin], -1)


def layer(x: torch.Tensor, w: dict[str, torch.Tensor], all_reduce) -> torch.Tensor:
    """The decoder layer on the heads and columns w holds; all_reduce sums a
    row-parallel output over the ranks (nothing to sum in one process)."""
    d = CONFIG["hidden_size"] // CONFIG["num_attention_heads"]
    tokens = x.shape[0]
    normed = rms_norm(x, w["input_norm"])
    q = rope(F.linear(normed, w["q"], w["q_bias"]).view(tokens, -1, d))
    k = rope(F.linear(normed, w["k"], w["k_bias"]).view(tokens, -1, d))
    v = F.linear(normed, w["v"], w["v_bias"]).view(tokens, -1, d)
    group = q.shape[1] // k.shape[1]  # query heads per KV head
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    attention = F.scaled_dot_product_attention(
        q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), is_causal=True
    )
    x = x + all_reduce(F.linear(attention.transpose(0, 1).reshape(tokens, -1), w["o"]))
    normed = rms_norm(x, w["post_norm"])
    gated = F.silu(F.linear(normed, w["gate"])) * F.linear(normed, w["up"])
    return x + all_reduce(F.linear(gated, w["down"]))


def hidden_states() -> torch.Tensor:
    g = torch.Generator().manual_seed(1)
    return torch.randn(TOKENS, CONFIG["hidden_size"], generator=g)


def rank_main(rank: int, tp: int, store: str, results) -> None:
    """One process of the TP group: its shard, the layer, its all-reduces counted."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=store, rank=rank, world_size=tp)
    calls = []

    def all_reduce(partial: torch.Tensor) -> torch.Tensor:
        calls.append(partial.numel() * partial.element_size())
        dist.all_reduce(partial)  # sums in place, on every rank
        return partial

    w = shard(weights(), tp, rank)
    out = layer(hidden_states(), w, all_reduce)
    held = sum(t.numel() for t in w.values())
    results.put((rank, held, calls, out.tolist()))  # plain floats: the process ends
    dist.destroy_process_group()


def run(tp: int) -> list[tuple]:
    """Start tp processes (spawned, as vLLM starts its workers) and collect what each
    rank reports, in rank order."""
    context = mp.get_context("spawn")
    results = context.SimpleQueue()
    with tempfile.TemporaryDirectory() as folder:
        store = f"file://{folder}/store"  # a rendezvous file: no network port needed
        mp.start_processes(
            rank_main, args=(tp, store, results), nprocs=tp, start_method="spawn"
        )
        return sorted(results.get() for _ in range(tp))


if __name__ == "__main__":
    torch.set_num_threads(1)
    alone = layer(hidden_states(), weights(), lambda partial: partial)
    expected = allreduce_bytes(CONFIG, TOKENS, dtype_bytes=4)
    c = CONFIG
    print(
        f"One Qwen2-shaped layer: hidden {c['hidden_size']}, "
        f"{c['num_attention_heads']} query heads, {c['num_key_value_heads']} KV heads, "
        f"d_ff {c['intermediate_size']}; {TOKENS} tokens in float32"
    )
    print("TP  rank  parameters  tp_memory says  KV heads     all-reduces   bytes")
    for tp in (2, 4):
        for rank, held, calls, out in run(tp):
            predicted = layer_parameters(CONFIG, tp)
            replicas = kv_head_replicas(c["num_key_value_heads"], tp)
            kv = f"{kv_heads_per_rank(c['num_key_value_heads'], tp)}"
            kv += f" (1 of {replicas})" if replicas > 1 else ""
            print(
                f"{tp:>2}  {rank:>4}  {held:>10,}  {predicted:>14,}  {kv:<10}"
                f"  {len(calls):>11}  {sum(calls):>6,}"
            )
            if held != predicted or sum(calls) != expected:
                raise SystemExit("the shard or the all-reduces differ from the lesson")
            difference = (torch.tensor(out) - alone).abs().max().item()
            if difference > TOLERANCE:
                raise SystemExit(f"TP {tp} rank {rank} is off by {difference:.1e}")
    print(f"tp_comm.allreduce_bytes for the layer in float32: {expected:,} bytes")
    print(f"every rank's output equals the one-process layer's within {TOLERANCE:.0e}")
