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
    linked = re.findall(r'<a class="glossary-term" href="[./]*glossary/#([\w-]+)">'
                        r'<abbr title="([^"]+)">', html)
    definitions = {term["id"]: term["definition"][language] for term in TERMS}
    assert {"gqa", "pagedattention", "memory-bound", "decode"} <= {i for i, _ in linked}
    assert all(unescape(title) == definitions[term_id] for term_id, title in linked)


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
