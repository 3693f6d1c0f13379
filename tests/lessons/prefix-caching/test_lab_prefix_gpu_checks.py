"""The prefix caching lab's GPU checks (snippets/prefix-caching/gpu_checks.py), offline,
against the dry run's stand-in for vLLM (tests/stand_in_vllm), whose prefix cache is its
own (stand_in.PrefixIndex, no code shared with prefix_cache.py): they pass on the labs as
written, and fail when a lab forgets a reset, when the server does not report cached
tokens, and when the prediction is a block off. The real run is the GPU job's."""

import shutil
from dataclasses import replace

import pytest
from lab_hits import predict

from coursekit import ROOT
from coursekit.code import load
from coursekit.gpu_labs import Lab

FOLDER = ROOT / "snippets/prefix-caching"
FILES = ["lab_prefix.py", "lab_prefix_send.py"]


def checks_of():
    return load(FOLDER / "gpu_checks.py", "gpu_checks_of_prefix_caching", ROOT)


def copy_of_the_lesson(tmp_path, file, old, new):
    """The snippets in a folder of their own, one of the lesson's files edited."""
    root = tmp_path / "course"
    shutil.copytree(ROOT / "snippets", root / "snippets")
    path = root / "snippets/prefix-caching" / file
    assert old in path.read_text(), f"{file} no longer holds {old!r}: update this test"
    path.write_text(path.read_text().replace(old, new))
    return root / "snippets/prefix-caching"


@pytest.mark.parametrize("file", FILES)
def test_the_checks_pass_against_the_stand_in(stand_in_vllm, tmp_path, capsys, file):
    lab = Lab(FOLDER, tmp_path / "logs")
    checks_of().CHECKS[file](lab)
    summary = capsys.readouterr().out
    assert "| dry run: 1b: prompt, cached tokens | (100, 96) (predicted (100, 96)) |" in summary
    assert "| dry run: 3b: prompt, cached tokens | (64, 48) (predicted (64, 48)) |" in summary
    assert "| dry run: vllm:prefix_cache_hits | 192 (predicted 192) |" in summary
    assert "| dry run: 'Successfully reset prefix cache' lines | 3 (predicted 3) |" in summary
    if file == "lab_prefix_send.py":
        assert lab.ran == ["lab_prefix_serve.sh", "lab_prefix_send.py"]
    else:
        assert lab.ran == ["lab_prefix.py"]


@pytest.mark.parametrize("file", FILES)
def test_a_lab_that_does_not_reset_fails(stand_in_vllm, tmp_path, file):
    """Without the resets, 2a finds 1a's blocks still cached: 96, not 0."""
    old = "        if number:"
    folder = copy_of_the_lesson(tmp_path, file, old, "        if False:")
    with pytest.raises(AssertionError, match=f"{file}: vLLM reported"):
        checks_of().CHECKS[file](Lab(folder, tmp_path / "logs"))


def test_a_server_without_prompt_tokens_details_fails(stand_in_vllm, tmp_path):
    folder = copy_of_the_lesson(tmp_path, "lab_prefix_serve.sh",
                                " \\\n  --enable-prompt-tokens-details", "")
    with pytest.raises(AssertionError, match="without --enable-prompt-tokens-details"):
        checks_of().CHECKS["lab_prefix_send.py"](Lab(folder, tmp_path / "logs"))


def test_a_server_without_dev_mode_has_no_reset_endpoint(stand_in_vllm, tmp_path):
    """The check refuses the script, and the stand-in, as vLLM, answers 404 without it."""
    folder = copy_of_the_lesson(tmp_path, "lab_prefix_serve.sh",
                                "VLLM_SERVER_DEV_MODE=1 vllm serve", "vllm serve")
    with pytest.raises(AssertionError, match="needs VLLM_SERVER_DEV_MODE=1"):
        checks_of().CHECKS["lab_prefix_send.py"](Lab(folder, tmp_path / "logs"))
    lab = Lab(folder, tmp_path / "logs")
    with lab.serve("lab_prefix_serve.sh") as server, pytest.raises(
            AssertionError, match="HTTP Error 404"):
        lab.run_python("lab_prefix_send.py", server.url)


@pytest.mark.parametrize("file", FILES)
def test_a_prediction_a_block_off_fails(stand_in_vllm, tmp_path, monkeypatch, file):
    """A prediction that forgets the last-token rule: 3b would hit all 4 blocks, 64."""
    checks = checks_of()
    report, cache = predict()
    requests = {**report.requests, "3b": (64, 64)}
    counters = {**report.counters, "vllm:prefix_cache_hits": 208}
    off = replace(report, requests=requests, counters=counters)
    monkeypatch.setattr(checks, "predict", lambda: (off, cache))
    with pytest.raises(AssertionError, match=f"{file}: vLLM reported"):
        checks.CHECKS[file](Lab(FOLDER, tmp_path / "logs"))


def test_the_ttft_check_passes_against_the_stand_in_and_reports_the_times(
        stand_in_vllm, tmp_path, capsys):
    lab = Lab(FOLDER, tmp_path / "logs")
    checks_of().CHECKS["lab_ttft.py"](lab)
    summary = capsys.readouterr().out
    assert "| dry run: miss 2: prompt, cached tokens | (4000, 0) (predicted (4000, 0)) |" in summary
    assert "| dry run: hit 3: prompt, cached tokens | (4000, 3984) (predicted (4000, 3984)) |" in summary
    assert "| dry run: median TTFT of a miss |" in summary and "| dry run: miss / hit |" in summary
    assert lab.ran == ["lab_ttft.py"]


def test_a_ttft_lab_that_does_not_reset_fails(stand_in_vllm, tmp_path):
    """Without the resets, rounds 2 and 3 hit on their first request too."""
    old = "        llm.reset_prefix_cache()  # so that"
    folder = copy_of_the_lesson(tmp_path, "lab_ttft.py", old, "        pass  # so that")
    with pytest.raises(AssertionError, match="lab_ttft.py: vLLM reported"):
        checks_of().CHECKS["lab_ttft.py"](Lab(folder, tmp_path / "logs"))
