"""Self-test 4: max_num_seqs=16: the sizes, and what a step of 40 tokens runs on."""

from startup_budget import capture_sizes, dispatch, graphs_to_capture

sizes = capture_sizes(16, 8192)
graph = dispatch([40], graphs_to_capture(sizes, 16))  # one request's 40-token chunk
runs_on = "eager (no graph)" if graph is None else f"the graph of {graph.num_tokens}"
print(f"{len(sizes)} sizes {sizes}; 40 tokens: {runs_on}")
