"""The offload tiers component's request order, typed as a reader types it (issue 40: calm
fields; tests/test_calm_fields.py checks its number fields): an order the page does not take
marks the field only once typing pauses or the field loses focus, the page meanwhile keeps
the order from before the edit (not the last valid prefix of what was typed), the message
names that order, and the sticky summary keeps its height. What the page shows is what
parity.py computes."""

import pytest

from coursekit import ROOT
from coursekit.browser import TYPE_FAST, component_alone, link_state, shown
from coursekit.components import component_pages, components

COMPONENT = components(ROOT)["offload-tiers"]
PARITY = COMPONENT.parity()
ROOT_ELEMENT = '[data-component="offload-tiers"]'
FIELD = f'{ROOT_ELEMENT} input[name="order"]'


@pytest.mark.parametrize("language", ["zh", "en"])
def test_a_typed_order_is_calm_and_keeps_the_order_from_before_the_edit(page, site, course_url,
                                                                        language):
    prefix = "/en/" if language == "en" else "/"
    page.set_viewport_size({"width": 390, "height": 844})
    component_alone(page, course_url, site, prefix + component_pages(ROOT)[COMPONENT.name],
                    COMPONENT.name)("")
    order = page.locator(FIELD).input_value()
    assert order == PARITY.DEFAULTS["order"]

    # A valid order computes at once, and the link holds it.
    typed = page.evaluate(TYPE_FAST, [ROOT_ELEMENT, "order", "ABA", True])
    assert typed["invalid"] is None
    state = link_state(page)
    assert state["order"] == "ABA" and shown(page, COMPONENT.name) == PARITY.expected(state)

    # Typed on the way to an order the page does not take (a letter past H): "ABAB" is a valid
    # prefix, but the page keeps ABA, the order from before the edit, and marks nothing yet.
    typed = page.evaluate(TYPE_FAST, [ROOT_ELEMENT, "order", "ABABZ", False])
    assert typed["invalid"] is None and typed["after"] == typed["before"]
    assert link_state(page) == state and shown(page, COMPONENT.name) == PARITY.expected(state)
    # Once typing pauses, the field is marked and its message names the order kept.
    page.wait_for_function("(field) => document.querySelector(field)"
                           ".getAttribute('aria-invalid') === 'true'", arg=FIELD, timeout=3000)
    line = page.locator(f"{ROOT_ELEMENT} .ot-invalid")
    assert line.is_visible() and "ABA" in line.inner_text(), line.inner_text()
    assert page.locator(f"{ROOT_ELEMENT} .ck-summary").bounding_box()["height"] == typed["before"]
    assert link_state(page) == state

    # Typing a valid order takes it and clears the mark; leaving the field on one it does not
    # take marks it at once.
    assert page.evaluate(TYPE_FAST, [ROOT_ELEMENT, "order", "ABCA", True])["invalid"] is None
    assert line.is_hidden() and link_state(page)["order"] == "ABCA"
    assert page.evaluate(TYPE_FAST, [ROOT_ELEMENT, "order", "AB C", True])["invalid"] == "true"
    assert "ABCA" in line.inner_text() and link_state(page)["order"] == "ABCA"
    assert page.off_site == []
