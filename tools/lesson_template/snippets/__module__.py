"""%%title_en%%: replace this example with the lesson's code."""

BLOCK_SIZE = 16  # tokens per KV cache block: vLLM 0.26.0's default


def blocks_needed(num_tokens: int, block_size: int = BLOCK_SIZE) -> int:
    """KV cache blocks that num_tokens tokens take: whole blocks, rounded up."""
    if type(num_tokens) is not int or num_tokens < 0:
        raise ValueError(
            f"num_tokens must be a non-negative integer, got {num_tokens!r}"
        )
    if type(block_size) is not int or block_size <= 0:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    return -(-num_tokens // block_size)


if __name__ == "__main__":
    for tokens in (1, 16, 17, 1000):
        print(f"{tokens:>5} tokens -> {blocks_needed(tokens)} blocks")
