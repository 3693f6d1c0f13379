"""What every page downloads for search (issue 27): the index holds prose, not code blocks,
recorded outputs or KaTeX's duplicate markup (hooks/search_prose.py), and a page asks for it
only when the reader opens search (hooks/material_patches.py), while the colour scheme switch
and the tooltips, which stop when the index fails, work without it."""

import html
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from coursekit import ROOT

INDEXES = {"zh": "search/search_index.json", "en": "en/search/search_index.json"}
ROOTS = {"zh": "/", "en": "/en/"}
QUERIES = {"zh": ("分页", "paged-attention"), "en": ("paged attention", "paged-attention")}
# Math in the index as TeX source: KaTeX's annotation, which the MathML beside it repeats.
TEX = ("\\frac", "\\text{", "\\left(", "\\sum")


def index_text(site: Path, language: str) -> str:
    docs = json.loads((site / INDEXES[language]).read_text("utf-8"))["docs"]
    return html.unescape("\n".join(doc["title"] + "\n" + doc["text"] for doc in docs))


def code_blocks() -> dict[str, str]:
    """The opening lines (three, each kept whole) of every snippet and recorded output a
    lesson shows, as a code block puts them in the index: prose never repeats them."""
    blocks = {}
    for path in (ROOT / "snippets").glob("*/*"):
        if path.suffix in (".py", ".out", ".txt", ".sh") and path.is_file():
            lines = [line for line in path.read_text("utf-8").splitlines() if line.strip()][:3]
            if len(lines) == 3 and len("".join(lines)) >= 40:
                blocks[path.relative_to(ROOT).as_posix()] = "\n".join(lines)
    return blocks


@pytest.mark.parametrize("language", INDEXES)
def test_the_search_index_holds_prose_not_code(site, language):
    text = index_text(site, language)
    docs = json.loads((site / INDEXES[language]).read_text("utf-8"))["docs"]
    assert not [doc["location"] for doc in docs if "<pre>" in doc["text"]]
    assert not [tex for tex in TEX if tex in text], "KaTeX's TeX source is in the index"
    blocks = code_blocks()
    assert len(blocks) > 50
    found = sorted(name for name, block in blocks.items() if block in text)
    assert found == [], f"{len(found)} code blocks or outputs in the index: {found[:5]}"
    # Notebook cells: their source, the copy of it for the copy button, the button's text.
    assert "Copied!" not in text
    # The prose is there: every lesson's sections, with their words.
    lessons = {doc["location"].split("/")[1] for doc in docs
               if doc["location"].startswith("lessons/") and len(doc["text"]) > 2000}
    assert {"kv-cache", "paged-attention", "continuous-batching", "quantization",
            "prefix-caching"} <= lessons


@pytest.fixture
def tab(chromium):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    tab.index_requests = []
    tab.on("request", lambda request: "search_index" in request.url
           and tab.index_requests.append(urlsplit(request.url).path))
    yield tab
    context.close()


@pytest.mark.parametrize("language", ROOTS)
def test_a_page_downloads_the_index_when_search_opens(tab, course_url, language):
    base = urlsplit(course_url).path + ROOTS[language]
    # The home page: the lightest page with glossary terms.
    tab.goto(course_url + ROOTS[language], wait_until="networkidle")
    # The colour scheme switch: Material shows the label of the scheme after the current one.
    media = "document.body.getAttribute('data-md-color-media')"
    before = tab.evaluate(media)
    tab.locator('form[data-md-component="palette"] label:not([hidden])').click()
    tab.wait_for_function(f"{media} !== {json.dumps(before)}")
    # A glossary term's tooltip.
    term = tab.locator("a.glossary-term").first
    term.scroll_into_view_if_needed()
    term.hover()
    tab.locator(".md-tooltip2--active").wait_for()
    tab.wait_for_timeout(300)
    assert tab.index_requests == [], "the page asked for the search index before search opened"
    # Search opens, fetches this language's index once, and finds the lesson.
    query, lesson = QUERIES[language]
    tab.fill("input.md-search__input", query)
    tab.keyboard.press("End")
    first = tab.locator(".md-search-result__item > a").first
    first.wait_for()
    assert urlsplit(first.get_attribute("href")).path == base + f"lessons/{lesson}/"
    assert tab.index_requests == [base + "search/search_index.json"]
