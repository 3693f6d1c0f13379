"""Lessons import each other's code by module name; a snippet runs, and a lesson's code is
downloaded, as its folder plus what it imports (coursekit/code.py)."""

import ast
import re
import subprocess
import sys
import zipfile

import nbformat
import pytest

from coursekit import ROOT
from coursekit.built_site import mkdocs_build
from coursekit.code import (
    README_TEXT,
    borrowed,
    bundle,
    clashes,
    course_imports,
    described,
    folders,
    needs_only_stdlib,
    packages_needed,
    readme,
    requirements,
    run_as_reader,
)
from coursekit.gpu_labs import gpu_blocks
from coursekit.lab_notebooks import file_name, lab_notebooks
from coursekit.pages import mkdocs_config, pages, python_blocks
from coursekit.vllm_source import CONFORMANCE_PYTHON

LAB_NOTEBOOKS = lab_notebooks(mkdocs_config(ROOT))


def write(root, files: dict[str, str]):
    for name, text in files.items():
        path = root / "snippets" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return root


@pytest.fixture
def two_lessons(tmp_path):
    return write(tmp_path, {
        "one/sizes.py": 'import json\nfrom pathlib import Path\n\n'
                        'TABLE = json.loads(Path(__file__).with_name("table.json").read_text())\n',
        "one/table.json": '{"a": 1}\n',
        "one/unrelated.txt": "not needed by two\n",
        "one/charts.py": "def charts():\n    return {}\n",
        "two/use.py": "from helper import twice\n\nprint(twice())\n",
        "two/helper.py": "from sizes import TABLE\n\n\ndef twice():\n    return 2 * TABLE['a']\n",
    })


def test_imports_from_other_lessons_are_followed(two_lessons):
    folder = two_lessons / "snippets/two"
    assert course_imports(folder / "use.py", two_lessons) == [two_lessons / "snippets/one/sizes.py"]
    assert list(bundle(folder, two_lessons)) == ["helper.py", "sizes.py", "table.json", "use.py"]
    assert borrowed(folder, two_lessons) == {"one": ["sizes.py"]}
    # The machinery (charts.py) is no reader's code and is never bundled.
    assert "charts.py" not in bundle(two_lessons / "snippets/one", two_lessons)


def test_a_module_name_in_two_lessons_is_a_problem(two_lessons):
    write(two_lessons, {"two/sizes.py": "TABLE = {}\n"})
    assert clashes(two_lessons) == [
        "sizes.py is defined in one and two: a module name must be unique across snippet"
        " folders, since lessons import each other's code"]


def lesson_archives(site):
    return sorted((site / "assets" / "code").glob("*.zip"))


def test_every_lesson_has_its_archive(site):
    lessons = {path.name.split(".")[0] for path in (ROOT / "docs/lessons").glob("*.md")
               if (ROOT / "snippets" / path.name.split(".")[0]).is_dir()}
    assert {path.stem for path in lesson_archives(site)} == lessons


@pytest.mark.parametrize("slug", sorted({page.name.split("/")[1] for page in pages()
                                          if page.name.startswith("lessons/")
                                          and (ROOT / "snippets" / page.name.split("/")[1]).is_dir()}))
def test_downloaded_code_is_what_the_snippet_tests_run(site, slug):
    """A lesson's zip holds its bundle (its folder, and the modules and data it borrows: the
    files tests/test_snippets.py runs each of its blocks among) and its README, and each offline
    block's file holds the code the page shows: so the downloaded code prints what the page
    shows. (Running each block again from the zip took a second of CPU per lesson.)"""
    with zipfile.ZipFile(site / "assets" / "code" / f"{slug}.zip") as archive:
        held = {name.removeprefix(f"{slug}/"): archive.read(name) for name in archive.namelist()}
    assert held.pop("README.md", None), f"{slug}.zip has no README.md"
    for (lesson, language), book in LAB_NOTEBOOKS.items():
        if lesson == slug:
            notebook = held.pop(file_name(slug, language), b"").decode("utf-8")
            assert notebook == nbformat.writes(book), f"{slug}.zip: its {language} lab notebook"
    assert held == {name: source.read_bytes()
                    for name, source in bundle(ROOT / "snippets" / slug).items()}, slug
    blocks = [block for page in pages() if page.name == f"lessons/{slug}"
              for block in python_blocks(page)[0] if not block.gpu]
    assert blocks, f"lessons/{slug} shows no offline block"
    for block in blocks:
        script = block.code.include.split("/", 1)[1]
        assert held[script].decode("utf-8") == block.code.expanded, f"{slug}.zip: {script}"


def test_the_lesson_page_links_its_archive(site):
    for slug in [path.stem for path in lesson_archives(site)]:
        for prefix, href in (("", "../../assets/code/"), ("en/", "../../../assets/code/")):
            html = (site / prefix / "lessons" / slug / "index.html").read_text("utf-8")
            assert f'href="{href}{slug}.zip" download' in html, (prefix, slug)


def test_a_lesson_that_borrows_code_says_so_and_ships_it(course, tmp_path, edit):
    (course / "snippets/second/uses_first.py").write_text(
        "from first_size import bytes_per_token\n\nprint(bytes_per_token(4, 8))\n", "utf-8")
    (course / "snippets/second/uses_first.out").write_text("64\n", "utf-8")
    for page, title in (("second.zh.md", "输出"), ("second.en.md", "Output")):
        edit(course / "docs/lessons" / page, "```lesson-code\n",
             '```python title="uses_first.py"\n--8<-- "second/uses_first.py"\n```\n\n'
             f'```text title="{title}"\n--8<-- "second/uses_first.out"\n```\n\n```lesson-code\n')
    result = mkdocs_build(course, tmp_path / "site", in_process=True)
    assert result.returncode == 0, result.stderr
    zh = (tmp_path / "site/lessons/second/index.html").read_text("utf-8")
    en = (tmp_path / "site/en/lessons/second/index.html").read_text("utf-8")
    assert 'It imports <code>first_size.py</code> from <a href="../first/">First lesson</a>.' in en
    assert '它导入了<a href="../first/">第一课</a>的 <code>first_size.py</code>。' in zh
    with zipfile.ZipFile(tmp_path / "site/assets/code/second.zip") as archive:
        archive.extractall(tmp_path / "unzipped")
    run = subprocess.run([sys.executable, "-E", "-s", "-S", "uses_first.py"],
                         cwd=tmp_path / "unzipped/second", capture_output=True, text=True)
    assert run.stdout == "64\n", run.stderr


@pytest.mark.parametrize("slug", sorted({path.name.split(".")[0]
                                          for path in (ROOT / "docs/lessons").glob("*.md")
                                          if (ROOT / "snippets" / path.name.split(".")[0]).is_dir()}))
def test_the_archive_explains_itself_in_both_languages(site, slug):
    """README.md in the zip: what each file does (its docstring), which file to run first, the
    Python version, in Chinese and in English."""
    with zipfile.ZipFile(site / "assets" / "code" / f"{slug}.zip") as archive:
        names = [name.split("/", 1)[1] for name in archive.namelist()]
        text = archive.read(f"{slug}/README.md").decode("utf-8")
    zh, en = text.split("\n## 中文\n")[1].split("\n## English\n")
    files = bundle(ROOT / "snippets" / slug)
    notebooks = [file_name(slug, language) for lesson, language in LAB_NOTEBOOKS if lesson == slug]
    assert sorted(names) == sorted([*files, "README.md", *notebooks])
    assert all(f"`{name}`" in zh and f"`{name}`" in en for name in notebooks), slug
    first = re.search(r"先运行：`python3 (\S+\.py)`", zh)[1]
    assert f"Run first: `python3 {first}`" in en
    assert first in files and needs_only_stdlib(files[first])
    assert "Python 3.11" in zh and "Python 3.11" in en and "标准库" in zh and "standard library" in en
    for name, path in files.items():
        rows = [line for part in (zh, en) for line in part.splitlines()
                if line.startswith(f"| `{name}` |")]
        assert len(rows) == 2, (slug, name)
        said = described(path)
        assert all(said.replace("|", "\\|") in row for row in rows), (slug, name)
        if path.suffix == ".py" and ast.get_docstring(ast.parse(path.read_text("utf-8"))):
            assert said, (slug, name)


@pytest.mark.parametrize("block", gpu_blocks(), ids=str)
def test_a_file_shown_in_a_gpu_block_is_not_labelled_offline(block):
    """bench_sweep.py imports only the standard library, yet needs a vLLM server on the lab's GPU:
    the README says so, in each language, and never tells the reader to run it first."""
    folder = ROOT / "snippets" / block.folder_name
    shown = {language: (block.folder_name, (ROOT / page).read_text("utf-8")) for page in block.shown_on
             for language in [page.split(".")[-2]]}
    text = readme(folder, shown)
    assert f"先运行：`python3 {block.file_name}`" not in text
    assert f"Run first: `python3 {block.file_name}`" not in text
    for language in shown:
        labels = README_TEXT[language]
        row = next(line for line in text.split(f"\n## {labels['heading']}\n")[1].splitlines()
                   if line.startswith(f"| `{block.file_name}` |"))
        kind = row.split(" | ")[1]
        assert kind != labels["offline"], (language, row)
        if block.file_name.endswith(".py"):
            assert kind in (labels["gpu"], labels["gpu_server"]), (language, row)


def test_the_notebook_links_the_lessons_archive(site):
    for prefix, href, gather in (("", "../../assets/code/kv-cache.zip", "都在课程页面上"),
                                 ("en/", "../../../assets/code/kv-cache.zip", "all on the lesson page")):
        page = site / prefix / "lessons/kv-cache-explorer/index.html"
        html = page.read_text("utf-8")
        assert f'href="{href}"' in html, prefix
        assert gather not in html, prefix
        assert (page.parent / href).resolve().is_file()


@pytest.mark.parametrize("folder", [folder for folder in folders() if requirements(folder)], ids=lambda f: f.name)
def test_a_lessons_pins_are_what_its_code_runs_on(folder):
    """A lesson whose offline code needs packages (lesson 11's tp_layer.py: PyTorch on the
    CPU) pins them in requirements.txt; the suite runs that code with CONFORMANCE_PYTHON, which
    must have exactly those versions, and every package the code imports is pinned."""
    pins = requirements(folder)
    script = "import importlib.metadata as m, json, sys; print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))"
    done = subprocess.run([str(CONFORMANCE_PYTHON), "-c", script, *pins], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    installed = ast.literal_eval(done.stdout)
    # A local version label (2.13.0+cpu) is the same release, as pip's == reads it.
    assert {name: version.split("+")[0] for name, version in installed.items()} == {
        name: pin.partition("==")[2] for name, pin in pins.items()}
    labs = {block.file_name for block in gpu_blocks() if block.folder_name == folder.name}
    imported = {name for path in folder.glob("*.py") if path.name not in labs for name in packages_needed(path)}
    assert imported and imported <= set(pins), f"{folder.name} imports {imported - set(pins)} without a pin"


def test_a_package_without_a_pin_is_refused(tmp_path):
    """Offline code runs on the standard library, or on what its folder pins: an import of
    anything else stops the run with a message naming it, before anything runs."""
    course = write(tmp_path, {"one/uses.py": "import numpy\n\nprint(numpy.pi)\n"})
    with pytest.raises(ValueError, match="imports numpy: a lesson's offline code uses the standard library"):
        run_as_reader(course / "snippets/one/uses.py", tmp_path / "run", course)
    write(course, {"one/requirements.txt": "numpy\n"})
    with pytest.raises(ValueError, match="not pinned as name==version"):
        run_as_reader(course / "snippets/one/uses.py", tmp_path / "run", course)
