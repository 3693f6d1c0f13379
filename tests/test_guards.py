"""The drift guards pass on the course, and each one fails on a broken copy of it."""

import shutil

import pytest

from conftest import edit_file, mkdocs_build
from guards import (
    REPOSITORY_CHECKS,
    admonitions_have_titles,
    broken_links,
    built_html,
    collector_sees_every_python_block,
    english_pages_have_no_chinese,
    every_page_in_every_language,
    fence_languages,
    languages_match,
    nav_is_translated,
    python_block_rules,
    snippets_are_used,
)
from pages import ROOT

LESSON_ZH = "docs/lessons/kv-cache.zh.md"
LESSON_EN = "docs/lessons/kv-cache.en.md"
CALCULATOR = '```python title="kv_cache_size.py"\n--8<-- "kv-cache/kv_cache_size.py"\n```'
CALCULATOR_OUTPUT = '\n\n```text title="输出"\n--8<-- "kv-cache/kv_cache_size.out"\n```'


@pytest.mark.parametrize("check", REPOSITORY_CHECKS, ids=lambda check: check.__name__)
def test_course_passes(check):
    assert check(ROOT) == []


BREAKAGES = {
    "typo in a fence language": (
        fence_languages, LESSON_ZH, '```text title="输出"', '```txet title="输出"',
        "unknown fence language 'txet'"),
    "python block behind a tilde fence": (
        collector_sees_every_python_block, LESSON_ZH, CALCULATOR,
        CALCULATOR.replace("```", "~~~"), "pytest-examples does not see this Python block"),
    "output block removed": (
        python_block_rules, LESSON_ZH, CALCULATOR + CALCULATOR_OUTPUT, CALCULATOR,
        "right after this block the page must show its output"),
    "code written inline": (
        python_block_rules, LESSON_ZH, '--8<-- "kv-cache/kv_cache_size.py"', 'print("hi")',
        "must be one include of a .py file"),
    "unknown run marker": (
        python_block_rules, LESSON_ZH, 'data-run="gpu"', 'data-run="cpu"',
        'unknown data-run="cpu"'),
    "snippet include differs": (
        languages_match, LESSON_EN, '--8<-- "kv-cache/quiz_per_token.out"',
        '--8<-- "kv-cache/fit_on_4090.out"', "differ in snippet includes"),
    "section missing in one language": (
        languages_match, LESSON_EN, "\n## 7 ·", "\n7 ·", "differ in headings"),
    "figure in one language only": (
        languages_match, LESSON_EN, "\n## 8 ·", "\n![VRAM](vram.png)\n\n## 8 ·",
        "differ in figures"),
    "nav title untranslated": (
        nav_is_translated, "mkdocs.yml", "            KV 缓存: KV cache\n", "",
        "nav title 'KV 缓存' has no en nav_translations entry"),
    "chinese left on the english page": (
        english_pages_have_no_chinese, LESSON_EN, "\n## 9 ·", "\n显存\n\n## 9 ·",
        "Chinese text on an English page"),
    "admonition without title": (
        admonitions_have_titles, LESSON_ZH, '!!! info "本页的数字从哪里来"', "!!! info",
        "admonition without a title"),
}


@pytest.mark.parametrize("breakage", BREAKAGES.values(), ids=BREAKAGES.keys())
def test_guard_fails_on_broken_copy(breakage, repo_copy):
    check, file, old, new, expected = breakage
    assert check(repo_copy) == []
    edit_file(repo_copy / file, old, new)
    problems = check(repo_copy)
    assert any(expected in problem for problem in problems), problems


def test_page_in_one_language_fails(repo_copy):
    (repo_copy / LESSON_EN).unlink()
    assert every_page_in_every_language(repo_copy) == ["docs/lessons/kv-cache: missing in en"]


def test_unused_snippet_fails(repo_copy):
    (repo_copy / "snippets/kv-cache/orphan.py").write_text("print(1)\n")
    assert snippets_are_used(repo_copy) == ["snippets/kv-cache/orphan.py: no page includes it"]


def test_built_html_guard_fails_on_broken_html(site, tmp_path):
    broken = tmp_path / "site"
    shutil.copytree(site, broken)
    page = broken / "lessons/kv-cache/index.html"
    edit_file(page, "</article>", '<p>--8<-- "x.py"</p>\n<p>```python\nprint(1)</p></article>')
    edit_file(page, "</head>", '<script src="https://cdn.example.com/x.js"></script></head>')
    other = broken / "en/lessons/kv-cache/index.html"
    edit_file(other, "</article>", '<pre><code>--8&lt;-- "kv-cache/x.py"</code></pre></article>')
    assert built_html(broken) == [
        'en/lessons/kv-cache/index.html: leftover snippet marker --8<--',
        'lessons/kv-cache/index.html: leftover snippet marker --8<--',
        'lessons/kv-cache/index.html: a stray code fence is shown as text',
        'lessons/kv-cache/index.html: loads https://cdn.example.com/x.js from another host',
    ]


def test_missing_snippet_fails_the_build(repo_copy, tmp_path):
    (repo_copy / "snippets/kv-cache/quiz_per_token.out").unlink()
    result = mkdocs_build(repo_copy, tmp_path / "site")
    assert result.returncode != 0
    assert "quiz_per_token.out" in result.stderr and "could not be found" in result.stderr


def test_fence_that_markdown_cannot_parse_shows_up_as_stray(repo_copy, tmp_path):
    # Pitfall of this stack: superfences rejects an unknown option, prints the fence as text,
    # and --strict stays green. Only the built HTML shows it.
    edit_file(repo_copy / LESSON_ZH, CALCULATOR, CALCULATOR.replace('"kv_cache_size.py"', '"x" test="skip"'))
    result = mkdocs_build(repo_copy, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    assert "lessons/kv-cache/index.html: a stray code fence is shown as text" in built_html(
        tmp_path / "site")


def test_link_guard_fails_on_broken_links(site, tmp_path):
    broken = tmp_path / "site"
    shutil.copytree(site, broken)
    page = broken / "en/lessons/kv-cache/index.html"
    edit_file(page, "</article>",
              '<a href="../../adr/0009-missing/">x</a><a href="../../adr/0004-pinned-vllm/#nowhere">y</a>'
              '<a href="#9--self-check">ok</a></article>')
    assert broken_links(broken) == [
        "en/lessons/kv-cache/index.html: link ../../adr/0009-missing/ leads to no page",
        "en/lessons/kv-cache/index.html: link ../../adr/0004-pinned-vllm/#nowhere leads to no anchor",
    ]


def test_a_warning_fails_the_strict_build(repo_copy, tmp_path):
    edit_file(repo_copy / LESSON_EN, "\n## 8 ·", "\nSee [the next lesson](missing-lesson.md).\n\n## 8 ·")
    result = mkdocs_build(repo_copy, tmp_path / "site")
    assert result.returncode != 0 and "WARNING" in result.stderr and "missing-lesson.md" in result.stderr


def test_a_formula_katex_cannot_render_fails_the_build(repo_copy, tmp_path):
    edit_file(repo_copy / LESSON_ZH, r"\text{bytes/token} = 2\,L", r"\text{bytes/token} = 2\,\unknownmacro L")
    result = mkdocs_build(repo_copy, tmp_path / "site")
    assert result.returncode != 0
    assert "lessons/kv-cache.zh.md: KaTeX cannot render" in result.stderr and "unknownmacro" in result.stderr


def test_explorer_fence_it_cannot_render_fails_the_build(repo_copy, tmp_path):
    # Left to Markdown, an explorer fence inside a details block would show as code.
    fence = "```kv-explorer\npresets: kv-cache/model_presets.json\nmodel: Qwen2.5-7B-Instruct\n```"
    edit_file(repo_copy / LESSON_EN, fence, '??? info "Explorer"\n    ' + fence.replace("\n", "\n    "))
    result = mkdocs_build(repo_copy, tmp_path / "site")
    assert result.returncode != 0
    assert "kv-cache.en.md: a kv-explorer fence must start at the beginning of a line" in result.stderr


def test_gpu_lab_card_renders_at_any_indent(repo_copy, tmp_path):
    text = (repo_copy / LESSON_EN).read_text("utf-8")
    card = text[text.index("```gpu-lab"):text.index("```", text.index("```gpu-lab") + 3) + 3]
    edit_file(repo_copy / LESSON_EN, card, '??? info "Lab"\n    ' + card.replace("\n", "\n    "))
    assert mkdocs_build(repo_copy, tmp_path / "site").returncode == 0
    html = (tmp_path / "site/en/lessons/kv-cache/index.html").read_text("utf-8")
    assert built_html(tmp_path / "site") == [] and html.count('class="admonition gpu-lab"') == 1
