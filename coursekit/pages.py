"""The course as the tests see it: its pages, their code fences and their snippet includes.

Pages are expanded with the pymdownx.snippets configuration of mkdocs.yml, so a test sees
exactly the text that MkDocs renders.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import markdown
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig
from pytest_examples import find_examples

from coursekit import ROOT

# Opening fence: indent, fence run (``` or ~~~), info string.
FENCE_OPEN = re.compile(r"^(?P<indent> *)(?P<run>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*)$")
INCLUDE = re.compile(r"""^[ \t]*-+8<-+[ \t]+(["'])(?P<path>.+?)\1[ \t]*$""", re.M)
HEADING = re.compile(r"^(#{1,6})[ \t]+\S")

PYTHON = {"python", "py", "python3", "py3"}
# Every other fence language the course uses besides the lessons' components (gpu-lab is the
# lab card, chart a lesson's chart, lesson-code the download of a lesson's code); any other
# word (a typo) is a problem.
OTHER_LANGUAGES = {"text", "bash", "console", "json", "gpu-lab", "chart", "lesson-code"}


class Html(str):
    """What a course fence becomes when that is HTML, which Markdown must leave as it is (a
    component, a chart); a plain str is Markdown (the GPU lab card). hooks/fences.py."""


@dataclass(frozen=True)
class Fence:
    page: str  # the page's path from the repository root
    line: int  # 1-based line of the opening fence in the page
    info: str  # the whole info string, e.g. `python title="x.py"`
    body: str  # the text between the fences, as written in the page
    expanded: str  # the body as shown: snippets included, indent and trailing blank lines removed
    indent: str = ""  # the opening fence's, in tabs, admonitions and lists

    @property
    def language(self) -> str:
        words = self.info.strip(" {}").split()
        return words[0].lstrip(".").lower() if words else ""

    @property
    def attrs(self) -> dict[str, str]:
        return {
            key: value for key, _, value in re.findall(r'([\w-]+)=(["\'])(.*?)\2', self.info)
        }

    @property
    def end_line(self) -> int:
        """1-based line of the closing fence."""
        return self.line + self.body.count("\n") + 1

    @property
    def include(self) -> str | None:
        """The snippet path when the whole body is one include line."""
        match = INCLUDE.fullmatch(self.body.strip("\n"))
        return match["path"] if match else None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True)
class Block:
    """A Python block of a page and the output block that the page shows right after it."""

    code: Fence
    output: Fence | None  # None for a GPU lab, which is listed but not run offline

    @property
    def gpu(self) -> bool:
        return self.code.attrs.get("data-run") == "gpu"

    def __str__(self) -> str:
        return str(self.code)


@dataclass(frozen=True)
class Page:
    path: Path
    root: Path

    @property
    def name(self) -> str:
        """The page without its language, e.g. `lessons/kv-cache`."""
        return self.relative.rsplit(".", 2)[0]

    @property
    def language(self) -> str:
        return self.path.name.rsplit(".", 2)[1]

    @property
    def relative(self) -> str:
        return self.path.relative_to(self.root / "docs").as_posix()

    @property
    def html(self) -> str:
        """Where the page lands in the built site (directory URLs, one folder per language)."""
        prefix = "" if self.language == default_language(self.root) else f"{self.language}/"
        folder = "" if self.name == "index" else f"{self.name.removesuffix('/index')}/"
        return f"{prefix}{folder}index.html"

    @property
    def source(self) -> str:
        return self.path.read_text("utf-8")

    @property
    def expanded(self) -> str:
        return expand(self.root, self.source)

    @property
    def fences(self) -> list[Fence]:
        return fences(f"docs/{self.relative}", self.source, lambda body: expand(self.root, body))

    @property
    def includes(self) -> list[str]:
        return [match["path"] for match in INCLUDE.finditer(self.source)]

    @property
    def headings(self) -> list[str]:
        """The heading marks (`#`, `##`, ...) outside code fences, in order."""
        inside = fence_lines(self.source)
        return [
            match[1]
            for number, line in enumerate(self.source.splitlines(), 1)
            if number not in inside and (match := HEADING.match(line))
        ]


def python_blocks(page: Page) -> tuple[list[Block], list[str]]:
    """The page's Python blocks, as pytest-examples collects them (the one collector), each
    with the output block the page shows after it; and a problem for each block that breaks
    the course's rules."""
    blocks, problems = [], []
    page_fences, page_lines = page.fences, page.source.splitlines()
    index_at = {fence.line: index for index, fence in enumerate(page_fences)}
    for example in find_examples(page.path):
        index = index_at[example.start_line]
        fence = page_fences[index]
        if fence.include is None or not fence.include.endswith(".py"):
            problems.append(
                f"{fence}: a Python block must be one include of a .py file from snippets/"
                ' (--8<-- "lesson/name.py"), so that both languages show the same code'
            )
            continue
        run = fence.attrs.get("data-run")
        if run == "gpu":
            blocks.append(Block(fence, None))
            continue
        if run is not None:
            problems.append(f'{fence}: unknown data-run="{run}"; a GPU lab is data-run="gpu"')
            continue
        expected = fence.include.removesuffix(".py") + ".out"
        output = page_fences[index + 1] if index + 1 < len(page_fences) else None
        adjacent = output is not None and not any(
            line.strip() for line in page_lines[fence.end_line : output.line - 1]
        )
        if not (adjacent and output.language == "text" and output.include == expected):
            problems.append(
                f"{fence}: right after this block the page must show its output:"
                f' a ```text fence holding --8<-- "{expected}"'
                " (`pytest --update-examples` writes that file)"
            )
            continue
        blocks.append(Block(fence, output))
    return blocks, problems


@dataclass(frozen=True)
class GpuBlock:
    include: str  # e.g. kv-cache/serve_kv.py
    shown_on: tuple[str, ...]  # the pages that show it

    @property
    def folder_name(self) -> str:
        return self.include.split("/")[0]

    @property
    def file_name(self) -> str:
        return self.include.split("/", 1)[1]

    def __str__(self) -> str:
        return self.include


def gpu_blocks(root: Path = ROOT) -> list[GpuBlock]:
    """Every block a page marks data-run="gpu", once per snippet file.

    Reads the pages as written (no snippet expansion), so a bare docs/ + snippets/ tree will do.
    """
    shown = {}
    for page in pages(root):
        where = f"docs/{page.relative}"
        for fence in fences(where, page.source):
            if fence.attrs.get("data-run") == "gpu" and fence.include:
                shown.setdefault(fence.include, []).append(where)
    return [GpuBlock(include, tuple(on)) for include, on in sorted(shown.items())]


def fences(page: str, text: str, expand_body=lambda body: body) -> list[Fence]:
    """Every fenced block of a Markdown text, at any indent (tabs, admonitions)."""
    lines = text.splitlines(keepends=True)
    found, number = [], 0
    while number < len(lines):
        opening = FENCE_OPEN.match(lines[number].rstrip("\n"))
        if not opening:
            number += 1
            continue
        indent, run = opening["indent"], opening["run"]
        closing = re.compile(rf"^ {{0,{len(indent)}}}{run[0]}{{{len(run)},}}[ \t]*$")
        end = next(
            (i for i in range(number + 1, len(lines)) if closing.match(lines[i].rstrip("\n"))),
            len(lines),
        )
        body = "".join(lines[number + 1 : end])
        dedented = "".join(line[len(indent) :] if line.startswith(indent) else line
                           for line in body.splitlines(keepends=True))
        # As shown: a rendered code block has no trailing blank lines.
        expanded = expand_body(dedented).rstrip("\n") + "\n"
        found.append(Fence(page, number + 1, opening["info"], body, expanded, indent))
        number = end + 1
    return found


def fence_lines(text: str) -> set[int]:
    """1-based numbers of the lines that belong to a fenced block, fences included."""
    inside = set()
    for fence in fences("", text):
        inside.update(range(fence.line, fence.line + fence.body.count("\n") + 2))
    return inside


def mkdocs_config(root: Path):
    config_file = root / "mkdocs.yml"
    return _load_config(config_file, config_file.stat().st_mtime_ns)


def lessons_in_nav(root: Path = ROOT) -> list[str]:
    """The lessons in reading order: the Markdown pages under lessons/ in mkdocs.yml's nav."""
    found = []

    def walk(items):
        for item in items:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            if isinstance(value, list):
                walk(value)
            elif value.startswith("lessons/") and value.endswith(".md"):
                found.append(value)

    walk(mkdocs_config(root).nav)
    return found


# The plugins whose options the course's tooling reads: the languages. Loading the others
# would import mkdocs-jupyter and nbconvert, 1.5 s in every process that collects the tests.
READ_PLUGINS = ("i18n",)


@cache
def _load_config(config_file: Path, mtime_ns: int):
    """mkdocs.yml as MkDocs validates it, with only the plugins of READ_PLUGINS."""
    raw = MkDocsConfig(config_file_path=str(config_file))
    with open(config_file, "rb") as source:
        raw.load_file(source)  # with its INHERIT
    plugins = [plugin for plugin in raw["plugins"]
               if (next(iter(plugin)) if isinstance(plugin, dict) else plugin) in READ_PLUGINS]
    return load_config(str(config_file), plugins=plugins)


def snippet_bases(root: Path) -> tuple[Path, ...]:
    config = mkdocs_config(root).mdx_configs["pymdownx.snippets"]
    return tuple(Path(base) for base in config["base_path"])


def expand(root: Path, text: str) -> str:
    """Include snippets exactly as the site's pymdownx.snippets does (a missing file raises)."""
    config = mkdocs_config(root)
    md = markdown.Markdown(
        extensions=["pymdownx.snippets"],
        extension_configs={"pymdownx.snippets": config.mdx_configs["pymdownx.snippets"]},
    )
    return "\n".join(md.preprocessors["snippet"].run(text.split("\n")))


def snippet_file(root: Path, include: str) -> Path:
    """The file an include line names, looked up in the snippet base paths."""
    for base in snippet_bases(root):
        if (base / include).is_file():
            return base / include
    raise FileNotFoundError(f"snippet {include!r} is in none of {snippet_bases(root)}")


def languages(root: Path) -> list[str]:
    i18n = mkdocs_config(root).plugins["i18n"].config
    return [language.locale for language in i18n.languages]


def default_language(root: Path) -> str:
    i18n = mkdocs_config(root).plugins["i18n"].config
    return next(language.locale for language in i18n.languages if language.default)


def pages(root: Path = ROOT) -> list[Page]:
    return sorted(
        (Page(path, root) for path in (root / "docs").rglob("*.md")),
        key=lambda page: page.relative,
    )
