"""Lesson 8's bar as a reader uses it, in both languages: a link value the page does not
take falls back to the fence's, with a note naming it, and editing takes the new value; a
typed value the page does not take marks its field and keeps the view and the link as they
were; the eager checkbox empties the capture list. What each view shows is what parity.py
computes."""

import pytest

from coursekit import ROOT
from coursekit.browser import component_alone, link_state, shown
from coursekit.components import components

BAR = components(ROOT)["startup-memory-bar"]
ROOT_ELEMENT = '[data-component="startup-memory-bar"]'


@pytest.mark.parametrize("language", ["zh", "en"])
def test_the_bar_as_a_reader_uses_it(page, site, course_url, language):
    """On the bar alone (coursekit.browser.component_alone)."""
    contract, labels = BAR.parity(), BAR.labels[language]
    prefix = "/en" if language == "en" else ""
    component_alone(page, course_url, site, f"{prefix}/lessons/startup-memory/",
                    BAR.name)("max_num_seqs=0")
    # A link value the page does not take falls back to the lesson's, and the note names it
    # with what a link may hold (issue 40: one behaviour for a bad link).
    assert shown(page, BAR.name) == contract.expected({"max_num_seqs": "0"}) != "error"
    note = page.locator(f"{ROOT_ELEMENT} .ck-fallback").inner_text()
    assert "max_num_seqs" in note and "1024" in note.replace(",", "")
    field = page.locator(f'{ROOT_ELEMENT} input[name="max_num_seqs"]')
    assert field.input_value() == contract.DEFAULTS["max_num_seqs"]

    field.fill("64")
    state = link_state(page)
    assert state["max_num_seqs"] == "64"
    assert shown(page, BAR.name) == contract.expected(state)

    before = shown(page, BAR.name)
    utilization = page.locator(f'{ROOT_ELEMENT} input[name="gpu_memory_utilization"]')
    utilization.fill("1.5")
    utilization.blur()  # marked once the field is left, or typing pauses
    assert utilization.get_attribute("aria-invalid") == "true"
    assert page.locator(f"{ROOT_ELEMENT} .smb-invalid").is_visible()
    assert shown(page, BAR.name) == before and link_state(page) == state

    page.locator(f'{ROOT_ELEMENT} input[name="enforce_eager"]').check()
    state = link_state(page)
    assert state["enforce_eager"] == "1"
    eager = shown(page, BAR.name)
    assert eager == contract.expected(state)
    assert (eager["sizes"], eager["captured"], eager["graphs_row"]) == ("0", "0", "0.00")
    assert labels["enforce_eager"] in page.locator(ROOT_ELEMENT).inner_text()
    assert page.off_site == []
