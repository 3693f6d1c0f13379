"""The continuous batching lab's GPU checks (snippets/continuous-batching/gpu_checks.py),
offline, against the dry run's stand-in for vLLM (tests/stand_in_vllm), whose scheduler is
its own: they pass on the labs as written, and fail when the lab lets vLLM's engine core
step on its own, when the prediction is a token off, and when no arrival steps explain a
served log. The real run is the GPU job's."""

import shutil
from dataclasses import replace

import pytest

from coursekit import ROOT
from coursekit.code import load
from coursekit.gpu_labs import Lab

FOLDER = ROOT / "snippets/continuous-batching"


def checks_of():
    return load(FOLDER / "gpu_checks.py", "gpu_checks_of_continuous_batching", ROOT)


def lab_in(folder, tmp_path):
    return Lab(folder, tmp_path / "logs")


@pytest.mark.parametrize("file", ["lab_chunks.py", "lab_preemption.py", "lab_send.py"])
def test_the_checks_pass_against_the_stand_in(stand_in_vllm, tmp_path, capsys, file):
    lab = lab_in(FOLDER, tmp_path)
    checks_of().CHECKS[file](lab)
    assert file in lab.ran
    summary = capsys.readouterr().out
    assert "Iteration(0): " in summary and "MISMATCH" not in summary
    if file == "lab_preemption.py":
        assert "| dry run: vllm:num_preemptions_total | 1 (predicted 1) |" in summary
    if file == "lab_send.py":
        assert lab.ran == ["lab_chunks_serve.sh", "lab_send.py"]
        assert "arrival steps read off the log" in summary


def test_a_lab_whose_engine_core_steps_on_its_own_fails(stand_in_vllm, tmp_path):
    """Without VLLM_ENABLE_V1_MULTIPROCESSING=0 the engine core runs in a process of its
    own and steps as soon as A reaches it: B and L land a step late."""
    root = tmp_path / "course"
    shutil.copytree(ROOT / "snippets", root / "snippets")
    script = root / "snippets/continuous-batching/lab_chunks.py"
    line = 'os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"\n'
    assert line in script.read_text()
    script.write_text(script.read_text().replace(line, ""))
    lab = lab_in(root / "snippets/continuous-batching", tmp_path)
    with pytest.raises(AssertionError, match="lab_chunks.py: Iteration lines: vLLM's Iteration"
                                             " lines are not the predicted"):
        checks_of().CHECKS["lab_chunks.py"](lab)  # which reads and runs the copy's script


@pytest.mark.parametrize("file", ["lab_chunks.py", "lab_send.py"])
def test_a_prediction_a_token_off_fails(stand_in_vllm, tmp_path, monkeypatch, file):
    checks = checks_of()
    a, b, long, short = checks.CHUNKS.requests
    off = replace(long, prompt_tokens=long.prompt_tokens + 1)
    monkeypatch.setattr(checks, "CHUNKS", replace(checks.CHUNKS, requests=(a, b, off, short)))
    message = ("no arrival steps make scheduler.py log what vLLM logged"
               if file == "lab_send.py" else "Iteration lines are not the predicted")
    with pytest.raises(AssertionError, match=message):
        checks.CHECKS[file](lab_in(FOLDER, tmp_path))
