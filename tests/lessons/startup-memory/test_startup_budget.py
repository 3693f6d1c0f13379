"""startup_budget.py: the capture sizes and graph counts on cases worked by hand from
vllm/config/vllm.py: VllmConfig._set_cudagraph_sizes and
vllm/v1/worker/gpu/cudagraph_utils.py: CudaGraphManager._init_candidates (the
conformance tests compare the sizes with vLLM's own code), the dispatch of a step to a
graph (CudaGraphManager.dispatch: only the smallest captured token count that holds the
step is tried), the budget."""

import math

import pytest
from kv_cache_size import GIB
from startup_budget import (
    Graph,
    activation_estimate,
    capture_sizes,
    dispatch,
    graphs_captured,
    graphs_to_capture,
    kv_budget,
    qwen_budget,
)

DEFAULT = [1, 2, 4, *range(8, 256, 8), *range(256, 513, 16)]


def test_the_default_list_is_the_docstrings_pattern():
    assert capture_sizes(256, 8192) == DEFAULT
    assert len(DEFAULT) == 51


@pytest.mark.parametrize(
    "seqs, tokens, expected",
    [
        (16, 8192, [1, 2, 4, 8, 16, 24, 32]),  # twice max_num_seqs
        (64, 100, [1, 2, 4, *range(8, 97, 8), 100]),  # a full step, off-stride
        (3, 5000, [1, 2, 4]),  # 6 is the largest; 8 does not fit
        (1, 1, [1]),
        (200, 300, [1, 2, 4, *range(8, 256, 8), 256, 272, 288, 300]),
    ],
)
def test_small_limits(seqs, tokens, expected):
    assert capture_sizes(seqs, tokens) == expected


def test_speculative_tokens_and_modes():
    # two tokens per decode step: min(100 * 2 * 2, 512) = 400
    assert capture_sizes(100, 8192, num_speculative_tokens=1)[-1] == 400
    assert capture_sizes(64, 8192, performance_mode="interactivity")[:33] == [
        *range(1, 33),
        40,
    ]
    assert capture_sizes(256, 8192, enforce_eager=True) == []


def test_graph_counts():
    assert graphs_captured(DEFAULT, 256) == (35, 51)
    assert graphs_captured(capture_sizes(16, 8192), 16) == (5, 7)
    # with a speculative token, decode sizes round up to even token counts
    sizes = capture_sizes(4, 8192, num_speculative_tokens=1)  # [1, 2, 4, 8, 16]
    assert graphs_captured(sizes, 4, 1) == (3, 5)  # 2, 4, 8
    assert graphs_captured([], 256) == (0, 0)


def test_padding():
    graphs = graphs_to_capture(DEFAULT, 256)
    padded = [dispatch([n], graphs).num_tokens for n in (1, 3, 9, 256, 257, 512)]
    assert padded == [1, 4, 16, 256, 272, 512]
    assert dispatch([513], graphs) is None
    assert dispatch([1], []) is None


def test_decode_runs_on_full_graphs_and_mixed_steps_on_piecewise():
    graphs = graphs_to_capture(DEFAULT, 256)
    assert dispatch([1] * 37, graphs) == Graph("FULL", 40, 40, 1)
    assert dispatch([1, 2], graphs) == Graph("PIECEWISE", 4, None, None)
    assert dispatch([4], graphs) == Graph("PIECEWISE", 4, None, None)  # not 1 a request
    # above max_num_seqs no FULL graph: a step of 300 runs on PIECEWISE
    assert dispatch([300], graphs) == Graph("PIECEWISE", 304, None, None)


def test_speculative_tokens_round_decode_graphs_to_whole_steps():
    # k = 2: decode steps of 3 tokens a request; FULL graphs of 3, 6, 9, 18, 24, ...
    sizes = capture_sizes(256, 8192, num_speculative_tokens=2)
    graphs = graphs_to_capture(sizes, 256, num_speculative_tokens=2)
    full = [graph.num_tokens for graph in graphs if graph.mode == "FULL"]
    assert full[:6] == [3, 6, 9, 18, 24, 33] and full[-1] == 498  # 513 > 512 left out
    assert graphs_captured(sizes, 256, 2) == (49, 51)
    assert dispatch([3], graphs) == Graph("FULL", 3, 1, 3)  # a lone request, 1 + 2
    # 1 + 2 tokens of two requests: 3 is a FULL decode graph only, the batch is not
    # uniform, and dispatch does not go on to the PIECEWISE graph of 4
    assert dispatch([1, 2], graphs) is None
    assert dispatch([3, 2], graphs) is None  # 5 -> 6, FULL only
    assert dispatch([1], graphs) == Graph("PIECEWISE", 1, None, None)


@pytest.mark.parametrize(
    "mode, full, piecewise",
    [
        ("FULL_AND_PIECEWISE", 35, 51),
        ("FULL_DECODE_ONLY", 35, 0),
        ("PIECEWISE", 0, 51),
        ("FULL", 51, 0),
        ("NONE", 0, 0),
    ],
)
def test_cudagraph_modes(mode, full, piecewise):
    sizes = capture_sizes(256, 8192, cudagraph_mode=mode)
    assert graphs_captured(sizes, 256, 0, mode) == (full, piecewise)


def test_each_mode_dispatches_as_vllm():
    def runs(mode, query_lens):
        sizes = capture_sizes(256, 8192, cudagraph_mode=mode)
        return dispatch(query_lens, graphs_to_capture(sizes, 256, 0, mode))

    assert capture_sizes(256, 8192, cudagraph_mode="NONE") == []
    assert runs("NONE", [1]) is None  # nothing captured, nothing padded
    assert runs("FULL_DECODE_ONLY", [1] * 37) == Graph("FULL", 40, 40, 1)
    assert runs("FULL_DECODE_ONLY", [1, 2]) is None  # mixed: eager
    assert runs("PIECEWISE", [1] * 37) == Graph("PIECEWISE", 40, None, None)
    # FULL for every batch: up to min(size, max_num_seqs) requests
    assert runs("FULL", [1, 2]) == Graph("FULL", 4, 4, None)
    assert runs("FULL", [1] * 256 + [100]) is None  # 356 tokens, 257 requests > 256


def test_the_direct_knobs():
    assert capture_sizes(256, 8192, max_cudagraph_capture_size=64) == [
        1, 2, 4, *range(8, 65, 8),
    ]  # fmt: skip
    assert capture_sizes(32, 48, max_cudagraph_capture_size=64)[-1] == 48
    # given by hand: deduplicated, sorted, capped by max_num_batched_tokens only
    assert capture_sizes(16, 100, cudagraph_capture_sizes=[64, 1, 8, 8, 200]) == [
        1, 8, 64,
    ]  # fmt: skip
    assert capture_sizes(16, 100, cudagraph_capture_sizes=[1, 8], enforce_eager=True) == []
    with pytest.raises(ValueError, match="consistent"):
        capture_sizes(
            256, 8192, max_cudagraph_capture_size=64, cudagraph_capture_sizes=[1, 32]
        )
    smaller = qwen_budget(max_cudagraph_capture_size=64)
    assert smaller.kv == qwen_budget().kv and smaller.graphs < qwen_budget().graphs


def test_budget_arithmetic():
    budget = kv_budget(24 * GIB, 0.92, 14 * GIB, GIB, GIB // 4, GIB // 2, GIB // 2)
    assert budget.requested == math.ceil(24 * GIB * 0.92)
    assert budget.kv == budget.requested - 14 * GIB - GIB - GIB // 4
    # the CUDA context and the graphs both lie outside the share
    assert budget.headroom == 24 * GIB - budget.requested - GIB // 2 - GIB // 2


def test_eager_changes_only_the_graphs():
    graphs, eager = qwen_budget(), qwen_budget(enforce_eager=True)
    assert graphs.kv == eager.kv and eager.graphs == 0 < graphs.graphs


def test_the_activation_estimate_grows_with_the_step():
    small = activation_estimate("Qwen2.5-7B-Instruct", 2048, 256)
    assert activation_estimate("Qwen2.5-7B-Instruct", 8192, 256) > small


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: capture_sizes(0, 8192), "max_num_seqs"),
        (lambda: capture_sizes(256, 2.5), "max_num_batched_tokens"),
        (lambda: capture_sizes(256, 8192, -1), "num_speculative_tokens"),
        (lambda: capture_sizes(256, 100), "at least max_num_seqs"),
        (lambda: capture_sizes(256, 8192, performance_mode="fast"), "performance_mode"),
        (lambda: dispatch([0], []), "query_lens"),
        (lambda: dispatch([], []), "query_lens"),
        (lambda: capture_sizes(256, 8192, cudagraph_mode="full"), "cudagraph_mode"),
        (lambda: graphs_to_capture(DEFAULT, 256, 0, "EAGER"), "cudagraph_mode"),
        (lambda: capture_sizes(256, 8192, max_cudagraph_capture_size=0), "max_cuda"),
        (lambda: capture_sizes(256, 8192, cudagraph_capture_sizes=[]), "non-empty"),
        (lambda: kv_budget(GIB, 1.5, 0, 0, 0, 0, 0), "gpu_memory_utilization"),
        (lambda: kv_budget(GIB, 0.9, -1, 0, 0, 0, 0), "weights"),
        (lambda: kv_budget(GIB, 0.9, 0, 0, 0, -1, 0), "context"),
        (lambda: kv_budget(GIB, 0.5, GIB, 0, 0, 0, 0), "no memory left"),
        # request_memory: the share must be free when the worker takes its snapshot
        (lambda: kv_budget(GIB, 0.9, 0, 0, 0, GIB // 5, 0), "refuses to start"),
        (lambda: qwen_budget(gpu_memory_utilization=0.99), "refuses to start"),
        (lambda: activation_estimate("GPT-5", 8192, 256), "unknown preset"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
