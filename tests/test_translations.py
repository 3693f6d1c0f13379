"""Translation freshness, both ways: a changed source page makes its translation stale, listed
by the tests and marked on the page; recording the new hash makes it fresh again."""

import pytest

from coursekit import ROOT
from coursekit.guards import stale_translations
from coursekit.pages import pages
from coursekit.site import mkdocs_build
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
