"""The KV cache lab's GPU checks (snippets/kv-cache/gpu_checks.py), offline, against the dry run's
stand-in for vLLM (tests/stand_in_vllm): it logs vLLM 0.26.0's start-up lines with the figures
vLLM's arithmetic gives for the lab's model, selects the attention backend by vLLM's rules,
serves the OpenAI API, and starts its engine with multiprocessing's spawn, as vLLM may. The real
run is the GPU job's (tests/test_gpu_labs.py, .ci/gpu-job)."""

import shutil
import textwrap

import pytest

from coursekit import ROOT
from coursekit.gpu_labs import GpuBlock, Lab, check_function, gpu_blocks, lab_for, run_check


def kv_cache_blocks():
    return [block for block in gpu_blocks(ROOT) if block.folder_name == "kv-cache"]


@pytest.fixture
def lesson_copy(tmp_path):
    """A copy of the lesson's snippet folder, to break."""
    folder = tmp_path / "course/snippets/kv-cache"
    shutil.copytree(ROOT / "snippets/kv-cache", folder,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def test_the_checks_pass_against_the_stand_in(stand_in_vllm, tmp_path, capsys):
    assert [str(block) for block in kv_cache_blocks()] == [
        "kv-cache/check_gpu.py", "kv-cache/serve_kv.py", "kv-cache/serve_kv.sh"]
    for block in kv_cache_blocks():
        lab = lab_for(block, ROOT, tmp_path / "logs")
        run_check(block, lab, ROOT)
        assert lab.ran == [block.file_name]
    summary = capsys.readouterr().out
    # kv_cache_memory_bytes=4 GiB: exactly the calculator's 9,362 blocks, and every line of a
    # dry run's report says that it is one.
    assert "| dry run: predicted | 149,792 tokens (9,362 blocks) |" in summary
    assert "| dry run: reported GPU KV cache size | 149,792 tokens |" in summary
    assert [line for line in summary.splitlines()
            if line.startswith(("#", "| ")) and "dry run" not in line.lower()] == []
    logs = tmp_path / "logs/kv-cache"
    assert sorted(path.name for path in logs.iterdir()) == [
        "check_gpu.py.log", "kv_cache_memory_bytes.log", "serve_kv.py.log", "serve_kv.sh.log"]
    assert "Using AttentionBackendEnum.TRITON_ATTN backend." in (logs / "serve_kv.sh.log").read_text()


@pytest.mark.parametrize(("file", "old", "new"), [
    ("serve_kv.py", 'kv_cache_dtype="fp8"', 'kv_cache_dtype="auto"'),
    ("serve_kv.sh", "--kv-cache-dtype fp8", "--kv-cache-dtype auto"),
])
def test_the_checks_fail_when_vllm_reports_another_capacity(stand_in_vllm, lesson_copy, tmp_path,
                                                           edit, file, old, new):
    # A 16-bit KV cache holds half the tokens the calculator predicts for fp8.
    edit(lesson_copy / file, old, new)
    course = lesson_copy.parent.parent
    block = GpuBlock(f"kv-cache/{file}", ("docs/lessons/kv-cache.en.md",))
    with pytest.raises(AssertionError, match=r"vLLM reports [\d,]+ tokens, the calculator predicts"):
        check_function(block, course)(lab_for(block, course, tmp_path / "logs"))


def test_the_checks_fail_when_vllm_logs_another_backend(stand_in_vllm, lesson_copy, tmp_path, edit):
    edit(lesson_copy / "serve_kv.sh", "--attention-backend TRITON_ATTN", "--attention-backend auto")
    edit(lesson_copy / "serve_kv.sh", "--kv-cache-dtype fp8", "--kv-cache-dtype auto")
    course = lesson_copy.parent.parent
    block = GpuBlock("kv-cache/serve_kv.sh", ("docs/lessons/kv-cache.en.md",))
    with pytest.raises(AssertionError, match="did not log 'Using AttentionBackendEnum.TRITON_ATTN"):
        check_function(block, course)(lab_for(block, course, tmp_path / "logs"))
    assert "Using FLASH_ATTN attention backend out of potential backends:" in (
        tmp_path / "logs/kv-cache/serve_kv.sh.log").read_text()


def test_the_prerequisite_check_fails_on_an_old_driver(stand_in_vllm, tmp_path, monkeypatch):
    monkeypatch.setenv("STAND_IN_DRIVER", "570.124.06")
    block = next(block for block in kv_cache_blocks() if block.file_name == "check_gpu.py")
    with pytest.raises(AssertionError) as failure:
        run_check(block, lab_for(block, ROOT, tmp_path / "logs"))
    assert "check_gpu.py failed (exit 1)" in str(failure.value)
    assert ("FAIL  NVIDIA GeForce RTX 4090 (stand-in, dry run), driver 570.124.06, 24564 MiB,"
            " compute capability 8.9: CUDA 13 needs driver 580.65.06 or newer") in str(failure.value)


def test_the_lab_needs_its_main_guard(stand_in_vllm, lesson_copy, tmp_path):
    """Without `if __name__ == "__main__":`, the spawned engine runs the lab again and fails."""
    lab_file = lesson_copy / "serve_kv.py"
    head, guard, body = lab_file.read_text().partition('if __name__ == "__main__":')
    assert guard, "serve_kv.py has no main guard: update this test"
    lab_file.write_text(head + textwrap.dedent(body.split("\n", 1)[1]))
    lab = Lab(lesson_copy, tmp_path / "logs")
    with pytest.raises(AssertionError, match="serve_kv.py failed"):
        lab.run_python("serve_kv.py", timeout=60)
    assert "Engine core initialization failed" in (tmp_path / "logs/serve_kv.py.log").read_text()
