"""The course's one model of what a step reads and computes of the weights
(snippets/kv-cache/decode_batch.py: weights_read, matmul_flops): a step gathers one row
of the input embedding table per token and does no arithmetic on it, reads lm_head whole
and computes it for one logits row per request. Lesson 1's decode step, lesson 3's step
times, lesson 4's decode floor (and with it the lab's ceiling) and the glossary's
roofline all use it."""

import pytest
from decode_batch import (
    BANDWIDTH,
    KV_PER_TOKEN,
    PARAMETERS,
    PEAK_BF16,
    QWEN,
    decode_step,
    matmul_flops,
    weights_read,
)
from model_weights import count

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


def test_lesson_1s_decode_step_reads_b_rows_of_the_table():
    read, weight_flops, attention = decode_step(batch=16, context=1024)
    assert read == 2 * PARAMETERS - TABLE + 16 * ROW + 16 * 1024 * KV_PER_TOKEN
    assert weight_flops == matmul_flops(CONFIG, 16, 16)
    assert attention == 16 * 1024 * 28 * 28 * 128 * 4


def test_weight_matmuls_reach_the_ridge_at_164_sequences():
    assert round(PEAK_BF16 / BANDWIDTH) == 164

    def intensity(batch):  # the weight matmuls' FLOPs per byte of weights read
        read, weight_flops, _ = decode_step(batch=batch, context=1)
        return weight_flops / (read - batch * KV_PER_TOKEN)

    assert round(intensity(164)) == 164
    assert 163 < intensity(164) < 164  # the norms and biases: read, left out of the math


def test_the_table_stops_at_the_sequences_the_card_holds(capsys):
    """0.92 of 23.64 GiB less the BF16 weights, in 896 KiB blocks of 16 tokens, holds 138
    sequences of 1,024 tokens (64 blocks each): the ridge point's 164 is printed as not
    reachable, and no row past 138 is timed."""
    import runpy

    import decode_batch

    blocks = (int(23.64 * 1024**3 * 0.92) - 2 * 7_615_616_512) // (16 * 57_344)
    assert decode_batch.most_sequences(1024) == blocks // 64 == 138
    assert decode_batch.most_sequences(8192) == blocks // 512 == 17  # lesson 1's 17 sequences
    runpy.run_path(decode_batch.__file__, run_name="__main__")
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line[:5].strip().isdigit()]
    assert [int(row[0]) for row in rows if row[1] != "not"] == [1, 16, 64, 138]
    assert [int(row[0]) for row in rows if row[1] == "not"] == [164]
