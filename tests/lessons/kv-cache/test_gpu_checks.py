"""The KV cache lab's GPU checks (snippets/kv-cache/gpu_checks.py), offline, against a stand-in
for vLLM: it logs the start-up lines the lab reads, serves the OpenAI API, and starts its engine
with multiprocessing's spawn, as vLLM may. The real run is the GPU job's (test_gpu_labs.py)."""

import os
import shutil
import stat
import sys
import textwrap

import pytest

from coursekit import ROOT
from coursekit.gpu_labs import Lab, check_function, gpu_blocks, lab_for, run_check

STAND_IN_VLLM = '''\
    """A stand-in for vLLM: no GPU, the start-up log lines of the lab, and a spawned engine."""
    import multiprocessing
    import os
    import sys
    from types import SimpleNamespace

    GIB = 1024**3
    PREFIX = "INFO 11-29 08:00:00 [kv_cache_utils.py:1] "


    def startup_log(kv_cache_memory_bytes=None):
        if kv_cache_memory_bytes is None:  # gpu_memory_utilization=0.90 on the RTX 4090
            tokens = os.environ.get("STAND_IN_TOKENS", "519,040")
            lines = ["Available KV cache memory: 13.86 GiB", f"GPU KV cache size: {tokens} tokens",
                     "Maximum concurrency for 8,192 tokens per request: 63.36x"]
        else:
            assert kv_cache_memory_bytes == 4 * GIB, kv_cache_memory_bytes
            lines = ["GPU KV cache size: 149,792 tokens",
                     "Maximum concurrency for 8,192 tokens per request: 18.29x"]
        for line in lines:
            print(PREFIX + line, file=sys.stderr, flush=True)


    def _engine_core():
        pass


    class SamplingParams:
        def __init__(self, max_tokens=16):
            self.max_tokens = max_tokens


    class LLM:
        def __init__(self, model, kv_cache_memory_bytes=None, **kwargs):
            engine = multiprocessing.get_context("spawn").Process(target=_engine_core)
            engine.start()
            engine.join()
            if engine.exitcode:
                raise RuntimeError("Engine core initialization failed")
            startup_log(kv_cache_memory_bytes)

        def generate(self, prompts, params):
            text = " Decode reads every weight and the whole KV cache for each token."
            return [SimpleNamespace(outputs=[SimpleNamespace(text=text)]) for _ in prompts]
    '''

# `vllm serve MODEL --flags...`: the start-up log lines, then tests/stand_in_server.py.
STAND_IN_CLI = """\
    import runpy
    import sys

    import vllm

    assert sys.argv[1] == "serve", sys.argv
    vllm.startup_log()
    sys.argv = [{server!r}, *sys.argv[2:]]
    runpy.run_path({server!r}, run_name="__main__")
    """


@pytest.fixture
def stand_in_vllm(tmp_path, monkeypatch):
    """Labs find the stand-in's `vllm` module and `vllm` program before any real vLLM."""
    packages, programs = tmp_path / "stand_in/python", tmp_path / "stand_in/bin"
    (packages / "vllm").mkdir(parents=True)
    (packages / "vllm/__init__.py").write_text(textwrap.dedent(STAND_IN_VLLM))
    programs.mkdir()
    cli = programs / "vllm"
    server = str(ROOT / "tests/stand_in_server.py")
    cli.write_text(f"#!{sys.executable}\n" + textwrap.dedent(STAND_IN_CLI).format(server=server))
    cli.chmod(cli.stat().st_mode | stat.S_IXUSR)
    real_env = Lab._env

    def env(lab):
        env = real_env(lab)
        return {**env, "PATH": f"{programs}{os.pathsep}{env['PATH']}",
                "PYTHONPATH": str(packages)}

    monkeypatch.setattr(Lab, "_env", env)


def kv_cache_blocks():
    return [block for block in gpu_blocks(ROOT) if block.folder_name == "kv-cache"]


def test_the_checks_pass_against_the_stand_in(stand_in_vllm, tmp_path, capsys):
    assert [str(block) for block in kv_cache_blocks()] == [
        "kv-cache/serve_kv.py", "kv-cache/serve_kv.sh"]
    for block in kv_cache_blocks():
        lab = lab_for(block, ROOT, tmp_path / "logs")
        run_check(block, lab, ROOT)
        assert lab.ran == [block.file_name]
    summary = capsys.readouterr().out
    assert "| reported GPU KV cache size | 519,040 tokens |" in summary
    assert "| predicted | 149,792 tokens (9,362 blocks) |" in summary
    assert sorted(path.name for path in (tmp_path / "logs/kv-cache").iterdir()) == [
        "kv_cache_memory_bytes.log", "serve_kv.py.log", "serve_kv.sh.log"]


@pytest.mark.parametrize("file", ["serve_kv.py", "serve_kv.sh"])
def test_the_checks_fail_when_vllm_reports_another_capacity(stand_in_vllm, tmp_path,
                                                           monkeypatch, file):
    monkeypatch.setenv("STAND_IN_TOKENS", "600,000")
    block = next(block for block in kv_cache_blocks() if block.file_name == file)
    with pytest.raises(AssertionError, match="vLLM reports 600,000 tokens, the calculator"
                       " predicts 518,"):
        check_function(block, ROOT)(lab_for(block, ROOT, tmp_path / "logs"))


def test_the_lab_needs_its_main_guard(stand_in_vllm, tmp_path):
    """Without `if __name__ == "__main__":`, the spawned engine runs the lab again and fails."""
    course = tmp_path / "course"
    shutil.copytree(ROOT / "snippets/kv-cache", course / "snippets/kv-cache",
                    ignore=shutil.ignore_patterns("__pycache__"))
    lab_file = course / "snippets/kv-cache/serve_kv.py"
    head, guard, body = lab_file.read_text().partition('if __name__ == "__main__":')
    assert guard, "serve_kv.py has no main guard: update this test"
    lab_file.write_text(head + textwrap.dedent(body.split("\n", 1)[1]))
    lab = Lab(course / "snippets/kv-cache", tmp_path / "logs")
    with pytest.raises(AssertionError, match="serve_kv.py failed"):
        lab.run_python("serve_kv.py", timeout=60)
    assert "Engine core initialization failed" in (tmp_path / "logs/serve_kv.py.log").read_text()
