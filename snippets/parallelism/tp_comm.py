"""What crosses the wire in tensor parallelism, and what it costs a decode step.

Each decoder layer ends its attention (o_proj) and its MLP (down_proj) with a
row-parallel matmul whose partial sums every GPU must add up: two all-reduces of
hidden_size values per token and layer (vllm/model_executor/layers/linear.py:
RowParallelLinear.forward, reduce_results). A ring all-reduce over n GPUs sends and
receives 2(n-1)/n times the message on each GPU: n-1 steps of reduce-scatter and n-1 of
all-gather, each moving 1/n of it.

The step time adds the GPU's own decode step (lesson 1's decode_batch model, on this
GPU's share) and the all-reduces, which sit between the layers and do not overlap them.
The links' bandwidths and latencies are ESTIMATES (LINKS): measure yours with
nccl-tests' all_reduce_perf."""

from dataclasses import dataclass

from decode_batch import BANDWIDTH, PEAK_BF16, matmul_flops, weights_read
from hf_config import read_presets
from tp_memory import _dense, layout


@dataclass(frozen=True)
class Link:
    bus_gb_s: float  # NCCL's "bus bandwidth", GB/s (1000**3 bytes)
    latency_us: float  # one small all-reduce, microseconds


LINKS = {  # ESTIMATES, not measurements
    # GeForce cards have no peer-to-peer: NCCL copies through host memory (SHM).
    "PCIe 4.0, no P2P": Link(bus_gb_s=10.0, latency_us=30.0),
    "NVLink": Link(bus_gb_s=200.0, latency_us=8.0),  # data-centre cards; no 4090
}


def ring_factor(n: int) -> float:
    """What each GPU sends (and receives) in a ring all-reduce, per byte reduced."""
    if type(n) is not int or n < 1:
        raise ValueError(f"GPUs must be a positive integer, got {n!r}")
    return 2 * (n - 1) / n


def allreduce_bytes(config: dict, tokens: int, dtype_bytes: int = 2) -> int:
    """Bytes all-reduced per decode step: two all-reduces of hidden_size values per
    token and layer (o_proj, down_proj)."""
    return (
        2 * config["num_hidden_layers"] * tokens * config["hidden_size"] * dtype_bytes
    )


def comm_seconds(config: dict, tp: int, tokens: int, link: Link) -> float:
    """The all-reduces of one step: each costs the latency plus its bytes times the
    ring factor over the bus bandwidth (nccl-tests' definition of bus bandwidth)."""
    if tp == 1:
        return 0.0
    count = 2 * config["num_hidden_layers"]
    per_call = allreduce_bytes(config, tokens) / count
    seconds = link.latency_us * 1e-6 + per_call * ring_factor(tp) / (
        link.bus_gb_s * 1e9
    )
    return count * seconds


def gpu_seconds(config: dict, tp: int, batch: int, context: int) -> float:
    """One decode step on one TP rank, lesson 1's way: the slower of reading what it
    must (its weights, less the embedding rows it does not gather, and its KV heads'
    cache) and computing its share of the matmuls and of attention."""
    c, rank = _dense(config), layout(config, tp)[0]
    share = {**config, "vocab_size": rank.vocab_rows}  # its slice of the tables
    kv_per_token = 2 * config["num_hidden_layers"] * rank.kv_heads * c["head_dim"] * 2
    read = (
        weights_read(rank.weight_bytes, share, batch) + batch * context * kv_per_token
    )
    attention = batch * context * config["num_hidden_layers"] * rank.heads
    flops = matmul_flops(config, batch, batch) / tp + attention * c["head_dim"] * 4
    return max(read / BANDWIDTH, flops / PEAK_BF16)


def step_ms(config: dict, tp: int, batch: int, context: int, link: Link) -> float:
    return 1e3 * (gpu_seconds(config, tp, batch, context) + comm_seconds(
        config, tp, batch, link))  # fmt: skip


if __name__ == "__main__":
    qwen = read_presets()["Qwen2.5-7B-Instruct"].config
    per_token = allreduce_bytes(qwen, 1) // qwen["num_hidden_layers"]
    print(f"Qwen2.5-7B: {per_token:,} bytes all-reduced per token and layer")
    calls = 2 * qwen["num_hidden_layers"]
    print(
        f"  per token, 28 layers: {allreduce_bytes(qwen, 1):,} bytes in {calls} calls"
    )
    for n in (2, 4, 8):
        print(f"  ring factor, {n} GPUs: 2({n}-1)/{n} = {ring_factor(n):.2f}")
    context = 1024
    print(f"decode step, sequences of {context:,} tokens (estimates):")
    print("batch  TP 1 ms  TP 2 ms on PCIe, no P2P (wire)  TP 2 ms on NVLink (wire)")
    for batch in (1, 16, 64):
        one = step_ms(qwen, 1, batch, context, LINKS["NVLink"])
        rows = [
            (step_ms(qwen, 2, batch, context, link), comm_seconds(qwen, 2, batch, link))
            for link in LINKS.values()
        ]
        (pcie, pcie_wire), (nvlink, nvlink_wire) = rows
        print(
            f"{batch:>5} {one:>8.2f} {pcie:>16.2f} ({pcie_wire * 1e3:.2f})"
            f" {nvlink:>18.2f} ({nvlink_wire * 1e3:.2f})"
        )
    # The latency per all-reduce at which two cards stop beating one, at batch 1.
    saved = gpu_seconds(qwen, 1, 1, context) - gpu_seconds(qwen, 2, 1, context)
    pcie = LINKS["PCIe 4.0, no P2P"]
    bytes_term = comm_seconds(qwen, 2, 1, pcie) - calls * pcie.latency_us * 1e-6
    even = (saved - bytes_term) / calls
    print(f"batch 1: TP 2 loses to one card once an all-reduce takes {even * 1e6:.0f}"
          " µs")  # fmt: skip
