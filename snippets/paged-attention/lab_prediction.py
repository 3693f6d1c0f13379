"""What the lab's vLLM reports, predicted with this lesson's block pool and lesson 1's
capacity calculator: the start-up lines and the usage gauge at each reading.

Run: python lab_prediction.py [LAB_OUTPUT]   (checks what usage_lab.py printed)
"""

import re
import sys
from pathlib import Path

from block_pool import BLOCK_SIZE, BlockPool, blocks_for
from hf_config import read_presets
from kv_cache_size import kv_bytes_per_token
from kv_capacity import predict

NUM_GPU_BLOCKS = 1000  # the lab's num_gpu_blocks_override
MAX_MODEL_LEN = 4096
PROMPT_LENGTHS = [100, 300, 700, 1200]  # tokens of the lab's four prompts
READ_AT = [40, 120]  # the lab reads the gauge when every request has generated these
READING = re.compile(
    r"after \[([\d, ]+)\] generated tokens: vllm:kv_cache_usage_perc = (\S+)"
)

# The lab's model keeps Qwen2.5-7B-Instruct's KV shape (2 bytes per element).
qwen = read_presets()["Qwen2.5-7B-Instruct"].model


def startup():
    """GPU KV cache size and Maximum concurrency, as vLLM computes them."""
    memory = NUM_GPU_BLOCKS * BLOCK_SIZE * kv_bytes_per_token(qwen)
    return predict(qwen, memory, MAX_MODEL_LEN)


def lab_pool(generated: list[int]) -> BlockPool:
    """The block pool once each request holds its prompt and its generated tokens."""
    pool = BlockPool(NUM_GPU_BLOCKS)
    for number, (prompt, output) in enumerate(zip(PROMPT_LENGTHS, generated)):
        pool.allocate(f"request-{number}", prompt + output)
    return pool


def steady(generated: list[int]) -> bool:
    """Whether each request's block count is the same one token either side: vLLM may
    not have computed the last sampled token yet, or may have scheduled the next one."""
    return all(
        blocks_for(prompt + output - 1) == blocks_for(prompt + output + 1)
        for prompt, output in zip(PROMPT_LENGTHS, generated)
    )


def read_lab_output(text: str) -> list[tuple[list[int], float]]:
    """The readings usage_lab.py printed: (generated tokens per request, gauge)."""
    readings = [
        ([int(n) for n in counts.split(",")], float(value))
        for counts, value in READING.findall(text)
    ]
    if not readings:
        raise ValueError(
            "no line like 'after [...] generated tokens: vllm:kv_cache_usage_perc = X'"
        )
    return readings


if __name__ == "__main__":
    capacity = startup()
    print(f"num_gpu_blocks_override={NUM_GPU_BLOCKS}, max_model_len={MAX_MODEL_LEN:,}:")
    print(f"  GPU KV cache size: {capacity.tokens:,} tokens")
    print(
        f"  Maximum concurrency for {MAX_MODEL_LEN:,} tokens per request:"
        f" {capacity.max_concurrency:.2f}x"
        f" = {NUM_GPU_BLOCKS} / {blocks_for(MAX_MODEL_LEN)} blocks"
    )
    usable = NUM_GPU_BLOCKS - 1
    print(
        f"  usable: {usable} blocks = {usable * BLOCK_SIZE:,} tokens (block 0 is null)"
    )
    for generated in READ_AT:
        counts = [generated] * len(PROMPT_LENGTHS)
        pool, tokens = lab_pool(counts), [p + generated for p in PROMPT_LENGTHS]
        blocks = [len(pool.block_table(r)) for r in pool.requests]
        print(f"after {generated} generated tokens: tokens {tokens}")
        used = f"{sum(blocks)} of {NUM_GPU_BLOCKS - 1}"
        print(f"  blocks {blocks}, {used} -> vllm:kv_cache_usage_perc = {pool.usage!r}")
        assert steady(counts), "pick lengths away from a block boundary"
    if len(sys.argv) > 1:
        for counts, value in read_lab_output(Path(sys.argv[1]).read_text("utf-8")):
            expected = lab_pool(counts).usage
            verdict = (
                "match" if value == expected else f"MISMATCH: predicted {expected!r}"
            )
            print(f"your lab, after {counts}: {value!r} {verdict}")
            if not steady(counts):
                print("  (read at a block boundary: one block either way is possible)")
