"""Translation freshness, both ways: a changed source page makes its translation stale, listed
by the tests and marked on the page; recording the new hash makes it fresh again."""

import pytest

from coursekit import ROOT
from coursekit.built_site import mkdocs_build
from coursekit.guards import stale_translations
from coursekit.pages import pages
from coursekit.translations import mark

NOTICE = "This translation may be out of date"


def test_notice_shown_exactly_on_stale_pages(site):
    stale = {line.split(":")[0] for line in stale_translations(ROOT)}
    for page in pages(ROOT):
        html = (site / page.html).read_text("utf-8")
        assert (NOTICE in html) == (f"docs/{page.relative}" in stale), page.html


def test_source_change_marks_the_translation(course, tmp_path, edit):
    assert stale_translations(course) == []
    edit(course / "docs/lessons/first.zh.md", "## 3 · 代码\n", "## 3 · 代码\n\n新句子。\n")
    assert stale_translations(course) == [
        "docs/lessons/first.en.md: its zh source changed since it was translated"]
    assert mkdocs_build(course, tmp_path / "stale", in_process=True).returncode == 0
    html = (tmp_path / "stale/en/lessons/first/index.html").read_text("utf-8")
    assert NOTICE in html and 'href="../../../lessons/first/"' in html

    mark(course / "docs/lessons/first.en.md")
    assert stale_translations(course) == []
    assert mkdocs_build(course, tmp_path / "fresh", in_process=True).returncode == 0
    assert NOTICE not in (tmp_path / "fresh/en/lessons/first/index.html").read_text("utf-8")


def test_a_notebook_is_refused_not_written_into(course):
    notebook = course / "docs/lessons/first-notebook.en.ipynb"
    before = notebook.read_bytes()
    with pytest.raises(ValueError, match="only Markdown pages"):
        mark(notebook)
    assert notebook.read_bytes() == before


def test_a_hash_of_digits_only_is_read_as_written(tmp_path):
    """YAML reads `translation_of: 741611238376` as a number; the notice must not take that
    for a different hash."""
    import hashlib
    from itertools import count
    from types import SimpleNamespace

    from hooks.translations import on_page_markdown

    source = next(f"# 第一课\n\n{i}\n" for i in count()
                  if hashlib.sha256(f"# 第一课\n\n{i}\n".encode()).hexdigest()[:12].isdigit())
    (tmp_path / "first.zh.md").write_text(source, "utf-8")
    digits = hashlib.sha256(source.encode()).hexdigest()[:12]
    translation = tmp_path / "first.en.md"
    translation.write_text(f"---\ntranslation_of: {digits}\n---\n\n# First\n", "utf-8")
    page = SimpleNamespace(file=SimpleNamespace(locale="en", abs_src_path=str(translation)),
                           meta={"translation_of": int(digits)}, url="en/first/")
    config = SimpleNamespace(extra={"translation": {"stale_title": "t", "stale_text": "s",
                                                    "source": "src"}})
    assert on_page_markdown("# First\n", page, config, None) == "# First\n"
