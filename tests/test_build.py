"""`mkdocs build --strict` passes with zero warnings and yields clean, self-contained HTML."""

import re
from pathlib import Path

import jinja2
import pytest

from coursekit import ROOT
from coursekit.built_site import CompiledTemplates
from coursekit.components import components
from coursekit.guards import broken_links, built_html
from coursekit.pages import fences, lessons_in_nav, mkdocs_config, pages


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


SEARCH_DIALOG = re.compile(r'<div class="md-search" data-md-component="search" role="dialog"([^>]*)>')
SEARCH_FIELD_LABEL = re.compile(r'<input type="text" class="md-search__input"[^>]*\baria-label="([^"]*)"')


def test_every_page_names_its_search_dialog_and_links_no_relative_alternate(site):
    """overrides/ (hooks/material_patches.py): the 404 page too, which no page hook reaches."""
    built = sorted(site.rglob("*.html"))
    assert site / "404.html" in built
    for html in built:
        text = html.read_text("utf-8")
        if 'data-md-component="search"' not in text:
            continue  # a notebook's download or a redirect
        dialog, field = SEARCH_DIALOG.findall(text), SEARCH_FIELD_LABEL.search(text)
        assert dialog == [f' aria-label="{field[1]}"'], html.relative_to(site)
        assert "hreflang" not in text.partition("</head>")[0], html.relative_to(site)


def test_in_process_builds_compile_a_template_once_and_again_when_it_changes():
    """coursekit.built_site's in-process builds (the guard tests') share the theme's compiled
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


LESSON_NAV = ("lessons/kv-cache.md", "lessons/paged-attention.md", "lessons/continuous-batching.md",
              "lessons/quantization.md", "lessons/prefix-caching.md")


def test_next_goes_from_lesson_to_lesson(site):
    """The footer's "Next" of a lesson is the next lesson; the notebook is reached from its
    lesson, not between two lessons."""
    lessons = lessons_in_nav()
    assert lessons[:len(LESSON_NAV)] == list(LESSON_NAV)
    for prefix in ("", "en/"):
        for here, after in zip(lessons, lessons[1:]):
            html = (site / prefix / here.removesuffix(".md") / "index.html").read_text("utf-8")
            found = re.search(r'<a href="([^"]*)" class="md-footer__link md-footer__link--next"', html)
            assert found and found[1] == f"../{Path(after).stem}/", (prefix, here, found and found[1])
        html = (site / prefix / "lessons/kv-cache/index.html").read_text("utf-8")
        assert 'href="../kv-cache-explorer/"' in html, prefix


@pytest.mark.parametrize("language", ["zh", "en"])
def test_a_lesson_says_its_place_reading_time_and_what_it_teaches(site, language):
    from hooks.lesson_meta import page_text, reading_minutes, summary

    config = mkdocs_config(ROOT)
    built = {lang.locale: lang.extra for lang in config.plugins["i18n"].config.languages}
    labels = (built[language] or config.extra)["lesson_meta"]
    lessons = lessons_in_nav()
    prefix = "" if language == "zh" else "en/"
    for n, lesson in enumerate(lessons, 1):
        source = page_text(ROOT / "docs" / lesson.replace(".md", f".{language}.md"))
        html = (site / prefix / lesson.removesuffix(".md") / "index.html").read_text("utf-8")
        meta = re.search(r'<p class="lesson-meta">(.*?)</p>', html)
        assert meta, (language, lesson)
        position = labels["position"].format(n=n, total=len(lessons))
        minutes = labels["minutes"].format(minutes=reading_minutes(source))
        assert meta[1] == f"<span>{position}</span><span>{minutes}</span>", (language, lesson)
        learned = summary(source, labels["summary"])
        assert learned, f"{lesson} ({language}): its summary does not start with {labels['summary']}"
        box = re.search(r'<div class="admonition abstract">\s*<p class="admonition-title">(.*?)</p>'
                        r"\s*<p>(.*?)</p>", html, re.S)
        assert box and box[1] == labels["learn"], (language, lesson)
        words = re.sub(r"<[^>]+>", "", box[2])
        assert re.sub(r"[`*$]", "", learned)[1:12] in words.replace("&rsquo;", "'"), (language, lesson)
        # An English box starts a sentence: not with a word in lower case ("a small-batch
        # decode step"); a name keeping its capitals (vLLM) or a code span may.
        assert language != "en" or box[2].startswith("<code>") or not re.match(
            r"[a-z]+\b", words), (language, lesson, words[:30])
        # Above the first section, under the title.
        assert html.index('class="lesson-meta"') < html.index("<h2"), (language, lesson)
        # Issue 40, point 6: the box links the code (section 4), the lab (5) and the page's
        # first component, so a phone need not scroll 30 screens to them.
        shown = [fence.language for fence in fences(lesson, source) if fence.language in components(ROOT)]
        wanted = {*re.findall(r'<h2 id="([45]--[^"]*)"', html), *shown[:1]}
        box = re.search(r'<div class="admonition abstract">.*?</div>', html, re.S)[0]
        links = re.findall(r'href="#([^"]+)"', box)
        assert len(wanted) == 2 + len(shown[:1]) and set(links) == wanted, (language, lesson, links)
        assert all(f'id="{anchor}"' in html for anchor in links), (language, lesson)


def test_reading_time_counts_prose_not_code():
    from hooks.lesson_meta import READING_RATE, reading_minutes

    prose = "字" * READING_RATE["cjk"] * 3 + " " + "word " * READING_RATE["word"] * 2
    code = "\n```python\n" + "x = 1\n" * 5000 + "```\n" + '--8<-- "kv-cache/kv_cache_size.py"\n'
    assert reading_minutes(prose) == 5
    assert reading_minutes(prose + code) == 5


def test_vllm_docs_links_are_pinned(site):
    """Every link into vLLM's documentation names the pinned release's docs, not latest."""
    from coursekit.vllm_source import pinned_version

    pinned = f"https://docs.vllm.ai/en/v{pinned_version()}/"
    link = re.compile(r"https?://docs\.vllm\.ai[^\s)\"'<>]*")
    sources = [path for pattern in ("docs/**/*.md", "docs/**/*.ipynb", "snippets/**/*", "*.md")
               for path in ROOT.glob(pattern) if path.is_file()]
    built = list(site.rglob("*.html"))
    assert built and sources
    unpinned = sorted({f"{path.relative_to(path.parents[len(path.parents) - 1])}: {url}"
                       for path in [*sources, *built] if path.suffix not in (".zip", ".png")
                       for url in link.findall(path.read_text("utf-8", errors="replace"))
                       if not url.startswith(pinned)})
    assert unpinned == []
