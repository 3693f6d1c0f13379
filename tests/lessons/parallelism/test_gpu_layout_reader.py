"""Lesson 11's GPU layout as a reader uses it, in both languages, on the component alone
(coursekit.browser.component_alone): a link in a Chinese input method's full-width digits
reads as the same link in ASCII; a TP size vLLM refuses shows vLLM's own reason
(tp_memory.refusal); a layout whose weights leave no KV cache keeps the layout and says how
much is missing, as kv_budget's error does; a typed value the page does not take marks its
field once typing pauses or the field loses focus, and keeps the view and the link as they
were, the message naming the value kept; a menu changes the link; and on a phone
every control is about a finger's width high. What each view shows is what parity.py
computes."""

from urllib.parse import urlencode

import pytest
from hf_config import read_presets
from tp_budget import gpu_budget
from tp_memory import refusal

from coursekit import ROOT
from coursekit.browser import component_alone, fits, link_state, shown
from coursekit.components import components

LAYOUT = components(ROOT)["gpu-layout"]
ROOT_ELEMENT = '[data-component="gpu-layout"]'
# A control's height on a phone: about 44 px, a finger's width.
LEAST_CONTROL_PX = 43.5


@pytest.mark.parametrize("language", ["zh", "en"])
def test_the_layout_as_a_reader_uses_it(page, site, course_url, language):
    contract = LAYOUT.parity()
    prefix = "/en" if language == "en" else ""
    page.set_viewport_size({"width": 390, "height": 844})
    open_link = component_alone(page, course_url, site, f"{prefix}/lessons/parallelism/",
                                LAYOUT.name)

    # Full-width digits, as a Chinese input method types them, read as ASCII ones.
    full_width = contract.FULL_WIDTH
    open_link(urlencode(full_width["link"]))
    assert shown(page, LAYOUT.name) == contract.expected(full_width["ascii"])
    assert fits(page, 390)
    heights = page.locator(f"{ROOT_ELEMENT} .gl-form :is(select, input)").evaluate_all(
        "controls => controls.map((c) => c.getBoundingClientRect().height)")
    assert len(heights) == 5 and min(heights) >= LEAST_CONTROL_PX, heights

    # vLLM's reason for a TP size it refuses, at the model build and at the config check.
    qwen = read_presets()["Qwen2.5-7B-Instruct"].config
    for tp in ("7", "8"):
        open_link(f"tp={tp}")
        assert shown(page, LAYOUT.name) == "error"
        error = page.locator(f"{ROOT_ELEMENT} [role=alert]").inner_text()
        assert refusal(qwen, int(tp)) in error and f"TP {tp}" in error, error

    # 32B on two cards: the layout stays, the KV cache is missing by what kv_budget says.
    state = {"model": "Qwen2.5-32B-Instruct", "tp": "2"}
    open_link(urlencode(state))
    assert shown(page, LAYOUT.name) == contract.expected(state)
    with pytest.raises(ValueError, match="no memory left") as refused:
        gpu_budget(state["model"], 2)
    missing = str(refused.value).split(": ")[1].split(" GiB")[0]  # "-10.43"
    note = page.locator(f"{ROOT_ELEMENT} .gl-no-kv")
    assert note.is_visible() and f"{missing} GiB" in note.inner_text()

    # A typed value the page does not take marks its field once typing pauses (batch) or as
    # the field loses focus (the utilization), and the message names the value from before
    # the edit, which the view and the link keep.
    open_link("")
    batch = page.locator(f'{ROOT_ELEMENT} input[name="batch"]')
    batch.fill("64")
    batch.press("Tab")  # the edit ends: 64 is now the value from before the next one
    state = link_state(page)
    assert state["batch"] == "64" and shown(page, LAYOUT.name) == contract.expected(state)
    before = shown(page, LAYOUT.name)
    line = page.locator(f"{ROOT_ELEMENT} .gl-invalid")
    for field, typed, kept, leave in (("batch", "0", "64", False),
                                      ("gpu_memory_utilization", "1.5", "0.92", True)):
        input_ = page.locator(f'{ROOT_ELEMENT} input[name="{field}"]')
        input_.fill(typed)
        if leave:
            input_.press("Tab")
        page.wait_for_function("(input) => input.getAttribute('aria-invalid') === 'true'",
                               arg=input_.element_handle(), timeout=3000)
        assert line.is_visible() and kept in line.inner_text(), line.inner_text()
        assert shown(page, LAYOUT.name) == before and link_state(page) == state

    # A menu: the link holds its value, and the view is Python's.
    page.locator(f'{ROOT_ELEMENT} select[name="pp"]').select_option("4")
    state = link_state(page)
    assert state["pp"] == "4" and shown(page, LAYOUT.name) == contract.expected(state)
    assert page.off_site == []
