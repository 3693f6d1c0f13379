"""`mkdocs build --strict` passes with zero warnings and yields clean, self-contained HTML."""

from guards import built_html


def test_strict_build_has_no_warnings(build):
    _, result = build
    log = result.stdout + result.stderr
    warnings = [line for line in log.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert result.returncode == 0 and warnings == [], log


def test_built_html_is_clean(site):
    assert built_html(site) == []


def test_every_page_is_built_in_both_languages(site):
    for page in ("index.html", "lessons/kv-cache/index.html"):
        assert (site / page).is_file() and (site / "en" / page).is_file(), page
    assert 'lang="zh"' in (site / "lessons/kv-cache/index.html").read_text("utf-8")
    assert 'lang="en"' in (site / "en/lessons/kv-cache/index.html").read_text("utf-8")
