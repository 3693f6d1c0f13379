"""The quantization lab's GPU checks (snippets/quantization/gpu_checks.py), offline, against
the dry run's stand-in for vLLM (tests/stand_in_vllm), which logs vLLM's own lines with
figures of its own arithmetic (its weights are counted apart from quant_memory.py): they pass
on the labs as written, and fail when a lab loads another checkpoint, when the prediction of
the weights is off by what GPTQ's dropped qzeros weigh, when the page names another kernel,
and when the served twin sets another engine. The real run is the GPU job's."""

import shutil

import pytest

from coursekit import ROOT
from coursekit.code import load
from coursekit.gpu_labs import Lab

FOLDER = ROOT / "snippets/quantization"


def checks_of():
    return load(FOLDER / "gpu_checks.py", "gpu_checks_of_quantization", ROOT)


def lab_in(folder, tmp_path):
    return Lab(folder, tmp_path / "logs")


@pytest.mark.parametrize(
    "file", ["lab_bf16.py", "lab_fp8.py", "lab_awq.py", "lab_gptq.py", "lab_speed_send.py"])
def test_the_checks_pass_against_the_stand_in(stand_in_vllm, tmp_path, capsys, file):
    lab = lab_in(FOLDER, tmp_path)
    checks_of().CHECKS[file](lab)
    assert file in lab.ran
    summary = capsys.readouterr().out
    assert "| dry run: Model loading took |" in summary
    assert "| dry run: decode at concurrency 1 |" in summary
    dtype = "float16" if file in ("lab_awq.py", "lab_gptq.py") else "bfloat16"
    assert f"| dry run: computes in | {dtype}; the page says {dtype} |" in summary
    if file != "lab_speed_send.py":
        assert "| dry run: decode at concurrency 256 |" in summary
    if file == "lab_awq.py":  # lab_bf16.py had not run: its check runs it for the ratios
        assert lab.ran == ["lab_awq.py", "lab_bf16.py"]
        assert "| dry run: awq / bf16 at concurrency 1 | measured " in summary
        assert "| dry run: awq / bf16 at concurrency 256 | measured " in summary
        assert "section 3's floors: 1.00x |" in summary
    if file != "lab_speed_send.py":  # the stand-in's logprobs: a perplexity of e**2 for BF16
        perplexity = {"lab_bf16.py": 7.3891, "lab_fp8.py": 7.4633, "lab_awq.py": 7.6141,
                      "lab_gptq.py": 7.6906}[file]
        assert f"| dry run: perplexity | {perplexity:.4f} over " in summary
        assert "tokens read from the cache: 0, 0)" in summary
    if file == "lab_speed_send.py":
        assert lab.ran == ["lab_fp8_serve.sh", "lab_speed_send.py"]
        assert "Selected CutlassFP8ScaledMMLinearKernel for Fp8PerTensorOnlineLinearMethod" in summary


def edited_lab(tmp_path, file, old, new):
    """A copy of the course's snippets with one lab edited; its Lab."""
    root = tmp_path / "course"
    shutil.copytree(ROOT / "snippets", root / "snippets")
    script = root / "snippets/quantization" / file
    assert old in script.read_text()
    script.write_text(script.read_text().replace(old, new))
    return lab_in(script.parent, tmp_path)


def test_a_lab_that_loads_another_checkpoint_fails(tmp_path):
    lab = edited_lab(tmp_path, "lab_awq.py", "-AWQ", "-GPTQ-Int4")
    with pytest.raises(AssertionError, match="lab_awq.py sets"):
        checks_of().CHECKS["lab_awq.py"](lab)


def test_a_lab_that_does_not_time_a_batch_fails(stand_in_vllm, tmp_path):
    lab = edited_lab(tmp_path, "lab_bf16.py", "    batch_speed(llm)\n", "")
    with pytest.raises(ValueError, match="no line like 'decode at concurrency 256"):
        checks_of().CHECKS["lab_bf16.py"](lab)


def test_a_weight_prediction_that_keeps_gptqs_qzeros_fails(stand_in_vllm, tmp_path,
                                                           monkeypatch):
    """Marlin drops a symmetric GPTQ checkpoint's qzeros (4 bits per group and output):
    about 0.024 GiB, more than the log's rounding."""
    checks = checks_of()
    counted = checks.compare.__globals__["logged_as_counted"].__globals__  # load_memory's
    original = counted["loading_parts"]
    linear = 28 * (3584 * (3584 + 2 * 512) + 3584 * 3584 + 3 * 3584 * 18944)

    def with_qzeros(preset, fmt, split):
        parts = original(preset, fmt, split)
        return {**parts, "weights": parts["weights"] + (
            linear // 128 // 2 if fmt == "gptq-int4-g128" else 0)}

    monkeypatch.setitem(counted, "loading_parts", with_qzeros)
    with pytest.raises(AssertionError, match="gptq: vLLM loaded 5.25 GiB, predicted"):
        checks.CHECKS["lab_gptq.py"](lab_in(FOLDER, tmp_path))


def test_a_page_that_names_another_kernel_fails(stand_in_vllm, tmp_path, monkeypatch):
    checks = checks_of()
    variants = checks.compare.__globals__["VARIANTS"]
    monkeypatch.setitem(variants, "awq", variants["awq"].__class__(
        "lab_awq.py", "awq-int4-g128", "Using MacheteLinearKernel for AutoAWQMarlinLinearMethod",
        "float16"))
    with pytest.raises(AssertionError, match="awq: vLLM logged the kernel lines"):
        checks.CHECKS["lab_awq.py"](lab_in(FOLDER, tmp_path))


def test_a_served_twin_with_another_engine_fails(tmp_path):
    root = tmp_path / "course"
    shutil.copytree(ROOT / "snippets", root / "snippets")
    script = root / "snippets/quantization/lab_fp8_serve.sh"
    script.write_text(script.read_text().replace("  --quantization fp8 \\\n", ""))
    with pytest.raises(AssertionError, match="lab_fp8_serve.sh sets"):
        checks_of().CHECKS["lab_speed_send.py"](lab_in(script.parent, tmp_path))
