"""The request timeline on lesson 6's page as readers use it (readers' walk), in headless
Chromium: its requests field, the component's main input, spans the form's width under its
label on a phone and a screen and shows the fence's requests whole; a Chinese input
method's ／, 、 and ； are read as /, / and ; (parity.py's twin reads them alike); a field's
message names its visible label; no display formula runs past a phone's screen; and the
timeline's TTFT bar and token ticks differ in colour in the light and the dark scheme, as
its caption tells them apart."""

import re

import pytest

from coursekit import ROOT
from coursekit.browser import follow_scheme, link_state, ready
from coursekit.browser import shown as component_outputs
from coursekit.components import component_pages, components, fill

ROOTS = {"zh": "/", "en": "/en/"}
WIDTHS = {"phone": 390, "desktop": 1280}
PAGE = component_pages(ROOT)["request-metrics"]  # lessons/serving-metrics/


REQUEST_METRICS = components(ROOT)["request-metrics"]
RM_ROOT = '[data-component="request-metrics"]'
RM_LAYOUT = """root => {
  const form = root.querySelector('.rm-form').getBoundingClientRect();
  const field = root.querySelector('[name="requests"]');
  const label = field.closest('label').querySelector('span').getBoundingClientRect();
  const box = field.getBoundingClientRect();
  return {form: form.width, field: box.width, below: box.top >= label.bottom - 1,
          whole: field.scrollWidth <= field.clientWidth && field.scrollHeight <= field.clientHeight};
}"""
FORMULAS_OVERFLOWING = """() => [...document.querySelectorAll('article .katex-display')]
  .filter(d => d.scrollWidth > d.clientWidth + 1
               || d.querySelector('.katex').getBoundingClientRect().right
                  > document.documentElement.clientWidth)
  .map(d => d.textContent.slice(0, 40))"""
RM_COLOURS = """root => [root.querySelector('.rm-ttft'), root.querySelector('.rm-tick')]
  .map(e => getComputedStyle(e).backgroundColor)"""


def grey(colour: str) -> bool:
    """Whether a computed colour, rgb(a) of 0 to 255, is a grey: its channels within 16."""
    red, green, blue = (float(x) for x in re.findall(r"[\d.]+", colour)[:3])
    return max(red, green, blue) - min(red, green, blue) <= 16


@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS)
@pytest.mark.parametrize("language", ROOTS)
def test_request_metrics_field_separators_messages_formulas_and_colours(
        tabs, course_url, language, width):
    labels = REQUEST_METRICS.labels[language]
    contract = REQUEST_METRICS.parity()
    tab = tabs(width=width, scheme="light")
    tab.goto(course_url + ROOTS[language] + PAGE, wait_until="load")
    ready(tab, RM_ROOT)
    for scheme in ("light", "dark"):  # the reader's system switches; Material follows live
        follow_scheme(tab, scheme)
        where = f"{language} {width}px {scheme}"
        bar, tick = tab.locator(RM_ROOT).evaluate(RM_COLOURS)
        # Two shades of one blue read as one colour: one of them a grey, the other not.
        assert grey(bar) != grey(tick), f"{where}: the TTFT bar {bar}, the ticks {tick}"
    layout = tab.locator(RM_ROOT).evaluate(RM_LAYOUT)
    assert layout["field"] >= layout["form"] - 1, f"{where}: {layout}"
    assert layout["below"] and layout["whole"], f"{where}: {layout}"
    assert tab.evaluate(FORMULAS_OVERFLOWING) == [], where
    # A Chinese input method's separators, typed into the requests field.
    requests = tab.locator(f'{RM_ROOT} [name="requests"]')
    requests.fill("0／250／280；100、300、340;200/360")
    assert requests.get_attribute("aria-invalid") is None, where
    state = link_state(tab)
    assert state["requests"] == "0/250/280;100/300/340;200/360", where
    assert component_outputs(tab, "request-metrics") == contract.expected(state), where
    assert contract.expected({"requests": "0／250；100、300"}) == contract.expected(
        {"requests": "0/250;100/300"}) != "error"
    # A value the page does not take: the message names the field as the reader sees it.
    # It says so once the field is left (issue 40: calm fields), naming the value from
    # before the edit, which the results still use.
    ttft = tab.locator(f'{RM_ROOT} [name="ttft"]')
    before = ttft.input_value()
    ttft.fill("0")
    ttft.blur()
    assert tab.locator(f"{RM_ROOT} .rm-invalid").text_content() == fill(
        labels["invalid"], label=labels["ttft"], least=1, most=600000, kept=before), where
    requests.fill("0/250,")
    requests.blur()
    message = tab.locator(f"{RM_ROOT} .rm-invalid").text_content()
    kept = "0/250/280;100/300/340;200/360"  # what the field held before this edit
    assert fill(labels["invalid_requests"], kept=kept) in message and "；" in labels["invalid_requests"]
    assert tab.failed == [] and tab.off_site == []
