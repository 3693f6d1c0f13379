"""The course's fences (hooks/fences.py) render where Markdown lets a fence sit: in a tab and in
an admonition as well as at the start of a line, through the site's own hooks and Markdown
extensions (mkdocs.yml)."""

from html.parser import HTMLParser
from textwrap import indent
from types import SimpleNamespace

import markdown
import pytest
from mkdocs.exceptions import PluginError

from coursekit import ROOT
from coursekit.pages import mkdocs_config

SITE = mkdocs_config(ROOT)
FENCES = SITE.hooks["hooks/fences.py"]

# A fence of each kind, with a body a lesson uses, and how its rendering shows in the HTML:
# an element's (tag, attribute, words the value holds).
SHOWN = {
    "component": ("```kv-explorer\nmodel: Qwen2.5-7B-Instruct\n```\n",
                  ("div", "data-component", "kv-explorer")),
    "chart": ("```chart\nname: quant-weight-gib\nalt: 权重\n```\n", ("p", "class", "course-chart")),
    "gpu-lab": ("```gpu-lab\nmin_vram: 24 GB\ncard: RTX 4090\ntime_cost: 30 分钟\nplatform: CUDA\n"
                "other_platforms: 无\n```\n", ("div", "class", "admonition gpu-lab")),
    "lesson-code": ("```lesson-code\nsnippets: kv-cache\n```\n", ("div", "class", "admonition example")),
}
# Where the fence sits, and the element it must then be inside.
PLACES = {
    "line start": (lambda fence: fence, ("article", "class", "page")),
    "tab": (lambda fence: '=== "一"\n\n    前文。\n\n=== "二"\n\n' + indent(fence, "    "),
            ("div", "class", "tabbed-block")),
    "admonition": (lambda fence: '!!! note "注"\n\n    前文。\n\n' + indent(fence, "    "),
                   ("div", "class", "admonition note")),
}


class Ancestry(HTMLParser):
    """For each element that matches `wanted`, the elements it sits in."""

    VOID = {"img", "br", "hr", "input", "link", "meta", "source", "wbr", "col", "area"}

    def __init__(self, wanted):
        super().__init__()
        self.wanted, self.open, self.found = wanted, [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if matches((tag, attrs), self.wanted):
            self.found.append(list(self.open))
        if tag not in self.VOID:
            self.open.append((tag, attrs))

    def handle_endtag(self, tag):
        while self.open and self.open.pop()[0] != tag:
            pass


def matches(element, pattern) -> bool:
    tag, attrs = element
    want_tag, attribute, words = pattern
    return tag == want_tag and set(words.split()) <= set((attrs.get(attribute) or "").split())


def rendered(source: str, language: str = "zh") -> str:
    """A lesson page's Markdown as the site turns it into HTML, fences and all."""
    extra = next(lang.extra for lang in SITE.plugins["i18n"].config.languages if lang.locale == language)
    config = SimpleNamespace(hooks=SITE.hooks, extra=extra, config_file_path=SITE.config_file_path,
                             docs_dir=SITE.docs_dir)
    page = SimpleNamespace(file=SimpleNamespace(src_uri=f"lessons/kv-cache.{language}.md",
                                                locale=language), url="lessons/kv-cache/")
    text = FENCES.on_page_markdown(source, page=page, config=config, files=None)
    html = markdown.Markdown(extensions=SITE.markdown_extensions,
                             extension_configs=SITE.mdx_configs).convert(text)
    return FENCES.on_page_content(f'<article class="page">{html}</article>', page=page,
                                  config=config, files=None)


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("kind", SHOWN)
def test_a_course_fence_renders_in_a_tab_and_an_admonition(kind, place):
    fence, shown = SHOWN[kind]
    wrap, container = PLACES[place]
    html = rendered(f"# 页\n\n{wrap(fence)}\n后文。\n")
    parser = Ancestry(shown)
    parser.feed(html)
    assert len(parser.found) == 1, f"{kind} in a {place}: not rendered once:\n{html[:3000]}"
    assert any(matches(element, container) for element in parser.found[0]), (
        f"{kind} in a {place}: rendered outside it:\n{html[:3000]}")
    assert "```" not in html and "COURSEFENCE" not in html


def test_a_fence_shown_inside_a_longer_fence_stays_as_written():
    html = rendered("````text\n```chart\nname: nothing-drawn\nalt: x\n```\n````\n")
    assert "```chart" in html and "course-chart" not in html


def test_an_unclosed_course_fence_fails_the_build():
    with pytest.raises(PluginError, match="not closed"):
        rendered('!!! note "注"\n\n    ```chart\n    name: quant-weight-gib\n')
