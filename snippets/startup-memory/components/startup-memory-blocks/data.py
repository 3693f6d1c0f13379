"""What the component computes with: the lesson's own block size."""

from startup_memory import BLOCK_SIZE


def data(options: dict) -> dict:
    return {"block_size": BLOCK_SIZE}
