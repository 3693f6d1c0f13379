"""Search as readers type it (issue 27): a Chinese word matches as a word, not as its first
character, and the page a result opens highlights that word; English still finds its pages."""

from urllib.parse import parse_qs, urlsplit

import pytest

RESULTS = ".md-search-result__item > a"
ROOTS = {"zh": "/", "en": "/en/"}
# What each result shows: its address, and the words it marks as found.
SHOWN = "as => as.map(a => [a.href, [...a.querySelectorAll('mark')].map(m => m.textContent)])"


def search(tab, query: str) -> list[tuple[str, list[str]]]:
    # An empty query empties the list, so the next results are this query's. Chinese arrives
    # from an input method as text plus a final key press (committing the candidate).
    tab.fill("input.md-search__input", "")
    tab.wait_for_selector(RESULTS, state="detached")
    tab.fill("input.md-search__input", query)
    tab.keyboard.press("End")
    tab.wait_for_selector(RESULTS)
    return [(href, marks) for href, marks in tab.locator(RESULTS).evaluate_all(SHOWN)]


@pytest.fixture
def tab(chromium):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    yield tab
    context.close()


@pytest.mark.parametrize(("language", "query", "lesson", "words"), [
    ("zh", "分页", "paged-attention", ["分页"]),
    ("zh", "前缀缓存", "prefix-caching", ["前缀", "缓存"]),
    ("zh", "连续批处理", "continuous-batching", ["连续", "批处理"]),
    ("zh", "量化", "quantization", ["量化"]),
    ("en", "paged attention", "paged-attention", ["paged", "attention"]),
    ("en", "quantization", "quantization", ["quantization"]),
    ("zh", "投机解码", "speculative-decoding", ["投机", "解码"]),
    ("en", "speculative decoding", "speculative-decoding", ["speculative", "decoding"]),
])
def test_a_word_finds_its_lesson_first_and_matches_as_a_word(tab, course_url, language, query,
                                                              lesson, words):
    """'分页' used to be searched as '分*': 12 results, most of them for 跑分, 分块 or 分组, and
    the opened page highlighted 分 alone (?h=分)."""
    tab.goto(course_url + ROOTS[language], wait_until="load")  # the home page: the lightest
    results = search(tab, query)
    first, _ = results[0]
    assert urlsplit(first).path == urlsplit(course_url).path + ROOTS[language] + f"lessons/{lesson}/", \
        f"{query}: {[href for href, _ in results]}"
    # Each result is found by the query's words, none by a word that only shares a character.
    for href, marks in results:
        stray = [mark for mark in marks if not any(word in mark.lower() for word in words)]
        assert stray == [], f"{query}: {href} matches {stray}"
    # The opened page highlights the whole words (in Chinese, every word of the query: the
    # lesson has them all; an English lesson may match a single word).
    highlight = parse_qs(urlsplit(first).query)["h"][0].lower().split()
    expected = sorted(words) if language == "zh" else sorted(set(highlight) & set(words))
    assert highlight and sorted(highlight) == expected, f"{query}: ?h={' '.join(highlight)}"
    tab.goto(first, wait_until="load")
    tab.wait_for_selector("article mark")
    # Material marks adjacent words as one: its highlighter (integrations/search/highlighter)
    # joins `</mark> <mark>` into the space between them, so "Speculative decoding" is one mark.
    marked = set(tab.locator("article mark").all_text_contents())
    stray = {mark for mark in marked if not set(mark.lower().split()) <= set(words)}
    assert stray == set(), f"{query}: the page marks {stray}"
