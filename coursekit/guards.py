"""Guards against drift. Each takes a repository (or built site) and returns its problems.

tests/test_guards.py asserts that the course has none, and shows each guard failing on a
broken copy.
"""

from __future__ import annotations

import re
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

from pytest_examples import find_examples

from coursekit import code, components, gpu_labs, numbers
from coursekit.browser import VOID_ELEMENTS
from coursekit.pages import (
    OTHER_LANGUAGES,
    PYTHON,
    fence_lines,
    languages,
    mkdocs_config,
    pages,
    python_blocks,
)
from coursekit.translations import SOURCE_LANGUAGE, is_stale, recorded_hash

ADMONITION = re.compile(r"^[ \t]*(?:!!!|\?\?\?\+?)[ \t]+[\w-]+(?P<title>[ \t]+\".*\")?[ \t]*$")
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
# An include line that pymdownx.snippets did not replace (prose may mention the marker).
LEFTOVER_INCLUDE = re.compile(r"^[ \t]*-+8<-+[ \t]+([\"']).+?\1[ \t]*$", re.M)
LITERAL_BLOCK = re.compile(r'<div class="highlight"[^>]*\bdata-literal="[^"]*"[^>]*>.*?</div>', re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")
CHART_NAME = re.compile(r"^```chart[ \t]*\nname: *(\S+)", re.M)


def fence_languages(root: Path) -> list[str]:
    """The typo guard: every fence is of a language the course knows."""
    known = PYTHON | OTHER_LANGUAGES | set(components.components(root))
    return [
        f"{fence}: unknown fence language {fence.language!r} (info string {fence.info!r});"
        f" the course knows {', '.join(sorted(known))}"
        for page in pages(root)
        for fence in page.fences
        if fence.language not in known
    ]


def collector_sees_every_python_block(root: Path) -> list[str]:
    """pytest-examples, the one collector, must see every fence that reads as Python."""
    problems = []
    for page in pages(root):
        collected = {example.start_line for example in find_examples(page.path)}
        problems += [
            f"{fence}: pytest-examples does not see this Python block"
            f" (info string {fence.info!r}); open it with ```python"
            for fence in page.fences
            if fence.language in PYTHON and fence.line not in collected
        ]
    return problems


def python_block_rules(root: Path) -> list[str]:
    return [problem for page in pages(root) for problem in python_blocks(page)[1]]


def every_page_in_every_language(root: Path) -> list[str]:
    wanted = set(languages(root))
    found = defaultdict(set)
    for page in pages(root):
        found[page.name].add(page.language)
    return [
        f"docs/{name}: missing in {', '.join(sorted(wanted - have))}"
        for name, have in sorted(found.items())
        if have != wanted
    ]


def languages_match(root: Path) -> list[str]:
    """The language versions of a page have the same sections, snippets and figures."""
    by_name = defaultdict(list)
    for page in pages(root):
        by_name[page.name].append(page)
    problems = []
    for name, versions in sorted(by_name.items()):
        first, *others = versions
        for other in others:
            for what, shape in (
                ("snippet includes", lambda page: page.includes),
                ("headings", lambda page: page.headings),
                ("figures", lambda page: IMAGE.findall(page.source)),
                ("code blocks and components", lambda page: [
                    fence.language for fence in page.fences]),
                ("charts", lambda page: CHART_NAME.findall(page.source)),
            ):
                if shape(first) != shape(other):
                    problems.append(
                        f"docs/{name}: {first.language} and {other.language} differ in {what}:"
                        f" {shape(first)} vs {shape(other)}"
                    )
    return problems


def snippets_are_used(root: Path) -> list[str]:
    """Every file readers get from a snippet folder is shown by a page, or read by a module
    that is (a data file such as model_presets.json)."""
    used = {include for page in pages(root) for include in page.includes}
    snippets = root / "snippets"
    shown = [snippets / include for include in used if include.endswith(".py")]
    used |= {path.relative_to(snippets).as_posix() for module in shown if module.is_file()
             for path in code.data_files(module)}
    return [
        f"snippets/{path}: no page includes it"
        for path in sorted(
            file.relative_to(snippets).as_posix()
            for folder in code.folders(root)
            for file in code.reader_files(folder)
        )
        if path not in used
    ]


def lesson_pages_offer_their_code(root: Path) -> list[str]:
    """A lesson page with a snippet folder offers that folder's code for download, once."""
    problems = []
    for page in pages(root):
        slug = page.name.removeprefix("lessons/")
        if slug == page.name or not (root / "snippets" / slug).is_dir():
            continue
        offered = [fence.body.strip() for fence in page.fences if fence.language == "lesson-code"]
        if offered != [f"snippets: {slug}"]:
            problems.append(f"docs/{page.relative}: a lesson page shows one ```lesson-code fence"
                            f" holding `snippets: {slug}`, not {offered}")
    return problems


def nav_is_translated(root: Path) -> list[str]:
    config = mkdocs_config(root)
    titles = []

    def walk(items):
        for item in items:
            if isinstance(item, dict):
                for title, value in item.items():
                    titles.append(title)
                    if isinstance(value, list):
                        walk(value)

    walk(config.nav or [])
    problems = []
    for language in config.plugins["i18n"].config.languages:
        if language.default:
            continue
        translations = language.nav_translations or {}
        problems += [
            f"mkdocs.yml: nav title {title!r} has no {language.locale} nav_translations entry"
            for title in titles
            if title not in translations
        ]
    return problems


def admonitions_have_titles(root: Path) -> list[str]:
    """Without a title, an admonition shows its English type name on every language's page."""
    return [
        f"docs/{page.relative}:{number}: admonition without a title: {line.strip()!r}"
        for page in pages(root)
        for number, line in enumerate(page.source.splitlines(), 1)
        if (match := ADMONITION.match(line)) and not match["title"]
    ]


def english_pages_have_no_chinese(root: Path) -> list[str]:
    """Catches a page copied but not translated (code blocks may quote anything)."""
    return [
        f"docs/{page.relative}:{number}: Chinese text on an English page: {line.strip()[:60]!r}"
        for page in pages(root)
        if page.language == "en"
        for number, line in enumerate(page.source.splitlines(), 1)
        if number not in fence_lines(page.source) and CJK.search(line)
    ]


def stale_translations(root: Path) -> list[str]:
    """Translated pages whose source page changed after they were translated. Listed, not
    failed: the site shows these pages with a notice until someone translates the change."""
    return [
        f"docs/{page.relative}: its {SOURCE_LANGUAGE} source changed since it was translated"
        for page in pages(root)
        if page.language != SOURCE_LANGUAGE and is_stale(page.path, recorded_hash(page.source))
    ]


def component_labels_match(root: Path) -> list[str]:
    return components.label_problems(root, languages(root))


REPOSITORY_CHECKS = (
    fence_languages,
    collector_sees_every_python_block,
    python_block_rules,
    every_page_in_every_language,
    languages_match,
    snippets_are_used,
    lesson_pages_offer_their_code,
    nav_is_translated,
    admonitions_have_titles,
    english_pages_have_no_chinese,
    code.clashes,
    component_labels_match,
    gpu_labs.contract_problems,
    numbers.prose_numbers,
)


class _Html(HTMLParser):
    """The text (all of it, and the part outside <pre>/<code>), every URL the page loads (not
    the links it shows), and the Chinese text whose language, as the nearest lang attribute
    says, is not Chinese (a screen reader would read it with another language's voice)."""

    LOADS = {("script", "src"), ("img", "src"), ("link", "href"), ("iframe", "src"),
             ("source", "src"), ("video", "src"), ("audio", "src"), ("object", "data")}
    UNREAD = {"script", "style", "svg", "math"}  # text no screen reader reads as prose
    HAN = re.compile(r"[\u3400-\u9fff]")

    def __init__(self):
        super().__init__()
        self.text, self.all_text, self.loads, self.depth = [], [], [], 0
        self.open, self.chinese_without_lang = [], []  # open elements: (tag, lang or None)

    def language(self) -> str:
        return next((lang for _, lang in reversed(self.open) if lang is not None), "")

    def handle_starttag(self, tag, attrs):
        if tag in ("pre", "code"):
            self.depth += 1
        attrs = dict(attrs)
        if tag not in VOID_ELEMENTS:
            self.open.append((tag, attrs.get("lang")))
        for name in ("src", "href", "data", "srcset"):
            if (tag, name) in self.LOADS and attrs.get(name):
                if tag == "link" and attrs.get("rel") in ("canonical", "alternate"):
                    continue
                self.loads.append(attrs[name])
        if attrs.get("style"):
            self.loads += re.findall(r"url\(['\"]?([^'\")]+)", attrs["style"])

    def handle_endtag(self, tag):
        if tag in ("pre", "code") and self.depth:
            self.depth -= 1
        opened = [name for name, _ in self.open]
        if tag in opened:  # closes it and whatever was left open inside it
            del self.open[len(opened) - 1 - opened[::-1].index(tag):]

    def handle_data(self, data):
        self.all_text.append(data)
        if not self.depth:
            self.text.append(data)
        if (self.HAN.search(data) and not self.language().startswith("zh")
                and not any(name in self.UNREAD for name, _ in self.open)):
            self.chinese_without_lang.append(data.strip()[:30])


EMPTY_HEADER = re.compile(r"<th\b[^>]*>\s*</th>")
# A formula hooks/katex.py left as TeX, or one KaTeX could not parse.
UNRENDERED_FORMULA = re.compile(r'class="arithmatex">(?!<span class="katex)|class="katex-error"')


def built_html(site: Path) -> list[str]:
    """Leftover snippet markers, stray fences, formulas left as TeX, Chinese text not marked
    as Chinese, empty column headers and off-site loads in the built HTML pages."""
    problems = []
    for html_file in sorted(site.rglob("*.html")):
        where = html_file.relative_to(site).as_posix()
        # A code block marked data-literal shows the snippet syntax on purpose (contributing).
        html = LITERAL_BLOCK.sub("", html_file.read_text("utf-8"))
        parser = _Html()
        parser.feed(html)
        text = "".join(parser.text)
        home = _site_path(site)
        if LEFTOVER_INCLUDE.search("".join(parser.all_text)):
            problems.append(f"{where}: leftover snippet marker --8<--")
        if re.search(r"```|~~~", text):
            problems.append(f"{where}: a stray code fence is shown as text")
        if UNRENDERED_FORMULA.search(html):
            problems.append(f"{where}: a formula was not rendered by KaTeX")
        if parser.chinese_without_lang:
            problems.append(f"{where}: Chinese text without lang=zh: {parser.chinese_without_lang[:3]}")
        if EMPTY_HEADER.search(html):
            problems.append(f"{where}: a table column has an empty header: a screen reader"
                            " reads its cells with no header (axe: td-has-header)")
        for url in parser.loads:
            if urlparse(url).netloc or url.startswith("//"):
                problems.append(f"{where}: loads {url} from another host")
            elif (not url.startswith("data:")
                  and not _local_file(site, html_file, url, home).is_file()):
                problems.append(f"{where}: loads {url}, which the site does not have")
    return problems


CANONICAL = re.compile(r'<link rel="canonical" href="([^"]+)"')


def _site_path(site: Path) -> str:
    """The URL path the site is published under (site_url's, e.g. /course/), as its home page's
    canonical link says; absolute links in the built pages (the 404 page's) start with it."""
    home = site / "index.html"
    found = CANONICAL.search(home.read_text("utf-8")) if home.is_file() else None
    return urlparse(found[1]).path if found else "/"


def _in_site(path: str, home: str) -> str:
    """A URL path as a path inside the site folder; outside the site's path, a missing one."""
    return "/" + path[len(home):] if path.startswith(home) else "/outside-the-site" + path


def _local_file(site: Path, page: Path, url: str, home: str = "/") -> Path:
    page_url = "http://site" + home + page.relative_to(site).as_posix()
    path = _in_site(unquote(urlparse(urljoin(page_url, url)).path), home)
    target = site / path.lstrip("/")
    return target / "index.html" if path.endswith("/") else target


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])


def _parse_links(html_file: Path) -> _Links:
    parser = _Links()
    parser.feed(html_file.read_text("utf-8"))
    return parser


def _parsed_pages(site: Path) -> dict[str, _Links]:
    return {html.relative_to(site).as_posix(): _parse_links(html)
            for html in sorted(site.rglob("*.html"))}


def site_links(site: Path) -> dict[str, list[str]]:
    """Every <a href> of every built page, by page (relative to the site)."""
    return {page: parsed.links for page, parsed in _parsed_pages(site).items()}


def broken_links(site: Path) -> list[str]:
    """Internal links whose page or anchor does not exist in the built site."""
    problems, home = [], _site_path(site)
    parsed = _parsed_pages(site)
    for page, found in parsed.items():
        base = "http://site" + home + page
        for href in found.links:
            url = urlparse(urljoin(base, href))
            if url.netloc != "site" or url.scheme != "http":
                continue
            target_file = _local_file(site, site / page, href, home)
            if not target_file.is_file():
                problems.append(f"{page}: link {href} leads to no page")
                continue
            if url.fragment and target_file.suffix == ".html":
                target = parsed.get(target_file.relative_to(site).as_posix())
                ids = target.ids if target else _parse_links(target_file).ids
                if unquote(url.fragment) not in ids:
                    problems.append(f"{page}: link {href} leads to no anchor")
    return problems


def external_links(site: Path) -> dict[str, list[str]]:
    """External link -> the pages that show it."""
    found = defaultdict(list)
    for page, links in site_links(site).items():
        for href in links:
            if urlparse(href).scheme in ("http", "https"):
                found[href].append(page)
    return dict(sorted(found.items()))
