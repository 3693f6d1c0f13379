"""Highlighted code with fewer elements (hooks/code_tokens.py): the same text, fewer spans, and
in Chromium the classes it drops or merges draw as it assumes, in both colour schemes; a page
ships its code plain, and docs/javascripts/code_colours.js colours a block as it nears the
screen, with the same text in the same room."""

import re
from html import escape, unescape
from pathlib import PurePosixPath

import markdown
import pytest

from coursekit import ROOT
from coursekit.code import load
from coursekit.pages import lessons_in_nav

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


def coloured_again(runs: str, text: str) -> str:
    """What code_colours.js builds from a block's runs and its text, as HTML."""
    pieces, at = [], 0
    for run in runs.split():
        kind, _, length = run.rpartition(".")
        piece = text.encode("utf-16-le")[2 * at:2 * (at + int(length))].decode("utf-16-le")
        at += int(length)
        pieces.append(f'<span class="{kind}">{escape(piece, quote=False)}</span>' if kind
                      else escape(piece, quote=False))
    return "".join(pieces)


def test_a_page_ships_its_code_plain_and_its_colours_as_runs():
    source = SOURCE.replace("a comment", "a comment, 2 < 3 & 😀 ok")
    html = markdown.markdown(source, extensions=["pymdownx.highlight", "pymdownx.superfences"])
    coloured = code_tokens.on_page_content(html, None, None, None)
    page = code_tokens.on_post_page(coloured, None, None)
    python, output = re.findall(r'<div class="highlight">.*?</div>', page, re.S)
    runs, code = re.search(r'<code data-colours="([^"]*)">(.*?)</code>', python, re.S).groups()
    assert "<span" not in code and len(runs.split()) > 10
    # The runs give back the colours the page had, character for character (an emoji is two
    # UTF-16 code units, as a script counts it).
    before = re.search(r"<code>(.*?)</code>", coloured, re.S)[1]
    assert coloured_again(runs, unescape(code)) == before.replace("&quot;", '"')
    # A block with nothing to colour (the output) stays as it was.
    assert output in coloured and "data-colours" not in output


def test_every_lesson_ships_its_code_plain(site):
    lessons = [PurePosixPath(page).stem for page in lessons_in_nav(ROOT)]
    pages = [site / root / "lessons" / lesson / "index.html"
             for root in ("", "en") for lesson in lessons]
    for page in pages:
        blocks = re.findall(r'<div class="highlight">.*?</div>', page.read_text("utf-8"), re.S)
        coloured = [block[:80] for block in blocks if re.search(r"<code[^>]*>[^<]*<span", block)]
        assert blocks and coloured == [], f"{page.relative_to(site)}: {coloured}"
        assert sum("<code data-colours=" in block for block in blocks) > 0, page


# Every code block's text and height; `coloured` counts the blocks with colours.
BLOCKS = """() => {
  const blocks = [...document.querySelectorAll('article div.highlight')]
    .filter((block) => block.querySelector(':scope > pre > code'));
  return blocks.map((block) => {
    const code = block.querySelector(':scope > pre > code');
    return {text: code.textContent, height: block.getBoundingClientRect().height,
            runs: code.getAttribute('data-colours'), html: code.innerHTML,
            coloured: code.querySelector('span') !== null,
            waiting: code.hasAttribute('data-colours'),
            shown: block.checkVisibility()};
  });
}"""


def test_a_block_is_coloured_near_the_screen_with_the_same_text_in_the_same_room(tabs, site_url):
    tab = tabs(width=390, has_touch=True, is_mobile=True)
    problems = []
    for lesson in (PurePosixPath(page).stem for page in lessons_in_nav(ROOT)):
        tab.goto(f"{site_url}/lessons/{lesson}/", wait_until="load")
        tab.evaluate("() => new Promise((done) => requestAnimationFrame(() => setTimeout(done)))")
        on_load = tab.evaluate(BLOCKS)
        # Far below the screen, a block waits; one scrolled to is coloured (one not in a closed
        # box or another tab, which waits until it is shown).
        waiting = [index for index, block in enumerate(on_load)
                   if block["waiting"] and block["shown"]]
        if not waiting:
            problems.append(f"{lesson}: no block waits for its colours on load")
            continue
        tab.locator("article div.highlight:has(> pre > code)").nth(waiting[-1]).scroll_into_view_if_needed()
        tab.wait_for_function(
            "(index) => document.querySelectorAll('article div.highlight:has(> pre > code)')"
            "[index].querySelector(':scope > pre > code span') !== null", arg=waiting[-1])
        # Printing colours them all.
        tab.evaluate("() => dispatchEvent(new Event('beforeprint'))")
        printed = tab.evaluate(BLOCKS)
        for index, (before, after) in enumerate(zip(on_load, printed, strict=True)):
            if after["waiting"] or (before["waiting"] and not after["coloured"]):
                problems.append(f"{lesson}: block {index} is not coloured when printed")
            if before["runs"] and after["html"] != coloured_again(before["runs"], before["text"]):
                problems.append(f"{lesson}: block {index} is not coloured as its runs say")
            if (after["text"], after["height"]) != (before["text"], before["height"]):
                problems.append(f"{lesson}: block {index} changed: {before['height']} px,"
                                f" {after['height']} px; text equal: {after['text'] == before['text']}")
    assert not problems, "\n".join(problems)


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
