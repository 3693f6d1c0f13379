"""The glossary: one data file, entries on the glossary page and tooltips linked to them."""

import re
from html import unescape

import pytest
from mkdocs.exceptions import PluginError

from coursekit import ROOT
from coursekit.code import load

# The hook as MkDocs loads it: by its path.
glossary = load(ROOT / "hooks" / "glossary.py", "glossary_hook")
TERMS, load_terms = glossary.TERMS, glossary.load_terms

REQUIRED = ["kv-cache", "hbm", "gqa", "mha", "mla", "prefill", "decode", "memory-bound",
            "compute-bound", "roofline", "arithmetic-intensity", "pagedattention", "block",
            "continuous-batching", "prefix-caching", "quantization", "awq", "fp8", "ttft", "tpot"]


def test_the_course_terms_are_defined():
    assert set(REQUIRED) <= {term["id"] for term in TERMS}


# Markdown a definition must not hold: a definition is also a tooltip, which shows it as it
# is written (the backticks of `num_speculative_tokens` showed in lesson 7's tooltips). Code
# spans, bold or emphasis, links, HTML tags, headings and lists.
MARKDOWN = re.compile(r"`|\*\*|__|(?<!\w)[*_]\w.*?\w[*_](?!\w)|\]\(|<[a-zA-Z/]|^\s*(#|[-*+] )",
                      re.MULTILINE)


def test_definitions_are_plain_text():
    assert [(term["id"], language, found[0]) for term in TERMS
            for language, definition in term["definition"].items()
            if (found := MARKDOWN.search(definition))] == []


def test_the_plain_text_check_finds_markdown():
    written = ["`num_speculative_tokens`", "**all**", "*all*", "[KV](kv.md)", "<code>x</code>",
               "# KV", "- KV"]
    assert [text for text in written if not MARKDOWN.search(text)] == []
    assert not MARKDOWN.search("prompt_lookup_min, a^(k+1), 2 * 3, the share (1 - a)")


@pytest.mark.parametrize("language", ["zh", "en"])
def test_glossary_page_has_every_entry(site, language):
    page = site / ("" if language == "zh" else "en/") / "glossary/index.html"
    html = page.read_text("utf-8")
    for term in TERMS:
        assert f'<h3 id="{term["id"]}">{term[language]}' in html, term["id"]


@pytest.mark.parametrize(("page", "language"), [
    ("lessons/kv-cache/index.html", "zh"), ("en/lessons/kv-cache/index.html", "en")])
def test_lesson_terms_have_tooltips_in_the_page_language(site, page, language):
    html = (site / page).read_text("utf-8")
    linked = [(term_id, title) for title, term_id in re.findall(
        r'<abbr title="([^"]+)"><a class="glossary-term" href="[./]*glossary/#([\w-]+)">', html)]
    definitions = {term["id"]: term["definition"][language] for term in TERMS}
    assert {"kv-cache", "gqa", "pagedattention", "memory-bound", "decode"} <= {i for i, _ in linked}
    assert all(unescape(title) == definitions[term_id] for term_id, title in linked)


def test_chinese_spellings_get_tooltips_on_chinese_pages(site):
    html = (site / "lessons/kv-cache/index.html").read_text("utf-8")
    assert re.search(r'<a class="glossary-term" href="[./]*glossary/#kv-cache">KV 缓存</a>', html)


@pytest.mark.parametrize("page", ["lessons/kv-cache/index.html", "en/lessons/kv-cache/index.html"])
def test_a_term_is_linked_once_per_section(site, page):
    html = (site / page).read_text("utf-8")
    for section in re.split(r"<h2\b", html):
        linked = re.findall(r'class="glossary-term" href="[^"]*#([\w-]+)"', section)
        assert len(linked) == len(set(linked)), f"linked twice in one section: {linked}"


@pytest.mark.parametrize(("text", "linked"), [
    ("<p>每条序列的KV 缓存的大小</p>", True),  # Chinese needs no spaces around a term
    ("<p>the KV caches</p>", False),  # a Latin edge is a whole word
    ("<p><code>KV cache</code> and <a href='x'>KV cache</a></p>", False),
    ('<div class="arithmatex">KV cache</div>', False),
    ("<pre><code>decode\n<a id='l1'></a>decode</code></pre><p>decode</p>", True),
    # A code block's file name (lesson 3's preemption.py showed a tooltip on "preemption").
    ('<span class="filename">preemption.py</span>', False),
])
def test_spellings_are_found_in_prose_only(text, linked):
    page = type("Page", (), {"file": type("File", (), {"src_uri": "x.md", "locale": "zh"})(),
                             "url": "x/"})()
    html = glossary.on_page_content(text, page, None, None)
    assert html.count("glossary-term") == int(linked), html


def test_bad_glossary_data_names_what_is_wrong(tmp_path):
    data = tmp_path / "glossary.yml"
    data.write_text((ROOT / "hooks/glossary.yml").read_text("utf-8").replace(
        "    en: The first phase of inference", "    fr: La première phase", 1), "utf-8")
    with pytest.raises(PluginError, match=r"term 6 \(prefill\): missing definition.en"):
        load_terms(data)


@pytest.mark.parametrize("page", ["en/lessons/kv-cache/index.html", "interview/index.html"])
def test_titles_carry_no_tooltip(site, page):
    html = (site / page).read_text("utf-8")
    titles = re.findall(r'<h[1-6]\b.*?</h[1-6]>|<summary\b.*?</summary>'
                        r'|<p class="admonition-title">.*?</p>', html, re.S)
    assert titles and not [t for t in titles if "<abbr" in t or "glossary-term" in t]
