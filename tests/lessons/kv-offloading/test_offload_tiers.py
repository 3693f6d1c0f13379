"""The offload tiers component's workloads show what the page says of them, and its fence and
links are read as its parity contract says. Its fence's workload is the lesson's stepped
figure: each step shows the row blocks_moving.py printed (its recorded output, which the
page shows). (tests/test_components.py checks that the page shows what parity.py computes.)"""

import re

import pytest

from coursekit import ROOT
from coursekit.components import components

COMPONENT = components(ROOT)["offload-tiers"]
PARITY = COMPONENT.parity()
FIGURE = ROOT / "snippets" / "kv-offloading" / "blocks_moving.out"


def shown(preset: str, **link) -> dict[str, str]:
    return PARITY.expected(PARITY.DATA.state(PARITY.DATA.PRESETS[preset]) | link)


def run(preset: str, **link) -> list[dict[str, str]]:
    steps = len(PARITY.DATA.PRESETS[preset]["order"])
    return [shown(preset, step=str(step), **link) for step in range(steps)]


def test_each_step_of_the_fence_shows_the_row_of_the_lessons_figure():
    header, *rows = FIGURE.read_text("utf-8").splitlines()
    gpu_at, cpu_at = header.index("GPU holds"), header.index("CPU holds")  # its two columns
    steps = run("blocks-moving")
    assert len(rows) == len(steps) == 7
    for row, step in zip(rows, steps):
        assert row[:gpu_at].split() == [step[key] for key in ("step", "gpu_hit", "cpu_hit",
                                                              "recomputed", "stored", "evicted")]
        for tier, part in (("gpu", row[gpu_at:cpu_at]), ("cpu", row[cpu_at:])):
            held = dict(re.findall(r"([A-D])(\d)", part))
            assert {d: step[f"{tier}-{d}"] for d in "ABCD"} == {d: held.get(d, "0") for d in "ABCD"}, row


def test_a_large_enough_tier_serves_every_revisit_and_a_small_one_only_under_arc():
    revisits = run("revisits")[8:]
    assert {(s["gpu_hit"], s["cpu_hit"], s["recomputed"]) for s in revisits} == {("0", "512", "1")}
    assert all(float(s["ttft_with"]) < float(s["ttft_without"]) for s in revisits)
    arc, lru = shown("small-tier", step="15"), shown("small-tier", step="15", policy="lru")
    assert lru["total_cpu"] == "0" and lru["failed"] == "0"
    assert int(arc["total_cpu"]) > 0 and int(arc["failed"]) > 0


def test_reloading_a_short_document_costs_more_than_it_saves():
    # 33 tokens: far below the break-even prefix (reload_vs_recompute.py), so the reload of
    # A3's one block adds more than recomputing it would have.
    a3 = shown("blocks-moving", step="3")
    assert float(a3["ttft_with"]) >= float(a3["ttft_without"])


@pytest.mark.parametrize(
    "link, fell_back",
    [
        ({"order": "<script>alert(1)</script>"}, "order"),
        ({"order": "abc"}, "order"),
        ({"policy": "LRU", "step": "7"}, "policy, step"),
        ({"num_cpu_blocks": "0", "doc_tokens": "1e4"}, "num_cpu_blocks, doc_tokens"),
    ],
)
def test_a_link_the_page_does_not_take_falls_back_with_a_note(link, fell_back):
    assert PARITY.expected(link)["fallback"] == fell_back
    assert PARITY.expected(link)["step"] == "A0"  # the fence's workload, its first request


def test_a_document_larger_than_the_gpu_shows_the_error():
    assert PARITY.expected({"num_gpu_blocks": "3"}) == "error"  # 33 tokens need 3 blocks
    assert PARITY.expected({"num_gpu_blocks": "4"}) != "error"


@pytest.mark.parametrize("options", [{}, {"start": "revisits", "x": 1}, {"start": "other"}])
def test_the_fence_names_one_workload(options):
    with pytest.raises(ValueError, match="start: one of blocks-moving"):
        COMPONENT.data(options)
