"""Translation freshness, both ways: a changed source page makes its translation stale, listed
by the tests and marked on the page; recording the new hash makes it fresh again."""

import subprocess
import sys

from conftest import edit_file, mkdocs_build
from guards import stale_translations
from pages import ROOT, pages

NOTICE = "This translation may be out of date"


def test_notice_shown_exactly_on_stale_pages(site):
    stale = {line.split(":")[0] for line in stale_translations(ROOT)}
    for page in pages(ROOT):
        html = (site / page.html).read_text("utf-8")
        assert (NOTICE in html) == (f"docs/{page.relative}" in stale), page.html


def test_source_change_marks_the_translation(repo_copy, tmp_path):
    assert stale_translations(repo_copy) == []
    edit_file(repo_copy / "docs/lessons/kv-cache.zh.md", "## 7 · 面试连线\n", "## 7 · 面试连线\n\n新句子。\n")
    assert stale_translations(repo_copy) == [
        "docs/lessons/kv-cache.en.md: its zh source changed since it was translated"]
    assert mkdocs_build(repo_copy, tmp_path / "stale").returncode == 0
    html = (tmp_path / "stale/en/lessons/kv-cache/index.html").read_text("utf-8")
    assert NOTICE in html and 'href="../../../lessons/kv-cache/"' in html

    subprocess.run([sys.executable, str(ROOT / "tests/mark_translated.py"),
                    str(repo_copy / "docs/lessons/kv-cache.en.md")], check=True,
                   capture_output=True)
    assert stale_translations(repo_copy) == []
    assert mkdocs_build(repo_copy, tmp_path / "fresh").returncode == 0
    assert NOTICE not in (tmp_path / "fresh/en/lessons/kv-cache/index.html").read_text("utf-8")
