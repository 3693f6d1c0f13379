"""Every offline Python block of every page runs, as a reader would run it, and prints exactly
the output block the page shows.

pytest-examples collects the blocks of each page (coursekit/pages.py); each runs in a folder
holding its snippet folder plus the modules it imports from other lessons (coursekit/code.py),
on the standard library only. `pytest --update-examples` rewrites the recorded outputs.
"""

import difflib

import pytest

from coursekit import ROOT
from coursekit.code import run_as_reader
from coursekit.pages import pages, python_blocks, snippet_file

OFFLINE = [block for page in pages() for block in python_blocks(page)[0] if not block.gpu]
# A block is an include of a snippet file and of the output file it prints: a snippet that both
# languages' pages show (both include the same two files) runs once, under its first page.
RUNS = {}
for block in OFFLINE:
    RUNS.setdefault((block.code.include, block.output.include), block)


@pytest.mark.parametrize("block", RUNS.values(), ids=str)
def test_block_prints_what_the_page_shows(block, tmp_path, request):
    code = snippet_file(ROOT, block.code.include)
    run = run_as_reader(code, tmp_path, shown=block.code.expanded)
    assert run.returncode == 0 and not run.stderr, f"{block} ({code.name}) failed:\n{run.stderr}"

    if request.config.getoption("update_examples"):
        snippet_file(ROOT, block.output.include).write_text(run.stdout, "utf-8")
        return
    shown = block.output.expanded
    diff = "\n".join(difflib.unified_diff(shown.splitlines(), run.stdout.splitlines(),
                                          "page shows", "code prints", lineterm=""))
    assert run.stdout == shown, (
        f"{block}: {code.name} prints something else than {block.output.include} shows"
        f" (run `pytest --update-examples` if the code is right):\n{diff}"
    )


def test_every_lesson_is_collected():
    """A page whose blocks the collector missed would pass silently."""
    lessons = {path.name.split(".")[0] for path in (ROOT / "docs/lessons").glob("*.md")}
    collected = {block.code.include.split("/")[0] for block in OFFLINE}
    assert lessons <= collected, f"lessons without an offline block: {lessons - collected}"
