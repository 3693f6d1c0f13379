"""What moving a prompt's KV cache from a prefill instance to a decode instance costs,
beside what computing it costs: Qwen2.5-7B-Instruct (BF16) on RTX 4090s.

The bytes are exact: lesson 1's KV bytes per token (decode_batch.KV_PER_TOKEN, 57,344 in
BF16) times the prompt's tokens; a connector moves whole blocks of 16 tokens
(vllm/distributed/kv_transfer/kv_connector/v1/nixl/pull_scheduler.py:
NixlPullConnectorScheduler.request_finished hands the decode side the prompt's block
ids). The prefill time is lesson 3's roofline bound for the prompt run alone, in chunks
of `vllm serve`'s 2,048-token budget (chunked_prefill.step_seconds). The link rates are
estimates, not measurements: a transfer also pays a handshake and per-block descriptors,
so the times below are lower bounds.
"""

from block_pool import BLOCK_SIZE, blocks_for
from chunked_prefill import step_seconds
from decode_batch import KV_PER_TOKEN
from scheduler import Request, run

MIB = 1024**2
# Estimated sustained rates of the link the KV crosses, bytes/s (1000-based GB/s, as
# vendors quote them). Every one is an estimate: measure yours (nixlbench, ib_write_bw).
LINKS = {
    "10 GbE TCP": 1.1e9,
    "disk (NVMe)": 3e9,
    "RDMA 100 Gb/s": 11e9,
    "PCIe 4.0 x16": 22e9,
    "RDMA 400 Gb/s": 45e9,
    "NVLink (H100)": 350e9,
}


def kv_transfer_bytes(prompt_tokens: int, block_size: int = BLOCK_SIZE) -> int:
    """Bytes of KV a decode instance receives for a prompt: its blocks, whole."""
    if type(prompt_tokens) is not int or prompt_tokens < 1:
        raise ValueError(
            f"prompt_tokens must be an integer of at least 1, got {prompt_tokens!r}"
        )
    return blocks_for(prompt_tokens, block_size) * block_size * KV_PER_TOKEN


def transfer_seconds(prompt_tokens: int, link_bytes_per_s: float) -> float:
    """Seconds the KV of a prompt takes over a link of this rate (a lower bound)."""
    if (
        isinstance(link_bytes_per_s, bool)
        or not isinstance(link_bytes_per_s, (int, float))
        or link_bytes_per_s <= 0
    ):
        raise ValueError(
            f"the link's rate must be a number of bytes/s above 0,"
            f" got {link_bytes_per_s!r}"
        )
    return kv_transfer_bytes(prompt_tokens) / link_bytes_per_s


def prefill_seconds(prompt_tokens: int, budget: int = 2048) -> float:
    """Lesson 3's bound on the time of a prompt's prefill, run alone in chunks."""
    steps = run([Request("p", prompt_tokens, 1)], max_num_batched_tokens=budget)
    return sum(step_seconds(step) for step in steps)


if __name__ == "__main__":
    prompts = (256, 1024, 4096, 16384)
    print(f"KV per token {KV_PER_TOKEN:,} bytes (BF16); blocks of {BLOCK_SIZE}")
    print("prompt tokens      " + "".join(f"{p:>10,}" for p in prompts))
    sizes = "".join(f"{kv_transfer_bytes(p) / MIB:>10.1f}" for p in prompts)
    print("KV to move, MiB    " + sizes)
    prefill = {p: prefill_seconds(p) for p in prompts}
    print(
        "prefill bound, ms  " + "".join(f"{prefill[p] * 1e3:>10.1f}" for p in prompts)
    )
    print("transfer, ms (link rates are estimates):")
    for name, rate in LINKS.items():
        times = [transfer_seconds(p, rate) for p in prompts]
        print(f"  {name:<17}" + "".join(f"{t * 1e3:>10.1f}" for t in times))
    print("transfer / prefill:")
    for name in ("10 GbE TCP", "RDMA 100 Gb/s", "RDMA 400 Gb/s"):
        ratios = [transfer_seconds(p, LINKS[name]) / prefill[p] for p in prompts]
        print(f"  {name:<17}" + "".join(f"{r:>10.2f}" for r in ratios))
