"""`npm run new-lesson` makes a lesson that touches only its pages, its snippet folder and one
nav line, and that every test discovers and passes as it is: its snippet runs, its chart is
drawn and current, its GPU block has a check, its component matches its Python, its code can
be downloaded. (The fixture course's second lesson is scaffolded this way: tests/conftest.py.)"""

import hashlib
import subprocess
import sys

import pytest

from coursekit import ROOT, charts, components, gpu_labs
from coursekit.browser import component_mismatches, serve
from coursekit.code import run_as_reader
from coursekit.guards import broken_links, built_html
from coursekit.pages import languages, mkdocs_config, pages, python_blocks
from coursekit.scaffold import ScaffoldError, add_to_nav, new_lesson

SLUG = "second"


def tree(root) -> dict[str, str]:
    return {path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in root.rglob("*") if path.is_file() and not path.is_symlink()
            and "__pycache__" not in path.parts and ".cache" not in path.parts}


def test_a_new_lesson_touches_only_its_own_files_and_one_nav_line(course):
    before, config = tree(course), (course / "mkdocs.yml").read_text("utf-8")
    new_lesson(course, "third-one", "第三课", "Third lesson")
    after = tree(course)
    changed = {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}
    assert {name for name in changed if not name.startswith(
        ("docs/lessons/third-one.", "snippets/third-one/"))} == {"mkdocs.yml"}
    added = set((course / "mkdocs.yml").read_text("utf-8").splitlines()) - set(config.splitlines())
    assert added == {"      - lessons/third-one.md"}


def test_the_nav_line_goes_after_the_last_lesson_even_past_a_comment():
    config = ("nav:\n  - 课程:\n      - lessons/a.md\n      # a comment\n      - lessons/b.md\n"
              "  - 术语表: glossary.md\n")
    lessons = add_to_nav(config, "c").split("  - 课程:\n")[1].split("  - 术语表")[0]
    assert lessons.splitlines()[-2:] == ["      - lessons/b.md", "      - lessons/c.md"]


def test_its_snippet_runs_and_prints_what_the_page_shows(pristine_fixture, tmp_path):
    blocks = [block for page in pages(pristine_fixture) if page.name == f"lessons/{SLUG}"
              for block in python_blocks(page)[0] if not block.gpu]
    assert {block.code.include for block in blocks} == {f"{SLUG}/second.py"}
    for block in blocks:
        run = run_as_reader(pristine_fixture / "snippets" / block.code.include, tmp_path / block.code.page,
                            pristine_fixture, block.code.expanded)
        assert run.stdout == block.output.expanded and not run.stderr


def test_its_code_passes_the_courses_lint_as_it_is(pristine_fixture):
    """The scaffolded code meets snippets/ruff.toml (88 columns, formatted), as
    tests/repository/test_style.py holds every snippet to: a contributor's first commit of a
    new lesson must not fail on the template's own lines."""
    ruff = [sys.executable, "-m", "ruff"]
    folder = pristine_fixture / "snippets" / SLUG
    config = ["--config", str(ROOT / "snippets" / "ruff.toml")]
    for command in (["check", *config, str(folder)], ["format", "--check", *config, str(folder)]):
        result = subprocess.run([*ruff, *command], capture_output=True, text=True,
                                cwd=pristine_fixture)  # a course's root, as the lint test runs
        assert result.returncode == 0, result.stdout + result.stderr


def test_its_chart_is_found_and_current(pristine_fixture):
    assert [c.name for c in charts.charts(pristine_fixture)] == [f"{SLUG}-blocks"]
    assert charts.stale(pristine_fixture, languages(pristine_fixture)) == []


def test_its_gpu_block_has_its_check(pristine_fixture):
    assert [str(b) for b in gpu_labs.gpu_blocks(pristine_fixture)] == [f"{SLUG}/second_lab.py"]
    assert gpu_labs.contract_problems(pristine_fixture) == []


def test_it_builds_and_offers_its_code(fixture_site, pristine_fixture):
    assert built_html(fixture_site) == [] and broken_links(fixture_site) == []
    assert (fixture_site / "assets/code" / f"{SLUG}.zip").is_file()
    html = (fixture_site / "en/lessons" / SLUG / "index.html").read_text("utf-8")
    assert f'data-component="{SLUG}-blocks"' in html
    assert f"assets/components/{SLUG}-blocks/script.js" in html
    # Its component's script loads only where the component is shown.
    other = (fixture_site / "en/lessons/first/index.html").read_text("utf-8")
    assert "assets/components/" not in other


def test_its_component_matches_its_python(pristine_fixture, fixture_site, page):
    component = components.components(pristine_fixture)[f"{SLUG}-blocks"]
    contract = component.parity()
    with serve(fixture_site) as base:
        assert component_mismatches(page, base, fixture_site, component, contract) == []
        # What the course-wide tests read of its contract is on the page.
        root = f'[data-component="{component.name}"]'
        keys = components.key_results(contract)
        assert [page.locator(f"{root} {key}").count() for key in keys] == [1] * len(keys)
        field = contract.FULL_WIDTH["typed"][0]
        assert page.locator(f'{root} input[name="{field}"]').count() == 1


def test_its_component_is_in_the_lists_the_course_wide_tests_derive(pristine_fixture):
    """tests/test_readers.py and tests/test_components.py take each component's page from the
    pages' fences and what to check from its contract (coursekit/components.py: CONTRACT):
    the new lesson's component is in their lists, with no edit to them."""
    assert components.component_pages(pristine_fixture) == {f"{SLUG}-blocks": f"lessons/{SLUG}/"}
    assert components.contract_problems(pristine_fixture) == []


def test_a_component_without_its_contract_or_its_page_is_named(course, edit):
    edit(course / "snippets" / SLUG / "components" / f"{SLUG}-blocks" / "parity.py",
         "FULL_WIDTH = {", "FULL_WIDTH_ = {")
    for language in languages(course):
        edit(course / "docs" / "lessons" / f"{SLUG}.{language}.md", f"```{SLUG}-blocks\n",
             "```text\n")
    folder = f"snippets/{SLUG}/components/{SLUG}-blocks"
    assert components.component_pages(course) == {}
    assert components.contract_problems(course) == [
        f"{folder}: no page has a {SLUG}-blocks fence", f"{folder}/parity.py: no FULL_WIDTH"]


@pytest.mark.parametrize(("arguments", "message"), [
    (("Paged Attention", "中文", "English"), "is not a slug"),
    (("first", "中文", "English"), "exists already"),
    (("new-one", "中文", " "), "both titles are needed"),
])
def test_bad_arguments_are_named(course, arguments, message):
    with pytest.raises(ScaffoldError, match=message):
        new_lesson(course, *arguments)


def test_the_command_names_the_problem_without_a_traceback():
    result = subprocess.run([sys.executable, "tools/new_lesson.py", "Not A Slug", "中文", "English"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode != 0 and "new-lesson: 'Not A Slug' is not a slug" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("language", ["zh", "en"])
def test_its_page_has_the_summary_the_lesson_box_shows(course, language):
    from hooks.lesson_meta import summary

    config = mkdocs_config(ROOT)
    built = {lang.locale: lang.extra for lang in config.plugins["i18n"].config.languages}
    marker = (built[language] or config.extra)["lesson_meta"]["summary"]
    new_lesson(course, "third-one", "第三课", "Third lesson")
    page = course / "docs/lessons" / f"third-one.{language}.md"
    assert summary(page.read_text("utf-8"), marker)
