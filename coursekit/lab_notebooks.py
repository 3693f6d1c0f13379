"""Every lesson's GPU lab as a Jupyter notebook, for readers on a rented GPU (AutoDL opens
JupyterLab), built from the lesson's own files so that there is nothing to keep in step:

1. what the notebook is and how to use it, with the lab's card (its ```gpu-lab fence);
2. set-up: `%pip install vllm==<the pin>` (requirements-gpu.txt);
3. what the lesson predicts: each offline Python block of the page's lab section, `%run`, with
   the output the page shows; these cells need no GPU, and the suite runs them;
4. the lab: the folder's lab_steps.sh, one `%%bash` cell per step (steps are separated by a
   blank line, the first chunk is the script's header, which ends in `set -euo pipefail`),
   tagged `gpu`.

hooks/notebooks.py renders them as pages in each language, hooks/lesson_code.py puts them in
the lesson's zip and links them beside it.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import yaml

from coursekit import ROOT
from coursekit.pages import HEADING, Page, fence_lines, python_blocks, snippet_file
from coursekit.vllm_source import pinned_version

STEPS = "lab_steps.sh"
GPU_TAG = "gpu"
STRICT = "set -euo pipefail"
CARD_FIELDS = ("min_vram", "card", "time_cost")


def file_name(slug: str, language: str) -> str:
    return f"{slug}-lab.{language}.ipynb"


def steps(script: Path) -> list[str]:
    """lab_steps.sh's steps, each as it is written, without the header."""
    chunks = re.split(r"\n[ \t]*\n", script.read_text("utf-8").strip("\n"))
    if len(chunks) < 2 or not chunks[0].startswith("#!") or not chunks[0].endswith(STRICT):
        raise ValueError(f"{script}: needs a header (#! line, what it does, set -euo pipefail),"
                         " a blank line, then its steps separated by blank lines")
    return chunks[1:]


def lab_lines(page: Page) -> tuple[int, int, str] | None:
    """The page's lab section: (first line, line after it, its heading's text), the section
    around its ```gpu-lab fence; None for a page without a lab."""
    lab = next((fence for fence in page.fences if fence.language == "gpu-lab"), None)
    if lab is None:
        return None
    inside = fence_lines(page.source)
    headings = [(number, line) for number, line in enumerate(page.source.splitlines(), 1)
                if number not in inside and HEADING.match(line)]
    start, title = max((n, line) for n, line in headings if n < lab.line)
    level = len(title) - len(title.lstrip("#"))
    end = min([n for n, line in headings if n > lab.line
               and len(line) - len(line.lstrip("#")) <= level] + [len(page.source.splitlines()) + 1])
    return start, end, title.lstrip("#").strip()


def predictions(page: Page, start: int, end: int) -> list[tuple[str, str]]:
    """(file name, the output the page shows) of the lab section's offline Python blocks."""
    blocks, _ = python_blocks(page)
    return [(block.code.include.split("/", 1)[1],
             snippet_file(page.root, block.output.include).read_text("utf-8"))
            for block in blocks if start < block.code.line < end and not block.gpu]


def _code(source: str, outputs: list | None = None, gpu: bool = False):
    cell = nbformat.v4.new_code_cell(source, outputs=outputs or [])
    cell.metadata["tags"] = [GPU_TAG] if gpu else []
    return cell


def notebook(page: Page, labels: dict, card_labels: dict, site_url: str, slugify,
             root: Path = ROOT):
    """The lab notebook of a lesson page, in the page's language; None for a page without a lab.
    labels: extra.lab_notebook of the language; card_labels: its extra.gpu_lab."""
    found = lab_lines(page)
    if found is None:
        return None
    start, end, heading = found
    slug = page.name.split("/")[-1]
    folder = root / "snippets" / slug
    if not (folder / STEPS).is_file():
        raise ValueError(f"docs/{page.relative} has a GPU lab, so snippets/{slug}/{STEPS} must"
                         " list its steps (coursekit/lab_notebooks.py)")
    title = next(line[2:].strip() for line in page.source.splitlines() if line.startswith("# "))
    lab = next(fence for fence in page.fences if fence.language == "gpu-lab")
    card = yaml.safe_load(lab.expanded)  # hooks/gpu_lab.py checks its fields
    page_url = site_url + page.html.removesuffix("index.html")
    anchor = slugify(re.sub(r"[`*]", "", heading), "-")
    intro = labels["intro"].format(
        zip=f"{site_url}assets/code/{slug}.zip", slug=slug, steps=STEPS,
        notebook=file_name(slug, page.language), lab=f"{page_url}#{anchor}")
    rows = "\n".join(f"- **{card_labels[key]}** {card[key]}" for key in CARD_FIELDS)
    cells = [nbformat.v4.new_markdown_cell(f"# {labels['title'].format(lesson=title)}\n\n"
                                           f"{intro}\n\n{rows}"),
             nbformat.v4.new_markdown_cell(labels["setup"]),
             _code(f"%pip install vllm=={pinned_version()}", gpu=True)]
    shown = predictions(page, start, end)
    if shown:
        cells.append(nbformat.v4.new_markdown_cell(labels["predictions"]))
        cells += [_code(f"%run {name}", [nbformat.v4.new_output("stream", name="stdout", text=out)])
                  for name, out in shown]
    cells.append(nbformat.v4.new_markdown_cell(labels["steps"].format(steps=STEPS)))
    # Each cell stops at its first failing command, as the whole script does (its header).
    cells += [_code(f"%%bash\n{STRICT}\n{step}", gpu=True) for step in steps(folder / STEPS)]
    for number, cell in enumerate(cells):
        cell.id = f"cell-{number}"  # the same notebook at each build, not nbformat's random ids
    book = nbformat.v4.new_notebook(cells=cells)
    book.metadata.update({
        "course": {"snippets": slug, "lab": True},
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    })
    return book


def language_extras(config) -> dict[str, dict]:
    """Each built language's `extra` of a loaded mkdocs.yml, the labels the notebooks use."""
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return {config.theme.get("language", "en"): config.extra}
    return {language.locale: language.extra or config.extra
            for language in i18n.config.languages if language.build}


def lab_notebooks(config, root: Path = ROOT) -> dict[tuple[str, str], nbformat.NotebookNode]:
    """(lesson slug, language) -> its lab notebook, for every lesson page with a GPU lab."""
    slugify = config.mdx_configs["toc"]["slugify"]
    made = {}
    for language, extra in language_extras(config).items():
        for path in sorted((root / "docs" / "lessons").glob(f"*.{language}.md")):
            book = notebook(Page(path, root), extra["lab_notebook"], extra["gpu_lab"],
                            config.site_url or "/", slugify, root)
            if book is not None:
                made[path.name.split(".")[0], language] = book
    return made
