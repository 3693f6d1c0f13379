"""The built site in headless Chromium, served on 127.0.0.1: math, offline loading, language
switch and search, as a reader meets them."""

import pytest

LESSON = {"zh": "/lessons/kv-cache/", "en": "/en/lessons/kv-cache/"}
TITLE = {"zh": "KV 缓存", "en": "KV cache"}


@pytest.fixture
def page(chromium, site_url):
    context = chromium.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.off_site = []
    page.on("request", lambda request: request.url.startswith((site_url, "data:", "blob:"))
            or page.off_site.append(request.url))
    yield page
    context.close()


@pytest.mark.parametrize("language", LESSON)
def test_lesson_renders_its_formulas_offline(page, site_url, language):
    page.goto(site_url + LESSON[language], wait_until="networkidle")
    assert page.locator("html").get_attribute("lang") == language
    assert page.locator(".arithmatex").count() >= 20
    assert page.locator(".arithmatex:not(:has(.katex))").count() == 0, "a formula stayed raw"
    assert page.locator(".katex-error").count() == 0
    assert page.evaluate("document.fonts.check('16px KaTeX_Main')")
    assert page.off_site == []


@pytest.mark.parametrize(("source", "target"), [("zh", "en"), ("en", "zh")])
def test_language_switch_lands_on_the_same_page(page, site_url, source, target):
    page.goto(site_url + LESSON[source], wait_until="networkidle")
    page.hover(".md-header__option .md-select")
    page.click(f'.md-select__link[hreflang="{target}"]')
    page.wait_for_load_state("networkidle")
    assert page.url == site_url + LESSON[target]
    assert page.locator("html").get_attribute("lang") == target
    assert page.off_site == []


@pytest.mark.parametrize(("language", "query"), [
    ("zh", "显存"), ("zh", "并发"), ("en", "concurrency"), ("en", "memory"),
])
def test_search_finds_the_lesson(page, site_url, language, query):
    page.goto(site_url + LESSON[language].replace("lessons/kv-cache/", ""), wait_until="networkidle")
    # Material searches on key events. Chinese arrives from an input method as text plus a
    # final key press (committing the candidate); typing the text and pressing End does the same.
    page.fill("input.md-search__input", query)
    page.keyboard.press("End")
    page.wait_for_selector(".md-search-result__item")
    links = page.locator(".md-search-result__item > a").evaluate_all("as => as.map(a => a.href)")
    assert site_url + LESSON[language] in [link.split("?")[0].split("#")[0] for link in links], links
    assert page.off_site == []


@pytest.mark.parametrize("path", ["/lessons/kv-cache-explorer/", "/en/lessons/kv-cache-explorer/",
                                  "/glossary/", "/en/interview/"])
def test_other_pages_load_nothing_from_elsewhere(page, site_url, path):
    page.goto(site_url + path, wait_until="networkidle")
    assert page.off_site == []
