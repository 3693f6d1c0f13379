"""The course's own fences, found and replaced in one place, at any indent: a fence may sit in a
tab (`=== "..."`), an admonition or a list item as well as at the start of a line.

A hook that renders fences offers `course_fences(config) -> {fence name: render}` (components,
charts, the GPU lab card, the lesson-code box), and render(body, page, config) returns what the
fence becomes: Markdown (a str), put in the fence's place at its indent, or HTML
(coursekit.pages.Html), which Markdown must not read. HTML stands in the page as a placeholder
paragraph until the page is HTML, and then takes its place, before any other hook reads it.
The fences are found as the tests find them (coursekit.pages.fences), so a fence shown inside a
longer fence (an example on the contributor guide) is left as it is.
"""

import re
import secrets
from itertools import count

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

from coursekit.pages import Html, fences

# A placeholder for HTML: letters and digits only, which Markdown and the glossary leave alone.
_NONCE, _numbers = secrets.token_hex(4).upper(), count()
PLACEHOLDER = re.compile(rf"(<p>)?(COURSEFENCE{_NONCE}N\d+)(</p>)?")
_html: dict[str, str] = {}  # placeholder -> HTML, from a page's Markdown to its HTML
_waiting: dict[str, list[str]] = {}  # page URL -> its placeholders


def renderers(config) -> dict:
    found = {}
    for hook in config.hooks.values():
        offered = getattr(hook, "course_fences", None)
        for name, render in (offered(config) if offered else {}).items():
            if name in found:
                raise PluginError(f"two hooks render a fence named {name!r}")
            found[name] = render
    return found


def on_page_markdown(markdown, page, config, files):
    known = renderers(config)
    where = page.file.src_uri
    lines = markdown.splitlines(keepends=True)
    waiting = _waiting.setdefault(page.url, [])
    # From the last fence to the first, so that the line numbers still to come stay right.
    for fence in reversed([f for f in fences(where, markdown) if f.language in known]):
        if fence.end_line > len(lines):
            raise PluginError(f"{fence}: this {fence.language} fence is not closed")
        if fence.info.strip() != fence.language:
            raise PluginError(f"{fence}: a {fence.language} fence takes no options on its first"
                              f" line ({fence.info.strip()!r}); write them inside, `key: value`")
        body = fence.expanded if fence.body.strip() else ""
        rendered = known[fence.language](body, page, config)
        if isinstance(rendered, Html):
            placeholder = f"COURSEFENCE{_NONCE}N{next(_numbers)}"
            _html[placeholder] = rendered
            waiting.append(placeholder)
            rendered = placeholder + "\n"
        # Blank lines around: Markdown must not join it to the paragraph before or after.
        indented = "".join(fence.indent + line if line.strip() else line
                           for line in rendered.splitlines(keepends=True))
        lines[fence.line - 1: fence.end_line] = ["\n", indented.rstrip("\n") + "\n", "\n"]
    return "".join(lines)


@event_priority(100)  # before every hook that reads the page's HTML, as if Markdown had kept it
def on_page_content(html, page, config, files):
    waiting = _waiting.pop(page.url, [])

    def put(match):
        if match[2] not in waiting:
            return match[0]
        waiting.remove(match[2])
        content = _html.pop(match[2])
        # Alone in its paragraph: the HTML replaces the paragraph; otherwise only itself.
        return content if match[1] and match[3] else (match[1] or "") + content + (match[3] or "")

    html = PLACEHOLDER.sub(put, html)
    if waiting:
        raise PluginError(f"{page.file.src_uri}: a course fence's HTML has no place in the page"
                          " (Markdown dropped its placeholder); put the fence in a paragraph of"
                          " its own")
    return html
