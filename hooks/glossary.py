"""The glossary, from one data file (hooks/glossary.yml), in the language of each page.

The glossary page (docs/glossary.<language>.md) gets its entries where it holds MARKER. Every
other page gets a tooltip (an abbreviation) on each spelling a term lists in `match`, linked to
the term's entry on the glossary page.
"""

import re
from pathlib import Path

import yaml
from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

DATA = Path(__file__).with_name("glossary.yml")
MARKER = "<!-- glossary terms -->"
LANGUAGES = ("zh", "en")
ABBR = re.compile(r'<abbr title="[^"]*">([^<]+)</abbr>')
# Links, headings and the titles of admonitions and details keep their text as it is: no link
# inside a link, and no tooltip in a title (clicking a question must open its answer).
KEEP = re.compile(r'(<a\b.*?</a>|<h[1-6]\b.*?</h[1-6]>|<summary\b.*?</summary>'
                  r'|<p class="admonition-title">.*?</p>)', re.S)


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
    abbreviations = [f"*[{spelling}]: {term['definition'][language]}"
                     for term in TERMS for spelling in term["match"]]
    return markdown + "\n\n" + "\n".join(abbreviations) + "\n"


def on_page_content(html, page, config, files):
    if is_glossary(page):
        return html
    language = page.file.locale
    prefix = f"{language}/" if page.url.startswith(f"{language}/") else ""
    glossary = get_relative_url(f"{prefix}glossary/", page.url)
    anchors = {spelling: term["id"] for term in TERMS for spelling in term["match"]}

    def link(match):
        anchor = anchors.get(match[1])
        if anchor is None:
            return match[0]
        return f'<a class="glossary-term" href="{glossary}#{anchor}">{match[0]}</a>'

    parts = KEEP.split(html)
    return "".join(
        (part if part.startswith("<a") else ABBR.sub(r"\1", part)) if index % 2
        else ABBR.sub(link, part)
        for index, part in enumerate(parts)
    )
