"""Text a reader on a phone can read (issue 40, point 8): a glossary tooltip at the body's
size, and a chart's smallest text at 11 px or more as the phone shows the chart."""

import pytest

from coursekit.charts import SMALLEST_TEXT_PT

LEAST_PX = 11


@pytest.fixture
def phone(tabs):
    return tabs(width=390, has_touch=True, is_mobile=True)


@pytest.mark.parametrize("language", ["", "en/"])
def test_a_tooltip_reads_at_the_bodys_size(phone, course_url, language):
    phone.goto(f"{course_url}/{language}lessons/kv-cache/", wait_until="networkidle")
    term = phone.locator("a.glossary-term").first
    term.scroll_into_view_if_needed()
    term.tap()
    tooltip = phone.locator(".md-tooltip2--active .md-tooltip2__inner")
    tooltip.wait_for()
    sizes = phone.evaluate("""() => [document.querySelector('.md-content .md-typeset'),
        document.querySelector('.md-tooltip2--active .md-tooltip2__inner')]
        .map(e => parseFloat(getComputedStyle(e).fontSize))""")
    assert sizes[1] >= sizes[0], f"tooltip {sizes[1]} px, body {sizes[0]} px"


def test_every_charts_smallest_text_is_legible_on_a_phone(phone, course_url, site):
    pages = sorted({path.parent.relative_to(site).as_posix() for path in site.rglob("index.html")
                    if 'class="course-chart"' in path.read_text("utf-8")})
    assert pages, "no page shows a chart"
    small = []
    for page in pages:
        phone.goto(f"{course_url}/{page}/", wait_until="load")
        for src, shown, drawn in phone.evaluate("""() => [...document.querySelectorAll(
                '.course-chart__light img')].map(img => [img.getAttribute('src'),
                img.getBoundingClientRect().width, +img.getAttribute('width')])"""):
            px = SMALLEST_TEXT_PT * 96 / 72 * shown / drawn
            if px < LEAST_PX:
                small.append(f"{page}: {src} shows {px:.1f} px text")
    assert not small, small
