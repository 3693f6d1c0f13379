"""The glossary, from one data file (hooks/glossary.yml), in the language of each page.

The glossary page (docs/glossary.<language>.md) gets its entries where it holds MARKER. Every
other page gets a tooltip (an abbreviation) on each spelling a term lists in `match`, linked to
the term's entry on the glossary page: the first time the term appears in each section (h2),
not on every mention, which would make each one a stop for the keyboard.

The spellings are found here rather than by Markdown's abbr extension, whose whole-word match
never sees a Chinese word (Chinese has no spaces: "KV 缓存的" has no word boundary after 存).
A Latin edge of a spelling must not touch a letter or digit; a Chinese edge may touch anything.
The link sits inside the abbreviation, so that the tooltip also shows when the link has the
keyboard focus (Material shows it while the abbreviation contains the focus).
"""

import html as html_lib
import re
from pathlib import Path

import yaml
from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

DATA = Path(__file__).with_name("glossary.yml")
MARKER = "<!-- glossary terms -->"
LANGUAGES = ("zh", "en")
TOKEN = re.compile(r"(<!--.*?-->|<[^>]*>)", re.S)
TAG = re.compile(r"<(/?)([a-zA-Z][\w-]*)")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
# Text that keeps its words as they are: links (no link inside a link), headings and the
# titles of admonitions and details (no tooltip in a title: clicking a question must open its
# answer), code and the file name over a code block, math, a lesson's interactive component,
# and what is not prose.
KEEP = {"a", "abbr", "h1", "h2", "h3", "h4", "h5", "h6", "summary", "code", "pre", "kbd",
        "script", "style", "math", "svg", "textarea", "select", "option", "button"}
KEEP_CLASS = re.compile(r'\bclass="[^"]*\b(?:admonition-title|arithmatex|katex|filename)\b'
                        r'|\bdata-component=')
LATIN = re.compile(r"[A-Za-z0-9_]")


def load_terms(path: Path = DATA) -> list[dict]:
    terms = yaml.safe_load(path.read_text("utf-8"))
    seen = set()
    for number, term in enumerate(terms, 1):
        where = f"{path.name}, term {number} ({term.get('id', 'no id')})"
        missing = [key for key in ("id", *LANGUAGES, "match", "definition")
                   if key not in term]
        missing += [f"definition.{language}" for language in LANGUAGES
                    if language not in term.get("definition", {})]
        if missing:
            raise PluginError(f"{where}: missing {', '.join(missing)}")
        if term["id"] in seen:
            raise PluginError(f"{where}: the id {term['id']!r} is used twice")
        seen.add(term["id"])
    return terms


TERMS = load_terms()


def is_glossary(page) -> bool:
    return page.file.src_uri.startswith("glossary.")


def entries(language: str) -> str:
    other = "en" if language == "zh" else "zh"

    def title(term):
        same = term[language] == term[other]
        return term[language] if same else f"{term[language]} · {term[other]}"

    return "\n\n".join(
        f"### {title(term)} {{#{term['id']}}}\n\n{term['definition'][language]}"
        for term in TERMS
    )


def on_page_markdown(markdown, page, config, files):
    language = page.file.locale
    if is_glossary(page):
        if MARKER not in markdown:
            raise PluginError(f"{page.file.src_uri}: the glossary page needs the line {MARKER}")
        return markdown.replace(MARKER, entries(language))
    return markdown


def spelling_pattern(spellings) -> re.Pattern:
    """One pattern for every spelling, longest first; a Latin edge must not touch a letter or
    digit, a space may be any run of white space (a line break in the source)."""
    alternatives = []
    for spelling in sorted(spellings, key=len, reverse=True):
        body = r"\s+".join(re.escape(word) for word in spelling.split())
        before = r"(?<![A-Za-z0-9_])" if LATIN.match(spelling[0]) else ""
        after = r"(?![A-Za-z0-9_])" if LATIN.match(spelling[-1]) else ""
        alternatives.append(before + body + after)
    return re.compile("|".join(alternatives))


SPELLINGS = {spelling: term for term in TERMS for spelling in term["match"]}
PATTERN = spelling_pattern(SPELLINGS)


def on_page_content(html, page, config, files):
    if is_glossary(page):
        return html
    language = page.file.locale
    prefix = f"{language}/" if page.url.startswith(f"{language}/") else ""
    glossary = get_relative_url(f"{prefix}glossary/", page.url)
    seen = set()  # the terms already linked in this section

    def link(match):
        term = SPELLINGS[" ".join(match[0].split())]
        if term["id"] in seen:
            return match[0]
        seen.add(term["id"])
        title = html_lib.escape(term["definition"][language])
        return (f'<abbr title="{title}"><a class="glossary-term"'
                f' href="{glossary}#{term["id"]}">{match[0]}</a></abbr>')

    parts, open_tags = TOKEN.split(html), []  # open_tags: (name, keeps its text)
    for index, part in enumerate(parts):
        if index % 2 == 0:
            if part and not any(keep for _, keep in open_tags):
                parts[index] = PATTERN.sub(link, part)
            continue
        tag = TAG.match(part)
        if tag is None or tag[2].lower() in VOID or part.endswith("/>"):
            continue
        name = tag[2].lower()
        if tag[1]:  # a closing tag closes the last element of its name
            for depth in range(len(open_tags) - 1, -1, -1):
                if open_tags[depth][0] == name:
                    del open_tags[depth:]
                    break
            continue
        if name in ("h1", "h2"):
            seen.clear()
        if name == "option" and open_tags and open_tags[-1][0] == "option":
            open_tags.pop()  # an <option> ends where the next one starts
        open_tags.append((name, name in KEEP or bool(KEEP_CLASS.search(part))))
    return "".join(parts)
