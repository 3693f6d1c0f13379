"""Self-test 1: the capture sizes for 256 sequences and at most 500 tokens per step."""

from startup_budget import capture_sizes

sizes = capture_sizes(max_num_seqs=256, max_num_batched_tokens=500)
print(f"{len(sizes)} capture sizes, the largest {sizes[-1]}")
