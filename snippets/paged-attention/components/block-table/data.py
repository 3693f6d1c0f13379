"""The block table component starts from the lesson's worked trace (block_trace.py)."""

from block_pool import BLOCK_SIZE
from block_trace import NUM_GPU_BLOCKS, encode


def data(options: dict) -> dict:
    if options != {"start": "trace"}:
        raise ValueError("the fence holds one line, start: trace")
    return {"blocks": NUM_GPU_BLOCKS, "block_size": BLOCK_SIZE, "ops": encode()}
