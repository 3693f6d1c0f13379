"""The quantization lab's parsers and comparison (snippets/quantization/lab_quant_check.py),
on lines built from vLLM 0.26.0's own format strings, read from the wheel: the lines the
lab reads are the ones vLLM logs, the kernel lines the page names are the ones vLLM would
print, and every tolerance fails a figure just outside it."""

import ast

import pytest
from hf_config import read_presets
from kv_cache_size import GIB
from kv_capacity import predict
from lab_quant_check import (
    BATCH,
    PRESET,
    VARIANTS,
    batch_ceiling,
    batch_floors_ms,
    ceiling,
    compare,
    read_batch_speed,
    read_kernel_lines,
    read_loading_gib,
    read_speed,
    versus,
)
from load_memory import loading_figures
from quant_memory import weight_bytes

QUANT = "vllm/model_executor/layers/quantization"


def format_string(src, relative, starts):
    """The one format string of a vLLM file that starts so."""
    tree = ast.parse((src / relative).read_text("utf-8"))
    found = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
             and isinstance(node.value, str) and node.value.startswith(starts)}
    assert len(found) == 1, f"{relative}: {found}"
    return found.pop()


def vllm_line(fmt, *args):
    """A line as vLLM's logger prints it."""
    return f"(EngineCore pid=123) INFO 11-29 15:00:00 [file.py:1] {fmt % args}"


@pytest.fixture
def lines(vllm_src):
    """vLLM 0.26.0's lines for the lab: the loading line of each model runner, the kernel
    lines, and the KV capacity lines."""
    return {
        "engine": format_string(vllm_src, "vllm/v1/engine/core.py", "Initializing a V1"),
        "loading_v2": format_string(vllm_src, "vllm/v1/worker/gpu/model_runner.py",
                                    "Model loading took"),
        "loading_v1": format_string(vllm_src, "vllm/v1/worker/gpu_model_runner.py",
                                    "Model loading took"),
        "awq": format_string(vllm_src, f"{QUANT}/auto_awq.py", "Using %s for"),
        "gptq": format_string(vllm_src, f"{QUANT}/auto_gptq.py", "Using %s for"),
        "fp8": format_string(vllm_src, "vllm/model_executor/kernels/linear/__init__.py",
                             "Selected %s for"),
        "available": format_string(vllm_src, "vllm/v1/worker/gpu_worker.py",
                                   "Available KV cache memory"),
        "tokens": format_string(vllm_src, "vllm/v1/core/kv_cache_utils.py", "GPU KV cache size"),
        "concurrency": format_string(vllm_src, "vllm/v1/core/kv_cache_utils.py",
                                     "Maximum concurrency"),
    }


def test_the_loading_line_of_either_model_runner_is_read(lines):
    assert lines["loading_v2"] == "Model loading took %s GiB and %.6f seconds"
    for key in ("loading_v2", "loading_v1"):
        assert read_loading_gib(vllm_line(lines[key], "5.19", 12.5)) == 5.19
    with pytest.raises(ValueError, match="no line like 'Model loading took"):
        read_loading_gib("Model loading took a while")


def test_the_kernel_lines_the_page_names_are_vllms(lines):
    logged = {
        "fp8": vllm_line(lines["fp8"], "CutlassFP8ScaledMMLinearKernel",
                         "Fp8PerTensorOnlineLinearMethod"),
        "awq": vllm_line(lines["awq"], "MarlinLinearKernel"),
        "gptq": vllm_line(lines["gptq"], "MarlinLinearKernel"),
    }
    for name, line in logged.items():
        # logged once per kernel: a second layer adds no line, other text is not one
        text = f"{line}\n{line}\nINFO Using AttentionBackendEnum.FLASH_ATTN backend.\n"
        assert read_kernel_lines(text) == [VARIANTS[name].kernel_line]
    assert VARIANTS["bf16"].kernel_line is None


def run_log(lines, name, loaded_gib, speed, tokens=None, dtype=None, batch=None):
    """A lab's output: vLLM's lines, with the KV capacity lesson 1 predicts for 10 GiB; the
    speed at concurrency BATCH is 80% of its ceiling unless given."""
    capacity = predict(read_presets()[PRESET].model, 10 * GIB, 8192)
    variant = VARIANTS[name]
    config = (f"model='Qwen/Qwen2.5-7B-Instruct', speculative_config=None, tokenizer_mode=auto,"
              f" dtype=torch.{dtype or variant.dtype}, max_seq_len=8192, quantization=None")
    kernel = vllm_line(lines["engine"], "0.26.0", config) + "\n"
    if variant.kernel_line:
        kernel += vllm_line("%s", variant.kernel_line) + "\n"
    return (kernel + vllm_line(lines["loading_v2"], f"{loaded_gib:.2f}", 30.1) + "\n"
            + vllm_line(lines["available"], "10.0") + "\n"
            + vllm_line(lines["tokens"], f"{tokens or capacity.tokens:,}") + "\n"
            + vllm_line(lines["concurrency"], "8,192", capacity.max_concurrency) + "\n"
            + f"decode at concurrency 1: {speed:.1f} tokens/s (128 steps in 1.000 s)\n"
            + batch_line(batch or 0.8 * batch_ceiling(variant.fmt))
            + quality_lines())


def batch_line(speed):
    """batch_speed()'s line, as lab_quant_check.batch_speed prints it."""
    return (f"decode at concurrency {BATCH}: {speed:.1f} tokens/s"
            f" (128 steps of {BATCH} sequences in 3.000 s)\n")


def quality_lines(first=(7.3891, 120, 0), again=(7.3891, 120, 0)):
    """quality()'s two lines, as lab_quant_check.quality prints them."""
    return "".join(
        f"perplexity ({attempt}): {ppl:.4f} over {tokens} tokens, {cached} of the prompt's"
        " tokens read from the cache\n"
        for attempt, (ppl, tokens, cached) in (("first", first), ("again", again)))


@pytest.mark.parametrize("name", list(VARIANTS))
def test_a_run_as_predicted_matches(lines, name):
    floor = ceiling(VARIANTS[name].fmt)
    # what loading allocates, with 0.26.0's allocator setting or PyTorch's default; the
    # log rounds it to 0.01 GiB
    for allocated in loading_figures(PRESET, VARIANTS[name].fmt):
        text = run_log(lines, name, allocated, 0.8 * floor)
        rows, problems = compare(name, text, text)
        assert problems == [], problems
    assert "80% of the ceiling" in rows["decode at concurrency 1"]
    assert "80% of the ceiling" in rows["decode at concurrency 256"]


def test_at_concurrency_256_every_format_is_bound_by_its_math():
    """Section 3's floors of a step of 256 sequences: the reads of each format
    (quant_memory.decode_floor_ms) and its math (decode_floor.compute_floor_ms), the longer
    of which sets the ceiling: the math, in every format. BF16, AWQ and GPTQ multiply in
    16-bit, so AWQ's ceiling is BF16's (1.00x), where at concurrency 1 it is 3.15x. FP8 is
    W8A8 on SM 8.9: its linear layers at the FP8 rate, twice BF16's, and lm_head (an
    embedding-shaped matrix, not a LinearBase) in 16-bit."""
    from decode_batch import PEAK_BF16
    from decode_floor import CONFIG, PEAK_FP8, compute_floor_ms
    from model_weights import count
    from quant_memory import decode_floor_ms

    assert BATCH == 256
    for variant in VARIANTS.values():
        reads, math_ms = batch_floors_ms(variant.fmt)
        assert reads == decode_floor_ms(PRESET, variant.fmt, 256, 16 + 1 + 128)
        assert math_ms == compute_floor_ms(256, variant.fmt) > reads
        assert batch_ceiling(variant.fmt) == 256 * 1000 / math_ms
    linear = 2 * count(CONFIG).linear * 256
    lm_head = 2 * CONFIG["vocab_size"] * CONFIG["hidden_size"] * 256
    assert compute_floor_ms(256, "fp8") == pytest.approx((linear / PEAK_FP8 + lm_head / PEAK_BF16) * 1000)
    assert compute_floor_ms(256, "awq-int4-g128") == compute_floor_ms(256) == pytest.approx(
        (linear + lm_head) / PEAK_BF16 * 1000)
    assert round(batch_ceiling("awq-int4-g128") / batch_ceiling("bf16"), 2) == 1.00
    assert round(batch_ceiling("fp8") / batch_ceiling("bf16"), 2) == 1.86
    assert round(ceiling("awq-int4-g128") / ceiling("bf16"), 2) == 3.15
    assert read_batch_speed(batch_line(9000.04)) == 9000.0
    with pytest.raises(ValueError, match="no line like 'decode at concurrency 256"):
        read_batch_speed("decode at concurrency 1: 57.3 tokens/s")


def test_versus_reports_the_measured_ratios_next_to_the_floors(lines):
    """AWQ against BF16: at concurrency 1 and 256, measured and as the floors predict;
    reported, whatever they are (an INT4 run slower than BF16 is what it may show)."""
    bf16 = run_log(lines, "bf16", 14.19, 60.0, batch=8000.0)
    awq = run_log(lines, "awq", 5.19, 150.0, batch=7200.0)
    assert versus(bf16, awq) == {
        "awq / bf16 at concurrency 1": "measured 2.50x (150.0 and 60.0 tokens/s);"
        " section 3's floors: 3.15x",
        "awq / bf16 at concurrency 256": "measured 0.90x (7200.0 and 8000.0 tokens/s);"
        " section 3's floors: 1.00x",
    }


def test_the_tolerances_fail_a_figure_just_outside(lines):
    predicted, older = loading_figures(PRESET, "awq-int4-g128")
    assert predicted - older == pytest.approx(80.5 * 1024**2 / GIB)  # the allocator's rounding
    for loaded in (older - 0.01, predicted + 0.01, (predicted + older) / 2):
        text = run_log(lines, "awq", loaded, 100)
        assert compare("awq", text, text)[1][0].startswith("awq: vLLM loaded")
    text = run_log(lines, "awq", predicted, 100, tokens=123_456)
    assert "lesson 1's calculator" in compare("awq", text, text)[1][0]
    most = ceiling("awq-int4-g128")
    text = run_log(lines, "awq", predicted, int(most * 10) / 10)
    assert compare("awq", text, text)[1] == []
    text = run_log(lines, "awq", predicted, most + 0.1)
    assert "above the bandwidth ceiling" in compare("awq", text, text)[1][0]
    most = batch_ceiling("awq-int4-g128")
    text = run_log(lines, "awq", predicted, 100, batch=int(most * 10) / 10)
    assert compare("awq", text, text)[1] == []
    text = run_log(lines, "awq", predicted, 100, batch=most + 0.1)
    assert compare("awq", text, text)[1] == [
        f"awq: {most + 0.1:.1f} tokens/s at concurrency 256, above the ceiling {most:.0f}"]
    # a BF16 run that logged a quantized kernel, and an AWQ run that logged none
    text = run_log(lines, "awq", loading_figures(PRESET, "bf16")[0], 50, dtype="bfloat16")
    assert compare("bf16", text, text)[1] == [
        "bf16: vLLM logged the kernel lines ['Using MarlinLinearKernel for"
        " AutoAWQMarlinLinearMethod'], the page says []"]
    text = run_log(lines, "bf16", predicted, 100, dtype="float16")
    assert compare("awq", text, text)[1] == [
        "awq: vLLM logged the kernel lines [], the page says ['Using MarlinLinearKernel for"
        " AutoAWQMarlinLinearMethod']"]


def test_the_ceiling_is_section_3s_floor(lines):
    """One model: the lab's ceiling is quant_memory.decode_floor_ms, which reads one row of
    the embedding table per sequence, not the whole table."""
    from quant_memory import decode_floor_ms

    assert ceiling("bf16") == 1000 / decode_floor_ms(PRESET, "bf16", 1, 16 + 1 + 128)
    weights = weight_bytes(PRESET, "bf16") - 152064 * 3584 * 2 + 3584 * 2
    kv = 145 * 57344
    assert ceiling("bf16") == pytest.approx(1008e9 / (weights + kv))
    assert read_speed("decode at concurrency 1: 57.3 tokens/s (128 steps in 2.2 s)") == 57.3


def test_the_dtype_each_run_computes_in_is_checked(lines):
    """dtype="auto" takes the checkpoint's torch_dtype: Qwen's AWQ and GPTQ checkpoints
    declare float16, so those runs compute in FP16, the BF16 and FP8 runs in BF16."""
    assert lines["engine"] == "Initializing a V1 LLM engine (v%s) with config: %s"
    assert {name: v.dtype for name, v in VARIANTS.items()} == {
        "bf16": "bfloat16", "fp8": "bfloat16", "awq": "float16", "gptq": "float16"}
    predicted = loading_figures(PRESET, "awq-int4-g128")[0]
    text = run_log(lines, "awq", predicted, 100, dtype="bfloat16")
    assert compare("awq", text, text)[1] == [
        "awq: vLLM computes in bfloat16, the page says float16"]
    with pytest.raises(ValueError, match="no engine config line"):
        compare("awq", text.split("\n", 1)[1], text)


def test_the_vllm_config_line_names_the_dtype(vllm_src):
    """VllmConfig.__str__, which the engine line prints, holds dtype={model_config.dtype}."""
    source = (vllm_src / "vllm/config/vllm.py").read_text("utf-8")
    assert 'f"dtype={self.model_config.dtype}, "' in source


def test_the_perplexity_is_reported_and_its_requests_skip_the_prefix_cache(lines):
    """A prompt_logprobs request does not read the prefix cache, so the second of the two
    perplexity requests computes every token again: a run that read any from the cache, or
    measured two different token counts, fails; the served twin prints no perplexity."""
    predicted = loading_figures(PRESET, "awq-int4-g128")[0]
    text = run_log(lines, "awq", predicted, 100)
    rows, problems = compare("awq", text, text)
    assert problems == []
    assert rows["perplexity"] == (
        "7.3891 over 120 tokens (again: 7.3891; tokens read from the cache: 0, 0)")
    cached = text.replace(quality_lines(), quality_lines(again=(7.3891, 120, 112)))
    assert compare("awq", cached, cached)[1] == [
        "awq: the perplexity requests read 0 and 112 tokens from the prefix cache,"
        " the page says none"]
    other = text.replace(quality_lines(), quality_lines(again=(7.5, 119, 0)))
    assert "not two measurements of one text" in compare("awq", other, other)[1][0]
    served = text.replace(quality_lines(), "")
    with pytest.raises(ValueError, match="no two lines like 'perplexity"):
        compare("awq", served, served)
    assert "perplexity" not in compare("awq", served, served, quality=False)[0]


def test_quality_computes_the_perplexity_from_the_prompt_logprobs(capsys, monkeypatch):
    """exp(-mean) of the logprob of each prompt token after the first, as RequestOutput holds
    them with prompt_logprobs=0; vLLM's SamplingParams takes the keyword (the claims test)."""
    import math
    import sys
    from types import ModuleType, SimpleNamespace

    import lab_quant_check

    vllm = ModuleType("vllm")
    vllm.SamplingParams = lambda **kw: SimpleNamespace(**kw)
    monkeypatch.setitem(sys.modules, "vllm", vllm)

    class FakeLLM:
        def generate(self, prompts, params, use_tqdm):
            assert params.prompt_logprobs == 0 and params.max_tokens == 1
            ids = [5, 6, 7]
            entries = [None, {6: SimpleNamespace(logprob=-1.0)}, {7: SimpleNamespace(logprob=-3.0)}]
            return [SimpleNamespace(prompt_token_ids=ids, prompt_logprobs=entries,
                                    num_cached_tokens=0)]

    lab_quant_check.quality(FakeLLM())
    out = capsys.readouterr().out
    assert f"perplexity (first): {math.exp(2):.4f} over 2 tokens, 0 of the prompt's" in out
    assert lab_quant_check.read_quality(out) == [(round(math.exp(2), 4), 2, 0)] * 2


def test_the_batch_of_256_fits_in_the_kv_cache():
    """At most 16 + 1 + 128 tokens a sequence, 10 blocks of 16: 2,560 blocks, well inside
    the 8,851 that bf16's weights leave (lesson 1's upper bound), so the concurrency-256
    floors describe a batch the card can hold."""
    from lab_quant_check import batch_blocks

    assert batch_blocks() == (256 * 10, 8851)
