"""Reading order as a reader sees it, in headless Chromium (issues 27 and 40): where a lesson
sits and how long it takes, under its title, and the home page's learning path on a phone,
where each lesson's card opens with its number and title."""

import pytest

from coursekit.browser import fits
from coursekit.pages import lessons_in_nav

WIDTHS = {"phone": 390, "desktop": 1280}
ROOTS = {"zh": "/", "en": "/en/"}

# Per card of the home page's learning path: each cell's text, its column's name and its top.
CARDS = """() => [...document.querySelectorAll('article table[data-stack] tbody tr')].map(
  row => [...row.children].map(td => ({label: td.dataset.label, text: td.innerText.trim(),
                                       top: Math.round(td.getBoundingClientRect().top)}))
)"""
META = """() => {
  const meta = document.querySelector('article .lesson-meta');
  const title = document.querySelector('article h1'), learn = document.querySelector(
    'article .admonition.abstract');
  const box = element => element && element.getBoundingClientRect();
  return meta && {text: meta.innerText, metaTop: box(meta).top, titleBottom: box(title).bottom,
                  learnTop: box(learn) && box(learn).top, height: box(meta).height,
                  pageWidth: document.documentElement.scrollWidth};
}"""


@pytest.mark.parametrize("language", ROOTS)
def test_the_learning_path_numbers_every_lesson_and_repeats_no_status_on_a_phone(
        tabs, course_url, language):
    """Issue 40, point 9: the path comes first after the way in, one card per lesson of the
    nav, each opening with its number and title on one line; no column says "available"
    on every card."""
    tab = tabs(width=WIDTHS["phone"])
    tab.goto(course_url + ROOTS[language], wait_until="load")
    cards = tab.evaluate(CARDS)
    assert len(cards) == len(lessons_in_nav()), language
    for number, card in enumerate(cards, 1):
        lesson, covers = card  # two columns: the lesson and what it covers
        assert lesson["text"].startswith(f"{number} · "), (language, card)
        assert covers["top"] > lesson["top"], (language, card)
    start = tab.locator("article a.md-button--primary").first
    assert start.get_attribute("href").endswith("lessons/kv-cache/"), language
    first_heading = tab.locator("article h2").first.inner_text().rstrip("¶")
    assert first_heading in ("学习路径", "Learning path"), first_heading


@pytest.mark.parametrize("language", ROOTS)
def test_a_lesson_says_where_it_is_and_what_it_teaches_under_its_title(tabs, course_url, language):
    """On a phone, then with the window widened to a desktop's (one load for both)."""
    tab = tabs(width=WIDTHS["phone"])
    tab.goto(course_url + ROOTS[language] + "lessons/continuous-batching/", wait_until="load")
    total = len(lessons_in_nav())
    expected = {"zh": (f"第 3 课，共 {total} 课", "分钟读完"),
                "en": (f"Lesson 3 of {total}", "min read")}[language]
    for width in WIDTHS.values():
        tab.set_viewport_size({"width": width, "height": 900})
        fits(tab, width)  # once the resized window has settled
        meta = tab.evaluate(META)
        assert meta, language
        assert all(text in meta["text"] for text in expected), meta
        # One line, right under the title, the "what you will learn" box after it, nothing
        # wider than the screen.
        assert meta["titleBottom"] <= meta["metaTop"] < meta["learnTop"], meta
        assert meta["height"] < 40 and meta["pageWidth"] <= width, meta


MENU = """() => [...document.querySelectorAll('.md-nav--primary > .md-nav__list > .md-nav__item')].map(
  item => ({label: item.querySelector(':scope > label, :scope > a').innerText.trim(),
            entries: [...item.querySelectorAll(':scope > nav a.md-nav__link')].map(
              a => ({text: a.innerText.trim(), href: a.getAttribute('href')}))}))"""


@pytest.mark.parametrize("language", ROOTS)
def test_the_menu_numbers_the_lessons_lists_the_notebook_and_keeps_contributors_pages_out(
        tabs, course_url, site, language):
    """Issue 40, point 9: the learners' menu numbers each lesson in the nav's order and lists
    the notebook after them; the design decisions and the maintainers' pages are not in it,
    and the contributing page links every one of them."""
    tab = tabs(width=WIDTHS["desktop"])
    tab.goto(course_url + ROOTS[language], wait_until="load")
    menu = {section["label"]: section["entries"] for section in tab.evaluate(MENU)}
    lessons, notebooks = list(menu.values())[1:3]
    assert [entry["text"].split(" · ")[0] for entry in lessons] == [
        str(n) for n in range(1, len(lessons_in_nav()) + 1)], lessons
    assert [entry["href"].rstrip("/").split("/")[-1] for entry in notebooks] == ["kv-cache-explorer"]
    hrefs = [entry["href"] for entries in menu.values() for entry in entries]
    assert not [href for href in hrefs if "/adr/" in href or "/maintainers/" in href], hrefs
    prefix = "" if language == "zh" else "en/"
    contributing = (site / prefix / "contributing/index.html").read_text("utf-8")
    for page in [*sorted((site / "adr").glob("*/index.html")), *(site / "maintainers").glob("*/index.html")]:
        target = f'href="../{page.parent.relative_to(site).as_posix()}/"'
        assert target in contributing, f"{language}: the contributing page does not link {page.parent.name}"
