"""The drift guards pass on the course, and each one fails on a broken copy of the small fixture
course (tests/fixture_course, with a lesson scaffolded into it), never on the real lessons."""

import shutil

import pytest

from coursekit import ROOT, code, gpu_labs
from coursekit.built_site import mkdocs_build
from coursekit.guards import (
    REPOSITORY_CHECKS,
    admonitions_have_titles,
    broken_links,
    built_html,
    collector_sees_every_python_block,
    component_labels_match,
    english_pages_have_no_chinese,
    every_page_in_every_language,
    fence_languages,
    languages_match,
    lesson_pages_offer_their_code,
    nav_is_translated,
    python_block_rules,
    snippets_are_used,
)
from coursekit.numbers import prose_numbers

FIRST_ZH = "docs/lessons/first.zh.md"
FIRST_EN = "docs/lessons/first.en.md"
SECOND_ZH = "docs/lessons/second.zh.md"
SECOND_EN = "docs/lessons/second.en.md"
SIZE = '```python title="first_size.py"\n--8<-- "first/first_size.py"\n```'
SIZE_OUTPUT = '\n\n```text title="输出"\n--8<-- "first/first_size.out"\n```'


@pytest.mark.parametrize("check", REPOSITORY_CHECKS, ids=lambda check: check.__name__)
def test_course_passes(check):
    assert check(ROOT) == []


@pytest.mark.parametrize("check", REPOSITORY_CHECKS, ids=lambda check: check.__name__)
def test_fixture_course_passes(check, pristine_fixture):
    assert check(pristine_fixture) == []


BREAKAGES = {
    "typo in a fence language": (
        fence_languages, FIRST_ZH, '```text title="输出"', '```txet title="输出"',
        "unknown fence language 'txet'"),
    "python block behind a tilde fence": (
        collector_sees_every_python_block, FIRST_ZH, SIZE, SIZE.replace("```", "~~~"),
        "pytest-examples does not see this Python block"),
    "output block removed": (
        python_block_rules, FIRST_ZH, SIZE + SIZE_OUTPUT, SIZE,
        "right after this block the page must show its output"),
    "code written inline": (
        python_block_rules, FIRST_ZH, '--8<-- "first/first_size.py"', 'print("hi")',
        "must be one include of a .py file"),
    "unknown run marker": (
        python_block_rules, SECOND_ZH, 'data-run="gpu"', 'data-run="cpu"',
        'unknown data-run="cpu"'),
    "snippet include differs": (
        languages_match, FIRST_EN, '--8<-- "first/picture.txt"', '--8<-- "first/first_size.out"',
        "differ in snippet includes"),
    "section missing in one language": (
        languages_match, FIRST_EN, "\n## 3 ·", "\n3 ·", "differ in headings"),
    "figure in one language only": (
        languages_match, FIRST_EN, "\n## 3 ·", "\n![VRAM](vram.png)\n\n## 3 ·",
        "differ in figures"),
    "component in one language only": (
        languages_match, SECOND_EN, "```second-blocks\ntokens: 100\n```\n", "",
        "differ in code blocks and components"),
    "other chart in one language": (
        languages_match, SECOND_EN, "name: second-blocks", "name: other-chart",
        "differ in charts"),
    "nav title untranslated": (
        nav_is_translated, "mkdocs.yml", "  - 术语表: glossary.md", "  - 新标题: glossary.md",
        "nav title '新标题' has no en nav_translations entry"),
    "chinese left on the english page": (
        english_pages_have_no_chinese, FIRST_EN, "\n## 3 ·", "\n显存\n\n## 3 ·",
        "Chinese text on an English page"),
    "admonition without title": (
        admonitions_have_titles, FIRST_ZH, '!!! info "说明"', "!!! info",
        "admonition without a title"),
    "lesson without its code download": (
        lesson_pages_offer_their_code, SECOND_ZH, "```lesson-code\nsnippets: second\n```\n", "",
        "a lesson page shows one ```lesson-code fence holding `snippets: second`, not []"),
    "component label in one language only": (
        component_labels_match, "snippets/second/components/second-blocks/labels.yml",
        "  tokens: Tokens\n", "", "en lacks ['tokens']"),
    "number changed in one language": (
        prose_numbers, FIRST_EN, "needs 32 bytes", "needs 33 bytes",
        ": 33 is not in docs/lessons/first.zh.md (the en page states a number"),
    "gpu block without a check": (
        gpu_labs.contract_problems, "snippets/second/gpu_checks.py",
        'CHECKS = {"second_lab.py"', 'CHECKS = {"other_lab.py"',
        "snippets/second/second_lab.py: a GPU block with no check"),
}


@pytest.mark.parametrize("breakage", BREAKAGES.values(), ids=BREAKAGES.keys())
def test_guard_fails_on_broken_copy(breakage, course, edit):
    check, file, old, new, expected = breakage
    assert check(course) == []
    edit(course / file, old, new)
    problems = check(course)
    assert any(expected in problem for problem in problems), problems


TYPED = {FIRST_ZH: ("要 32 字节。", "要 32 字节，显存 7,168 MiB{}。"),
         FIRST_EN: ("32 bytes per token.", "32 bytes per token, in 7,168 MiB{}.")}


def line_of(path, text: str) -> int:
    return next(number for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
                if text in line)


def test_unmarked_typed_number_fails(course, edit):
    for page, (old, new) in TYPED.items():
        edit(course / page, old, new.format(""))
    assert prose_numbers(course) == [
        f"{page}:{line_of(course / page, '7,168')}: 7,168 has no source on the page: print"
        " it with a snippet the page shows, or mark it as an estimate in its sentence"
        " (估计 / estimate)" for page in (FIRST_EN, FIRST_ZH)]


def test_number_changed_in_one_language_is_named_with_its_line(course, edit):
    edit(course / FIRST_EN, "needs 32 bytes", "needs 33 bytes")
    line = line_of(course / FIRST_EN, "needs 33 bytes")
    assert prose_numbers(course) == [
        f"{FIRST_EN}:{line}: 33 has no source on the page: print it with a snippet the page"
        " shows, or mark it as an estimate in its sentence (估计 / estimate)",
        f"{FIRST_ZH}:{line_of(course / FIRST_ZH, '32 字节')}: 32 is not in {FIRST_EN} (the zh"
        " page states a number the other language does not)",
        f"{FIRST_EN}:{line}: 33 is not in {FIRST_ZH} (the en page states a number the other"
        " language does not)"]


def test_number_marked_as_estimate_passes(course, edit):
    for page, marker in ((FIRST_ZH, "（估计）"), (FIRST_EN, " (estimate)")):
        old, new = TYPED[page]
        edit(course / page, old, new.format(marker))
    assert prose_numbers(course) == []


def test_page_in_one_language_fails(course):
    (course / FIRST_EN).unlink()
    assert every_page_in_every_language(course) == ["docs/lessons/first: missing in en"]


def test_unused_snippet_fails(course):
    (course / "snippets/second/orphan.py").write_text("print(1)\n")
    assert snippets_are_used(course) == ["snippets/second/orphan.py: no page includes it"]


def test_module_name_in_two_lessons_fails(course):
    shutil.copy(course / "snippets/first/first_size.py", course / "snippets/second/first_size.py")
    assert code.clashes(course)[0].startswith("first_size.py is defined in first and second")


def test_built_html_guard_fails_on_broken_html(fixture_site, tmp_path, edit):
    broken = tmp_path / "site"
    shutil.copytree(fixture_site, broken)
    page = broken / "lessons/first/index.html"
    edit(page, "</article>", '<p>--8<-- "x.py"</p>\n<p>```python\nprint(1)</p></article>')
    edit(page, "</head>", '<script src="https://cdn.example.com/x.js"></script></head>')
    edit(page, "</article>", '<img src="../../assets/missing.svg"></article>')
    edit(page, "</article>", "<table><tr><th></th><th>B</th></tr></table></article>")
    other = broken / "en/lessons/first/index.html"
    edit(other, "</article>", '<pre><code>--8&lt;-- "first/x.py"</code></pre></article>')
    edit(other, "</article>", '<p><span class="arithmatex">\\(x^2\\)</span> 缓存 <span lang="zh">块</span>'
                              '</p><script>"脚本"</script></article>')
    assert built_html(broken) == [
        'en/lessons/first/index.html: leftover snippet marker --8<--',
        'en/lessons/first/index.html: a formula was not rendered by KaTeX',
        "en/lessons/first/index.html: Chinese text without lang=zh: ['缓存']",
        'lessons/first/index.html: leftover snippet marker --8<--',
        'lessons/first/index.html: a stray code fence is shown as text',
        'lessons/first/index.html: a table column has an empty header: a screen reader reads'
        ' its cells with no header (axe: td-has-header)',
        'lessons/first/index.html: loads https://cdn.example.com/x.js from another host',
        'lessons/first/index.html: loads ../../assets/missing.svg, which the site does not have',
    ]


def test_link_guard_fails_on_broken_links(fixture_site, tmp_path, edit):
    broken = tmp_path / "site"
    shutil.copytree(fixture_site, broken)
    page = broken / "en/lessons/first/index.html"
    edit(page, "</article>",
              '<a href="../../missing/">x</a><a href="../../glossary/#nowhere">y</a>'
              '<a href="#3--code">ok</a></article>')
    assert broken_links(broken) == [
        "en/lessons/first/index.html: link ../../missing/ leads to no page",
        "en/lessons/first/index.html: link ../../glossary/#nowhere leads to no anchor",
    ]


def failed_build(course, tmp_path) -> str:
    result = mkdocs_build(course, tmp_path / "site", in_process=True)
    assert result.returncode != 0, "the build should have failed"
    return result.stderr


def test_missing_snippet_fails_the_build(course, tmp_path):
    (course / "snippets/first/first_size.out").unlink()
    stderr = failed_build(course, tmp_path)
    assert "first_size.out" in stderr and "could not be found" in stderr


def test_fence_that_markdown_cannot_parse_shows_up_as_stray(course, tmp_path, edit):
    # Pitfall of this stack: superfences rejects an unknown option, prints the fence as text,
    # and --strict stays green. Only the built HTML shows it.
    edit(course / FIRST_ZH, SIZE, SIZE.replace('"first_size.py"', '"x" test="skip"'))
    result = mkdocs_build(course, tmp_path / "site", in_process=True)
    assert result.returncode == 0, result.stderr
    assert "lessons/first/index.html: a stray code fence is shown as text" in built_html(
        tmp_path / "site")


def test_a_warning_fails_the_strict_build(course, tmp_path, edit):
    edit(course / FIRST_EN, "\n## 3 ·", "\nSee [the next lesson](missing-lesson.md).\n\n## 3 ·")
    stderr = failed_build(course, tmp_path)
    assert "WARNING" in stderr and "missing-lesson.md" in stderr


def test_a_formula_katex_cannot_render_fails_the_build(course, tmp_path, edit):
    edit(course / FIRST_ZH, r"\(2 \times L", r"\(2 \unknownmacro L")
    stderr = failed_build(course, tmp_path)
    assert "lessons/first.zh.md: KaTeX cannot render" in stderr and "unknownmacro" in stderr


def test_component_fence_renders_at_any_indent(course, tmp_path, edit):
    # Left to Markdown, a component fence inside a details block would show as code.
    fence = "```second-blocks\ntokens: 100\n```"
    edit(course / SECOND_EN, fence, '??? info "Blocks"\n    ' + fence.replace("\n", "\n    "))
    assert mkdocs_build(course, tmp_path / "site", in_process=True).returncode == 0
    html = (tmp_path / "site/en/lessons/second/index.html").read_text("utf-8")
    details = html[html.index('<details class="info">'):html.index("</details>")]
    assert built_html(tmp_path / "site") == [] and details.count('data-component="second-blocks"') == 1


def test_gpu_lab_card_renders_at_any_indent(course, tmp_path, edit):
    text = (course / SECOND_EN).read_text("utf-8")
    card = text[text.index("```gpu-lab"):text.index("```", text.index("```gpu-lab") + 3) + 3]
    edit(course / SECOND_EN, card, '??? info "Lab"\n    ' + card.replace("\n", "\n    "))
    assert mkdocs_build(course, tmp_path / "site", in_process=True).returncode == 0
    html = (tmp_path / "site/en/lessons/second/index.html").read_text("utf-8")
    assert built_html(tmp_path / "site") == [] and html.count('class="admonition gpu-lab"') == 1
