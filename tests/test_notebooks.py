"""Every notebook of the course runs on the CPU and prints exactly the outputs it shows; the
two languages run the same code. `pytest --update-examples` stores fresh outputs.

The lab notebooks (coursekit/lab_notebooks.py) are built from their lesson's files: their cells
that need no GPU run here and print what the page shows; their lab_steps.sh is checked for
what would only fail on a reader's rented GPU."""

import html
import re
import subprocess
import zipfile

import nbformat
import pytest
from nbclient import NotebookClient

from coursekit import ROOT
from coursekit.built_site import mkdocs_build
from coursekit.code import bundle, copy_bundle
from coursekit.lab_notebooks import GPU_TAG, STEPS, file_name, lab_lines, lab_notebooks, steps
from coursekit.pages import Page, mkdocs_config, pages

NOTEBOOKS = sorted((ROOT / "docs").rglob("*.ipynb"))
LAB_NOTEBOOKS = lab_notebooks(mkdocs_config(ROOT))
LAB_SLUGS = sorted({slug for slug, _ in LAB_NOTEBOOKS})


def shown(notebook) -> list[list[str]]:
    """Each code cell's outputs as text; what a stream printed in a row is one text, however
    the kernel cut it into messages."""
    texts = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        outputs, stream = [], None
        for output in cell.get("outputs", []):
            if output.output_type == "stream" and output.name == stream:
                outputs[-1] += output.text
                continue
            stream = output.name if output.output_type == "stream" else None
            if output.output_type == "error":
                outputs.append(f"{output.ename}: {output.evalue}")
            elif output.output_type == "stream":
                outputs.append(output.text)
            else:
                outputs.append(output.get("data", {}).get("text/plain", ""))
        texts.append(outputs)
    return texts


def code(notebook) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def executed(notebook, folder):
    """The notebook run as a reader runs it: next to its lesson's code and what that code
    imports."""
    run = nbformat.from_dict(notebook)
    copy_bundle(ROOT / "snippets" / run.metadata["course"]["snippets"], folder)
    NotebookClient(run, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return run


def raised(notebook) -> list[str]:
    return [o for outputs in shown(notebook) for o in outputs if "Error" in o.split(":")[0]]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_prints_what_it_shows(path, request, tmp_path):
    stored = nbformat.read(path, as_version=4)
    run = executed(stored, tmp_path)
    assert raised(run) == [], f"{path.name} raised: {raised(run)}"
    if request.config.getoption("update_examples"):
        nbformat.write(run, path)
        return
    assert shown(run) == shown(stored), (
        f"{path.name} prints something else than it shows: run `pytest --update-examples`")


def test_languages_run_the_same_code():
    by_name = {}
    for path in NOTEBOOKS:
        by_name.setdefault(path.name.rsplit(".", 2)[0], []).append(nbformat.read(path, as_version=4))
    for (slug, _), book in LAB_NOTEBOOKS.items():
        by_name.setdefault(f"{slug}-lab", []).append(book)
    assert by_name
    for name, books in by_name.items():
        assert len(books) == 2, f"{name}: notebook missing in one language"
        first, second = (code(book) for book in books)
        assert first == second, f"{name}: the two languages run different code"


def without_gpu(book):
    """The notebook's cells that need no GPU."""
    offline = nbformat.from_dict(book)
    offline.cells = [cell for cell in book.cells if GPU_TAG not in cell.metadata.get("tags", [])]
    return offline


# A lab whose section shows no offline check (lesson 6's: its checks read a benchmark's files)
# has no cell to run here.
OFFLINE = [slug for slug in LAB_SLUGS if code(without_gpu(LAB_NOTEBOOKS[slug, "zh"]))]


@pytest.mark.parametrize("slug", OFFLINE)
def test_lab_notebook_runs_what_needs_no_gpu(slug, tmp_path):
    """Its cells without the GPU tag (the predictions) print what the page shows."""
    offline = without_gpu(LAB_NOTEBOOKS[slug, "zh"])
    run = executed(offline, tmp_path)
    assert raised(run) == [], f"{slug}: the lab notebook raised: {raised(run)}"
    assert shown(run) == shown(offline), f"{slug}: the lab notebook prints something else than it shows"


RUNS = re.compile(r"\b(?:python3?|bash)\s+([\w.-]+\.(?:py|sh))\b")
SERVER = re.compile(r"^(?P<start>bash [\w.-]+\.sh\b[^\n]*&)[ \t]*$", re.M)
WAIT = "until curl -sf http://127.0.0.1:"


def lab_steps_problems(folder, page) -> list[str]:
    """What in a lab_steps.sh would fail only on a reader's GPU: a shell syntax error, a step
    without its comment, a file the lesson's zip lacks, a GPU block of the lab it never runs,
    a server started in the background that its step does not wait for."""
    script = folder / STEPS
    where = f"snippets/{folder.name}/{STEPS}"
    syntax = subprocess.run(["bash", "-n", script], capture_output=True, text=True)
    if syntax.returncode:
        return [f"{where}: {syntax.stderr.strip()}"]
    problems, ran = [], set()
    files = bundle(folder)
    for number, step in enumerate(steps(script), 1):
        if not step.startswith("# "):
            problems.append(f"{where}: step {number} does not start with a comment saying what it does")
        for name in RUNS.findall(step):
            ran.add(name)
            if name not in files:
                problems.append(f"{where}: step {number} runs {name}, which the lesson's zip does not hold")
        for start in SERVER.finditer(step):
            if WAIT not in step[start.end():]:
                problems.append(f"{where}: step {number} starts `{start['start']}` and does not wait"
                                f" for it to answer ({WAIT}...)")
    first, end, _ = lab_lines(page)
    for fence in page.fences:
        if first < fence.line < end and fence.attrs.get("data-run") == "gpu" and fence.include:
            name = fence.include.split("/", 1)[1]
            if name not in ran:
                problems.append(f"{where}: no step runs {name}, which the lab runs on the GPU"
                                f" (docs/{page.relative}:{fence.line})")
    return problems


@pytest.mark.parametrize("slug", LAB_SLUGS)
def test_lab_steps_run_the_whole_lab(slug):
    page = Page(ROOT / "docs" / "lessons" / f"{slug}.zh.md", ROOT)
    assert lab_steps_problems(ROOT / "snippets" / slug, page) == []


def test_every_lab_has_its_notebook():
    with_lab = {page.name.split("/")[-1] for page in pages(ROOT)
                if page.name.startswith("lessons/") and lab_lines(page)}
    assert with_lab and with_lab == set(LAB_SLUGS)


def notebook_pages_problems(site, root=ROOT) -> list[str]:
    """Each notebook is a rendered page in its language, light, with its outputs and its file;
    a lab notebook is also in its lesson's zip and linked from the lesson's page."""
    problems = []
    books = []  # (file name, language, the page's folder in the site, the notebook)
    for path in sorted((root / "docs").rglob("*.ipynb")):
        stem, language, _ = path.name.rsplit(".", 2)
        books.append((path.name, language, path.parent.relative_to(root / "docs") / stem,
                      nbformat.read(path, as_version=4)))
    for (slug, language), book in lab_notebooks(mkdocs_config(root), root).items():
        name, prefix = file_name(slug, language), "" if language == "zh" else "en/"
        books.append((name, language, f"lessons/{slug}-lab", book))
        if f"{slug}/{name}" not in zipfile.ZipFile(site / f"assets/code/{slug}.zip").namelist():
            problems.append(f"assets/code/{slug}.zip: {name} is not in it")
        lesson = (site / f"{prefix}lessons/{slug}/index.html").read_text("utf-8")
        if f'href="../{slug}-lab/{name}" download' not in lesson:
            problems.append(f"{prefix}lessons/{slug}/: no link to download {name}")
    for name, language, folder, book in books:
        page = site / ("" if language == "zh" else "en") / folder / "index.html"
        rendered = page.read_text("utf-8") if page.is_file() else ""
        where = f"{name} -> {page.relative_to(site)}"
        if "jp-Cell" not in rendered or '"cell_type"' in rendered:
            problems.append(f"{where}: not rendered as a page (raw notebook?)")
            continue
        if len(rendered.encode()) > 300_000:
            problems.append(f"{where}: {len(rendered.encode()):,} bytes, over 300 KB")
        if not (page.parent / name).is_file():
            problems.append(f"{where}: the notebook file is not there to download")
        for outputs in shown(book):
            for text in outputs:
                first = html.escape(text.splitlines()[0], quote=False) if text else ""
                if first not in rendered:
                    problems.append(f"{where}: output {first!r} not on the page")
    return problems


def test_notebooks_render_as_pages(site):
    assert notebook_pages_problems(site) == []


def test_the_fixture_notebooks_render(fixture_site, pristine_fixture):
    assert notebook_pages_problems(fixture_site, pristine_fixture) == []


def test_without_the_hook_notebooks_come_out_raw(course, tmp_path):
    # mkdocs-static-i18n issue #198: the strict build stays green, the page is raw JSON.
    hooks = [hook for hook in mkdocs_config(ROOT).hooks if not hook.endswith("notebooks.py")]
    with open(course / "mkdocs.yml", "a", encoding="utf-8") as config:
        config.write("hooks:\n" + "".join(f"  - {hook}\n" for hook in hooks))
    result = mkdocs_build(course, tmp_path / "site", in_process=True)
    assert result.returncode == 0, result.stderr
    assert any("raw notebook" in p for p in notebook_pages_problems(tmp_path / "site", course))
