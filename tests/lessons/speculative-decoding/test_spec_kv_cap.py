"""Lesson 7's speed-up model stops where the KV cache does: the cap is lesson 4's budget
(23.64 GiB x 0.92 less the bf16 weights, in 16-token blocks) over the blocks of one
sequence in a verification step, every row of the table past it says it is not
reachable, and the chart's batches end at it."""

import pytest
from kv_cache_size import GIB
from quant_memory import weight_bytes
from speedup import KV_BLOCKS, blocks_per_sequence, most_sequences, speedup, table

from coursekit import ROOT
from coursekit.code import load

BLOCK_BYTES = 16 * 2 * 28 * 4 * 128 * 2  # K and V, 28 layers, 4 KV heads of 128, bf16


def test_the_budget_is_the_card_share_less_the_weights_in_blocks():
    memory = int(23.64 * GIB * 0.92) - weight_bytes("Qwen2.5-7B-Instruct", "bf16")
    assert KV_BLOCKS == memory // BLOCK_BYTES == 8851


@pytest.mark.parametrize(("tokens", "blocks"), [(1, 1), (16, 1), (17, 2), (1028, 65)])
def test_a_sequence_holds_ceil_tokens_over_16_blocks(tokens, blocks):
    assert blocks_per_sequence(tokens) == blocks


@pytest.mark.parametrize("tokens", [0, -3, 2.5, True])
def test_blocks_refuse_what_is_no_token_count(tokens):
    with pytest.raises(ValueError, match="positive integer"):
        blocks_per_sequence(tokens)


def test_rows_past_the_cap_are_marked_and_the_others_are_not():
    cap = most_sequences(1024 + 3 + 1)
    assert cap == 8851 // 65 == 136
    rows = table(1024, 3, (1, cap, cap + 1, 164))
    reachable, unreachable = rows[:2], rows[2:]
    for row in unreachable:
        assert row.endswith(
            "not reachable on one RTX 4090: KV holds at most 136 sequences"
        ), row
    for row, batch in zip(reachable, (1, cap)):
        assert "not reachable" not in row
        assert f"{speedup(0.5, 3, batch, 1024, False):.2f}" in row, row


def test_the_chart_stops_at_the_cap():
    cap = most_sequences(1024 + 3 + 1)
    module = load(ROOT / "snippets/speculative-decoding/charts.py", "spec_charts")
    chart = module.charts()["speculation-speedup-vs-batch"]
    assert max(x for line in chart["series"] for x in line["x"]) == cap
    assert str(cap) in chart["title"]["en"] and str(cap) in chart["title"]["zh"]


def test_the_v1_runners_graphs_bring_the_cap_to_the_break_even():
    """Less the V1 runner's graph pool as published for 7B models (1.44 to 1.56 GiB), the
    upper bound holds 108 to 110 sequences of 1,028 tokens: n-gram's break-even, 109, sits
    at the edge of the card. The snippet prints that range (its recorded output)."""
    from speedup import V1_GRAPHS_GIB

    caps = [(8851 - int(g * GIB) // BLOCK_BYTES) // 65 for g in V1_GRAPHS_GIB]
    assert caps == [110, 108]
    shown = (ROOT / "snippets/speculative-decoding/speedup.out").read_text("utf-8")
    assert "(published logs, estimate): at most 108 to 110 sequences" in shown
