"""What the dry run's stand-in for vLLM (tests/stand_in_vllm) logs for lesson 8's lab
tells the truth about vLLM 0.26.0: its start-up lines are vLLM's own format strings at
vLLM's own lines, its capture sizes are vLLM's (worked cases of
vllm/config/vllm.py: VllmConfig._set_cudagraph_sizes, counted apart from the lesson's),
and the lab runs through it three ways and passes the lesson's check."""

import ast
import os
import subprocess
import sys

import pytest
from lab_startup_check import MAX_NUM_SEQS, compare

from coursekit import ROOT


@pytest.fixture
def startup(monkeypatch, load_stand_in, engine):
    monkeypatch.setitem(sys.modules, "vllm", type(sys)("vllm"))
    sys.modules["vllm"].stand_in = engine
    return load_stand_in("vllm/vllm/stand_in_startup.py", "stand_in_startup")


def test_its_log_lines_are_vllms_own(startup, vllm_src):
    for key, (relative, line, fmt) in startup.LOG_FORMATS.items():
        tree = ast.parse((vllm_src / relative).read_text("utf-8"))
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                 and getattr(node.func, "attr", "").startswith(("info", "warning"))
                 and node.lineno == line and node.args
                 and isinstance(node.args[0], ast.Constant) and node.args[0].value == fmt]
        assert calls, f"{key}: {relative}:{line} logs no {fmt!r} in vLLM 0.26.0"


def test_its_capture_sizes(startup):
    assert startup.capture_sizes(256, 8192) == [1, 2, 4, *range(8, 256, 8), *range(256, 513, 16)]
    assert startup.capture_sizes(16, 8192) == [1, 2, 4, 8, 16, 24, 32]
    assert startup.capture_sizes(64, 100) == [1, 2, 4, *range(8, 97, 8), 100]
    assert startup.graph_count(startup.capture_sizes(16, 8192), 16) == 12


@pytest.mark.parametrize("way", sorted(MAX_NUM_SEQS))
def test_the_lab_runs_through_it_and_passes_the_check(stand_in_vllm, tmp_path, way):
    folder = ROOT / "snippets" / "startup-memory"
    env = {**os.environ, "VLLM_LOGGING_STREAM": "ext://sys.stderr"}
    run = subprocess.run([sys.executable, str(folder / "lab_startup.py"), way], cwd=tmp_path,
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    rows, problems = compare(way, run.stderr, run.stdout)
    assert problems == []
    assert rows["capture sizes"] == {"default": 51, "eager": 0, "small": 7}[way]
