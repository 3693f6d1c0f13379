"""`mkdocs build --strict` passes with zero warnings and yields clean, self-contained HTML."""

import jinja2
import pytest

from coursekit import ROOT
from coursekit.guards import broken_links, built_html
from coursekit.pages import mkdocs_config, pages
from coursekit.site import CompiledTemplates


def test_strict_build_has_no_warnings(build):
    _, result = build
    log = result.stdout + result.stderr
    warnings = [line for line in log.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert result.returncode == 0 and warnings == [], log


def test_built_html_is_clean(site):
    assert built_html(site) == []


def test_every_page_is_built_in_its_language(site):
    for page in pages(ROOT):
        html = site / page.html
        assert html.is_file(), f"docs/{page.relative} was not built to {page.html}"
        assert f'<html lang="{page.language}"' in html.read_text("utf-8"), page.html


def test_internal_links_and_anchors_resolve(site):
    assert broken_links(site) == []


def test_edit_link_opens_the_page_in_its_language(site):
    edit_uri = mkdocs_config(ROOT).edit_uri
    for page in pages(ROOT):
        html = (site / page.html).read_text("utf-8")
        assert f'href="{edit_uri}{page.relative}"' in html, page.html


def test_in_process_builds_compile_a_template_once_and_again_when_it_changes():
    """coursekit.site's in-process builds (the guard tests') share the theme's compiled
    templates: only an unchanged template is served from what an earlier build compiled."""
    templates = CompiledTemplates()

    def render(source: str, compiles: bool) -> str:
        env = jinja2.Environment(loader=jinja2.DictLoader({"page.html": source}),
                                 bytecode_cache=templates)
        if not compiles:
            env.compile = lambda *args, **kwargs: pytest.fail("the template was compiled again")
        return env.get_template("page.html").render(name="KV")

    assert render("{{ name }} cache", compiles=True) == "KV cache"
    assert render("{{ name }} cache", compiles=False) == "KV cache"
    assert render("{{ name }} blocks", compiles=True) == "KV blocks"
