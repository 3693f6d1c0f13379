"""Expert parallelism (EP) for a mixture-of-experts model, on paper: which experts each
GPU holds, what they weigh, and what a token sends.

With --enable-expert-parallel, vLLM 0.26.0 gives the MoE layers an EP group of
TP x DP GPUs and sets their TP to 1: each GPU holds whole experts instead of a slice
of every expert (vllm/model_executor/layers/fused_moe/config.py:
FusedMoEParallelConfig.make); attention stays tensor-parallel. Which experts a GPU
holds: vllm/model_executor/layers/fused_moe/expert_map_manager.py:
determine_expert_map."""

import math
from pathlib import Path

from hf_config import read_presets
from kv_cache_size import GIB

MOE_PRESETS = Path(__file__).with_name("moe_presets.json")
STRATEGIES = ("linear", "round_robin")  # ParallelConfig.expert_placement_strategy


def expert_map(
    ep_size: int, ep_rank: int, num_experts: int, strategy: str = "linear"
) -> list[int] | None:
    """determine_expert_map: for each global expert, its index on this GPU, or -1 where
    another GPU holds it; None with one GPU. The first num_experts % ep_size GPUs hold
    one expert more (the function's docstring says the last rank; its code says not)."""
    if type(ep_size) is not int or ep_size < 1:
        raise ValueError(f"ep_size must be a positive integer, got {ep_size!r}")
    if not 0 <= ep_rank < ep_size:
        raise ValueError(f"ep_rank must be in [0, {ep_size}), got {ep_rank!r}")
    if strategy not in STRATEGIES:
        raise ValueError(
            f"Unsupported expert placement strategy '{strategy}',"
            f" expected one of {STRATEGIES}"
        )
    if ep_size == 1:
        return None
    if strategy == "round_robin" and ep_rank > num_experts:
        raise ValueError(
            f"round_robin: GPU {ep_rank} would hold no expert of {num_experts};"
            " vLLM's torch.arange fails on the empty range"
        )
    base, remainder = divmod(num_experts, ep_size)
    local = base + 1 if ep_rank < remainder else base
    mapping = [-1] * num_experts
    if strategy == "linear":
        start = ep_rank * base + min(ep_rank, remainder)
        held = range(start, start + local)
    else:
        held = range(ep_rank, num_experts, ep_size)
    for index, expert in enumerate(held):
        mapping[expert] = index
    return mapping


def held(mapping: list[int] | None, num_experts: int) -> list[int]:
    if mapping is None:
        return list(range(num_experts))
    return [expert for expert, index in enumerate(mapping) if index >= 0]


def spans(experts: list[int]) -> str:
    if experts == list(range(experts[0], experts[-1] + 1)):
        return f"{experts[0]}-{experts[-1]}"
    return f"{experts[0]}, {experts[1]}, ... {experts[-1]}"


def ranks_reached(num_experts: int, top_k: int, ep_size: int) -> float:
    """GPUs a token's top_k experts lie on, on average, if the router picked experts
    uniformly at random (an ESTIMATE: real routing is skewed), experts spread evenly."""
    per_gpu = num_experts // ep_size
    miss = math.comb(num_experts - per_gpu, top_k) / math.comb(num_experts, top_k)
    return ep_size * (1 - miss)


if __name__ == "__main__":
    moe = read_presets(MOE_PRESETS)["Qwen3-30B-A3B"].config
    e, k, h = moe["num_experts"], moe["num_experts_per_tok"], moe["hidden_size"]
    expert = 3 * h * moe["moe_intermediate_size"]  # gate, up, down
    layers = moe["num_hidden_layers"]
    print(f"Qwen3-30B-A3B: {e} experts per layer, {k} per token, {layers} layers,")
    all_experts = e * expert * layers * 2
    print(f"  an expert: {expert:,} parameters; all: {all_experts / GIB:.2f} GiB")
    print(" EP  experts/GPU (linear)  GPU 0 holds    GPU 1 (round_robin)  GiB/GPU")
    for ep in (2, 4, 8):
        counts = {len(held(expert_map(ep, r, e), e)) for r in range(ep)}
        linear = held(expert_map(ep, 0, e), e)
        robin = held(expert_map(ep, 1, e, "round_robin"), e)
        gib = len(linear) * expert * layers * 2 / GIB
        print(
            f" {ep:>2}  {'/'.join(map(str, sorted(counts))):>19}  {spans(linear):<13}"
            f"  {spans(robin):<19} {gib:>8.2f}"
        )
    uneven = [len(held(expert_map(8, r, 60), 60)) for r in range(8)]
    print(f"60 experts over 8 GPUs: {uneven}")
    print("per token and MoE layer, BF16 (uniform routing: an estimate):")
    for ep in (2, 4, 8):
        reached = ranks_reached(e, k, ep)
        remote = reached * (ep - 1) / ep  # its own GPU is one of them, 1/ep of the time
        print(
            f"  EP {ep}: reaches {reached:.2f} GPUs; all-to-all sends"
            f" {2 * remote * h * 2:,.0f} bytes (there and back)"
        )
