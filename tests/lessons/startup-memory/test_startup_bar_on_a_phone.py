"""Lesson 8's bar on a phone (the reader's walk), in headless Chromium: each field's label
was broken mid-name ("gpu_memory_utiliz/ation") beside its input, and of the bar's colours
only the KV cache's had a swatch until "every part" was unfolded. Each label is one line,
and each part of the bar shown has a swatch of its colour in view, the detail folded."""

import pytest

from coursekit import ROOT
from coursekit.browser import ready
from coursekit.components import component_pages

ROOTS = {"zh": "/", "en": "/en/"}
PHONE = 390  # px wide
PAGE = component_pages(ROOT)["startup-memory-bar"]  # lessons/startup-memory/


STARTUP_BAR = '[data-component="startup-memory-bar"]'
BAR_ON_A_PHONE = """root => {
  const lines = (element) => {
    const range = document.createRange();
    range.selectNodeContents(element);
    return new Set([...range.getClientRects()].map((box) => Math.round(box.top))).size;
  };
  const swatches = [...root.querySelectorAll('.smb-legend [data-part]')]
    .filter((swatch) => swatch.checkVisibility())
    .map((swatch) => getComputedStyle(swatch, '::before').color);
  return {
    folded: [...root.querySelectorAll('details')].every((more) => !more.open),
    broken: [...root.querySelectorAll('.ck-field span')]
      .filter((label) => lines(label) > 1).map((label) => label.textContent),
    unnamed: [...root.querySelectorAll('.smb-part')]
      .filter((part) => part.getBoundingClientRect().width > 0)
      .map((part) => [part.dataset.part, getComputedStyle(part).backgroundColor])
      .filter(([, colour]) => !swatches.includes(colour)).map(([part]) => part),
  };
}"""


@pytest.mark.parametrize("language", ROOTS)
def test_startup_bar_labels_whole_and_colours_named_on_a_phone(tabs, course_url, language):
    tab = tabs(width=PHONE)
    tab.goto(course_url + ROOTS[language] + PAGE, wait_until="load")
    ready(tab, STARTUP_BAR)
    tab.evaluate("document.fonts.ready")
    found = tab.locator(STARTUP_BAR).evaluate(BAR_ON_A_PHONE)
    assert found == {"folded": True, "broken": [], "unnamed": []}


@pytest.mark.parametrize("language", ROOTS)
def test_the_memory_picture_fits_a_phone(tabs, course_url, language):
    """Issue 40, point 8: memory_picture.py's bar is a picture, seen whole or not at all; at
    0.5 GiB a character it was 621 px wide on a 390 px screen, and its output block
    scrolled."""
    tab = tabs(width=PHONE)
    tab.goto(course_url + ROOTS[language] + PAGE, wait_until="load")
    tab.evaluate("document.fonts.ready")
    widths = tab.evaluate("""() => [...document.querySelectorAll('article pre > code')]
      .filter((code) => code.textContent.startsWith('one character per'))
      .map((code) => [code.scrollWidth, code.clientWidth])""")
    assert len(widths) == 1 and widths[0][0] <= widths[0][1], widths
