"""The prompt sharing component's workloads show what their buttons promise, and its fence
and links are read as its parity contract says. The hits below are worked out by hand from
the rules (full blocks only, chained hashes, at most (N - 1) // block_size blocks, LRU
eviction from the head of the free queue), not read from the simulator.
(tests/test_components.py checks that the page shows what parity.py computes.)"""

import pytest

from coursekit import ROOT
from coursekit.components import components

COMPONENT = components(ROOT)["prompt-sharing"]
PARITY = COMPONENT.parity()


def shown(preset: str, **link) -> dict[str, str]:
    return PARITY.expected(PARITY.DATA.state(PARITY.DATA.PRESETS[preset]) | link)


def column(result: dict[str, str], key: str) -> list[str]:
    return [result[f"{key}-{name}"] for name in "ABCDEFGH" if f"{key}-{name}" in result]


def test_a_shared_system_prompt_is_computed_once():
    # 12 system prompt words = 3 blocks of 4, then a 5-word question: 17 tokens each.
    result = shown("system-prompt")
    assert column(result, "hit") == ["0/17", "12/17", "12/17", "16/17"]
    assert column(result, "stop") == ["miss", "miss", "miss", "partial"]
    assert column(result, "blocks") == ["#1 #2 #3 #4 ·", "#1 #2 #3 #5 ·", "#1 #2 #3 #6 ·", "#1 #2 #3 #4 ·"]
    assert (result["hits"], result["rate"]) == ("40/68", "58.8%")


def test_one_changed_token_ends_the_hit_and_a_repeat_keeps_its_last_block_out():
    # 16 words = 4 full blocks: the repeat may hit (16 - 1) // 4 = 3 of them; "over" is
    # word 5, in block 1, so blocks 1 to 3 of the changed prompt get new hashes.
    result = shown("one-token-changed")
    assert column(result, "hit") == ["0/16", "12/16", "4/16"]
    assert column(result, "stop") == ["miss", "last-token", "miss"]
    assert column(result, "blocks") == ["#1 #2 #3 #4", "#1 #2 #3 #4", "#1 #5 #6 #7"]
    # The repeat recomputes block 3 into a new block, cached under the same hash.
    assert result["table-B"] == "1 2 3 5"
    assert shown("one-token-changed", step="1")["free"].endswith("4:#4 5:#4 3:#3 2:#2 1:#1")


def test_a_small_pool_evicts_the_tail_of_a_chain_first():
    # 6 usable blocks, 9 tokens (3 blocks) per request. A frees 3 to the head, 2 then 1 to
    # the tail; B takes 3, 4, 5; C takes 5, 6 and then 2, A's second block.
    result = shown("eviction")
    assert column(result, "table") == ["1 2 3", "3 4 5", "5 6 2", "1 2 4"]
    assert column(result, "evicted") == ["—", "—", "2:#2", "4:#4"]
    assert column(result, "hit") == ["0/9", "0/9", "0/9", "4/9"]
    assert shown("eviction", step="1")["free"] == "5 6 2:#2 1:#1 4:#4 3:#3"


@pytest.mark.parametrize(
    "link, fell_back",
    [
        ({"prompts": "<script>alert(1)</script>"}, "prompts"),
        ({"prompts": "a  b"}, "prompts"),
        ({"num_gpu_blocks": "65", "step": "9"}, "num_gpu_blocks, step"),
        ({"block_size": "1e3"}, "block_size"),
    ],
)
def test_a_link_the_page_does_not_take_falls_back_with_a_note(link, fell_back):
    assert PARITY.expected(link)["fallback"] == fell_back
    assert PARITY.expected(link)["hit-B"] == "12/17"  # the fence's workload


def test_a_request_larger_than_the_pool_shows_the_error():
    assert PARITY.expected({"num_gpu_blocks": "5"}) == "error"  # 17 tokens need 5 blocks
    assert PARITY.expected({"num_gpu_blocks": "6"}) != "error"


@pytest.mark.parametrize("options", [{}, {"start": "eviction", "x": 1}, {"start": "other"}])
def test_the_fence_names_one_workload(options):
    with pytest.raises(ValueError, match="start: one of system-prompt"):
        COMPONENT.data(options)
