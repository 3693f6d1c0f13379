"""A lesson builds only on earlier lessons (README, ADR-0003): its code imports a module of
another snippet folder by its plain name only when that folder is an earlier lesson in the
nav of mkdocs.yml, and no two snippet folders import each other, even through others.

Every Python file of a snippet folder counts, its charts, GPU checks and components too: a
lesson page ships them or draws with them. A snippet folder that is no lesson (glossary/,
maintainers/) comes after every lesson: it may import any lesson, and no lesson imports it.
"""

from pathlib import Path

from coursekit import ROOT
from coursekit.code import folders, imported_names, module_files, reading_order


def folder_imports(root: Path) -> dict[tuple[str, str], list[str]]:
    """(importing folder, imported folder) -> "file imports module" for each such import."""
    home = {name: paths[0].parent.name for name, paths in module_files(root).items()}
    found: dict[tuple[str, str], list[str]] = {}
    for folder in folders(root):
        for path in sorted(folder.rglob("*.py")):
            for name in sorted(imported_names(path)):
                if name in home and home[name] != folder.name:
                    where = path.relative_to(root).as_posix()
                    found.setdefault((folder.name, home[name]), []).append(
                        f"{where} imports {name}")
    return found


def forward_imports(root: Path) -> list[str]:
    order = reading_order(root)
    return [f"{line}, of {target}, which comes after {source} in the nav"
            for (source, target), lines in sorted(folder_imports(root).items())
            if order[target] > order[source]
            for line in lines]


def cycles(root: Path) -> list[str]:
    """Each cycle of imports between snippet folders, once, from its first folder by name."""
    edges = folder_imports(root)
    after: dict[str, set[str]] = {}
    for source, target in edges:
        after.setdefault(source, set()).add(target)
    found = set()

    def walk(path: list[str]):
        for target in sorted(after.get(path[-1], ())):
            if target == path[0]:
                found.add(tuple(path))
            elif target not in path and target > path[0]:
                walk([*path, target])

    for start in sorted(after):
        walk([start])
    return [" -> ".join([*cycle, cycle[0]]) + ": " + "; ".join(
        line for source, target in zip(cycle, [*cycle[1:], cycle[0]])
        for line in edges[source, target]) for cycle in sorted(found)]


def test_no_lesson_imports_a_later_lesson():
    assert forward_imports(ROOT) == []


def test_no_snippet_folders_import_each_other():
    assert cycles(ROOT) == []


def test_the_guard_finds_forward_imports_and_cycles(course):
    """The fixture course: lesson `first`, then the scaffolded `second`, in its nav."""
    snippets = course / "snippets"
    (snippets / "second" / "later.py").write_text("X = 1\n", "utf-8")
    (snippets / "glossary").mkdir()
    (snippets / "glossary" / "terms.py").write_text("import later\nimport first_size\n", "utf-8")
    assert reading_order(course) == {"first": 0, "second": 1, "glossary": 2}
    assert forward_imports(course) == cycles(course) == []

    (snippets / "first" / "components" / "widget").mkdir(parents=True)
    (snippets / "first" / "components" / "widget" / "data.py").write_text(
        "from later import X\n", "utf-8")
    assert forward_imports(course) == [
        "snippets/first/components/widget/data.py imports later, of second, which comes after"
        " first in the nav"]
    assert cycles(course) == []

    (snippets / "second" / "later.py").write_text("import first_size\nX = 1\n", "utf-8")
    assert cycles(course) == [
        "first -> second -> first: snippets/first/components/widget/data.py imports later;"
        " snippets/second/later.py imports first_size"]

    (snippets / "first" / "components" / "widget" / "data.py").write_text(
        "import terms\n", "utf-8")
    assert forward_imports(course) == [
        "snippets/first/components/widget/data.py imports terms, of glossary, which comes after"
        " first in the nav"]
    assert cycles(course) == [
        "first -> glossary -> first: snippets/first/components/widget/data.py imports terms;"
        " snippets/glossary/terms.py imports first_size",
        "first -> glossary -> second -> first: snippets/first/components/widget/data.py imports"
        " terms; snippets/glossary/terms.py imports later; snippets/second/later.py imports"
        " first_size"]
