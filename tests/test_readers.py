"""Readers as they really open the site, in headless Chromium (issue 10): every page in both
languages, its formulas rendered offline, the language switcher and search; on a 390 px phone
and a 1280 px screen, light and dark, from a shared link, under a project sub-path as GitHub
Pages serves it, with a keyboard, a screen reader (axe-core from npm, nothing fetched at run
time) or a touch screen; and every component, from what its contract (parity.py) and the
pages say. A component's own behaviour is tested beside its lesson's other tests
(tests/lessons/<slug>/test_*_reader.py). Each browser test groups its checks per page load,
to stay fast: a page load costs about a second of CPU."""

import json
import re
import xml.etree.ElementTree as ET
from urllib.parse import unquote, urlencode

import pytest

from coursekit import ROOT
from coursekit.browser import (
    MATERIAL_SCHEME,
    component_alone,
    fits,
    follow_scheme,
    link_state,
    ready,
    settle,
)
from coursekit.browser import shown as component_outputs
from coursekit.components import component_pages, components
from coursekit.pages import mkdocs_config

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SITE_URL = mkdocs_config(ROOT).site_url
WIDTHS = {"phone": 390, "desktop": 1280}
ROOTS = {"zh": "/", "en": "/en/"}
PAGE_TYPES = {"home": "", "lesson": "lessons/kv-cache/", "notebook": "lessons/kv-cache-explorer/",
              "glossary": "glossary/"}
OTHER = {"zh": "en", "en": "zh"}
HEAD_HREFLANG = re.compile(r'<link rel="alternate" href="[^"]*" hreflang=')


def url(base: str, language: str, page_type: str) -> str:
    return base + ROOTS[language] + PAGE_TYPES[page_type]


# Text nodes with Chinese characters whose nearest lang attribute is not Chinese.
CHINESE_WITHOUT_LANG = """() => {
  const han = /[\\u3400-\\u9fff]/, found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, parent = node.parentElement;
    if (!han.test(node.textContent) || parent.closest('script, style, svg, math')) continue;
    const lang = parent.closest('[lang]').getAttribute('lang');
    if (!lang.startsWith('zh')) found.push(node.textContent.trim().slice(0, 30));
  }
  return found;
}"""


# A page of each kind, in both languages: what the built HTML holds (formulas rendered, Chinese
# text marked as such, every file a page loads) is checked on every page by coursekit.guards'
# built_html; here, what scripts do with it (a page load costs most of a second of CPU).
PAGES = list(PAGE_TYPES.values())
FORMULA_NOT_RENDERED = ".arithmatex:not(:has(.katex)), .katex-error"
KATEX_FONT_LOADS = "document.fonts.load('16px KaTeX_Main').then(faces => faces.length > 0, () => false)"


@pytest.mark.parametrize("path", PAGES)
def test_each_page_in_both_languages_under_a_project_path(tabs, course_url, path):
    """Opened in Chinese, then switched to English: each language's page says its language and
    renders its formulas offline, and its language switcher leads to the same page. Every
    request succeeds (a page asks for its search index when search opens: the search tests
    build and query the index of each language)."""
    tab = tabs(search="asked")
    tab.goto(course_url + ROOTS["zh"] + path, wait_until="load")
    for language in ("zh", "en"):
        where = f"{language} /{path}"
        assert tab.url == course_url + ROOTS[language] + path, where
        assert tab.locator("html").get_attribute("lang") == language, where
        # No hreflang links in the head: Material fetched a sitemap.xml next to each (404s).
        assert tab.locator("head link[rel=alternate][hreflang]").count() == 0, where
        if language != "zh":
            assert tab.evaluate(CHINESE_WITHOUT_LANG) == [], f"{where}: Chinese text without lang=zh"
        assert tab.locator(FORMULA_NOT_RENDERED).count() == 0, f"{where}: a formula stayed raw"
        if tab.locator(".arithmatex").count():  # KaTeX's font, from this site (formulas may be folded)
            assert tab.evaluate(KATEX_FONT_LOADS), f"{where}: no KaTeX font"
        # The switcher's link, as course.js leaves it once the pointer is on it.
        tab.hover(".md-header__option .md-select")
        switcher = tab.locator(f'.md-select__link[hreflang="{OTHER[language]}"]')
        assert switcher.evaluate("a => a.href") == course_url + ROOTS[OTHER[language]] + path, where
        if language == "zh":
            with tab.expect_navigation(wait_until="load"):
                switcher.click()
    assert tab.failed == [] and tab.off_site == []


CHINESE_FONTS = ['"PingFang SC"', '"Hiragino Sans GB"', '"Microsoft YaHei"', '"Noto Sans CJK SC"']


def test_chinese_pages_name_chinese_fonts_after_the_latin_ones(tabs, course_url):
    """Chinese text had no font named for it: Chromium searched the system's fonts for each run
    of it (a tenth of a Chinese lesson's load CPU; Lighthouse mobile 88-89 on three Chinese
    lessons). Latin text keeps the fonts of the English pages."""
    tab = tabs()
    fonts = {}
    for language in ROOTS:
        tab.goto(url(course_url, language, "home"), wait_until="load")
        fonts[language] = [name.strip() for name in
                           tab.evaluate("getComputedStyle(document.body).fontFamily").split(",")]
    latin = [name for name in fonts["en"] if name not in ("_", "sans-serif")]
    assert latin and fonts["zh"][:len(latin)] == latin, fonts
    assert fonts["zh"][len(latin):len(latin) + len(CHINESE_FONTS)] == CHINESE_FONTS, fonts
    assert not any(name in fonts["en"] for name in CHINESE_FONTS), fonts


def test_each_language_has_its_own_search_index(site):
    indexes = {language: json.loads((site / ROOTS[language].lstrip("/") / "search"
                                     / "search_index.json").read_text("utf-8"))
               for language in ROOTS}
    for language, index in indexes.items():
        root = site / ROOTS[language].lstrip("/")
        assert index["docs"], f"{language}: empty index"
        for doc in index["docs"]:
            page = doc["location"].split("#")[0]
            assert (root / unquote(page) / "index.html").is_file(), f"{language}: {doc['location']}"
            assert not doc["location"].endswith("#"), f"{language}: an empty heading id"
            assert "¶" not in doc["title"], f"{language}: {doc['title']!r}"
            assert not doc["location"].startswith("en/"), f"{language}: {doc['location']}"
            # A result's preview starts where its text does (issue 27 saw one start "，scale").
            text = re.sub(r"<[^>]*>|\u200b", "", doc["text"]).lstrip()
            assert not text.startswith((*"，。、；：", ", ", ". ", "; ", ": ")), \
                f"{language}: {doc['location']} starts with {text[:20]!r}"
    # English pages search their own index: the page's base is the English root.
    lesson = (site / "en" / PAGE_TYPES["lesson"] / "index.html").read_text("utf-8")
    config = json.loads(re.search(r'<script id="__config"[^>]*>(.*?)</script>', lesson, re.S)[1])
    assert config["base"].rstrip("/") == "../.."
    assert indexes["en"]["config"]["lang"] == ["en"]


def test_sitemap_lists_every_page_with_absolute_alternates(site):
    assert SITE_URL and SITE_URL.startswith("https://"), "mkdocs.yml has no site_url"
    namespaces = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9",
                  "x": "http://www.w3.org/1999/xhtml"}
    entries = {
        entry.find("s:loc", namespaces).text: {
            link.get("hreflang"): link.get("href") for link in entry.findall("x:link", namespaces)}
        for entry in ET.parse(site / "sitemap.xml").getroot()}
    built = sorted(path.parent.relative_to(site).as_posix() for path in site.rglob("index.html")
                   if not path.relative_to(site).as_posix().startswith("assets/"))
    for folder in built:
        page_url = SITE_URL + ("" if folder == "." else folder + "/")
        assert page_url in entries, f"{page_url} is not in sitemap.xml"
        zh_url = SITE_URL + re.sub(r"^en/?", "", "" if folder == "." else folder + "/")
        assert entries[page_url] == {"zh": zh_url, "en": SITE_URL + "en/" + zh_url[len(SITE_URL):]}
        html = (site / folder / "index.html").read_text("utf-8")
        assert not HEAD_HREFLANG.search(html), f"{folder}: relative hreflang link in the head"


# What a page shows that depends on the width, the colour scheme and the language.
LAYOUT = """() => {
  // Whether a line of the code element ends inside a word: not after a space, - _ / . or =.
  const brokenInsideAWord = code => {
    const text = code.firstChild, range = document.createRange();
    if (!text || text.nodeType !== Node.TEXT_NODE) return false;
    let top = null;
    for (let i = 0; i < text.length; i++) {
      range.setStart(text, i); range.setEnd(text, i + 1);
      const rect = range.getClientRects()[0];
      if (!rect) continue;
      if (top !== null && rect.top > top + 2 && !' -_/.='.includes(text.data[i - 1])) return true;
      top = rect.top;
    }
    return false;
  };
  const overflowing = [...document.querySelectorAll(
      'article :is(pre > code, div.arithmatex, .md-typeset__scrollwrap, .jupyter-wrapper pre)')]
    .filter(box => box.scrollWidth > box.clientWidth + 1 && box.offsetParent);
  const chart = [...document.querySelectorAll('.course-chart img')].filter(img => img.offsetParent);
  const content = document.querySelector('article').clientWidth;
  return {
    pageWidth: document.documentElement.scrollWidth,
    scheme: document.body.getAttribute('data-md-color-scheme'),
    media: document.body.getAttribute('data-md-color-media'),
    unreachable: overflowing.filter(box => box.tabIndex < 0).map(box => box.className),
    noCue: overflowing.filter(box => !getComputedStyle(box).backgroundImage.includes('gradient'))
      .map(box => box.className || box.tagName),
    brokenCode: [...document.querySelectorAll('article table[data-stack] td code')]
      .filter(code => code.getClientRects().length > 1 && brokenInsideAWord(code))
      .map(code => code.textContent),
    narrowCells: [...document.querySelectorAll('article table[data-stack] td:not([data-short])')]
      .filter(td => td.offsetParent && td.getBoundingClientRect().width < 0.6 * content)
      .map(td => td.textContent.slice(0, 30)),
    charts: chart.map(img => ({src: img.src, link: img.closest('a').href,
                               scale: img.clientWidth / img.getAttribute('width')})),
  };
}"""


# axe's rules that read colours, audited in each scheme at the desktop width (contrast is axe's
# costliest rule by far, and colours do not depend on the width); the others read the page's
# structure, which the scheme does not change: they are audited in the scheme a page opens in,
# at both widths. The lesson opens from a link that puts its KV cache explorer in the state
# where it shows the most (its results, the warning that the weights do not fit and the note
# on a choice the form does not offer), so that these audits cover all of it.
EXPLORER_SHOWING_ALL = {"model": "Qwen2.5-14B-Instruct", "gpu": "24", "weight_dtype": "bf16",
                        "kv_dtype": "bogus"}
EXPLORER_PARTS = (".kv-results", ".kv-warning", ".kv-ignored")
EXPLORER = '[data-component="kv-explorer"]'
AXE_RUN = """async ([colours, structure]) => {
  const colourRules = ['color-contrast', 'link-in-text-block'];
  const options = structure ? {rules: Object.fromEntries(colourRules.map(
      rule => [rule, {enabled: colours}]))} : {runOnly: {type: 'rule', values: colourRules}};
  const results = await axe.run(document, {resultTypes: ['violations'], ...options});
  return results.violations.map(v => v.id + ': '
    + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', '));
}"""


@pytest.mark.parametrize("language", ROOTS)
def test_home_and_lesson_at_each_width_in_both_schemes(tabs, course_url, language):
    """Each page opens on a phone in one scheme, then the reader's system switches to the
    other, which Material follows live; then the window widens to a desktop's, and the same
    again (one load per page: a lesson page load costs most of a second of CPU). Chinese pages
    open light and English ones dark, so that both ways show that a page fetches only the
    charts of the scheme it opened in."""
    schemes = ("light", "dark") if language == "zh" else ("dark", "light")
    tab = tabs(width=WIDTHS["phone"], scheme=schemes[0])
    for page_type in ("home", "lesson"):
        tab.set_viewport_size({"width": WIDTHS["phone"], "height": 900})
        tab.emulate_media(color_scheme=schemes[0])
        query = "?" + urlencode(EXPLORER_SHOWING_ALL) if page_type == "lesson" else ""
        tab.goto(url(course_url, language, page_type) + query, wait_until="load")
        tab.evaluate("document.fonts.ready.then(() => new Promise(r => setTimeout(r, 50)))")
        if page_type == "lesson":
            ready(tab, EXPLORER)
            hidden = [part for part in EXPLORER_PARTS if not tab.locator(part).is_visible()]
            assert hidden == [], f"{language}: the explorer does not show {hidden}"
            other = ".svg" if schemes[0] == "dark" else ".dark.svg"
            assert not [u for u in tab.requested if "/charts/" in u and u.endswith(other)
                        and not (other == ".svg" and u.endswith(".dark.svg"))], \
                f"{language} {schemes[0]}: the other scheme's charts were fetched too"
        tab.add_script_tag(path=str(AXE))
        for width in WIDTHS.values():
            desktop = width != WIDTHS["phone"]
            tab.set_viewport_size({"width": width, "height": 900})
            follow_scheme(tab, schemes[0])
            fits(tab, width)  # once the resized window has settled: LAYOUT reads its width
            for scheme in schemes:
                where = f"{page_type} {language} {width}px {scheme}"
                if scheme != schemes[0]:
                    follow_scheme(tab, scheme)
                settle(tab)
                shown = tab.evaluate(LAYOUT)
                assert shown["scheme"] == MATERIAL_SCHEME[scheme], where
                assert shown["media"] == "(prefers-color-scheme)", f"{where}: not following the system"
                if scheme == schemes[0]:
                    assert shown["pageWidth"] <= width, f"{where}: the page scrolls sideways"
                    assert shown["unreachable"] == [], f"{where}: scrolls but takes no keyboard focus"
                    assert shown["noCue"] == [], f"{where}: scrolls with no visible cue"
                    assert shown["brokenCode"] == [], f"{where}: identifiers broken across lines"
                    if not desktop:
                        assert shown["narrowCells"] == [], f"{where}: table cells squeezed"
                if page_type == "lesson":
                    assert shown["charts"], f"{where}: no chart shown"
                    for chart in shown["charts"]:
                        assert chart["src"].endswith(".dark.svg") == (scheme == "dark"), where
                        assert chart["link"] == chart["src"], f"{where}: the chart does not open full size"
                        assert chart["scale"] >= 0.7, f"{where}: chart text shrunk to {chart['scale']:.2f}"
                if desktop or scheme == schemes[0]:
                    violations = tab.evaluate(AXE_RUN, [desktop, scheme == schemes[0]])
                    assert violations == [], f"{where}: {violations}"
    assert tab.failed == [] and tab.off_site == []


def test_notebook_code_is_readable_in_both_schemes(tabs, course_url):
    tab = tabs()
    tab.goto(url(course_url, "en", "notebook"), wait_until="load")
    assert tab.locator(".jupyter-wrapper .highlight-ipynb .p").count() > 0
    tab.add_script_tag(path=str(AXE))
    for scheme in ("light", "dark"):  # Material follows the system's scheme live
        follow_scheme(tab, scheme)
        violations = tab.evaluate(AXE_RUN, [True, False])
        assert violations == [], scheme


def test_a_glossary_term_on_a_touch_screen_shows_its_tooltip(tabs, course_url):
    tab = tabs(width=390, has_touch=True, is_mobile=True)
    lesson = url(course_url, "zh", "lesson")
    tab.goto(lesson, wait_until="networkidle")
    term = tab.locator('a.glossary-term[href$="#kv-cache"]').first
    assert term.inner_text() == "KV 缓存"
    term.scroll_into_view_if_needed()
    term.tap()
    tooltip = tab.locator(".md-tooltip2--active")
    tooltip.wait_for()
    assert tab.url == lesson
    assert "Key 和 Value" in tooltip.inner_text()
    term.tap()
    tab.wait_for_url("**/glossary/#kv-cache")


# The components' one number reader (issue 27): a Chinese input method types full-width
# digits (０-９) and commas (，), and a hand-edited link may hold them too. Every component
# reads them as the kit's number() does (coursekit/components.py: read_number, its twin,
# is what the parity contracts read with): typed into a field, the value is taken and the
# link holds its ASCII digits; in a link, the page shows what the same link in ASCII shows.
# Each component's contract names its link and its field (FULL_WIDTH), and the pages say
# where it is shown: a new component needs no edit here.
@pytest.mark.parametrize("language", ROOTS)
def test_components_read_full_width_digits_and_chinese_commas(tabs, site, course_url, language):
    """Each component alone (coursekit.browser.component_alone: the kit and the component's
    own script and style) opens on a phone, then its window widens to a desktop's."""
    tab = tabs(width=WIDTHS["phone"])
    pages = component_pages(ROOT)
    for name, component in components(ROOT).items():
        contract = component.parity()
        full_width = getattr(contract, "FULL_WIDTH", None)
        if full_width is None:  # no number to read, or no contract: test_components.py says so
            continue
        link, ascii_link = full_width["link"], full_width["ascii"]
        tab.set_viewport_size({"width": WIDTHS["phone"], "height": 900})
        component_alone(tab, course_url, site, ROOTS[language] + pages[name], name)(urlencode(link))
        root = f'[data-component="{name}"]'
        for width in WIDTHS.values():
            tab.set_viewport_size({"width": width, "height": 900})
            where = f"{name} {language} {width}px"
            shown = component_outputs(tab, name)
            assert shown != "error", f"{where}: {link} shows the error"
            assert shown == contract.expected(ascii_link) == contract.expected(link), where
            assert shown.get("fallback", "") == "", f"{where}: {link} fell back"
            assert fits(tab, width), f"{where}: the page scrolls sideways"
        if full_width["typed"] is None:  # no field takes a number typed
            continue
        # A reader types the field's value with an input method.
        field, typed, value = full_width["typed"]
        tab.fill(f'{root} input[name="{field}"]', typed)
        assert tab.locator(f'{root} input[name="{field}"]').get_attribute("aria-invalid") is None, \
            f"{where}: {typed} marked invalid"
        state = link_state(tab)
        assert state[field] == value, f"{where}: the link holds {state[field]!r}"
        for width in reversed(WIDTHS.values()):
            tab.set_viewport_size({"width": width, "height": 900})
            assert component_outputs(tab, name) == contract.expected(state), f"{where} typed"
            assert fits(tab, width), f"{where} typed: the page scrolls sideways"
    assert tab.failed == [] and tab.off_site == []
