"""The course's code as readers get it: every snippet folder's Python modules in one namespace.

A lesson's code may import the code of an earlier lesson by its plain module name
(`from kv_cache_size import ModelConfig`), as d2l's chapters build on each other. Module names
are therefore unique across snippet folders. A snippet runs, and a lesson's code is downloaded,
as its own folder plus the modules it imports from other folders (and the data files those
modules name), and nothing else.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.util
import re
import subprocess
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path

from coursekit import ROOT
from coursekit.lab_notebooks import STEPS, file_name
from coursekit.pages import gpu_blocks, lessons_in_nav
from coursekit.vllm_source import CONFORMANCE_PYTHON

# Files and folders of a snippet folder that the course's tooling reads and readers never run:
# chart specs and their drawings, the GPU job's checks and in-page components.
MACHINERY = ("charts.py", "charts", "gpu_checks.py", "components")
# A lesson's offline code runs on the standard library, except where its folder has a
# requirements.txt: the packages (name==version) that lesson's code needs, on the CPU. The
# suite runs such a file with the conformance venv's Python (.ci/setup), which has PyTorch's
# CPU build; tests/test_lesson_code.py holds each pin to what that venv has.
REQUIREMENTS = "requirements.txt"


def folders(root: Path = ROOT) -> list[Path]:
    """Every snippet folder (snippets/<slug>/)."""
    return sorted(path for path in (root / "snippets").iterdir() if path.is_dir()
                  and not path.name.startswith((".", "__")))


def reading_order(root: Path = ROOT) -> dict[str, int]:
    """Snippet folder -> its place: the lessons in the nav's order, then every other one
    (glossary/, maintainers/), which may build on any lesson and on which none builds."""
    lessons = [Path(page).stem for page in lessons_in_nav(root)]
    return {folder.name: lessons.index(folder.name) if folder.name in lessons else len(lessons)
            for folder in folders(root)}


def is_machinery(path: Path, root: Path = ROOT) -> bool:
    parts = path.relative_to(root / "snippets").parts
    # A teaching module's JavaScript twin (coursekit/components.py: twins) runs in the
    # page's components, not in the reader's folder.
    twin = path.suffix == ".js" and path.with_suffix(".py").is_file()
    return len(parts) > 1 and (parts[1] in MACHINERY or twin)


def reader_files(folder: Path) -> list[Path]:
    """The files of a snippet folder that readers get: all but the course's machinery."""
    root = folder.parent.parent
    return sorted(path for path in folder.rglob("*") if path.is_file()
                  and "__pycache__" not in path.parts and not is_machinery(path, root))


def module_files(root: Path = ROOT) -> dict[str, list[Path]]:
    """Module name -> the files that define it (more than one is a problem: see clashes)."""
    # Listed again only when a snippet folder gained or lost a file (mkdocs serve).
    return _module_files(tuple((folder, folder.stat().st_mtime_ns) for folder in folders(root)))


@cache
def _module_files(listed: tuple[tuple[Path, int], ...]) -> dict[str, list[Path]]:
    found = defaultdict(list)
    for folder, _ in listed:
        for path in sorted(folder.glob("*.py")):
            if not is_machinery(path, folder.parent.parent):
                found[path.stem].append(path)
    return dict(found)


def clashes(root: Path = ROOT) -> list[str]:
    """Module names defined in more than one snippet folder."""
    return [
        f"{name}.py is defined in {' and '.join(p.parent.name for p in paths)}: a module name"
        " must be unique across snippet folders, since lessons import each other's code"
        for name, paths in sorted(module_files(root).items()) if len(paths) > 1
    ]


@cache
def _tree(path: Path, mtime_ns: int) -> ast.Module:
    return ast.parse(path.read_text("utf-8"), str(path))


def parsed(path: Path) -> ast.Module:
    """A Python file's syntax tree, parsed again only when the file changed (mkdocs serve)."""
    return _tree(path, path.stat().st_mtime_ns)


def imported_names(path: Path) -> set[str]:
    """Top-level names of the modules a file imports (absolute imports only)."""
    return _imported_names(path, path.stat().st_mtime_ns)


@cache
def _imported_names(path: Path, mtime_ns: int) -> frozenset[str]:
    names = set()
    for node in ast.walk(_tree(path, mtime_ns)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return frozenset(names)


def course_imports(path: Path, root: Path = ROOT) -> list[Path]:
    """The course modules a file needs, transitively, from folders other than its own."""
    modules = module_files(root)
    seen, todo, needed = {path}, [path], []
    while todo:
        current = todo.pop()
        for name in sorted(imported_names(current)):
            if current.parent / f"{name}.py" in seen or name not in modules:
                continue
            module = (current.parent / f"{name}.py" if (current.parent / f"{name}.py").is_file()
                      else modules[name][0])
            if module not in seen:
                seen.add(module)
                todo.append(module)
                if module.parent != path.parent:
                    needed.append(module)
    return sorted(needed)


def data_files(module: Path) -> list[Path]:
    """Files next to a module that it names in a string (e.g. "model_presets.json")."""
    return list(_data_files(module, module.stat().st_mtime_ns))


@cache
def _data_files(module: Path, mtime_ns: int) -> tuple[Path, ...]:
    strings = {node.value for node in ast.walk(_tree(module, mtime_ns))
               if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    return tuple(sorted(module.parent / name for name in strings
                        if "/" not in name and "\n" not in name and len(name) < 256
                        and name != module.name
                        and (module.parent / name).is_file()))


def bundle(folder: Path, root: Path = ROOT) -> dict[str, Path]:
    """What a reader needs to run a folder's code: file name -> source file.

    The folder's own files, plus each module it imports from another folder with the data
    files that module names.
    """
    files = {path.relative_to(folder).as_posix(): path for path in reader_files(folder)}
    for script in [path for path in reader_files(folder) if path.suffix == ".py"]:
        for module in course_imports(script, root):
            for path in (module, *data_files(module)):
                files.setdefault(path.name, path)
    return dict(sorted(files.items()))


def borrowed(folder: Path, root: Path = ROOT) -> dict[str, list[str]]:
    """Other snippet folder -> the modules this folder's code imports from it."""
    found = defaultdict(set)
    for script in [path for path in reader_files(folder) if path.suffix == ".py"]:
        for module in course_imports(script, root):
            found[module.parent.name].add(module.name)
    return {name: sorted(modules) for name, modules in sorted(found.items())}


def copy_bundle(folder: Path, dest: Path, root: Path = ROOT) -> None:
    for name, source in bundle(folder, root).items():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())


def requirements(folder: Path) -> dict[str, str]:
    """Package name -> its pin (name==version), from the folder's requirements.txt."""
    path = folder / REQUIREMENTS
    if not path.is_file():
        return {}
    pins = {}
    for line in path.read_text("utf-8").splitlines():
        pin = line.split("#")[0].strip()
        if pin:
            name, _, version = pin.partition("==")
            if not version:
                raise ValueError(f"{path}: {pin!r} is not pinned as name==version")
            pins[name.strip()] = pin
    return pins


def packages_needed(path: Path, root: Path = ROOT, on_start: bool = False) -> list[str]:
    """The imports of a file that are neither the standard library nor course modules; with
    on_start, only those a run meets whatever it calls: not those inside a function, which a
    lab's file imports there so that its offline part runs without them."""
    modules = module_files(root)
    names = _started_imports(path, path.stat().st_mtime_ns) if on_start else imported_names(path)
    return sorted(name for name in names if name not in sys.stdlib_module_names
                  and name not in modules and name != "__future__")


@cache
def _started_imports(path: Path, mtime_ns: int) -> frozenset[str]:
    names, todo = set(), list(_tree(path, mtime_ns).body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        todo.extend(ast.iter_child_nodes(node))
    return frozenset(names)


def run_as_reader(script: Path, dest: Path, root: Path = ROOT,
                  shown: str | None = None) -> subprocess.CompletedProcess:
    """Run a snippet as a reader would: in dest, holding its folder and what it imports, on
    the standard library only (-S: no site-packages; -E -s: nothing from the environment),
    or, for a file that imports packages its folder's requirements.txt pins, with those
    packages (CONFORMANCE_PYTHON). `shown` is the code as the page shows it, when that is what
    should run."""
    needed = packages_needed(script, root, on_start=True)
    unpinned = [name for name in needed if name not in requirements(script.parent)]
    if unpinned:
        raise ValueError(f"{script.relative_to(root)} imports {', '.join(unpinned)}: a lesson's"
                         f" offline code uses the standard library, or packages its {REQUIREMENTS} pins")
    if needed and not CONFORMANCE_PYTHON.exists():
        raise RuntimeError(f"{script.name} needs {', '.join(needed)}: run .ci/setup, which installs them"
                           f" in {CONFORMANCE_PYTHON.parent.parent.name}")
    copy_bundle(script.parent, dest, root)
    if shown is not None:
        (dest / script.name).write_text(shown, "utf-8")
    command = [str(CONFORMANCE_PYTHON), "-E", "-s"] if needed else [sys.executable, "-E", "-s", "-S"]
    return subprocess.run([*command, script.name], cwd=dest, capture_output=True, text=True,
                          timeout=120 if needed else 60)


class _LessonModules(importlib.abc.MetaPathFinder):
    """Finds a course module by its plain name, wherever its snippet folder is."""

    def __init__(self, root: Path):
        self.root = root  # the course whose snippet folders it searches

    def find_spec(self, name, path=None, target=None):
        if "." in name:
            return None
        files = module_files(self.root).get(name)
        if not files:
            return None
        if len(files) > 1:
            raise ImportError(clashes(self.root)[0])
        return importlib.util.spec_from_file_location(name, files[0])


def install_finder(root: Path = ROOT) -> None:
    """Let this process import the course's modules by their plain names, as a reader's
    folder does. The tests and the tools call this once; load() switches it to another
    course (a fixture course, a copy) for as long as it runs that course's code."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
    if _FINDER.root != root:
        _FINDER.root = root
        # Modules of the same name from another course must be imported afresh.
        for name, files in module_files(root).items():
            module = sys.modules.get(name)
            if module is not None and Path(getattr(module, "__file__", "")) != files[0]:
                del sys.modules[name]


def load(path: Path, name: str, root: Path = ROOT):
    """Run one file of a snippet folder's machinery (charts.py, gpu_checks.py, a component's
    data.py or parity.py) as a module, with the course at root importable."""
    previous = _FINDER.root
    install_finder(root)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        install_finder(previous)
    return module


_FINDER = _LessonModules(ROOT)


# --- The README inside a lesson's zip ------------------------------------------------------
# Written from what is already there, so that it never drifts: each file's docstring (or its
# leading comment), the lesson page's sections that show the file, and the files' imports.

PYTHON = "3.11"
INCLUDE = re.compile(r'^[ \t]*--8<--[ \t]+"(?P<slug>[\w-]+)/(?P<name>[^"]+)"', re.M)
HEADING = re.compile(r"^(#{1,4})[ \t]+(.+?)[ \t]*(?:\{[^}]*\})?[ \t]*$")
README_TEXT = {
    "zh": {
        "heading": "中文",
        "intro": "《{title}》一课的全部代码，含它从前面课程导入的模块。",
        "python": ("需要 Python {python} 或更新版本。标着“离线”的文件只用标准库，不必安装任何包，"
                   "在任何电脑上都能运行；标着“GPU 实验”的文件需要 NVIDIA GPU 和 vLLM 0.26.0。"),
        "first": "先运行：`python3 {name}`（它是课程页面上第一段可运行的代码），再按下表的顺序运行其余文件。",
        "table": "| 文件 | 类型 | 作用 | 课程页面上的位置 |",
        "offline": "离线", "gpu": "GPU 实验", "shell": "命令行（页面上的命令）",
        "offline_packages": "离线，需要 {packages}（CPU 版即可，见 `requirements.txt`）",
        "requirements": "离线代码要的包和版本：`pip install -r requirements.txt`",
        "gpu_server": ("GPU 实验（只用标准库，但要在装好 vLLM 的实验 GPU 机器上按页面的步骤运行，"
                       "多数要先启动 vLLM 服务器）"),
        "output": "`{script}` 打印的输出，与页面上的一致", "recorded": "页面上展示的记录",
        "data": "`{module}` 读取的数据", "imported": "从《{title}》导入",
        "sep": "；",
        "note": "“作用”一栏取自各文件开头的文档字符串（代码只有一份，说明用英文写）。",
        "notebook": ("本课的 GPU 实验也是 Jupyter 笔记本：`{zh}`（中文）和 `{en}`（英文）。在 GPU 机器的"
                     " JupyterLab 里打开其中一个，按顺序运行；它的实验单元格就是 `{steps}` 的各步。"),
    },
    "en": {
        "heading": "English",
        "intro": "All the code of the lesson “{title}”, with the modules it imports from earlier lessons.",
        "python": ("Needs Python {python} or newer. Files marked “offline” use the standard library"
                   " only: nothing to install, they run on any computer. Files marked “GPU lab”"
                   " need an NVIDIA GPU and vLLM 0.26.0."),
        "first": ("Run first: `python3 {name}` (the first runnable code on the lesson page), then"
                  " the other files in the order of the table."),
        "table": "| File | Kind | What it does | Where the lesson page shows it |",
        "offline": "offline", "gpu": "GPU lab", "shell": "shell (the page's commands)",
        "offline_packages": "offline, needs {packages} (the CPU build is enough: see `requirements.txt`)",
        "requirements": "the packages and versions the offline code needs: `pip install -r requirements.txt`",
        "gpu_server": ("GPU lab (standard library only, but runs on the lab's GPU machine with vLLM"
                       " installed, in the page's steps; most need the vLLM server running first)"),
        "output": "what `{script}` prints, as the page shows it", "recorded": "a record the page shows",
        "data": "data that `{module}` reads", "imported": "imported from “{title}”",
        "sep": "; ",
        "note": "“What it does” is each file's docstring (the code is written once, in English).",
        "notebook": ("The lesson's GPU lab is also a Jupyter notebook: `{zh}` (Chinese) and `{en}`"
                     " (English). Open one in JupyterLab on the GPU machine and run it in order; its"
                     " lab cells are the steps of `{steps}`."),
    },
}


def described(path: Path) -> str:
    """What a file says it does: its docstring's first paragraph, or its leading comment."""
    if path.suffix == ".py":
        doc = ast.get_docstring(parsed(path))
        if doc:
            return " ".join(doc.split("\n\n")[0].split())
    if path.suffix in (".py", ".sh") or path.name == REQUIREMENTS:
        comment = []
        for line in path.read_text("utf-8").splitlines():
            if line.startswith("#!"):
                continue
            if not line.startswith("#"):
                break
            comment.append(line.lstrip("#").strip())
        return " ".join(comment)
    return ""


def needs_only_stdlib(path: Path, root: Path = ROOT) -> bool:
    """Runs on the standard library alone: every import is stdlib or a course module."""
    return not packages_needed(path, root)


def shown_at(markdown: str, slug: str) -> dict[str, str]:
    """File name -> the heading of the page's section that first shows it (--8<-- includes)."""
    where, heading = {}, ""
    for line in markdown.splitlines():
        match = HEADING.match(line)
        if match and len(match[1]) > 1:
            heading = match[2].strip()
            continue
        include = INCLUDE.match(line)
        if include and include["slug"] == slug:
            where.setdefault(include["name"], heading)
    return where


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def readme(folder: Path, pages: dict[str, tuple[str, str]], root: Path = ROOT,
           titles: dict[str, dict[str, str]] | None = None) -> str:
    """README.md of a lesson's zip, in each language of `pages` ({language: (title, markdown)}).

    Files are listed in the order the lesson page first shows them (then the others); the file
    to run first is the first offline Python file the page shows. A file a page shows in a
    data-run="gpu" block is a GPU lab even when it imports only the standard library (it talks
    to a vLLM server or runs the vllm command)."""
    slug, files = folder.name, bundle(folder, root)
    owners = {path.name: module.name for module in (p for p in files.values() if p.suffix == ".py")
              for path in data_files(module)}
    titles = titles or {}
    gpu_files = {(block.folder_name, block.file_name) for block in gpu_blocks(root)}

    def on_gpu(path):  # a page runs it in a data-run="gpu" block: it needs the lab's GPU and server
        return (path.parent.name, path.name) in gpu_files

    any_page = next(iter(pages.values()))[1]
    order = list(shown_at(any_page, slug))
    def place(name):
        return order.index(name) if name in order else len(order)

    # A script before the output it prints, even where the page shows the output first.
    names = sorted(files, key=lambda name: (min(place(name), place(f"{Path(name).stem}.py")),
                                            not name.endswith(".py"), name))
    def offline(name):
        return needs_only_stdlib(files[name], root) and not on_gpu(files[name])

    first = next((name for name in names if name.endswith(".py") and name in order
                  and offline(name)), None)
    lines = [f"# {slug}", "", " · ".join(f"[{README_TEXT[lang]['heading']}](#{README_TEXT[lang]['heading'].lower()})"
                                         for lang in pages), ""]
    for language, (title, markdown) in pages.items():
        text, where = README_TEXT[language], shown_at(markdown, slug)
        lines += [f"## {text['heading']}", "", text["intro"].format(title=title), "",
                  text["python"].format(python=PYTHON), ""]
        if first:
            lines += [text["first"].format(name=first), ""]
        if (folder / STEPS).is_file():
            lines += [text["notebook"].format(steps=STEPS, **{lang: file_name(slug, lang)
                                                              for lang in README_TEXT}), ""]
        lines += [text["table"], "|---|---|---|---|"]
        for name in names:
            path = files[name]
            what = described(path)
            packages = packages_needed(path, root) if path.suffix == ".py" else []
            if path.suffix == ".py":
                kind = (text["offline"] if offline(name) else text["gpu_server"] if on_gpu(path)
                        else text["gpu"])
                pinned = requirements(path.parent)
                if packages and not on_gpu(path) and all(name in pinned for name in packages):
                    kind = text["offline_packages"].format(packages=", ".join(pinned[name] for name in packages))
            elif name == REQUIREMENTS:
                kind = text["requirements"]
            elif path.suffix == ".sh":
                kind = text["shell"]
            elif path.suffix in (".out", ".txt", ".log") and f"{Path(name).stem}.py" in files:
                kind = text["output"].format(script=f"{Path(name).stem}.py")
            elif name in owners:
                kind = text["data"].format(module=owners[name])
            else:
                kind = text["recorded"]
            if path.parent != folder:
                other = titles.get(path.parent.name, {}).get(language, path.parent.name)
                kind += text["sep"] + text["imported"].format(title=other)
            lines.append(f"| `{name}` | {_cell(kind)} | {_cell(what) or '—'} |"
                         f" {_cell(where.get(name, '')) or '—'} |")
        lines += ["", text["note"], ""]
    return "\n".join(lines)
