"""What the dry run's stand-in for vLLM (tests/stand_in_vllm) models for the quantization lab
tells the truth about vLLM 0.26.0: its kernel tables are the wheel's, in the wheel's order,
with the wheel's minimum capabilities; its own count of the weights as vLLM holds them agrees
with the lesson's quant_memory.py, counted apart; it picks the quantization method vLLM picks;
LLM.generate gives max_tokens tokens in the time of its decode estimate."""

import ast
import os
import subprocess
import sys

import pytest
from decode_batch import matmul_flops
from hf_config import read_presets
from quant_memory import weight_bytes

KERNELS = "vllm/model_executor/kernels/linear"


def cuda_list(src, name):
    """The names in _POSSIBLE_..._KERNELS[PlatformEnum.CUDA] of the wheel, in order."""
    tree = ast.parse((src / f"{KERNELS}/__init__.py").read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == name:
            for key, value in zip(node.value.keys, node.value.values):
                if ast.unparse(key) == "PlatformEnum.CUDA":
                    return [element.id for element in value.elts]
    raise AssertionError(name)


def min_capability(src, kernel):
    for path in (src / KERNELS).rglob("*.py"):
        tree = ast.parse(path.read_text("utf-8"))
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == kernel):
            method = next(n for n in cls.body if isinstance(n, ast.FunctionDef)
                          and n.name == "get_min_capability")
            return ast.literal_eval(method.body[-1].value)
    raise AssertionError(kernel)


def test_its_kernel_tables_are_vllms(engine, vllm_src):
    mp = [name for name, _, _ in engine.MP_KERNELS]
    assert cuda_list(vllm_src, "_POSSIBLE_KERNELS")[:len(mp)] == mp
    for name, minimum, _ in engine.MP_KERNELS:
        assert min_capability(vllm_src, name) == minimum, name
    fp8 = [name for name, _ in engine.FP8_KERNELS]
    assert cuda_list(vllm_src, "_POSSIBLE_FP8_KERNELS")[:len(fp8)] == fp8
    gpu = engine.RTX_4090
    assert [engine.linear_kernel(m, gpu) for m in ("awq", "gptq", "fp8")] == [
        "MarlinLinearKernel", "MarlinLinearKernel", "CutlassFP8ScaledMMLinearKernel"]


@pytest.mark.parametrize("fmt, lesson", [("bf16", "bf16"), ("fp8", "fp8"),
                                         ("awq", "awq-int4-g128"), ("gptq", "gptq-int4-g128")])
def test_its_weights_are_the_lessons_counted_apart(engine, fmt, lesson):
    assert engine.resident_weight_bytes(fmt, *engine.QWEN_7B_SHAPE) == weight_bytes(
        "Qwen2.5-7B-Instruct", lesson)


def test_it_picks_the_method_vllm_picks(engine, capsys):
    assert engine.quantization_method("Qwen/Qwen2.5-7B-Instruct-AWQ", None) == "awq"
    assert engine.quantization_method("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "gptq_marlin") == "gptq"
    assert engine.quantization_method("Qwen/Qwen2.5-7B-Instruct", "fp8") == "fp8"
    with pytest.raises(ValueError, match=r"model config \(awq\) does not match"):
        engine.quantization_method("Qwen/Qwen2.5-7B-Instruct-AWQ", "fp8")
    started = engine.start("Qwen/Qwen2.5-7B-Instruct", {"quantization": "fp8"}, "LLM_CLASS")
    log = capsys.readouterr().out
    assert ("[__init__.py:635] Selected CutlassFP8ScaledMMLinearKernel for"
            " Fp8PerTensorOnlineLinearMethod\n") in log
    assert "[model_runner.py:305] Model loading took 8.17 GiB and 4.200000 seconds\n" in log
    assert 0.008 < started.decode_step_seconds < 0.012
    # Its matmuls of a decode step, counted apart, are the lesson's (decode_batch.py), and
    # take longer than the reads only for a large batch.
    assert started.token_flops == matmul_flops(read_presets()["Qwen2.5-7B-Instruct"].config, 1, 1)
    assert started.decode_seconds(1) == started.decode_step_seconds
    assert started.decode_seconds(256) > 2 * started.decode_step_seconds


def test_its_llm_generates_max_tokens_in_its_decode_time(stand_in_vllm, tmp_path):
    lab = tmp_path / "lab.py"
    lab.write_text(
        "import time\nfrom vllm import LLM, SamplingParams\n\nif __name__ == '__main__':\n"
        "    llm = LLM(model='Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4', max_model_len=4096)\n"
        "    start = time.perf_counter()\n"
        "    out = llm.generate(['hi'], SamplingParams(max_tokens=51), use_tqdm=False)\n"
        "    print(len(out[0].outputs[0].token_ids), time.perf_counter() - start,"
        " llm.engine.decode_step_seconds)\n")
    env = {**os.environ, "VLLM_LOGGING_STREAM": "ext://sys.stderr"}  # as a Lab runs it
    run = subprocess.run([sys.executable, str(lab)], capture_output=True, text=True, check=True,
                         env=env)
    tokens, seconds, step = run.stdout.split()
    assert int(tokens) == 51 and float(seconds) >= 50 * float(step)
    assert "Using MarlinLinearKernel for AutoGPTQLinearMethod" in run.stderr


def test_its_prompt_logprobs_skip_the_prefix_cache(stand_in_vllm, tmp_path):
    """With prompt_logprobs a request reads nothing from the prefix cache (vLLM:
    SamplingParams.__post_init__, KVCacheManager.get_computed_blocks); without, the same
    prompt sent again hits its full blocks. The logprobs: None first, then one per token."""
    lab = tmp_path / "lab.py"
    lab.write_text(
        "from vllm import LLM, SamplingParams\n\nif __name__ == '__main__':\n"
        "    llm = LLM(model='Qwen/Qwen2.5-7B-Instruct-AWQ', max_model_len=4096,"
        " enable_prefix_caching=True)\n"
        "    prompt = {'prompt_token_ids': list(range(40))}\n"
        "    for logprobs in (0, 0, None, None):\n"
        "        out = llm.generate(prompt, SamplingParams(max_tokens=1, prompt_logprobs=logprobs),"
        " use_tqdm=False)[0]\n"
        "        entries = out.prompt_logprobs\n"
        "        print(out.num_cached_tokens, entries and (entries[0], len(entries),"
        " entries[1][1].logprob))\n")
    env = {**os.environ, "VLLM_LOGGING_STREAM": "ext://sys.stderr"}
    run = subprocess.run([sys.executable, str(lab)], capture_output=True, text=True, check=True,
                         env=env)
    assert run.stdout.splitlines() == [
        "0 (None, 40, -2.03)", "0 (None, 40, -2.03)", "32 None", "32 None"]
