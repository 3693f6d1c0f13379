"""The offload tiers component starts from one of three workloads: data.py gives
script.js their settings as link values, the limits a link must keep, and the constants
of the TTFT estimate (revisits.py: ttft), read from the lessons' modules; parity.py
reads the same.

A workload is documents A to H of doc_tokens tokens each (document d holds the token ids
FIRST_TOKEN + d * doc_tokens onwards: no two documents share a block), sent one at a
time in the order the link names them (order: "ABCADBC"), through offload.py's
OffloadedCache.
"""

from coursekit.components import fence_choice
from decode_batch import (
    ATTENTION,
    BANDWIDTH,
    KV_PER_TOKEN,
    PARAMETERS,
    PEAK_BF16,
    QWEN,
    matmul_flops,
    weights_read,
)
from kv_capacity import BLOCK_SIZE
from reload_vs_recompute import PCIE, bytes_per_block

FIRST_TOKEN = 10_000  # ordinary Qwen2.5 token ids, as revisits.py's documents
DOCUMENTS = "ABCDEFGH"
PRESETS = {
    # blocks_moving.py, the lesson's stepped figure: 4 documents of 33 tokens, a GPU of
    # 6 usable blocks, a CPU tier of 6 blocks under LRU.
    "blocks-moving": {
        "num_gpu_blocks": 7,
        "num_cpu_blocks": 6,
        "policy": "lru",
        "doc_tokens": 33,
        "order": "ABCADBC",
    },
    # revisits.py's workload at a smaller scale: 8 documents sent once, then once more
    # in the same order; the GPU holds 6 of them (199 blocks, 32 a document) and the CPU
    # tier 12 (400 blocks), as the lab's 2,339 and 4,681 blocks hold 6 and 12 documents
    # of 375.
    "revisits": {
        "num_gpu_blocks": 200,
        "num_cpu_blocks": 400,
        "policy": "lru",
        "doc_tokens": 512,
        "order": "ABCDEFGHABCDEFGH",
    },
    # The same with a CPU tier no larger than the GPU (revisits.py's 2 GiB row): LRU
    # keeps nothing a revisit needs, ARC keeps a few blocks in T2.
    "small-tier": {
        "num_gpu_blocks": 200,
        "num_cpu_blocks": 200,
        "policy": "arc",
        "doc_tokens": 512,
        "order": "ABCDEFGHABCDEFGH",
    },
}
# What a link may hold (least, most). Anything else falls back to the fence's workload.
# A document is at most 1,024 tokens: the JavaScript twin's block hashes are the
# prefixes they close, whose cost grows with the square of a document's length.
LIMITS = {
    "num_gpu_blocks": (2, 4096),
    "num_cpu_blocks": (1, 4096),
    "doc_tokens": (1, 1024),
    "order": (1, 16),  # requests
}
POLICIES = ("lru", "arc")
SETTINGS = ("num_gpu_blocks", "num_cpu_blocks", "policy", "doc_tokens")


def state(preset: dict) -> dict[str, str]:
    """A workload as a link."""
    return {name: str(value) for name, value in preset.items()}


def step_model() -> dict:
    """The constants of lesson 3's step estimate for one request (chunked_prefill.py:
    step_bounds), each read from the functions it calls: bytes read are the weights'
    (linear in the tokens, weights_read) plus the KV cache's; FLOPs the weight matmuls'
    (linear in tokens and logits rows, matmul_flops) plus attention's."""
    weights, config = 2 * PARAMETERS, QWEN.config
    read_per_token = weights_read(weights, config, 2) - weights_read(weights, config, 1)
    per_token = matmul_flops(config, 2, 1) - matmul_flops(config, 1, 1)
    per_logit = matmul_flops(config, 1, 2) - matmul_flops(config, 1, 1)
    assert matmul_flops(config, 1, 1) == per_token + per_logit  # no constant term
    return {
        "read_base": weights_read(weights, config, 1) - read_per_token,
        "read_per_token": read_per_token,
        "kv_per_token": KV_PER_TOKEN,
        "flops_per_token": per_token,
        "flops_per_logit": per_logit,
        "attention": ATTENTION,
        "bandwidth": BANDWIDTH,
        "peak": PEAK_BF16,
        "block_size": BLOCK_SIZE,
        "bytes_per_block": bytes_per_block(),
        "pcie": PCIE,
    }


def data(options: dict) -> dict:
    return {
        "start": fence_choice(options, "start", PRESETS),
        "limits": LIMITS,
        "presets": {name: state(preset) for name, preset in PRESETS.items()},
        "model": step_model(),
        "first_token": FIRST_TOKEN,
    }
