"""Tables a reader sees whole (issue 40, point 7): a table wider than the box it sits in
(lesson 7's methods table was 844 px in a 720 px column) scrolls sideways in a box that shows
a cue at its right edge while more of the table lies beyond, which goes once the reader has
scrolled to the end; no table runs past the page's column uncut. Every built page with a
table, in each language, is opened once at 1280 px and looked at in the light and the dark
scheme, then at 390 px."""

import io

import pytest
from PIL import Image, ImageChops, ImageStat

from coursekit.browser import follow_scheme, settle

DESKTOP, PHONE = 1280, 390
# The cue: the box's right edge, with the table's text hidden, differs from the same edge
# scrolled to the end by this much on average (0-255 per channel). Material's plain edge
# differs by 0; the course's shadow by some 20.
LEAST_CUE = 6
EDGE_PX = 8

# Each table wider than the box that scrolls it (its index among the page's tables), and
# each table that runs past the page's content column with nothing to scroll it.
SCROLLER = """(table) => {
  for (let box = table; box; box = box.parentElement) {
    if (['auto', 'scroll'].includes(getComputedStyle(box).overflowX)
        && box.scrollWidth > box.clientWidth + 1) return box;
  }
  return null;
}"""
WIDE_TABLES = f"""() => {{
  const scroller = {SCROLLER};
  const column = document.querySelector('.md-content .md-typeset').getBoundingClientRect();
  const wide = [], cut = [];
  document.querySelectorAll('.md-content table').forEach((table, index) => {{
    if (!table.checkVisibility()) return;
    if (scroller(table)) wide.push(index);
    else if (table.getBoundingClientRect().right > column.right + 1) cut.push(index);
  }});
  return [wide, cut];
}}"""


def edge(tab, box, scroll: str):
    """The box's right edge as drawn, its table's text hidden, scrolled to the start or end."""
    box.evaluate(f"""(box) => {{ box.scrollLeft = {'0' if scroll == 'start' else 'box.scrollWidth'};
      box.querySelectorAll('table *').forEach((e) => e.style.visibility = 'hidden'); }}""")
    rect = box.bounding_box()
    shot = tab.screenshot(clip={"x": rect["x"] + rect["width"] - EDGE_PX, "y": rect["y"],
                                "width": EDGE_PX, "height": min(rect["height"], 200)})
    box.evaluate("(box) => box.querySelectorAll('table *').forEach((e) => e.style.visibility = '')")
    return Image.open(io.BytesIO(shot)).convert("RGB")


def table_pages(site, language: str) -> list[str]:
    return sorted({path.parent.relative_to(site).as_posix() for path in
                   (site / language if language else site).rglob("index.html")
                   if "<table" in path.read_text("utf-8")
                   and (language or path.relative_to(site).parts[0] != "en")})


@pytest.mark.parametrize("language", ["", "en"])
def test_a_wide_table_scrolls_with_a_cue(tabs, site, site_url, language):
    pages = table_pages(site, language)
    assert pages, "no page shows a table"
    tab = tabs(width=DESKTOP)
    found, cued = [], 0
    for page in pages:
        tab.set_viewport_size({"width": DESKTOP, "height": 800})
        tab.goto(f"{site_url}/{page}/", wait_until="load")
        for width, schemes in ((DESKTOP, ("light", "dark")), (PHONE, ("dark", "light"))):
            tab.set_viewport_size({"width": width, "height": 844})
            wide, cut = tab.evaluate(WIDE_TABLES)
            found += [f"{page} at {width} px: table {index} runs past the column" for index in cut]
            for scheme in schemes if wide else ():
                follow_scheme(tab, scheme)
                settle(tab)
                for index in wide:
                    box = tab.locator(".md-content table").nth(index).evaluate_handle(SCROLLER)
                    box = box.as_element()
                    box.scroll_into_view_if_needed()
                    start, end = edge(tab, box, "start"), edge(tab, box, "end")
                    cue = sum(ImageStat.Stat(ImageChops.difference(start, end)).mean) / 3
                    if cue < LEAST_CUE:
                        found.append(f"{page} at {width} px, {scheme}: table {index} scrolls"
                                     f" with no cue at its edge ({cue:.1f})")
                    cued += 1
    assert cued, "no table is wider than its box: nothing was checked"
    assert not found, "\n".join(found)
