"""Self-test 2: the graph a decode step of 37 sequences runs on, by default."""

from startup_budget import capture_sizes, dispatch, graphs_to_capture

sizes = capture_sizes(256, 8192)
graph = dispatch([1] * 37, graphs_to_capture(sizes, 256))  # one token per sequence
print(f"37 sequences run on the {graph.mode} graph of {graph.num_tokens}")
