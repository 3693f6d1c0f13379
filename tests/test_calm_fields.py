"""Calm fields (issue 40): what a reader types into a component's field, as the component
kit takes it (component-kit.js: calm, InvalidFields). A value the page takes computes at
once; one it does not take is marked only once typing pauses (or the field loses focus),
and meanwhile the page computes with the value from before the edit: not the last valid
prefix of what was typed (typing 1e9 computed with 1, 101 with 10, 65537 with 6553). The
message names the value in use, and the sticky summary (.ck-summary) keeps its height
while the message shows and hides (lesson 6's grew by 130 px on most keystrokes).

Each component whose contract names a text field that takes a number (FULL_WIDTH's
"typed": coursekit/components.py: CONTRACT) is checked, alone on a bare page (coursekit.
browser.component_alone), in both languages: a new component needs no edit here."""

import pytest

from coursekit import ROOT
from coursekit.browser import TYPE_FAST, component_alone, link_state
from coursekit.browser import shown as component_outputs
from coursekit.components import component_pages, components

ROOTS = {"zh": "/", "en": "/en/"}
# A number past every field's limits: what a reader who types a value and then "e99" has
# typed, each prefix of which the page gets as an input event.
PAST_EVERY_LIMIT = "e99"
TYPED = {name: component.parity().FULL_WIDTH["typed"]
         for name, component in components(ROOT).items()
         if (component.folder / "parity.py").is_file()
         and (component.parity().FULL_WIDTH or {}).get("typed")}

# The field's mark and the messages the component shows about its fields.
MARK = """([root, field]) => {
  const component = document.querySelector(root);
  const input = component.querySelector(`[name="${field}"]`);
  const notes = [...component.querySelectorAll('.ck-note[aria-live]')]
    .filter((note) => note.checkVisibility()).map((note) => note.textContent);
  return {invalid: input.getAttribute('aria-invalid'), notes,
          summary: component.querySelector('.ck-summary')?.getBoundingClientRect().height ?? 0};
}"""


@pytest.mark.parametrize("language", ROOTS)
@pytest.mark.parametrize("name", sorted(TYPED))
def test_a_field_is_calm_and_keeps_the_value_from_before_the_edit(tabs, site, course_url, name,
                                                                 language):
    contract = components(ROOT)[name].parity()
    field, _, value = TYPED[name]
    root = f'[data-component="{name}"]'
    tab = tabs(width=390)
    component_alone(tab, course_url, site, ROOTS[language] + component_pages(ROOT)[name], name)("")
    before = tab.locator(f'{root} [name="{field}"]').input_value()
    assert before != value, f"{name}: the contract's typed value is the field's own"

    # A value the page takes computes at once, unmarked, and the link holds it.
    typed = tab.evaluate(TYPE_FAST, [root, field, value, True])
    assert typed["invalid"] is None, f"{name} {language}: {value} marked"
    assert link_state(tab)[field] == value
    assert component_outputs(tab, name) == contract.expected({field: value}), name

    # Now the value before the edit is that one. Typed on the way to a number past the limits:
    # the field's own value first (valid, the last valid prefix), then e99. Nothing is marked
    # while typing goes on, the page keeps the value from before the edit, and the summary
    # keeps its height.
    typed = tab.evaluate(TYPE_FAST, [root, field, before + PAST_EVERY_LIMIT, False])
    where = f"{name} {language}: typing {before}{PAST_EVERY_LIMIT} after {value}"
    assert typed["invalid"] is None, f"{where}: marked before typing paused"
    # A timer never fires early: 300 ms on, half the kit's pause, the field is still unmarked.
    tab.wait_for_timeout(300)
    assert tab.evaluate(MARK, [root, field])["invalid"] is None, f"{where}: marked within 300 ms"
    assert typed["after"] == typed["before"], f"{where}: the summary's height changed"
    assert link_state(tab)[field] == value, f"{where}: not the value from before the edit"
    assert component_outputs(tab, name) == contract.expected({field: value}), where
    # Once typing pauses, the field is marked, and its message names the value in use.
    tab.wait_for_function("([root, field]) => document.querySelector(root).querySelector("
                          "`[name='${field}']`).getAttribute('aria-invalid') === 'true'",
                          arg=[root, field], timeout=3000)
    marked = tab.evaluate(MARK, [root, field])
    assert any(value in note for note in marked["notes"]), f"{where}: {marked['notes']}"
    assert marked["summary"] == typed["before"], f"{where}: the summary's height changed"
    assert component_outputs(tab, name) == contract.expected({field: value}), where

    # Leaving the field marks it at once; typing the value back takes it.
    tab.evaluate(TYPE_FAST, [root, field, before, True])
    assert tab.evaluate(MARK, [root, field])["invalid"] is None, name
    typed = tab.evaluate(TYPE_FAST, [root, field, value + PAST_EVERY_LIMIT, True])
    assert typed["invalid"] == "true", f"{name} {language}: not marked as the field lost focus"
    assert link_state(tab)[field] == before, f"{name} {language}: not the value from before"
    assert component_outputs(tab, name) == contract.expected({field: before}), name
    assert tab.failed == [] and tab.off_site == []
