"""Change one token of a 1,000-token prompt: every block from the changed one on
misses, even the ones whose 16 tokens are the same."""

from prefix_cache import PrefixCache, block_hashes

PROMPT = list(range(1000, 2000))


def changed(position: int) -> list[int]:
    prompt = list(PROMPT)
    prompt[position] = 7  # any other token id
    return prompt


for position in (999, 500, 3):
    cache = PrefixCache(num_gpu_blocks=200)
    cache.run("original", PROMPT)
    other = changed(position)
    cached = cache.run(f"changed@{position}", other)
    same_tokens = sum(
        PROMPT[i : i + 16] == other[i : i + 16] for i in range(0, 992, 16)
    )
    same_hashes = sum(a == b for a, b in zip(block_hashes(PROMPT), block_hashes(other)))
    print(
        f"token {position:3} changed (block {position // 16:2}): {cached:3} cached;"
        f" {same_tokens} of 62 full blocks hold the same tokens,"
        f" {same_hashes} the same hash"
    )
