"""Every offline Python block of every page runs, and prints exactly the output block the page shows.

The blocks are collected per page and language after snippet expansion (tests/pages.py);
`pytest --update-examples` rewrites the recorded output files from real runs.
"""

import difflib
import shutil
import subprocess
import sys

import pytest

from pages import ROOT, pages, python_blocks, snippet_file

OFFLINE = [block for page in pages() for block in python_blocks(page)[0] if not block.gpu]


@pytest.mark.parametrize("block", OFFLINE, ids=str)
def test_block_prints_what_the_page_shows(block, tmp_path, request):
    code = snippet_file(ROOT, block.code.include)
    # As a reader would: the lesson's files saved in one folder, the shown code run as a script,
    # with nothing but the standard library (-S: no site-packages, -E -s: no environment).
    shutil.copytree(code.parent, tmp_path, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / code.name).write_text(block.code.expanded, "utf-8")
    run = subprocess.run(
        [sys.executable, "-E", "-s", "-S", code.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )
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
