"""Highlighted code with fewer elements, drawn the same.

Pygments wraps every token of a code block in a span of its token class: most of a lesson's
elements were those spans, and every one costs the browser parsing, styling and layout when
the page loads. Two classes draw nothing of their own: a name (`n`) takes the code's own colour
(Material's --md-code-hl-name-color is --md-code-fg-color) and white space (`w`) has no rule, so
their text goes in without a span. Operators and punctuation (`o`, `p`) share one colour in both
schemes (docs/stylesheets/course.css), so a run of them with only white space between becomes
one span. The text is unchanged; tests/hooks/test_code_tokens.py checks it, and checks in
Chromium that these classes draw as this hook assumes.
"""

import re

# A code block of pymdownx.highlight (not a notebook's, whose cells mkdocs-jupyter draws).
BLOCK = re.compile(r'(<div class="highlight">(?:<span class="filename">[^<]*</span>)?<pre[^>]*>)'
                   r"(.*?)(</pre>)", re.S)
PLAIN = re.compile(r'<span class="[nw]">([^<]*)</span>')
MARKS = re.compile(r'<span class="[op]">[^<]*</span>(?:\s*<span class="[op]">[^<]*</span>)+')
TAG = re.compile(r"<[^>]*>")


def fewer_spans(code: str) -> str:
    """A highlighted block's HTML without the spans that draw nothing of their own."""
    code = PLAIN.sub(r"\1", code)
    return MARKS.sub(lambda run: f'<span class="p">{TAG.sub("", run[0])}</span>', code)


def on_page_content(html, page, config, files):
    return BLOCK.sub(lambda block: block[1] + fewer_spans(block[2]) + block[3], html)
