"""The search index holds a page's prose, not its code: every page downloads the whole index.

Code blocks and recorded outputs (every `<pre>`: snippets, their outputs, the text diagrams,
notebook cells) were most of it, and KaTeX wrote each formula three times (MathML, its TeX
source, and the HTML drawn on screen). Material's search plugin leaves out an element marked
`data-search-exclude` (and removes the mark from the page it writes), so this hook marks them:
the `<pre>` blocks (and, on a notebook page, mkdocs-jupyter's copy of each cell's source and
its "Copied!" button), KaTeX's TeX annotation and its HTML rendering, which screen readers skip
too (aria-hidden). The MathML stays: a formula's letters and words are still in the index
once. A block's file name, the prose around it and inline `code` stay searchable.
It runs after hooks/katex.py (listed after it in mkdocs.yml), before the search plugin reads
the page (on_page_context).

Two more things readers search by. A page's front matter may list `aliases`, the words readers
type for its topic that its prose does not use (推测解码 for 投机解码): they go into the index
with the page's introduction, in a `hidden` paragraph that the page never shows. And a lesson
outranks the glossary entry and the interview question on its own topic (Material's
`search.boost`, LESSON_BOOST, unless the page's front matter sets one).
"""

import html
import re

from mkdocs.exceptions import PluginError

LESSON_BOOST = 2
H1_END = re.compile(r"</h1>")
MARK = ' data-search-exclude="prose-only"'
# The opening tags left out of the index; Material's plugin removes `data-search-*="..."`.
EXCLUDED = re.compile(r'<pre(?=[\s>])'
                      r'|<div class="(?:clipboard-copy-txt|zeroclipboard-container)"'
                      r'|<span class="katex-html"'
                      r'|<annotation encoding="application/x-tex"')


def prose_only(content: str) -> str:
    """The page's HTML with its code blocks and duplicate math markup marked for exclusion."""
    return EXCLUDED.sub(lambda m: m[0] + MARK, content)


def with_aliases(content: str, aliases) -> str:
    """The page's HTML with its aliases in a hidden paragraph after its title."""
    if not aliases:
        return content
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a for a in aliases):
        raise ValueError(f"aliases must be a list of words, got {aliases!r}")
    words = html.escape(" ".join(aliases))
    return H1_END.sub(lambda m: f'{m[0]}\n<p hidden data-search-aliases>{words}</p>', content,
                      count=1)


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri.startswith("lessons/") and page.file.src_uri.endswith(".md"):
        page.meta.setdefault("search", {}).setdefault("boost", LESSON_BOOST)
    return markdown


def on_page_content(content, page, config, files):
    try:
        content = with_aliases(content, page.meta.get("aliases"))
    except ValueError as error:
        raise PluginError(f"{page.file.src_uri}: {error}") from None
    return prose_only(content)
