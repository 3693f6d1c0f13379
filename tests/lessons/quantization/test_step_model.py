"""The course's one model of what a step reads and computes of the weights
(snippets/continuous-batching/chunked_prefill.py: weights_read, matmul_flops): a step
gathers one row of the input embedding table per token and does no arithmetic on it,
reads lm_head whole and computes it for one logits row per request. Lesson 3's step
times, lesson 4's decode floor (and with it the lab's ceiling) and the glossary's
roofline all use it; the corrected figures of issue 23 come out of it."""

import pytest
from chunked_prefill import matmul_flops, step_seconds, weights_read
from decode_batch import BANDWIDTH, PARAMETERS, PEAK_BF16, QWEN
from model_weights import count
from quant_memory import decode_floor_ms, weight_bytes
from scheduler import Step

CONFIG = QWEN.config
TABLE = 152064 * 3584 * 2  # the input embedding table in bf16: 1,089,994,752 bytes
ROW = 3584 * 2


def test_a_step_reads_one_row_of_the_embedding_table_per_token():
    assert TABLE == 1_089_994_752
    weights = 2 * PARAMETERS
    assert weights_read(weights, CONFIG, 1) == weights - TABLE + ROW
    assert weights_read(weights, CONFIG, 2048) == weights - TABLE + 2048 * ROW
    with pytest.raises(ValueError, match="at least one token"):
        weights_read(weights, CONFIG, 0)


def test_a_tied_table_is_read_whole_by_lm_head():
    tied = {**CONFIG, "tie_word_embeddings": True}
    assert weights_read(123_456_789, tied, 4) == 123_456_789


def test_matmul_flops_count_no_embedding_and_lm_head_per_logits_row():
    linear = count(CONFIG).linear
    lm_head = 152064 * 3584
    assert matmul_flops(CONFIG, 1, 1) == 2 * (linear + lm_head)
    assert 2 * (linear + lm_head) == 2 * (PARAMETERS - lm_head - 28 * (2 * 3584 + 3584 + 2 * 512)
                                          - 3584)  # all but the table, norms and biases
    # a 2,048-token chunk of one request: lm_head for its last token only
    assert matmul_flops(CONFIG, 2048, 1) == 2 * (2048 * linear + lm_head)


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
