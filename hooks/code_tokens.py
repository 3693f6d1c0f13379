"""Highlighted code with fewer elements, drawn the same.

Pygments wraps every token of a code block in a span of its token class: most of a lesson's
elements were those spans, and every one costs the browser parsing, styling and layout when
the page loads. Two classes draw nothing of their own: a name (`n`) takes the code's own colour
(Material's --md-code-hl-name-color is --md-code-fg-color) and white space (`w`) has no rule, so
their text goes in without a span. Operators and punctuation (`o`, `p`) share one colour in both
schemes (docs/stylesheets/course.css), so a run of them with only white space between becomes
one span. The text is unchanged; tests/hooks/test_code_tokens.py checks it, and checks in
Chromium that these classes draw as this hook assumes.

Even so, a lesson's code was three quarters of its elements, and Lighthouse's phone scored the
lessons 58-81 for the work of styling them at load. So a page ships each block's text plain, its
colours as runs on the <code> element (data-colours="kn.4 1 nn.12": a class and a length, or a
length of plain text; lengths in UTF-16 code units, as a script counts them), and
docs/javascripts/code_colours.js puts the spans back when the block nears the screen. Plain and
coloured text take the same room (only colours differ), so the page does not move; without
scripts the code is all there, uncoloured. This happens to the written page, after the search
index took the page's text.
"""

import re
from html import unescape

# A code block of pymdownx.highlight (not a notebook's, whose cells mkdocs-jupyter draws).
BLOCK = re.compile(r'(<div class="highlight">(?:<span class="filename">[^<]*</span>)?<pre[^>]*>)'
                   r"(.*?)(</pre>)", re.S)
PLAIN = re.compile(r'<span class="[nw]">([^<]*)</span>')
MARKS = re.compile(r'<span class="[op]">[^<]*</span>(?:\s*<span class="[op]">[^<]*</span>)+')
TAG = re.compile(r"<[^>]*>")
CODE = re.compile(r"<code>(.*)</code>", re.S)
# A coloured token, or plain text; anything else (a nested span) leaves the block as it is.
RUN = re.compile(r'<span class="([\w-]+)">([^<]*)</span>|([^<]+)')


def fewer_spans(code: str) -> str:
    """A highlighted block's HTML without the spans that draw nothing of their own."""
    code = PLAIN.sub(r"\1", code)
    return MARKS.sub(lambda run: f'<span class="p">{TAG.sub("", run[0])}</span>', code)


def on_page_content(html, page, config, files):
    return BLOCK.sub(lambda block: block[1] + fewer_spans(block[2]) + block[3], html)


def runs(code: str) -> str | None:
    """A block's highlighted HTML as data-colours runs, or None if it is not flat spans."""
    found, at = [], 0
    for run in RUN.finditer(code):
        if run.start() != at:
            return None
        at = run.end()
        text = unescape(run[2] if run[1] else run[3])
        length = len(text.encode("utf-16-le")) // 2
        found.append(f"{run[1]}.{length}" if run[1] else str(length))
    return " ".join(found) if at == len(code) else None


def plain_until_seen(block: re.Match) -> str:
    """A highlighted block with its code's text plain and its colours as runs."""
    code = CODE.search(block[2])
    colours = runs(code[1]) if code and "<span" in code[1] else None
    if colours is None:
        return block[0]
    plain = f'<code data-colours="{colours}">{TAG.sub("", code[1])}</code>'
    return block[1] + block[2][:code.start()] + plain + block[2][code.end():] + block[3]


def on_post_page(output, page, config):
    return BLOCK.sub(plain_until_seen, output)
