"""startup_budget.py: the capture sizes and graph counts on cases worked by hand from
vllm/config/vllm.py: VllmConfig._set_cudagraph_sizes and
vllm/v1/worker/gpu/cudagraph_utils.py: CudaGraphManager._init_candidates (the
conformance tests compare the sizes with vLLM's own code), the padding, the budget."""

import math

import pytest
from kv_cache_size import GIB
from startup_budget import (
    activation_estimate,
    capture_sizes,
    graphs_captured,
    kv_budget,
    padded_size,
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
    assert [padded_size(n, DEFAULT) for n in (1, 3, 9, 256, 257, 512)] == [
        1, 4, 16, 256, 272, 512,
    ]  # fmt: skip
    assert padded_size(513, DEFAULT) is None
    assert padded_size(1, []) is None


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
        (lambda: padded_size(0, DEFAULT), "num_tokens"),
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
