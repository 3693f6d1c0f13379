"""The block table on lesson 2's page as readers use it (issue 27), in headless Chromium:
its usage is read as vLLM's gauge reads it, a field that takes no value is marked as such
while the view keeps what it showed, and an operation before the last step says which
later steps it drops, with a way back. What it shows for every link is
tests/test_components.py's parity check, driven by the component's parity.py."""

import pytest

from coursekit import ROOT
from coursekit.browser import link_state
from coursekit.browser import shown as component_outputs
from coursekit.components import component_pages, components, fill

ROOTS = {"zh": "/", "en": "/en/"}
PHONE = 390  # px wide
PAGE = component_pages(ROOT)["block-table"]  # lessons/paged-attention/


BLOCK_TABLE = components(ROOT)["block-table"]
BLOCK_TABLE_ROOT = '[data-component="block-table"]'


@pytest.mark.parametrize("language", ROOTS)
def test_block_table_reads_its_gauge_marks_its_fields_and_names_what_it_drops(
        tabs, course_url, language):
    """On a phone, where the notes it adds have the least room (the page at a desktop's width:
    test_lesson_pages_show_what_python_computes_and_keep_key_results_in_view)."""
    width = PHONE
    tab = tabs(width=width)
    labels = BLOCK_TABLE.labels[language]
    contract = BLOCK_TABLE.parity()
    trace = contract.DEFAULTS["ops"].split(",")
    tab.goto(course_url + ROOTS[language] + PAGE + "?step=2", wait_until="load")
    shown = component_outputs(tab, "block-table")
    # 5 of 9 blocks in use: the gauge as block_trace.py prints it, and as vLLM's log line.
    assert shown == contract.expected({"step": "2"})
    assert (shown["used"], shown["gauge"], shown["percent"]) == ("5/9", "0.5556", "55.6%")
    assert "GPU KV cache usage: 55.6%" in tab.locator(f"{BLOCK_TABLE_ROOT} .bt-usage").inner_text()
    # A number of blocks the page does not take: the field says so and is marked; the view,
    # and the link, keep the 10 blocks they had, not a number typed on the way (the 6 of 65).
    blocks = tab.locator(f'{BLOCK_TABLE_ROOT} input[name="blocks"]')
    message = tab.locator(f"{BLOCK_TABLE_ROOT} .bt-invalid")
    expected_message = fill(labels["text"]["invalid"], label=labels["blocks"], least=2,
                               most=64, kept=10)
    for typed in ("0", "1", "65", ""):
        blocks.fill(typed)
        blocks.blur()  # a field says what is wrong once it is left, or typing pauses (issue 40)
        where = f"{language} {width}px: {typed!r}"
        assert blocks.get_attribute("aria-invalid") == "true", where
        assert message.is_visible() and message.text_content() == expected_message, where
        assert tab.locator(f"{BLOCK_TABLE_ROOT} .bt-error").is_hidden(), where
        assert component_outputs(tab, "block-table") == shown, where
    blocks.fill("")
    blocks.press_sequentially("65")
    blocks.blur()
    assert blocks.get_attribute("aria-invalid") == "true"
    assert component_outputs(tab, "block-table") == shown
    state = link_state(tab)
    assert state.get("blocks", "10") == "10" and contract.expected(state) == shown
    blocks.fill("１２")
    assert blocks.get_attribute("aria-invalid") is None and message.is_hidden()
    state = link_state(tab)
    assert state["blocks"] == "12"
    assert component_outputs(tab, "block-table") == contract.expected(state)
    # At step 2 of 9, the page says what an operation there drops; adding a request drops
    # the 7 operations after it, says so, and brings them back on request.
    later = tab.locator(f"{BLOCK_TABLE_ROOT} .bt-later")
    listed = ", ".join(trace[2:6]) + ", …"
    assert later.is_visible()
    assert later.text_content() == fill(labels["text"]["later"], step=2, total=9, count=7,
                                           ops=listed)
    tab.click(f"{BLOCK_TABLE_ROOT} .bt-new button[type=submit]")
    dropped = tab.locator(f"{BLOCK_TABLE_ROOT} .bt-dropped")
    assert dropped.is_visible() and later.is_hidden()
    assert tab.locator(f"{BLOCK_TABLE_ROOT} .bt-dropped-text").text_content() == fill(
        labels["text"]["dropped"], count=7, step=2, ops=listed)
    state = link_state(tab)
    assert state["ops"] == ",".join(trace[:2] + ["C:30"])
    assert tab.evaluate("document.scrollingElement.scrollWidth") <= width
    tab.click(f"{BLOCK_TABLE_ROOT} .bt-undo")
    assert dropped.is_hidden() and later.is_visible()
    state = link_state(tab)
    assert (state["ops"], state["step"]) == (",".join(trace), "2")
    assert component_outputs(tab, "block-table") == contract.expected(state)
    assert tab.failed == [] and tab.off_site == []
