"""Self-test 4: max_num_seqs=16: the sizes, and what a step of 40 tokens runs as."""

from startup_budget import capture_sizes, padded_size

sizes = capture_sizes(16, 8192)
runs_as = padded_size(40, sizes) or "eager (no graph)"
print(f"{len(sizes)} sizes {sizes}; 40 tokens: {runs_as}")
