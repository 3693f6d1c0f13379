"""A new lesson from tools/lesson_template: its two pages with the nine standard sections and
its snippet folder with a tested snippet, a chart, a GPU lab block with its check and a small
component, plus its one nav line. It builds and passes every test as it is.

In the template, %%slug%%, %%module%%, %%title_zh%% and %%title_en%% stand for the lesson's
values, in file contents and (as __slug__, __module__) in file names.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from coursekit import ROOT
from coursekit.charts import draw_all
from coursekit.code import module_files
from coursekit.pages import languages

TEMPLATE = ROOT / "tools" / "lesson_template"
SLUG = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
# Comment lines may sit among the lessons; the new one goes after the last entry of them all.
LESSONS_NAV = re.compile(r"^  - 课程:\n((?:      [-#] .*\n)*)", re.M)


class ScaffoldError(ValueError):
    pass


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(f"%%{key}%%", value).replace(f"__{key}__", value)
    return text


def add_to_nav(config: str, slug: str) -> str:
    """The lesson's one nav line, after the last lesson of the 课程 section."""
    match = LESSONS_NAV.search(config)
    if match is None:
        raise ScaffoldError("mkdocs.yml has no `  - 课程:` section in its nav")
    entry = f"      - lessons/{slug}.md\n"
    return config[:match.end()] + entry + config[match.end():]


def new_lesson(root: Path, slug: str, title_zh: str, title_en: str) -> list[Path]:
    """Create the lesson in the course at root; returns the files it wrote."""
    if not SLUG.match(slug):
        raise ScaffoldError(f"{slug!r} is not a slug: lower-case letters, digits and single"
                            " dashes, starting with a letter")
    if not (title_zh.strip() and title_en.strip()):
        raise ScaffoldError("both titles are needed: the Chinese one and the English one")
    module = slug.replace("-", "_")
    pages = {language: root / "docs" / "lessons" / f"{slug}.{language}.md"
             for language in ("zh", "en")}
    folder = root / "snippets" / slug
    if folder.exists() or any(page.exists() for page in pages.values()):
        raise ScaffoldError(f"a lesson called {slug!r} exists already")
    taken = {f"{module}.py", f"{module}_lab.py"} & {f"{name}.py" for name in module_files(root)}
    if taken:
        raise ScaffoldError(f"{', '.join(sorted(taken))} exists in another snippet folder;"
                            " module names are unique across lessons: pick another slug")

    values = {"slug": slug, "module": module, "title_zh": title_zh, "title_en": title_en}
    written = []
    for source in sorted((TEMPLATE / "snippets").rglob("*")):
        if source.is_file() and "__pycache__" not in source.parts:
            target = folder / _fill(source.relative_to(TEMPLATE / "snippets").as_posix(), values)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_fill(source.read_text("utf-8"), values), "utf-8")
            written.append(target)
    for language, page in pages.items():
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(_fill((TEMPLATE / f"page.{language}.md").read_text("utf-8"), values),
                        "utf-8")
        written.append(page)

    example = folder / f"{module}.py"
    run = subprocess.run([sys.executable, "-E", "-s", "-S", example.name], cwd=folder,
                         capture_output=True, text=True, check=True)
    example.with_suffix(".out").write_text(run.stdout, "utf-8")
    written.append(example.with_suffix(".out"))
    written += draw_all(root, languages(root), only=folder)

    config = root / "mkdocs.yml"
    config.write_text(add_to_nav(config.read_text("utf-8"), slug), "utf-8")
    return written
