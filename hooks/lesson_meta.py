"""What a reader sees under a lesson's title: "lesson n of N", a reading time, and what the
lesson teaches. Nothing per lesson is written for it:

- n and N are the lesson's place among the Markdown pages under docs/lessons/ in the nav
  (mkdocs.yml; a notebook, listed after the lessons, is no lesson);
- the reading time is counted from the page's source, its prose (code, includes, math and link targets
  left out) at READING_RATE;
- "what you will learn" is the lesson's own one-sentence summary (section 8), the paragraph
  that starts with `extra.lesson_meta.summary` of the language being built; in English it
  continues a sentence ("In one sentence: the KV cache ..."), so the box starts it with a
  capital (sentence_start).

Labels come from `extra.lesson_meta` of the language being built (mkdocs.yml).
"""

import math
import re
from pathlib import Path

from mkdocs.utils.meta import get_data

from coursekit.components import components
from coursekit.pages import fences

# Reading rates: Chinese characters and English words per minute, the mean rates of adults
# reading aloud in the IReST study (Trauzettel-Klosinski and Dietz, "Standardized Assessment of
# Reading Performance: The New International Reading Speed Texts IReST", IOVS 53(9), 2012,
# table 2). Silent reading is faster, but a lesson's prose is denser than the study's texts.
READING_RATE = {"cjk": 255, "word": 228}
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
WORD = re.compile(r"[A-Za-z0-9][\w'’.-]*")
FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,}).*?^\1\2[ \t]*$", re.M | re.S)
DROPPED = [re.compile(pattern, flags) for pattern, flags in (
    (r"<!--.*?-->", re.S),                      # comments
    (r"^[ \t]*--8<--.*$", re.M),                # snippet includes (code shown on the page)
    (r"\$\$.*?\$\$", re.S),                     # display math
    (r"`[^`\n]+`", 0),                          # code spans
    (r"\]\([^)]*\)", 0),                        # link targets
    (r"<[^>]+>", 0),                            # tags
    (r"^[ \t]*(?:!!!|\?\?\?\+?)[ \t]+\S+", re.M),  # admonition types
)]

# The sections the opening box links: the code (4) and the lab (5), by their headings.
SECTION = re.compile(r"^## (4|5) · (.+?)[ \t]*$", re.M)
SECTIONS = {"4": "code", "5": "lab"}

_lessons: dict[str, list[str]] = {}


def lesson_pages(nav) -> list[str]:
    """The lessons' source paths in nav order: Markdown pages under lessons/."""
    return [page.file.src_uri for page in nav.pages
            if page.file.src_uri.startswith("lessons/") and page.file.src_uri.endswith(".md")]


def on_nav(nav, config, files):
    _lessons[_language(config)] = lesson_pages(nav)
    return nav


def _language(config) -> str:
    return config.theme.get("language", "en")


def page_text(path: Path) -> str:
    """A page's source as its author wrote it, without its front matter."""
    return get_data(path.read_text("utf-8"))[0]


def reading_minutes(markdown: str) -> int:
    text = FENCE.sub("", markdown)
    for pattern in DROPPED:
        text = pattern.sub(" ", text)
    chars = len(CJK.findall(text))
    words = len(WORD.findall(CJK.sub(" ", text)))
    return max(1, math.ceil(chars / READING_RATE["cjk"] + words / READING_RATE["word"]))


def summary(markdown: str, marker: str) -> str | None:
    for paragraph in re.split(r"\n[ \t]*\n", markdown):
        if paragraph.startswith(marker):
            return " ".join(paragraph[len(marker):].split())
    return None


def shortcuts(page, config) -> list[tuple[str, str]]:
    """(label key, anchor) of the places a reader on a phone wants without scrolling 30
    screens: the lesson's first component (its fence's name is its id, hooks/components.py),
    its code (section 4) and its lab (section 5), in page order."""
    source = page_text(Path(page.file.abs_src_path))
    names = set(components(Path(config.config_file_path).parent))
    found = {}
    for fence in fences(page.file.src_uri, source):
        if fence.language in names:
            found.setdefault("component", (fence.line, fence.language))
    slugify = config.mdx_configs["toc"]["slugify"]
    for match in SECTION.finditer(source):
        plain = re.sub(r"[`*]", "", match[2])
        line = source.count("\n", 0, match.start()) + 1
        found[SECTIONS[match[1]]] = (line, slugify(f"{match[1]} · {plain}", "-"))
    return [(key, anchor) for key, (_, anchor) in sorted(found.items(), key=lambda item: item[1][0])]


def sentence_start(text: str) -> str:
    """An English sentence taken from the middle of one, with the capital it starts with:
    a first word in lower case only ("the", "a") gets one; a name keeping its capitals
    (vLLM), a code span or a number is left as written."""
    first = re.match(r"[a-z]+\b", text)
    return text[0].upper() + text[1:] if first else text


def on_page_markdown(markdown, page, config, files):
    lessons = _lessons.get(_language(config), [])
    where = page.file.src_uri
    if where not in lessons:
        return markdown
    labels = config.extra["lesson_meta"]
    learned = summary(markdown, labels["summary"])
    if learned and _language(config) == "en":
        learned = sentence_start(learned)
    position = labels["position"].format(n=lessons.index(where) + 1, total=len(lessons))
    minutes = labels["minutes"].format(
        minutes=reading_minutes(page_text(Path(page.file.abs_src_path))))
    meta = f'<p class="lesson-meta"><span>{position}</span><span>{minutes}</span></p>'
    block = [meta, ""]
    if learned:  # a lesson still being written has no summary yet (tests/test_build.py)
        block += [f'!!! abstract "{labels["learn"]}"', "", f"    {learned}", ""]
        ways = shortcuts(page, config)
        if ways:
            block += ["    " + labels["jump"] + " · ".join(f"[{labels[k]}](#{a})" for k, a in ways), ""]
    title = re.search(r"^# .*\n", markdown, re.M)
    at = title.end() if title else 0
    return markdown[:at] + "\n" + "\n".join(block) + "\n" + markdown[at:]


def on_page_content(html, page, config, files):
    """The menu, the previous and next links and the browser tab number the lessons
    ("3 · 连续批处理与分块预填充"): the page's title, set once its heading is read, before
    any page's menu is drawn. The heading on the page stays as written."""
    lessons = _lessons.get(_language(config), [])
    if page.file.src_uri in lessons and "title" not in page.meta:
        page.meta["title"] = f"{lessons.index(page.file.src_uri) + 1} · {page.title}"
    return html
