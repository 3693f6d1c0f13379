"""Readers as they really open the site, in headless Chromium (issue 10): every page in both
languages, its formulas rendered offline, the language switcher and search; on a 390 px phone
and a 1280 px screen, light and dark, from a shared link, under a project sub-path as GitHub
Pages serves it, with a keyboard, a screen reader (axe-core from npm, nothing fetched at run
time) or a touch screen. Each browser test groups its checks per page load, to stay fast: a
page load costs about a second of CPU."""

import json
import re
import xml.etree.ElementTree as ET
from urllib.parse import unquote, urlencode, urlsplit

import pytest

from coursekit import ROOT
from coursekit.browser import component_alone, fits, link_state, ready, settle, skip_search
from coursekit.browser import shown as component_outputs
from coursekit.components import components
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


def reader(chromium, width: int, scheme: str, search: str, **options):
    """A tab of a given width and colour scheme that records what went wrong: requests that
    left the machine (off_site), responses of 400 or more (failed), and every URL asked for.
    Its pages build the site's search index only if it searches (search="built"); with
    search="asked" each page still asks the site for it, and fails on a 404."""
    assert search in ("empty", "asked", "built"), f"search={search!r}"
    context = chromium.new_context(viewport={"width": width, "height": 900},
                                   color_scheme=scheme, **options)
    tab = context.new_page()
    if search != "built":
        skip_search(tab, ask_the_site=search == "asked")
    tab.set_default_timeout(15_000)
    tab.off_site, tab.failed, tab.requested = [], [], []
    tab.on("request", lambda request: tab.requested.append(request.url))
    tab.on("request", lambda request: request.url.startswith(
        ("http://127.0.0.1", "data:", "blob:")) or tab.off_site.append(request.url))
    tab.on("response", lambda response: response.status < 400
           or tab.failed.append(f"{response.status} {response.url}"))
    return context, tab


@pytest.fixture
def tabs(chromium):
    contexts = []

    def open_tab(width=1280, scheme="light", search="empty", **options):
        context, tab = reader(chromium, width, scheme, search, **options)
        contexts.append(context)
        return tab

    yield open_tab
    for context in contexts:
        context.close()


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
MATERIAL_SCHEME = {"light": "default", "dark": "slate"}
SCHEME_IS = "scheme => document.body.getAttribute('data-md-color-scheme') === scheme"
# While axe runs, every code block is laid out: course.css lays them out only near the screen
# (content-visibility), and axe takes the text that follows them for "overlapped by another
# element", leaves it "incomplete" and reports no violation there, whatever its colours.
AUDITABLE = ".md-typeset .highlight { content-visibility: visible !important; }"
AXE_RUN = """async ([colours, structure, auditable]) => {
  const colourRules = ['color-contrast', 'link-in-text-block'];
  const options = structure ? {rules: Object.fromEntries(colourRules.map(
      rule => [rule, {enabled: colours}]))} : {runOnly: {type: 'rule', values: colourRules}};
  const style = document.head.appendChild(document.createElement('style'));
  style.textContent = auditable;
  let results;
  try {
    results = await axe.run(document, {resultTypes: ['violations'], ...options});
  } finally {
    style.remove();
  }
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
            tab.emulate_media(color_scheme=schemes[0])
            tab.wait_for_function(SCHEME_IS, arg=MATERIAL_SCHEME[schemes[0]])
            fits(tab, width)  # once the resized window has settled: LAYOUT reads its width
            for scheme in schemes:
                where = f"{page_type} {language} {width}px {scheme}"
                if scheme != schemes[0]:
                    tab.emulate_media(color_scheme=scheme)
                    tab.wait_for_function(SCHEME_IS, arg=MATERIAL_SCHEME[scheme])
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
                    violations = tab.evaluate(AXE_RUN, [desktop, scheme == schemes[0], AUDITABLE])
                    assert violations == [], f"{where}: {violations}"
    assert tab.failed == [] and tab.off_site == []


def test_notebook_code_is_readable_in_both_schemes(tabs, course_url):
    tab = tabs()
    tab.goto(url(course_url, "en", "notebook"), wait_until="load")
    assert tab.locator(".jupyter-wrapper .highlight-ipynb .p").count() > 0
    tab.add_script_tag(path=str(AXE))
    for scheme in ("light", "dark"):  # Material follows the system's scheme live
        tab.emulate_media(color_scheme=scheme)
        tab.wait_for_function(SCHEME_IS, arg=MATERIAL_SCHEME[scheme])
        violations = tab.evaluate(AXE_RUN, [True, False, AUDITABLE])
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


# The KV cache explorer on the lesson page (issue 10): what it shows when the weights do not
# fit, where its summary sits on a phone, what it makes of a link the form never wrote, how
# its fields show the keyboard's focus, and that switching language keeps its settings. axe
# audits it with the rest of the lesson, in the state where it shows the most
# (test_home_and_lesson_at_each_width_in_both_schemes).
EXPLORER = '[data-component="kv-explorer"]'
KV_EXPLORER = components(ROOT)["kv-explorer"]
NEEDS_THE_CARD = ["kv_memory_gib", "num_blocks", "max_concurrency", "sequences", "mha_sequences"]


def message(language: str, key: str, **values) -> str:
    """One of the explorer's messages in a language, its {placeholders} filled in."""
    text = KV_EXPLORER.labels[language]["messages"][key]
    return re.sub(r"\{(\w+)\}", lambda match: str(values[match[1]]), text)


def open_explorer(tab, course_url: str, language: str, query: str = "") -> None:
    tab.goto(url(course_url, language, "lesson") + query, wait_until="load")
    ready(tab, EXPLORER)


def explorer_alone(tab, site, course_url: str, language: str):
    """The explorer alone, cut from the lesson page in a language: open_link(query) hands it a
    link (coursekit.browser.component_alone). What it does with many links is checked there;
    the lesson page, opened once, shows its layout."""
    return component_alone(tab, course_url, site, ROOTS[language] + PAGE_TYPES["lesson"],
                           "kv-explorer")


def outputs(tab) -> dict[str, str]:
    return dict(tab.eval_on_selector_all(
        f"{EXPLORER} [data-key]", "elements => elements.map(e => [e.dataset.key, e.textContent])"))


@pytest.mark.parametrize("language", ROOTS)
def test_explorer_shows_what_needs_no_card_when_the_weights_do_not_fit(tabs, course_url,
                                                                        language):
    tab = tabs(width=WIDTHS["phone"])
    state = {"model": "Qwen2.5-14B-Instruct", "gpu": "24", "weight_dtype": "bf16"}
    open_explorer(tab, course_url, language, "?" + urlencode(state))
    expected = KV_EXPLORER.parity().expected(state)
    assert expected["bytes_per_token"] == "196,608"
    assert outputs(tab) == expected
    assert {key: expected[key] for key in NEEDS_THE_CARD} == dict.fromkeys(NEEDS_THE_CARD, "—")
    assert tab.locator(".kv-results").is_visible() and tab.locator(".kv-error").is_hidden()
    # Which results cannot be computed, and why, in the page's language.
    warning = tab.locator(".kv-warning")
    assert warning.is_visible()
    usable = f"{int(24 * 2**30 * 0.92) / 2**30:.2f}"  # GiB: 24 × gpu_memory_utilization
    assert warning.text_content() == message(language, "no_room", usable=usable,
                                             weights=expected["weight_memory_gib"])
    # The summary: announced, and just above the model picker (the kit's compact layout keeps
    # it on screen while the reader edits any field: test_components.py).
    summary = tab.locator(".kv-summary")
    assert summary.get_attribute("aria-live") == "polite"
    assert tab.locator(".kv-error").get_attribute("role") == "alert"
    assert summary.text_content() == message(language, "summary_no_room",
                                             kib_per_token=expected["kib_per_token"])
    picker = tab.locator('select[name="model"]')
    gap = picker.bounding_box()["y"] - (summary.bounding_box()["y"] + summary.bounding_box()["height"])
    assert 0 <= gap < 24, f"the summary is {gap:.0f}px above the model picker"
    # Picking a model that fits: the summary says so, in view without scrolling.
    picker.evaluate("select => select.scrollIntoView({block: 'center'})")
    picker.select_option("Qwen2.5-7B-Instruct")
    after = KV_EXPLORER.parity().expected(state | {"model": "Qwen2.5-7B-Instruct"})
    assert summary.text_content() == message(language, "summary", **after)
    assert warning.is_hidden()
    top, bottom = summary.evaluate("e => [e.getBoundingClientRect().top,"
                                   " e.getBoundingClientRect().bottom - innerHeight]")
    assert top >= 0 and bottom <= 0, "the summary is out of view"
    picker.select_option("Llama-3.1-70B-Instruct")
    tab.wait_for_function("s => document.querySelector(s).textContent.includes('320.0')",
                          arg=".kv-summary")
    assert warning.is_visible()
    assert tab.failed == [] and tab.off_site == []


IGNORED_CHOICES = [{"kv_dtype": "bogus"}, {"weight_dtype": "bogus"}, {"gpu": "bogus"},
                   {"model": "bogus"},
                   {"model": "<img src=x onerror=alert(1)>", "gpu": "<script>alert(2)</script>",
                    "kv_dtype": "1:fp8", "weight_dtype": "x\" onfocus=\"alert(3)"}]


def link_notes(language: str, state: dict[str, str]) -> list[str]:
    """The explorer's notes, one per value of the link that fell back, in a language."""
    labels = KV_EXPLORER.labels[language]
    return [message(language, key, label=labels[name], name=name, **values)
            for key, name, values in KV_EXPLORER.parity().link_notes(state)]


@pytest.mark.parametrize("language", ROOTS)
def test_explorer_ignores_choices_the_form_does_not_offer(tabs, site, course_url, language):
    tab = tabs(width=WIDTHS["phone"])
    dialogs = []
    tab.on("dialog", lambda dialog: dialogs.append(dialog.message) or dialog.dismiss())
    contract = KV_EXPLORER.parity()
    open_link = explorer_alone(tab, site, course_url, language)
    for state in IGNORED_CHOICES:
        open_link(urlencode(state))
        assert contract.ignored(state), state
        assert tab.locator(".kv-ignored").is_visible(), f"{state}: no note"
        notes = tab.locator(".kv-ignored p").all_text_contents()
        assert notes == link_notes(language, state), state
        assert outputs(tab) == contract.expected(state), state
        for name in ("model", "kv_dtype", "gpu", "weight_dtype"):
            chosen = tab.locator(f'select[name="{name}"]').input_value()
            assert chosen == contract.page_form(state)[0][name] != "", f"{state}: {name}"
        assert tab.locator(f"{EXPLORER} :is(img, script:not([src]))").count() == 0
    assert dialogs == []
    # A link the form wrote has nothing to ignore.
    open_link("kv_dtype=1%3Afp8&gpu=48")
    assert tab.locator(".kv-ignored").is_hidden()
    assert tab.failed == [] and tab.off_site == []


# Numbers no field takes: each falls back to its field's own value with a note, and the results
# show; only numbers each field takes but together too large for the page to compute exactly
# show its error. Its parity contract (components/kv-explorer/parity.py) runs these and more,
# where no link may make it show NaN, Infinity or a runaway number either.
HOSTILE_NUMBERS = ["layers=1e300", "seq_len=" + "9" * 300, "seq_len=NaN", "utilization=1e-400",
                   "gpu=custom&gpu_gib=1e300",
                   "model=custom&layers=1000&kv_heads=1000&head_dim=4096&attention_heads=1000"
                   "&seq_len=10000000&batch=100000"]


@pytest.mark.parametrize("language", ROOTS)
def test_explorer_answers_hostile_numbers_with_a_note_each(tabs, site, course_url, language):
    tab = tabs(width=WIDTHS["phone"])
    contract = KV_EXPLORER.parity()
    open_link = explorer_alone(tab, site, course_url, language)
    for query in HOSTILE_NUMBERS:
        open_link(query)
        state = dict(pair.split("=") for pair in query.split("&"))
        error = tab.locator(".kv-error")
        shown = tab.locator(EXPLORER).inner_text()
        assert not re.search(r"NaN|Infinity|\d{20}", shown.replace(",", "")), f"{query}: {shown}"
        assert tab.evaluate("document.scrollingElement.scrollWidth") <= WIDTHS["phone"], query
        if query == HOSTILE_NUMBERS[-1]:  # every field takes its number: too large together
            assert contract.expected(state) == "error" and error.is_visible()
            assert error.text_content() == message(language, "too_large")
            continue
        assert error.is_hidden() and tab.locator(".kv-results").is_visible(), query
        assert tab.locator(".kv-ignored p").all_text_contents() == link_notes(language, state)
        assert outputs(tab) == contract.expected(state) != "error", query
    # A reader who types such a number gets the field's own message, with its range.
    tab.fill('input[name="layers"]', "1e300")
    label = KV_EXPLORER.labels[language]["layers"]
    assert tab.locator(".kv-error").text_content() == message(language, "int", label=label,
                                                               max="1,000")
    assert tab.locator('input[name="layers"]').get_attribute("aria-invalid") == "true"
    assert tab.failed == [] and tab.off_site == []


@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS)
@pytest.mark.parametrize("language", ROOTS)
def test_explorer_from_a_hand_edited_link_notes_each_bad_value_and_shows_results(
        tabs, site, course_url, language, width):
    """Issue 27: ?seq_len=abc&batch=-1&model=nope showed no results and one error twice,
    with batch=-1 unflagged."""
    tab = tabs(width=width)
    contract = KV_EXPLORER.parity()
    state = {"seq_len": "abc", "batch": "-1", "model": "nope"}
    explorer_alone(tab, site, course_url, language)(urlencode(state))
    where = f"{language} {width}px"
    # Each value fell back to the form's own, and the results show, with no error at all.
    assert tab.locator(".kv-results").is_visible() and tab.locator(".kv-error").is_hidden(), where
    assert tab.locator(".kv-ignored p").count() == 3, f"{where}: not a note per value"
    assert outputs(tab) == contract.expected(state) == contract.expected({}), where
    assert tab.locator(".kv-ignored p").all_text_contents() == link_notes(language, state), where
    assert [name for _, name, _ in contract.link_notes(state)] == ["model", "seq_len", "batch"]
    assert tab.locator(".kv-summary").text_content() == message(
        language, "summary", **contract.expected({})), where
    fields = {name: tab.locator(f'{EXPLORER} [name="{name}"]').input_value()
              for name in ("model", "seq_len", "batch")}
    assert fields == {"model": contract.FIRST_MODEL, "seq_len": "8192", "batch": "1"}, where
    assert tab.locator(f"{EXPLORER} [aria-invalid]").count() == 0, where
    assert tab.evaluate("document.scrollingElement.scrollWidth") <= width, where
    # Once the reader changes a value, the link holds the form's values: the notes go.
    tab.fill('input[name="batch"]', "2")
    assert tab.locator(".kv-ignored").is_hidden(), where
    assert link_state(tab)["batch"] == "2"
    assert tab.failed == [] and tab.off_site == []


# Per row of the explorer's results: its value's lines, the label's lines, and the room
# between the end of the label's text and the value when both share a line.
RESULT_ROWS = """root => [...root.querySelectorAll('.kv-results [data-key]')].map(value => {
  const label = value.closest('[data-row]').firstElementChild;
  const range = document.createRange();
  range.selectNodeContents(label);
  const labelLines = [...range.getClientRects()];
  const last = labelLines[labelLines.length - 1], box = value.getBoundingClientRect();
  const lineHeight = parseFloat(getComputedStyle(value).lineHeight) || 20;
  return {key: value.dataset.key, valueLines: value.getClientRects().length,
          labelHeight: label.getBoundingClientRect().height / lineHeight,
          room: Math.abs(box.top - last.top) < 4 ? box.left - last.right : null,
          right: box.right - root.getBoundingClientRect().right};
})"""


@pytest.mark.parametrize("language", ROOTS)
def test_explorer_results_and_fields_are_readable(tabs, course_url, language):
    """On a phone, and with the window widened to a desktop's (one load for both)."""
    tab = tabs(width=WIDTHS["phone"])
    open_explorer(tab, course_url, language)
    tab.evaluate("document.fonts.ready")
    # The lesson's model, then the model with the longest figures, as a reader picks it.
    for choices in ({}, {"model": "DeepSeek-V3 (MLA)", "gpu": "24", "weight_dtype": "bf16"}):
        for name, value in choices.items():
            tab.select_option(f'{EXPLORER} select[name="{name}"]', value)
        for width in WIDTHS.values():
            tab.set_viewport_size({"width": width, "height": 900})
            where = f"{language} {width}px {choices}"
            assert fits(tab, width), f"{where}: the page scrolls sideways"
            assert outputs(tab) == KV_EXPLORER.parity().expected(choices), where
            assert tab.locator(".kv-results").is_visible(), where
            rows = tab.locator(EXPLORER).evaluate(RESULT_ROWS)
            assert len(rows) == len(KV_EXPLORER.data({"model": "Qwen2.5-7B-Instruct"})["outputs"])
            for row in rows:
                assert row["valueLines"] == 1, f"{where}: {row['key']} broken across lines"
                assert row["labelHeight"] < 3.5, f"{where}: {row['key']}'s label squeezed"
                assert row["room"] is None or row["room"] >= 8, f"{where}: {row['key']} runs" \
                    " into its label"
                assert row["right"] <= 0, f"{where}: {row['key']} sticks out"
            # Fields: 16px at least (a phone zooms into smaller ones).
            sizes = tab.locator(f"{EXPLORER} :is(input, select)").evaluate_all(
                "fields => fields.map(f => parseFloat(getComputedStyle(f).fontSize))")
            assert min(sizes) >= 16, where
    # The course's focus ring: Material takes the outline off inputs, and Chromium's own ring
    # ("auto") is 1px thin.
    tab.locator('select[name="model"]').focus()
    for name in ("kv_dtype", "gpu", "weight_dtype", "layers"):
        tab.keyboard.press("Tab")
        focused = tab.evaluate("""() => {const f = document.activeElement, s = getComputedStyle(f);
            return [f.name, s.outlineStyle, parseFloat(s.outlineWidth)]}""")
        assert focused[0] == name
        assert focused[1] not in ("none", "auto") and focused[2] >= 2, f"{name}: {focused}"


@pytest.mark.parametrize("source", ROOTS)
def test_switching_language_keeps_the_section_and_the_explorer_settings(tabs, site, course_url,
                                                                        source):
    """A reader on a phone, at the lesson's fourth section from a shared link, changes the
    explorer's settings (which sit in that section) and switches language."""
    tab = tabs(width=WIDTHS["phone"])
    ids = {language: re.findall(r'<h2 id="([^"]+)"', (site / ROOTS[language].lstrip("/")
           / PAGE_TYPES["lesson"] / "index.html").read_text("utf-8")) for language in ROOTS}
    open_explorer(tab, course_url, source, "#" + ids[source][3])
    tab.select_option('select[name="model"]', "Llama-3.1-8B-Instruct")
    tab.select_option('select[name="kv_dtype"]', "1:fp8")
    tab.fill('input[name="seq_len"]', "32768")
    shown = outputs(tab)
    tab.hover(".md-header__option .md-select")
    with tab.expect_navigation(wait_until="load"):
        tab.click(f'.md-select__link[hreflang="{OTHER[source]}"]')
    tab.wait_for_function("location.hash.length > 1")
    ready(tab, EXPLORER)
    assert tab.locator("html").get_attribute("lang") == OTHER[source]
    assert urlsplit(tab.url).path == urlsplit(url(course_url, OTHER[source], "lesson")).path
    target_section = ids[OTHER[source]][3]
    assert unquote(urlsplit(tab.url).fragment) == target_section
    heading = tab.locator(f'article h2[id="{target_section}"]')
    assert heading.evaluate("h => h.getBoundingClientRect().top") < 200
    assert tab.locator('select[name="model"]').input_value() == "Llama-3.1-8B-Instruct"
    assert tab.locator('input[name="seq_len"]').input_value() == "32768"
    assert outputs(tab) == shown
    assert tab.failed == [] and tab.off_site == []


# The components' one number reader (issue 27): a Chinese input method types full-width
# digits (０-９) and commas (，), and a hand-edited link may hold them too. Every component
# reads them as the kit's number() does (coursekit/components.py: read_number, its twin,
# is what the parity contracts read with): typed into a field, the value is taken and the
# link holds its ASCII digits; in a link, the page shows what the same link in ASCII shows.
COMPONENT_PAGES = {"kv-explorer": "lessons/kv-cache/", "block-table": "lessons/paged-attention/",
                   "scheduler-timeline": "lessons/continuous-batching/",
                   "prompt-sharing": "lessons/prefix-caching/",
                   "startup-memory-bar": "lessons/startup-memory/",
                   "request-metrics": "lessons/serving-metrics/"}
# Per component: a link in full-width forms, the same link in ASCII, and a field with what
# a reader types into it and the value the link then holds.
FULL_WIDTH = {
    "kv-explorer": ({"seq_len": "１６，３８４", "batch": "４"}, {"seq_len": "16384", "batch": "4"},
                    ("seq_len", "３２，７６８", "32768")),
    "block-table": ({"blocks": "１２", "ops": "A:２０,B:４０"}, {"blocks": "12", "ops": "A:20,B:40"},
                    ("blocks", "１６", "16")),
    "scheduler-timeline": ({"max_num_batched_tokens": "１，０２４", "step": "１"},
                           {"max_num_batched_tokens": "1024", "step": "1"},
                           ("max_num_batched_tokens", "２，０４８", "2048")),
    "prompt-sharing": ({"num_gpu_blocks": "４０", "step": "０"}, {"num_gpu_blocks": "40", "step": "0"},
                       ("num_gpu_blocks", "３０", "30")),
    "startup-memory-bar": ({"max_num_seqs": "１２８", "gpu_memory_utilization": "０．９"},
                           {"max_num_seqs": "128", "gpu_memory_utilization": "0.9"},
                           ("max_num_batched_tokens", "４，０９６", "4096")),
    "request-metrics": ({"requests": "０/１２０/１５０;５０/３００", "p": "９０"},
                        {"requests": "0/120/150;50/300", "p": "90"}, ("ttft", "１，５００", "1500")),
}


@pytest.mark.parametrize("language", ROOTS)
def test_components_read_full_width_digits_and_chinese_commas(tabs, site, course_url, language):
    """Each component alone (coursekit.browser.component_alone: the kit and the component's
    own script and style) opens on a phone, then its window widens to a desktop's."""
    tab = tabs(width=WIDTHS["phone"])
    for name, (link, ascii_link, (field, typed, value)) in FULL_WIDTH.items():
        contract = components(ROOT)[name].parity()
        tab.set_viewport_size({"width": WIDTHS["phone"], "height": 900})
        component_alone(tab, course_url, site, ROOTS[language] + COMPONENT_PAGES[name],
                        name)(urlencode(link))
        root = f'[data-component="{name}"]'
        for width in WIDTHS.values():
            tab.set_viewport_size({"width": width, "height": 900})
            where = f"{name} {language} {width}px"
            shown = component_outputs(tab, name)
            assert shown != "error", f"{where}: {link} shows the error"
            assert shown == contract.expected(ascii_link) == contract.expected(link), where
            assert shown.get("fallback", "") == "", f"{where}: {link} fell back"
            assert fits(tab, width), f"{where}: the page scrolls sideways"
        # A reader types the field's value with an input method.
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


# The block table on lesson 2's page (issue 27): its usage as vLLM's gauge is read, a field
# that takes no value marked as such while the view keeps what it showed, and an operation
# before the last step saying which later steps it drops, with a way back.
BLOCK_TABLE = components(ROOT)["block-table"]
BLOCK_TABLE_ROOT = '[data-component="block-table"]'


def fill_in(text: str, **values) -> str:
    """A component's message with its {placeholders} filled in (component-kit.js: fill)."""
    return re.sub(r"\{(\w+)\}", lambda match: str(values.get(match[1], match[0])), text)


@pytest.mark.parametrize("language", ROOTS)
def test_block_table_reads_its_gauge_marks_its_fields_and_names_what_it_drops(
        tabs, course_url, language):
    """On a phone, where the notes it adds have the least room (the page at a desktop's width:
    test_lesson_pages_show_what_python_computes_and_keep_key_results_in_view)."""
    width = WIDTHS["phone"]
    tab = tabs(width=width)
    labels = BLOCK_TABLE.labels[language]
    contract = BLOCK_TABLE.parity()
    trace = contract.DEFAULTS["ops"].split(",")
    tab.goto(course_url + ROOTS[language] + COMPONENT_PAGES["block-table"] + "?step=2",
             wait_until="load")
    shown = component_outputs(tab, "block-table")
    # 5 of 9 blocks in use: the gauge as block_trace.py prints it, and as vLLM's log line.
    assert shown == contract.expected({"step": "2"})
    assert (shown["used"], shown["gauge"], shown["percent"]) == ("5/9", "0.5556", "55.6%")
    assert "GPU KV cache usage: 55.6%" in tab.locator(f"{BLOCK_TABLE_ROOT} .bt-usage").inner_text()
    # A number of blocks the page does not take: the field says so and is marked; the view,
    # and the link, keep the 10 blocks they had, not a number typed on the way (the 6 of 65).
    blocks = tab.locator(f'{BLOCK_TABLE_ROOT} input[name="blocks"]')
    message = tab.locator(f"{BLOCK_TABLE_ROOT} .bt-invalid")
    expected_message = fill_in(labels["text"]["invalid"], label=labels["blocks"], least=2,
                               most=64, kept=10)
    for typed in ("0", "1", "65", ""):
        blocks.fill(typed)
        where = f"{language} {width}px: {typed!r}"
        assert blocks.get_attribute("aria-invalid") == "true", where
        assert message.is_visible() and message.text_content() == expected_message, where
        assert tab.locator(f"{BLOCK_TABLE_ROOT} .bt-error").is_hidden(), where
        assert component_outputs(tab, "block-table") == shown, where
    blocks.fill("")
    blocks.press_sequentially("65")
    assert blocks.get_attribute("aria-invalid") == "true"
    assert component_outputs(tab, "block-table") == shown
    state = link_state(tab)
    assert state.get("blocks", "10") == "10" and contract.expected(state) == shown
    blocks.fill("１２")
    assert blocks.get_attribute("aria-invalid") is None and message.is_hidden()
    state = link_state(tab)
    assert state["blocks"] == "12"
    assert component_outputs(tab, "block-table") == contract.expected(state)
    # At step 2 of 9, the page says what an operation there drops; adding a request drops
    # the 7 operations after it, says so, and brings them back on request.
    later = tab.locator(f"{BLOCK_TABLE_ROOT} .bt-later")
    listed = ", ".join(trace[2:6]) + ", …"
    assert later.is_visible()
    assert later.text_content() == fill_in(labels["text"]["later"], step=2, total=9, count=7,
                                           ops=listed)
    tab.click(f"{BLOCK_TABLE_ROOT} .bt-new button[type=submit]")
    dropped = tab.locator(f"{BLOCK_TABLE_ROOT} .bt-dropped")
    assert dropped.is_visible() and later.is_hidden()
    assert tab.locator(f"{BLOCK_TABLE_ROOT} .bt-dropped-text").text_content() == fill_in(
        labels["text"]["dropped"], count=7, step=2, ops=listed)
    state = link_state(tab)
    assert state["ops"] == ",".join(trace[:2] + ["C:30"])
    assert tab.evaluate("document.scrollingElement.scrollWidth") <= width
    tab.click(f"{BLOCK_TABLE_ROOT} .bt-undo")
    assert dropped.is_hidden() and later.is_visible()
    state = link_state(tab)
    assert (state["ops"], state["step"]) == (",".join(trace), "2")
    assert component_outputs(tab, "block-table") == contract.expected(state)
    assert tab.failed == [] and tab.off_site == []


# The request timeline on lesson 6's page (readers' walk): its requests field, the
# component's main input, spans the form's width under its label on a phone and a screen
# and shows the fence's requests whole; a Chinese input method's ／, 、 and ； are read as
# /, / and ; (parity.py's twin reads them alike); a field's message names its visible
# label; no display formula runs past a phone's screen; and the timeline's TTFT bar and
# token ticks differ in colour in the light and the dark scheme, as its caption tells them
# apart.
REQUEST_METRICS = components(ROOT)["request-metrics"]
RM_ROOT = '[data-component="request-metrics"]'
RM_LAYOUT = """root => {
  const form = root.querySelector('.rm-form').getBoundingClientRect();
  const field = root.querySelector('[name="requests"]');
  const label = field.closest('label').querySelector('span').getBoundingClientRect();
  const box = field.getBoundingClientRect();
  return {form: form.width, field: box.width, below: box.top >= label.bottom - 1,
          whole: field.scrollWidth <= field.clientWidth && field.scrollHeight <= field.clientHeight};
}"""
FORMULAS_OVERFLOWING = """() => [...document.querySelectorAll('article .katex-display')]
  .filter(d => d.scrollWidth > d.clientWidth + 1
               || d.querySelector('.katex').getBoundingClientRect().right
                  > document.documentElement.clientWidth)
  .map(d => d.textContent.slice(0, 40))"""
RM_COLOURS = """root => [root.querySelector('.rm-ttft'), root.querySelector('.rm-tick')]
  .map(e => getComputedStyle(e).backgroundColor)"""


def grey(colour: str) -> bool:
    """Whether a computed colour, rgb(a) of 0 to 255, is a grey: its channels within 16."""
    red, green, blue = (float(x) for x in re.findall(r"[\d.]+", colour)[:3])
    return max(red, green, blue) - min(red, green, blue) <= 16


@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS)
@pytest.mark.parametrize("language", ROOTS)
def test_request_metrics_field_separators_messages_formulas_and_colours(
        tabs, course_url, language, width):
    labels = REQUEST_METRICS.labels[language]
    contract = REQUEST_METRICS.parity()
    tab = tabs(width=width, scheme="light")
    tab.goto(course_url + ROOTS[language] + COMPONENT_PAGES["request-metrics"], wait_until="load")
    ready(tab, RM_ROOT)
    for scheme in ("light", "dark"):  # the reader's system switches; Material follows live
        tab.emulate_media(color_scheme=scheme)
        tab.wait_for_function(SCHEME_IS, arg=MATERIAL_SCHEME[scheme])
        where = f"{language} {width}px {scheme}"
        bar, tick = tab.locator(RM_ROOT).evaluate(RM_COLOURS)
        # Two shades of one blue read as one colour: one of them a grey, the other not.
        assert grey(bar) != grey(tick), f"{where}: the TTFT bar {bar}, the ticks {tick}"
    layout = tab.locator(RM_ROOT).evaluate(RM_LAYOUT)
    assert layout["field"] >= layout["form"] - 1, f"{where}: {layout}"
    assert layout["below"] and layout["whole"], f"{where}: {layout}"
    assert tab.evaluate(FORMULAS_OVERFLOWING) == [], where
    # A Chinese input method's separators, typed into the requests field.
    requests = tab.locator(f'{RM_ROOT} [name="requests"]')
    requests.fill("0／250／280；100、300、340;200/360")
    assert requests.get_attribute("aria-invalid") is None, where
    state = link_state(tab)
    assert state["requests"] == "0/250/280;100/300/340;200/360", where
    assert component_outputs(tab, "request-metrics") == contract.expected(state), where
    assert contract.expected({"requests": "0／250；100、300"}) == contract.expected(
        {"requests": "0/250;100/300"}) != "error"
    # A value the page does not take: the message names the field as the reader sees it.
    tab.fill(f'{RM_ROOT} [name="ttft"]', "0")
    assert tab.locator(f"{RM_ROOT} .rm-invalid").text_content() == fill_in(
        labels["invalid"], label=labels["ttft"], least=1, most=600000), where
    requests.fill("0/250,")
    message = tab.locator(f"{RM_ROOT} .rm-invalid").text_content()
    assert labels["invalid_requests"] in message and "；" in labels["invalid_requests"]
    assert tab.failed == [] and tab.off_site == []


# Lesson 8's bar on a phone (the reader's walk): each field's label was broken mid-name
# ("gpu_memory_utiliz/ation") beside its input, and of the bar's colours only the KV
# cache's had a swatch until "every part" was unfolded. Each label is one line, and each
# part of the bar shown has a swatch of its colour in view, the detail folded.
STARTUP_BAR = '[data-component="startup-memory-bar"]'
BAR_ON_A_PHONE = """root => {
  const lines = (element) => {
    const range = document.createRange();
    range.selectNodeContents(element);
    return new Set([...range.getClientRects()].map((box) => Math.round(box.top))).size;
  };
  const swatches = [...root.querySelectorAll('.smb-legend [data-part]')]
    .filter((swatch) => swatch.checkVisibility())
    .map((swatch) => getComputedStyle(swatch, '::before').color);
  return {
    folded: [...root.querySelectorAll('details')].every((more) => !more.open),
    broken: [...root.querySelectorAll('.ck-field span')]
      .filter((label) => lines(label) > 1).map((label) => label.textContent),
    unnamed: [...root.querySelectorAll('.smb-part')]
      .filter((part) => part.getBoundingClientRect().width > 0)
      .map((part) => [part.dataset.part, getComputedStyle(part).backgroundColor])
      .filter(([, colour]) => !swatches.includes(colour)).map(([part]) => part),
  };
}"""


@pytest.mark.parametrize("language", ROOTS)
def test_startup_bar_labels_whole_and_colours_named_on_a_phone(tabs, course_url, language):
    tab = tabs(width=WIDTHS["phone"])
    tab.goto(course_url + ROOTS[language] + COMPONENT_PAGES["startup-memory-bar"],
             wait_until="load")
    ready(tab, STARTUP_BAR)
    tab.evaluate("document.fonts.ready")
    found = tab.locator(STARTUP_BAR).evaluate(BAR_ON_A_PHONE)
    assert found == {"folded": True, "broken": [], "unnamed": []}
