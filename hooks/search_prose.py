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
"""

import re

MARK = ' data-search-exclude="prose-only"'
# The opening tags left out of the index; Material's plugin removes `data-search-*="..."`.
EXCLUDED = re.compile(r'<pre(?=[\s>])'
                      r'|<div class="(?:clipboard-copy-txt|zeroclipboard-container)"'
                      r'|<span class="katex-html"'
                      r'|<annotation encoding="application/x-tex"')


def prose_only(content: str) -> str:
    """The page's HTML with its code blocks and duplicate math markup marked for exclusion."""
    return EXCLUDED.sub(lambda m: m[0] + MARK, content)


def on_page_content(content, page, config, files):
    return prose_only(content)
