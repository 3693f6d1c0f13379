"""Self-test 2: the graph a decode step of 37 sequences runs as, by default."""

from startup_budget import capture_sizes, padded_size

sizes = capture_sizes(256, 8192)
print(f"37 sequences run as the graph of {padded_size(37, sizes)}")
