"""The built site in headless Chromium, served on 127.0.0.1: math, offline loading, language
switch and search, as a reader meets them, on every lesson."""

import pytest

from coursekit import ROOT
from coursekit.pages import pages

LESSONS = sorted({page.name for page in pages(ROOT) if page.name.startswith("lessons/")
                  and page.path.suffix == ".md"})
URL = {"zh": "/{}/", "en": "/en/{}/"}


@pytest.mark.parametrize("lesson", LESSONS)
@pytest.mark.parametrize("language", URL)
def test_lesson_renders_its_formulas_offline(page, site_url, language, lesson):
    page.goto(site_url + URL[language].format(lesson), wait_until="networkidle")
    assert page.locator("html").get_attribute("lang") == language
    assert page.locator(".arithmatex:not(:has(.katex))").count() == 0, "a formula stayed raw"
    assert page.locator(".katex-error").count() == 0
    if page.locator(".arithmatex").count():
        assert page.evaluate("document.fonts.check('16px KaTeX_Main')")
    assert page.off_site == []


@pytest.mark.parametrize(("source", "target"), [("zh", "en"), ("en", "zh")])
@pytest.mark.parametrize("lesson", LESSONS)
def test_language_switch_lands_on_the_same_page(page, site_url, source, target, lesson):
    page.goto(site_url + URL[source].format(lesson), wait_until="networkidle")
    page.hover(".md-header__option .md-select")
    page.click(f'.md-select__link[hreflang="{target}"]')
    page.wait_for_load_state("networkidle")
    assert page.url == site_url + URL[target].format(lesson)
    assert page.locator("html").get_attribute("lang") == target
    assert page.off_site == []


@pytest.mark.parametrize(("language", "query"), [
    ("zh", "显存"), ("zh", "并发"), ("en", "concurrency"), ("en", "memory"),
])
def test_search_finds_the_kv_cache_lesson(page, site_url, language, query):
    page.goto(site_url + URL[language].format("lessons/kv-cache"), wait_until="networkidle")
    # Material searches on key events. Chinese arrives from an input method as text plus a
    # final key press (committing the candidate); typing the text and pressing End does the same.
    page.fill("input.md-search__input", query)
    page.keyboard.press("End")
    page.wait_for_selector(".md-search-result__item")
    links = page.locator(".md-search-result__item > a").evaluate_all("as => as.map(a => a.href)")
    wanted = site_url + URL[language].format("lessons/kv-cache")
    assert wanted in [link.split("?")[0].split("#")[0] for link in links], links
    assert page.off_site == []


@pytest.mark.parametrize("path", ["/lessons/kv-cache-explorer/", "/en/lessons/kv-cache-explorer/",
                                  "/glossary/", "/en/interview/"])
def test_other_pages_load_nothing_from_elsewhere(page, site_url, path):
    page.goto(site_url + path, wait_until="networkidle")
    assert page.off_site == []
