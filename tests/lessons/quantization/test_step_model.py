"""Lesson 3's step times and lesson 4's decode floor (and with it the lab's ceiling) use
lesson 1's model of a step's weights (snippets/kv-cache/decode_batch.py: weights_read,
matmul_flops, tested in tests/lessons/kv-cache/test_decode_step.py); the corrected
figures of issue 23 come out of it."""

import pytest
from chunked_prefill import step_seconds
from decode_batch import BANDWIDTH, PARAMETERS, PEAK_BF16, QWEN, matmul_flops, weights_read
from quant_memory import decode_floor_ms, weight_bytes
from scheduler import Step

CONFIG = QWEN.config


def step(scheduled, before):
    return Step(step=0, scheduled=scheduled, computed_before=before, decoding=[],
                sampled=[], preempted=[], finished=[], running=[], waiting=[],
                free_blocks=0)


def test_lesson_3_times_its_steps_with_the_same_model():
    # a decode step of two requests: memory-bound, two rows of the table
    decode = step({"a": 1, "b": 1}, {"a": 99, "b": 9})
    read = weights_read(2 * PARAMETERS, CONFIG, 2) + (100 + 10) * 57344
    assert step_seconds(decode) == read / BANDWIDTH
    # a 2,048-token chunk: compute-bound, lm_head for one logits row
    chunk = step({"long": 2048}, {"long": 0})
    attention = 28 * 28 * 128 * 4 * 2048 * 2049 // 2
    assert step_seconds(chunk) == (matmul_flops(CONFIG, 2048, 1) + attention) / PEAK_BF16


@pytest.mark.parametrize("batch, ms", [(1, {"bf16": 14.09, "fp8": 7.61, "awq-int4-g128": 4.50})])
def test_issue_23s_corrected_floor(batch, ms):
    for fmt, expected in ms.items():
        assert round(decode_floor_ms("Qwen2.5-7B-Instruct", fmt, batch, 1024), 2) == expected


def test_issue_23s_ratios():
    def ratio(batch):
        bf16, awq = (decode_floor_ms("Qwen2.5-7B-Instruct", fmt, batch, 1024)
                     for fmt in ("bf16", "awq-int4-g128"))
        return bf16 / awq

    assert round(ratio(1), 2) == 3.13
    assert round(ratio(128), 2) == 1.81
    # the old count, the whole table read every step: the page's former 2.72x
    old = [(weight_bytes("Qwen2.5-7B-Instruct", fmt) + 1024 * 57344) for fmt in ("bf16", "awq-int4-g128")]
    assert round(old[0] / old[1], 2) == 2.72
