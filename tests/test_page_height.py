"""A lesson keeps its height while it is read (issue 40, point 6): what lays itself out late
(code blocks under content-visibility, a component that sets up near the screen) made a lesson
33-86 % taller between its load and its end. Every lesson page, in each language, is opened
once on a 390 px phone, read to its end, then widened to 1280 px and read again."""

from pathlib import PurePosixPath

import pytest

from coursekit import ROOT
from coursekit.pages import lessons_in_nav

GROWTH = 0.05  # at most 5 % taller at the end than on load
PHONE, DESKTOP = 390, 1280

# The page's height on load, and once the reader has scrolled to its end two screens at a time,
# each screen drawn (a frame each).
READ_TO_THE_END = """async () => {
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  scrollTo(0, 0);
  await frame();
  const before = document.scrollingElement.scrollHeight;
  for (let y = 0; y < document.scrollingElement.scrollHeight; y += 2 * innerHeight) {
    scrollTo(0, y);
    await frame();
  }
  return [before, document.scrollingElement.scrollHeight];
}"""


@pytest.mark.parametrize("language", ["", "en/"])
def test_a_lesson_keeps_its_height_while_it_is_read(tabs, site, site_url, language):
    slugs = [PurePosixPath(page).stem for page in lessons_in_nav(ROOT)]
    assert slugs, "no lesson in the navigation"
    tab = tabs(width=PHONE, has_touch=True, is_mobile=True)
    grew = []
    for slug in slugs:
        tab.set_viewport_size({"width": PHONE, "height": 844})
        tab.goto(f"{site_url}/{language}lessons/{slug}/", wait_until="load")
        for width in (PHONE, DESKTOP):
            tab.set_viewport_size({"width": width, "height": 844})
            before, after = tab.evaluate(READ_TO_THE_END)
            if after > before * (1 + GROWTH):
                grew.append(f"{language}lessons/{slug} at {width} px: {before} px on load,"
                            f" {after} px at the end (+{after / before - 1:.0%})")
    assert not grew, "\n".join(grew)
