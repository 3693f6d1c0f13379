"""What the component computes with: the lesson's own block size."""

from speculative_decoding import BLOCK_SIZE


def data(options: dict) -> dict:
    return {"block_size": BLOCK_SIZE}
