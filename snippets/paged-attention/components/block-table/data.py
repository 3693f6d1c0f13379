"""The block table component starts from the lesson's worked trace (block_trace.py)."""

from block_pool import BLOCK_SIZE
from block_trace import NUM_GPU_BLOCKS, encode
from coursekit.components import fence_choice


def data(options: dict) -> dict:
    fence_choice(options, "start", ["trace"])
    return {"blocks": NUM_GPU_BLOCKS, "block_size": BLOCK_SIZE, "ops": encode()}
