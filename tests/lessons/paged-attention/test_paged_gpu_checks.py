"""The PagedAttention lab's GPU checks (snippets/paged-attention/gpu_checks.py), offline,
against a stand-in for vLLM: its start-up lines are built from vLLM 0.26.0's own format
strings, its engine is stepped by hand and keeps a usage gauge over a pool of blocks, and its
`vllm serve` answers /metrics (stand_in_serve.py). The real run is the GPU job's."""

import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from coursekit import ROOT, vllm_source
from coursekit.gpu_labs import Lab, check_function, gpu_blocks, lab_for, run_check

SERVER = Path(__file__).with_name("stand_in_serve.py")

STAND_IN_VLLM = '''\
    """A stand-in for vLLM: the lab's start-up lines, and an engine stepped by hand whose
    requests each hold slots for their prompt and generated tokens (plus $STAND_IN_LEAD
    scheduled ahead), with a usage gauge out of $STAND_IN_TOTAL blocks."""
    import os
    import sys
    from types import SimpleNamespace


    class SamplingParams:
        def __init__(self, max_tokens=16, ignore_eos=False):
            self.max_tokens, self.ignore_eos = max_tokens, ignore_eos


    class _Engine:
        def __init__(self, num_gpu_blocks):
            self.num_gpu_blocks = num_gpu_blocks
            self.total = int(os.environ.get("STAND_IN_TOTAL", num_gpu_blocks - 1))
            self.lead = int(os.environ.get("STAND_IN_LEAD", "0"))
            self.requests, self.usage = {}, 0.0

        def add_request(self, request_id, prompt, params):
            assert params.ignore_eos
            self.requests[request_id] = [len(prompt["prompt_token_ids"]), 0, params.max_tokens]

        def has_unfinished_requests(self):
            return any(done < most for _, done, most in self.requests.values())

        def step(self):
            outputs = []
            for request_id, state in self.requests.items():
                if state[1] < state[2]:
                    state[1] += 1
                    tokens = [0] * state[1]
                    outputs.append(SimpleNamespace(
                        request_id=request_id, outputs=[SimpleNamespace(token_ids=tokens)]))
            running = [(p, g) for p, g, most in self.requests.values() if g < most]
            used = sum(-(-(p + g - 1 + self.lead) // 16) for p, g in running)
            self.usage = 1.0 - (self.total - used) / self.total
            return outputs


    class LLM:
        def __init__(self, model, num_gpu_blocks_override, disable_log_stats=True, **options):
            assert disable_log_stats is False, "LLM() keeps no metrics by default"
            print(os.environ["STAND_IN_LOG"], file=sys.stderr, flush=True)
            self.llm_engine = _Engine(num_gpu_blocks_override)

        def get_metrics(self):
            blocks = str(self.llm_engine.num_gpu_blocks)
            return [
                SimpleNamespace(name="vllm:cache_config_info",
                                labels={"num_gpu_blocks": blocks}, value=1.0),
                SimpleNamespace(name="vllm:kv_cache_usage_perc", labels={},
                                value=self.llm_engine.usage),
            ]
    '''


def vllm_line(src: Path, lead: str, *args) -> str:
    """A line as vLLM 0.26.0 logs it: a prefix, then its own format string filled in."""
    found = {fmt for path in vllm_source.files_containing(src, lead)
             for fmt in vllm_source.log_formats(path) if fmt.startswith(lead)}
    assert len(found) == 1, f"vLLM has {len(found)} log formats starting {lead!r}"
    return f"INFO 11-29 08:00:00 [kv_cache_utils.py:1] {found.pop() % args}"


@pytest.fixture
def stand_in_vllm(tmp_path, monkeypatch, vllm_src):
    """Labs find the stand-in's `vllm` module and `vllm` program before any real vLLM."""
    packages, programs = tmp_path / "stand_in/python", tmp_path / "stand_in/bin"
    (packages / "vllm").mkdir(parents=True)
    (packages / "vllm/__init__.py").write_text(textwrap.dedent(STAND_IN_VLLM))
    programs.mkdir()
    cli = programs / "vllm"
    cli.write_text(f"#!/bin/sh\n[ \"$1\" = serve ] || exit 2\nshift\n"
                   f"exec {sys.executable} {SERVER} \"$@\"\n")
    cli.chmod(cli.stat().st_mode | stat.S_IXUSR)
    tokens = os.environ.get("STAND_IN_TOKENS", "16,000")
    log = "\n".join([
        vllm_line(vllm_src, "Overriding num_gpu_blocks=", 16220, 1000),
        vllm_line(vllm_src, "GPU KV cache size:", tokens),
        vllm_line(vllm_src, "Maximum concurrency for", "4,096", 1000 / 256),
    ])
    monkeypatch.setenv("STAND_IN_LOG", log)
    real_env = Lab._env

    def env(lab):
        env = real_env(lab)
        return {**env, "PATH": f"{programs}{os.pathsep}{env['PATH']}",
                "PYTHONPATH": str(packages)}

    monkeypatch.setattr(Lab, "_env", env)


def lesson_blocks():
    return [block for block in gpu_blocks(ROOT) if block.folder_name == "paged-attention"]


@pytest.mark.parametrize("lead", ["0", "1"])
def test_the_checks_pass_against_the_stand_in(stand_in_vllm, tmp_path, capsys, monkeypatch,
                                              lead):
    """Whether or not vLLM has scheduled the next token yet, the readings are the same."""
    monkeypatch.setenv("STAND_IN_LEAD", lead)
    assert [str(block) for block in lesson_blocks()] == [
        "paged-attention/usage_lab.py", "paged-attention/usage_serve.sh"]
    for block in lesson_blocks():
        lab = lab_for(block, ROOT, tmp_path / "logs")
        run_check(block, lab, ROOT)
        assert lab.ran == [block.file_name]
    summary = capsys.readouterr().out
    assert ("| after [40, 40, 40, 40] generated tokens | 0.1561561561561562"
            " (predicted 0.1561561561561562) |") in summary
    assert "| GPU KV cache size | 16,000 tokens (predicted 16,000) |" in summary
    assert "| predicted range | 32 to 50 blocks of 999 |" in summary


@pytest.mark.parametrize("file", ["usage_lab.py", "usage_serve.sh"])
def test_the_checks_fail_when_usage_is_not_out_of_999(stand_in_vllm, tmp_path, monkeypatch,
                                                      file):
    monkeypatch.setenv("STAND_IN_TOTAL", "1000")
    block = next(block for block in lesson_blocks() if block.file_name == file)
    message = ("0.156" if file == "usage_lab.py"
               else "values that are no block count out of 999")
    with pytest.raises(AssertionError, match=message):
        check_function(block, ROOT)(lab_for(block, ROOT, tmp_path / "logs"))


@pytest.mark.parametrize("file", ["usage_lab.py", "usage_serve.sh"])
def test_the_checks_fail_when_vllm_reports_another_capacity(stand_in_vllm, tmp_path,
                                                            monkeypatch, file):
    monkeypatch.setenv("STAND_IN_LOG", os.environ["STAND_IN_LOG"].replace("16,000", "15,984"))
    block = next(block for block in lesson_blocks() if block.file_name == file)
    with pytest.raises(AssertionError, match="vLLM reports 15,984 tokens for 4,096,"
                                             " predicted 16,000"):
        check_function(block, ROOT)(lab_for(block, ROOT, tmp_path / "logs"))
