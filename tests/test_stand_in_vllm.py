"""The dry run's stand-in for vLLM (tests/stand_in_vllm) tells the truth about vLLM 0.26.0: the
log lines it prints are vLLM's own format strings, at the lines of the wheel's source that log
them; its tables (backends, kv cache dtypes, scheduler defaults, option defaults) are read back
from the wheel; its capacity is the lesson's calculator's; and it refuses to stand in where it
must not (outside the dry run, where a GPU is present, for a model or option it does not know).
"""

import ast
import subprocess
import sys

import pytest
from kv_cache_size import GIB
from kv_capacity import QWEN_FP8, predict

from coursekit import ROOT, vllm_source

STAND_IN = ROOT / "tests/stand_in_vllm"


def tree(src, relative):
    return ast.parse((src / relative).read_text("utf-8"))


def function(module, name):
    return next(node for node in ast.walk(module)
                if isinstance(node, ast.FunctionDef) and node.name == name)


# -- what it prints and models is vLLM's --------------------------------------------------------


def test_its_log_lines_are_vllms_own(engine, vllm_src):
    for key, (relative, line, fmt) in engine.LOG_FORMATS.items():
        calls = [node for node in ast.walk(tree(vllm_src, relative)) if isinstance(node, ast.Call)
                 and getattr(node.func, "attr", "").startswith(("info", "warning"))
                 and node.lineno == line and node.args
                 and isinstance(node.args[0], ast.Constant) and node.args[0].value == fmt]
        assert calls, f"{key}: {relative}:{line} logs no {fmt!r} in vLLM 0.26.0"


def test_its_backend_tables_are_vllms(engine, vllm_src):
    registry = tree(vllm_src, "vllm/v1/attention/backends/registry.py")
    enum = next(node for node in registry.body
                if isinstance(node, ast.ClassDef) and node.name == "AttentionBackendEnum")
    paths = {node.targets[0].id: ast.literal_eval(node.value) for node in enum.body
             if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    for backend, dtypes in engine.KV_CACHE_DTYPES.items():
        module, cls = paths[backend].rsplit(".", 1)
        source = tree(vllm_src, module.replace(".", "/") + ".py")
        body = next(node for node in source.body if isinstance(node, ast.ClassDef)
                    and node.name == cls).body
        declared = next(node.value for node in body if isinstance(node, ast.AnnAssign)
                        and node.target.id == "supported_kv_cache_dtypes")
        assert ast.literal_eval(declared) == dtypes, backend
    priorities = function(tree(vllm_src, "vllm/platforms/cuda.py"), "_get_backend_priorities")
    lists = [[getattr(element, "attr", ast.unparse(element)) for element in node.value.elts]
             for node in ast.walk(priorities)
             if isinstance(node, ast.Return) and isinstance(node.value, ast.List)]
    assert engine.PRIORITIES in lists  # the list for a GPU that is not of compute capability 10


def test_its_defaults_are_vllms(engine, vllm_src):
    batch = function(tree(vllm_src, "vllm/engine/arg_utils.py"), "get_batch_defaults")
    found = {"default_max_num_batched_tokens": [], "default_max_num_seqs": []}
    for node in ast.walk(batch):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            found[target.id].append({key.attr: ast.unparse(value)
                                     for key, value in zip(node.value.keys, node.value.values)})
    # The second assignment of each is the `else:` of `device_memory >= 70 * GiB_bytes`.
    assert "70 * GiB_bytes" in ast.unparse(batch)
    for context, defaults in engine.BATCH_DEFAULTS.items():
        assert found["default_max_num_batched_tokens"][1][context] == str(defaults[
            "max_num_batched_tokens"])
        assert found["default_max_num_seqs"][1][context] == str(defaults["max_num_seqs"])
    for option, value in engine.OPTIONS.items():
        assert vllm_source.declared_default(vllm_src, option) == value, option
    assert engine.DEFAULT_BLOCK_SIZE == vllm_source.cache_config_defaults(vllm_src)[
        "DEFAULT_BLOCK_SIZE"]


def test_its_capacity_is_the_lessons(engine, capsys):
    options = {"max_model_len": 8192, "kv_cache_dtype": "fp8", "attention_backend": "TRITON_ATTN",
               "kv_cache_memory_bytes": 4 * GIB}
    started = engine.start("Qwen/Qwen2.5-7B-Instruct-AWQ", options, "LLM_CLASS")
    expected = predict(QWEN_FP8, 4 * GIB, 8192)
    assert (started.num_blocks, started.tokens, started.block_size) == (
        expected.num_blocks, expected.tokens, 16) == (9362, 149_792, 16)
    log = capsys.readouterr().out
    assert "[cuda.py:422] Using AttentionBackendEnum.TRITON_ATTN backend.\n" in log
    assert "GPU KV cache size: 149,792 tokens\n" in log
    assert "Maximum concurrency for 8,192 tokens per request: 18.29x\n" in log
    assert "Available KV cache memory" not in log  # kv_cache_memory_bytes skips the profiling
    arch = engine.MODELS["Qwen/Qwen2.5-7B-Instruct-AWQ"]
    assert (arch.num_layers, arch.num_kv_heads, arch.head_dim) == (
        QWEN_FP8.num_layers, QWEN_FP8.num_kv_heads, QWEN_FP8.head_dim)


def test_num_gpu_blocks_override_fixes_the_blocks(engine, capsys):
    started = engine.start("Qwen/Qwen2.5-7B-Instruct-AWQ",
                           {"max_model_len": 4096, "num_gpu_blocks_override": 1000}, "LLM_CLASS")
    assert (started.num_blocks, started.tokens) == (1000, 16_000)
    assert "with num_gpu_blocks_override=1000\n" in capsys.readouterr().out


def test_what_it_does_not_model_fails_clearly(stand_in_vllm, tmp_path):
    lab = tmp_path / "lab.py"
    lab.write_text("from vllm import LLM\n\nif __name__ == '__main__':\n"
                   "    LLM(model='Qwen/Qwen2.5-7B-Instruct-AWQ', kv_cache_dtype='auto').embed(['hi'])\n")
    run = subprocess.run([sys.executable, str(lab)], capture_output=True, text=True)
    assert run.returncode == 1 and ("the stand-in for vLLM does not model LLM.embed: model it"
                                    " in tests/stand_in_vllm") in run.stderr


def test_llm_and_serve_differ_unless_the_lab_sets_the_batch(engine, capsys):
    model, base = "Qwen/Qwen2.5-7B-Instruct-AWQ", {"max_model_len": 8192,
                                                   "attention_backend": "TRITON_ATTN"}
    llm = engine.start(model, base, "LLM_CLASS")
    serve = engine.start(model, base, "OPENAI_API_SERVER")
    assert llm.num_blocks < serve.num_blocks  # 8192 tokens per step profile a larger peak
    both = {**base, "max_num_batched_tokens": 2048, "max_num_seqs": 256}
    assert engine.start(model, both, "LLM_CLASS") == engine.start(model, both, "OPENAI_API_SERVER")


# -- the backend it would pick ------------------------------------------------------------------


def test_fp8_kv_without_a_pinned_backend_fails_as_flashinfer_would(engine, capsys):
    with pytest.raises(engine.StandInError, match=(
            r"vLLM 0.26.0 would use FLASHINFER here \(kv_cache_dtype='fp8' on compute capability"
            r" 8.9, no attention backend pinned\): FlashInfer JIT-compiles its attention kernels"
            r" at start-up, with nvcc from a CUDA 13 toolkit and ninja")):
        engine.start("Qwen/Qwen2.5-7B-Instruct-AWQ", {"kv_cache_dtype": "fp8"}, "LLM_CLASS")
    assert ("Using FLASHINFER attention backend out of potential backends:"
            " ['FLASHINFER', 'TRITON_ATTN'].") in capsys.readouterr().out


def test_a_pinned_backend_is_validated_as_vllm_does(engine):
    with pytest.raises(ValueError, match=r"Selected backend AttentionBackendEnum.FLASH_ATTN is not"
                       r" valid for this configuration. Reason: \['kv_cache_dtype not supported'\]"):
        engine.start("Qwen/Qwen2.5-7B-Instruct-AWQ",
                     {"kv_cache_dtype": "fp8", "attention_backend": "FLASH_ATTN"}, "LLM_CLASS")


def test_a_16_bit_kv_cache_gets_flashattention(engine, capsys):
    started = engine.start("Qwen/Qwen2.5-7B-Instruct-AWQ", {}, "OPENAI_API_SERVER")
    assert started.backend == "FLASH_ATTN" and started.options["max_num_batched_tokens"] == 2048
    assert "Using FLASH_ATTN attention backend out of potential backends:" in capsys.readouterr().out


# -- where it refuses ---------------------------------------------------------------------------


def test_an_unknown_model_or_option_fails_clearly(engine):
    with pytest.raises(engine.StandInError, match=r"does not know the model 'some/model': add its"
                       r" architecture \(config.json\) to MODELS in tests/stand_in_vllm"):
        engine.start("some/model", {}, "LLM_CLASS")
    with pytest.raises(engine.StandInError, match="does not model the option.s. swap_space"):
        engine.start("Qwen/Qwen2.5-7B-Instruct-AWQ", {"swap_space": 4}, "LLM_CLASS")


def test_it_refuses_outside_the_dry_run(engine, monkeypatch):
    monkeypatch.delenv("GPU_LAB_DRY_RUN")
    with pytest.raises(engine.StandInError, match="runs only with GPU_LAB_DRY_RUN=1"):
        engine.start("Qwen/Qwen2.5-7B-Instruct-AWQ", {}, "LLM_CLASS")


def test_it_refuses_where_a_gpu_is_present(engine, monkeypatch, tmp_path):
    device = tmp_path / "nvidia0"
    device.touch()
    monkeypatch.setattr(engine, "GPU_DEVICE_FILES", (str(device),))
    with pytest.raises(engine.StandInError, match=f"a real NVIDIA GPU is present .{device}."):
        engine.start("Qwen/Qwen2.5-7B-Instruct-AWQ", {}, "LLM_CLASS")


def test_its_torch_sees_a_gpu_only_in_the_dry_run(monkeypatch, load_stand_in):
    torch_file = "torch/torch/__init__.py"
    monkeypatch.delenv("GPU_LAB_DRY_RUN", raising=False)
    with pytest.raises(ImportError, match="loads only with GPU_LAB_DRY_RUN=1"):
        load_stand_in(torch_file, "stand_in_torch")
    monkeypatch.setenv("GPU_LAB_DRY_RUN", "1")
    torch = load_stand_in(torch_file, "stand_in_torch")
    assert torch.cuda.is_available() and torch.version.cuda == "13.0"
    assert "dry run" in torch.cuda.get_device_name(0)


def test_its_nvidia_smi_answers_the_courses_queries(monkeypatch):
    smi = [sys.executable, str(STAND_IN / "bin/nvidia-smi")]
    query = ["--query-gpu=name,driver_version,memory.total,compute_cap", "--format=csv,noheader"]
    out = subprocess.run(smi + query, capture_output=True, text=True)
    assert out.stdout == ("NVIDIA GeForce RTX 4090 (stand-in, dry run), 580.95.05, 24564 MiB,"
                          " 8.9\n")
    monkeypatch.setenv("STAND_IN_DRIVER", "550.54.14")
    out = subprocess.run(smi + ["--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True)
    assert out.stdout == "550.54.14\n"
    out = subprocess.run(smi + ["--query-gpu=pstate", "--format=csv,noheader"],
                         capture_output=True, text=True)
    assert out.returncode == 1 and 'Field "pstate" is not a valid field to query.' in out.stderr
    assert subprocess.run(smi + ["--query-compute-apps=pid", "--format=csv,noheader"],
                          capture_output=True, text=True).stdout == ""


def test_its_vllm_serve_refuses_an_unknown_flag(stand_in_vllm):
    run = subprocess.run(["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--swap-space", "4"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "unrecognized arguments: --swap-space 4" in run.stderr


# -- the block pool, the scheduler and the metrics the PagedAttention lab reads -----------------


def test_its_metrics_are_vllms(engine, vllm_src):
    """Names and documentation of its gauges are PrometheusStatLogger's; its usage is
    BlockPool.get_usage's; LLM() keeps no stats unless asked; UsageInfo's fields."""
    loggers = (vllm_src / "vllm/v1/metrics/loggers.py").read_text("utf-8")
    for name, documentation in engine.METRIC_HELP.items():
        if name == engine.CACHE_CONFIG_INFO:
            assert f'name = "{name}"' in loggers and f'documentation = "{documentation}"' in loggers
        else:
            assert f'name="{name}",\n            documentation="{documentation}"' in loggers, name
    assert 'labelnames = ["model_name", "engine"]' in loggers
    get_usage = ast.unparse(function(tree(vllm_src, "vllm/v1/core/block_pool.py"), "get_usage"))
    assert "total_gpu_blocks = self.num_gpu_blocks - 1" in get_usage
    assert "return 1.0 - self.get_num_free_blocks() / total_gpu_blocks" in get_usage
    llm = (vllm_src / "vllm/entrypoints/llm.py").read_text("utf-8")
    assert 'kwargs["disable_log_stats"] = True' in llm
    engine_py = ast.unparse(function(tree(vllm_src, "vllm/v1/engine/llm_engine.py"), "get_metrics"))
    assert "assert self.log_stats, 'Stat logging disabled'" in engine_py
    protocol = tree(vllm_src, "vllm/entrypoints/openai/engine/protocol.py")
    usage = next(node for node in protocol.body
                 if isinstance(node, ast.ClassDef) and node.name == "UsageInfo")
    fields = [node.target.id for node in usage.body if isinstance(node, ast.AnnAssign)]
    assert fields == ["prompt_tokens", "total_tokens", "completion_tokens",
                      "prompt_tokens_details"]


def test_its_scheduler_holds_cdiv_blocks_out_of_num_gpu_blocks_minus_1(engine, capsys):
    started = engine.start("Qwen/Qwen2.5-7B-Instruct-AWQ",
                           {"max_model_len": 4096, "num_gpu_blocks_override": 1000,
                            "max_num_batched_tokens": 4096, "max_num_seqs": 16}, "LLM_CLASS")
    scheduler = engine.Scheduler(started, log_stats=True)
    scheduler.add_request(engine.Request("a", [7] * 100, max_tokens=3, ignore_eos=True))
    scheduler.add_request(engine.Request("b", [8] * 33, max_tokens=20, ignore_eos=True))
    assert [r.request_id for r in scheduler.step()] == ["a", "b"]  # both prefilled at once
    # 100 and 33 prompt tokens: 7 + 3 blocks of 999 (block 0 is the null block)
    assert scheduler.kv_cache_usage == 1.0 - (999 - 10) / 999
    scheduler.step()  # slots for 101 and 34 tokens: 7 + 3 blocks
    assert scheduler.kv_cache_usage == 1.0 - (999 - 10) / 999
    scheduler.step()  # "a" has its 3 tokens and is freed; "b" holds 35 tokens
    assert scheduler.kv_cache_usage == 1.0 - (999 - 3) / 999
    while scheduler.has_unfinished_requests():
        scheduler.step()
    assert scheduler.kv_cache_usage == 0.0 and scheduler.num_free_blocks == 999
    text = engine.prometheus_text(started, scheduler)
    assert ('vllm:kv_cache_usage_perc{model_name="Qwen/Qwen2.5-7B-Instruct-AWQ",engine="0"}'
            ' 0.0\n') in text
    assert 'num_gpu_blocks="1000"' in text
    quiet = engine.Scheduler(started, log_stats=False)  # disable_log_stats: no gauge moves
    quiet.add_request(engine.Request("c", [9] * 100, max_tokens=3, ignore_eos=True))
    quiet.step()
    assert quiet.kv_cache_usage == 0.0


def test_its_llm_steps_by_hand_and_reads_its_gauges(stand_in_vllm, tmp_path):
    lab = tmp_path / "lab.py"
    lab.write_text(
        "from vllm import LLM, SamplingParams\n\nif __name__ == '__main__':\n"
        "    llm = LLM(model='Qwen/Qwen2.5-7B-Instruct-AWQ', max_model_len=4096,"
        " num_gpu_blocks_override=1000)\n"
        "    try:\n        llm.get_metrics()\n    except AssertionError as e:\n"
        "        print('default:', e)\n"
        "    llm = LLM(model='Qwen/Qwen2.5-7B-Instruct-AWQ', max_model_len=4096,"
        " num_gpu_blocks_override=1000, disable_log_stats=False)\n"
        "    engine = llm.llm_engine\n"
        "    engine.add_request('r', {'prompt_token_ids': [5] * 100},"
        " SamplingParams(max_tokens=4, ignore_eos=True))\n"
        "    while engine.has_unfinished_requests():\n"
        "        out = engine.step()\n"
        "        usage = [m.value for m in llm.get_metrics()"
        " if m.name == 'vllm:kv_cache_usage_perc']\n"
        "        print(len(out[0].outputs[0].token_ids), out[0].finished, usage)\n")
    run = subprocess.run([sys.executable, str(lab)], capture_output=True, text=True)
    seven = repr(1.0 - 992 / 999)
    assert run.returncode == 0, run.stderr
    printed = [line for line in run.stdout.splitlines()
               if not line.startswith(("INFO ", "WARNING "))]  # vLLM logs to stdout
    assert printed == [
        "default: Stat logging disabled", f"1 False [{seven}]", f"2 False [{seven}]",
        f"3 False [{seven}]", "4 True [0.0]"]
