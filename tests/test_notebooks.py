"""Every notebook of the course runs on the CPU and prints exactly the outputs it shows; the
two languages run the same code. `pytest --update-examples` stores fresh outputs."""

import nbformat
import pytest
from nbclient import NotebookClient

from coursekit import ROOT
from coursekit.built_site import mkdocs_build
from coursekit.code import copy_bundle
from coursekit.pages import mkdocs_config

NOTEBOOKS = sorted((ROOT / "docs").rglob("*.ipynb"))


def shown(notebook) -> list[list[str]]:
    """Each code cell's outputs as text."""
    texts = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for output in cell.get("outputs", []):
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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_prints_what_it_shows(path, request, tmp_path):
    stored = nbformat.read(path, as_version=4)
    run = nbformat.read(path, as_version=4)
    # As a reader runs it: next to its lesson's code and what that code imports.
    copy_bundle(ROOT / "snippets" / run.metadata["course"]["snippets"], tmp_path)
    NotebookClient(run, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for outputs in shown(run) for o in outputs if "Error" in o.split(":")[0]]
    assert errors == [], f"{path.name} raised: {errors}"
    if request.config.getoption("update_examples"):
        nbformat.write(run, path)
        return
    assert shown(run) == shown(stored), (
        f"{path.name} prints something else than it shows: run `pytest --update-examples`")


def test_languages_run_the_same_code():
    by_name = {}
    for path in NOTEBOOKS:
        by_name.setdefault(path.name.rsplit(".", 2)[0], []).append(path)
    assert by_name
    for name, paths in by_name.items():
        assert len(paths) == 2, f"{name}: notebook missing in one language"
        first, second = (code(nbformat.read(p, as_version=4)) for p in paths)
        assert first == second, f"{name}: the two languages run different code"


def notebook_pages_problems(site, root=ROOT) -> list[str]:
    """Each notebook is a rendered page in its language, light, with its outputs and its file."""
    problems = []
    for path in sorted((root / "docs").rglob("*.ipynb")):
        stem, language, _ = path.name.rsplit(".", 2)
        folder = path.parent.relative_to(root / "docs") / stem
        page = site / ("" if language == "zh" else "en") / folder / "index.html"
        html = page.read_text("utf-8") if page.is_file() else ""
        where = f"{path.name} -> {page.relative_to(site)}"
        if "jp-Cell" not in html or '"cell_type"' in html:
            problems.append(f"{where}: not rendered as a page (raw notebook?)")
            continue
        if len(html.encode()) > 300_000:
            problems.append(f"{where}: {len(html.encode()):,} bytes, over 300 KB")
        if not (page.parent / path.name).is_file():
            problems.append(f"{where}: the notebook file is not there to download")
        for outputs in shown(nbformat.read(path, as_version=4)):
            for text in outputs:
                first = text.splitlines()[0].replace("<", "&lt;") if text else ""
                if first not in html:
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
