"""Highlighted code with fewer elements (hooks/code_tokens.py): the same text, fewer spans, and
in Chromium the classes it drops or merges draw as it assumes, in both colour schemes."""

import re
from html import unescape

import markdown
import pytest

from coursekit import ROOT
from coursekit.code import load

code_tokens = load(ROOT / "hooks" / "code_tokens.py", "code_tokens_hook")
TAG = re.compile(r"<[^>]*>")

SOURCE = '''
```python title="demo.py"
def fits(blocks: int, needed) -> bool:
    """Whether `needed` fits."""
    return blocks >= needed and (needed, 1) != (0, -1)  # a comment
```

```text
plain output: 1, 2
```
'''


def highlighted() -> str:
    return markdown.markdown(SOURCE, extensions=["pymdownx.highlight", "pymdownx.superfences"])


def test_the_text_stays_and_the_spans_that_draw_nothing_go():
    before = highlighted()
    after = code_tokens.on_page_content(before, None, None, None)
    assert unescape(TAG.sub("", after)) == unescape(TAG.sub("", before))
    assert 'class="n"' in before and 'class="w"' in before
    assert 'class="n"' not in after and 'class="w"' not in after
    # "(needed, 1) != (0, -1)": a name between two marks keeps them apart, a run is one span.
    assert '<span class="p">) != (</span>' in after and '<span class="p">,</span>' in after
    assert after.count("<span") < before.count("<span") * 0.7


def test_every_code_block_of_the_site_lost_them(site):
    pages = sorted(site.glob("**/lessons/*/index.html"))
    assert pages
    for page in pages:
        blocks = re.findall(r'<div class="highlight">.*?</pre>', page.read_text("utf-8"), re.S)
        left = [block[:80] for block in blocks if re.search(r'<span class="[nw]">', block)]
        assert left == [], f"{page.relative_to(site)}: {left}"


# How a span of each token class draws in a code block, and a span of no class ("").
DRAWN = """() => {
  const code = document.querySelector('.md-typeset .highlight pre > code');
  const drawn = {};
  for (const kind of ['', 'n', 'w', 'o', 'p']) {
    const span = document.createElement('span');
    span.className = kind;
    span.textContent = 'x';
    code.prepend(span);
    drawn[kind] = getComputedStyle(span);
  }
  const look = (style) => [style.color, style.fontWeight, style.fontStyle, style.backgroundColor,
                           style.textDecorationLine].join(' ');
  return Object.fromEntries(Object.entries(drawn).map(([kind, style]) => [kind, look(style)]));
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_names_and_spaces_draw_as_the_code_and_operators_as_punctuation(page, site_url, scheme):
    page.emulate_media(color_scheme=scheme)
    page.goto(f"{site_url}/lessons/kv-cache/", wait_until="load")
    drawn = page.evaluate(DRAWN)
    assert drawn["n"] == drawn[""] and drawn["w"] == drawn[""], drawn
    assert drawn["o"] == drawn["p"], drawn
