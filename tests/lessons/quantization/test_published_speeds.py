"""published_speeds.py: no published speed passes this lesson's bandwidth floor (a model
that allowed less than a card measured would be wrong), and the floors' ratio is
decode_floor_ms's."""

import pytest
from decode_batch import BANDWIDTH
from measured_share import A100_80GB, BF16_SHARE, CONTEXT, QWEN_A100, shares
from quant_memory import decode_floor_ms


def test_every_published_speed_stays_below_the_floor():
    for fmt, speed in QWEN_A100.items():
        step_bytes = decode_floor_ms("Qwen2.5-7B-Instruct", fmt, 1, CONTEXT) / 1000 * 1008e9
        assert speed * step_bytes < min(A100_80GB), fmt


def test_int4_measures_well_under_its_floors_ratio():
    floor = {fmt: decode_floor_ms("Qwen2.5-7B-Instruct", fmt, 1, CONTEXT) for fmt in QWEN_A100}
    for fmt in ("awq-int4-g128", "gptq-int4-g128"):
        measured = QWEN_A100[fmt] / QWEN_A100["bf16"]
        assert measured < 0.6 * floor["bf16"] / floor[fmt] < 2


def test_lesson_1s_bf16_share_reads_what_this_floor_reads():
    step_bytes = decode_floor_ms("Qwen2.5-7B-Instruct", "bf16", 1, CONTEXT) / 1000 * BANDWIDTH
    assert shares(QWEN_A100["bf16"], round(step_bytes)) == pytest.approx(BF16_SHARE)
