"""What the course changes in Material (hooks/material_patches.py, overrides/): the build fails,
saying what to look at, when Material changes under it."""

import difflib
import re
import shutil

import pytest
from mkdocs.exceptions import PluginError

from coursekit import ROOT
from coursekit.browser import UNMOUNTED_CODE
from coursekit.code import load

# The hook as MkDocs loads it: by its path.
patches = load(ROOT / "hooks" / "material_patches.py", "material_patches_hook")
OVERRIDES = ROOT / "overrides"
JAVASCRIPTS = patches.MATERIAL_TEMPLATES / "assets" / "javascripts"


def test_the_installed_material_is_the_one_checked():
    patches.check_material()  # raises if not


def test_another_material_version_fails_the_build():
    with pytest.raises(PluginError, match=r"checked against mkdocs-material 9\.8\.2, installed 9\.9\.0"):
        patches.check_material(installed="9.9.0")


@pytest.mark.parametrize("template", patches.TEMPLATES, ids=lambda t: f"{t.path}:{t.block}")
def test_a_changed_template_of_material_fails_the_build(template, tmp_path):
    templates = tmp_path / "templates"
    for copied in patches.TEMPLATES:
        (templates / copied.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(patches.MATERIAL_TEMPLATES / copied.path, templates / copied.path)
    source = templates / template.path
    text = patches.template_text(template, templates)
    source.write_text(source.read_text("utf-8").replace(text, text.replace("\n", "\n ", 1)), "utf-8")
    with pytest.raises(PluginError, match=re.escape(template.path)):
        patches.check_material(templates=templates)


def _changes(template) -> list[str]:
    """The lines overrides/ changes in Material's text, outside the copy's own comments."""
    ours = (OVERRIDES / ("main.html" if template.path == "base.html" else template.path)).read_text("utf-8")
    if template.block:
        ours = patches.block_text(ours, template.block)
    ours = re.sub(r"\{#-.*?-#\}\n", "", ours, flags=re.S)
    theirs = re.sub(r"\{#-.*?-#\}\n", "", patches.template_text(template), flags=re.S)
    return [f"{line[0]} {line[2:].strip()}" for line in difflib.ndiff(theirs.splitlines(), ours.splitlines())
            if line[:1] in "+-"]


def test_the_copies_in_overrides_are_materials_with_the_changes_they_describe():
    changes = {(t.path, t.block): _changes(t) for t in patches.TEMPLATES}
    assert changes[("partials/search.html", None)] == [
        '- <div class="md-search" data-md-component="search" role="dialog">',
        '+ <div class="md-search" data-md-component="search" role="dialog"'
        """ aria-label="{{ lang.t('search.placeholder') }}">"""]
    assert changes[("base.html", "site_meta")] == [
        "- {% if config.extra.alternate is iterable %}",
        "- {% for alt in config.extra.alternate %}",
        """- <link rel="alternate" href="{{ alt.link | url }}" hreflang="{{ alt.lang | d(lang.t('language')) }}">""",
        "- {% endfor %}",
        "- {% endif %}"]
    not_found = changes[("404.html", None)]
    assert "- <h1>404 - Not found</h1>" in not_found
    assert any("Page not found" in line for line in not_found if line.startswith("+"))
    config = changes[("base.html", "config")]
    assert [line for line in config if line.startswith("-")] == ['- "base": base_url,']
    assert '+ "base": _.base,' in config and "+ {%- set _.base = base_url %}" in config


def _built_javascript(site):
    for path in JAVASCRIPTS.rglob("*.min.js*"):
        if "lunr" not in path.parts:
            target = site / path.relative_to(patches.MATERIAL_TEMPLATES)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def test_the_javascript_patches_apply_once(tmp_path):
    _built_javascript(tmp_path)
    changed = patches.patch_assets(tmp_path)
    assert sorted(path.name for path in changed) == sorted(
        next(tmp_path.glob(glob)).name for glob in {patch.glob for patch in patches.ASSETS})
    assert patches.patch_assets(tmp_path) == []  # a patched site is left as it is
    worker = next(tmp_path.rglob("search.*.min.js")).read_text("utf-8")
    assert all(p.right in worker for p in patches.ASSETS if p.glob == patches.WORKER)


@pytest.mark.parametrize("patch", patches.ASSETS, ids=lambda p: f"{p.glob.rsplit('/', 1)[1]}:{p.why}")
def test_material_javascript_without_the_patched_code_fails_the_build(patch, tmp_path):
    _built_javascript(tmp_path)
    path = next(tmp_path.glob(patch.glob))
    path.write_text(path.read_text("utf-8").replace(patch.wrong, patch.wrong[:-1] + " )"), "utf-8")
    with pytest.raises(PluginError, match=re.escape(patch.why)):
        patches.patch_assets(tmp_path)


# The viewport's colour scheme, and the <meta name="color-scheme"> elements of the page.
VIEWPORT_SCHEME = """() => [getComputedStyle(document.documentElement).colorScheme,
  document.querySelectorAll('meta[name="color-scheme"]').length]"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_viewport_follows_the_scheme_without_materials_meta(tabs, site_url, scheme):
    tab = tabs(width=390, scheme=scheme)
    tab.goto(f"{site_url}/lessons/kv-cache/", wait_until="load")
    assert tab.evaluate(VIEWPORT_SCHEME) == ["dark" if scheme == "dark" else "normal", 0]
    # The reader's toggle (automatic -> light -> dark) moves the viewport with the page.
    for _ in range(2):
        tab.locator("form[data-md-component=palette] label:not([hidden])").first.click()
    material = tab.evaluate("document.body.dataset.mdColorScheme")
    assert material == "slate"
    assert tab.evaluate(VIEWPORT_SCHEME) == ["dark", 0]


# Every time the body is marked data-md-color-switching, from the page's first script on.
RECORD_SWITCHING = """window.switching = 0;
new MutationObserver((changes) => {
  window.switching += changes.filter((change) => document.body.hasAttribute(change.attributeName)).length;
}).observe(document, {subtree: true, attributeFilter: ['data-md-color-switching']});"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_palette_marks_a_switch_only_when_the_colours_change(tabs, site_url, scheme):
    tab = tabs(width=390, scheme=scheme)
    tab.add_init_script(RECORD_SWITCHING)
    tab.goto(f"{site_url}/lessons/kv-cache/", wait_until="load")
    tab.wait_for_function("!document.body.hasAttribute('data-md-color-switching')")
    # The page is built light: a dark system's first visit switches, once; a light one keeps it.
    assert tab.evaluate("window.switching") == (1 if scheme == "dark" else 0)
    tab.reload(wait_until="load")  # the palette is saved now: the page starts in it
    tab.wait_for_function("!document.body.hasAttribute('data-md-color-switching')")
    assert tab.evaluate("window.switching") == 0
    # The reader's toggle (automatic -> light -> dark): light changes nothing on a light system,
    # dark switches.
    toggle = tab.locator("form[data-md-component=palette] label:not([hidden])").first
    toggle.click()
    assert tab.evaluate("window.switching") == (1 if scheme == "dark" else 0)
    toggle = tab.locator("form[data-md-component=palette] label:not([hidden])").first
    toggle.click()
    assert tab.evaluate("window.switching") == (2 if scheme == "dark" else 1)


def test_the_build_wraps_a_table_as_material_does():
    html = '<p>x</p><table data-stack="">\n<tr><td>1</td></tr></table><table class="own"></table>'
    assert patches.wrapped_tables(html) == (
        '<p>x</p><div class="md-typeset__scrollwrap"><div class="md-typeset__table"><table'
        ' data-stack="">\n<tr><td>1</td></tr></table></div></div><table class="own"></table>')


# Each table Material selects, in the boxes it puts tables in, once.
TABLE_BOXES = """() => [...document.querySelectorAll('article table:not([class])')].map((table) =>
  [table.parentElement.className, table.parentElement.parentElement.className,
   table.closest('.md-typeset__scrollwrap').parentElement.closest('.md-typeset__scrollwrap')])"""


def test_every_table_of_the_lessons_sits_in_materials_boxes_once(page, site_url):
    for lesson in ("kv-cache", "continuous-batching", "serving-metrics"):
        page.goto(f"{site_url}/lessons/{lesson}/", wait_until="load")
        boxes = page.evaluate(TABLE_BOXES)
        assert boxes, lesson
        assert all(box == ["md-typeset__table", "md-typeset__scrollwrap", None] for box in boxes), boxes


def test_material_mounts_code_blocks_and_tooltips_as_they_come_into_view(tabs, site_url):
    """content.lazy, and the patch that has tooltips wait the same way: a block far down has
    no copy button yet but takes the keyboard's focus (focusable_code), and mounts once it is
    seen; a glossary term far down, focused from the keyboard, shows its tooltip."""
    tab = tabs(width=390)
    tab.goto(f"{site_url}/lessons/prefix-caching/", wait_until="load")
    unmounted = tab.evaluate(f"{UNMOUNTED_CODE}.length")
    assert unmounted > 10, "Material mounted the code blocks far down as the page loaded"
    last = tab.locator("article pre > code").last
    assert last.get_attribute("tabindex") == "0"
    shown = tab.locator("article pre > code:visible").last
    shown.focus()  # the keyboard's Tab: the block scrolls into view
    tab.wait_for_function("(code) => code.parentElement.querySelector('.md-code__button')",
                          arg=shown.element_handle())
    assert tab.evaluate("document.querySelectorAll('nav.md-code__nav:not([role=none])').length") == 0
    # Material numbers its tooltips as it mounts them (__tooltip2_<n>): a term far down, focused
    # from the keyboard, mounts among the few tooltips of what the reader has seen.
    titles = tab.evaluate("document.querySelectorAll('article [title]').length")
    term = tab.locator("article a.glossary-term").last
    term.focus()
    tooltip = tab.locator(".md-tooltip2--active")
    tooltip.wait_for()
    assert tooltip.inner_text().strip()
    mounted_before = int(tooltip.get_attribute("id").rsplit("_", 1)[1])
    assert titles > 40 and mounted_before < titles / 2, \
        f"Material mounted {mounted_before} of the page's {titles} tooltips as the page loaded"
