"""lab_hits.py: its predictions are prefix_cache.py's, worked out here by hand too; its
reader reads what the two labs print, on lines built from vLLM 0.26.0's own names and
formats (the counters' names, documentation and labels read from the wheel, written as
prometheus_client writes a counter; LLM.get_metrics()' Counter values as reader.py makes
them); bad input is a clear ValueError. And the facts of the wheel the lab stands on."""

import ast
import re

import pytest
from lab_hits import (
    CHANGED,
    COUNTERS,
    EXACT,
    PARTS,
    PROMPT,
    Report,
    compare,
    predict,
    read_report,
)

LABELS = 'model_name="Qwen/Qwen2.5-7B-Instruct",engine="0"'


def test_the_predictions_worked_out_by_hand():
    report, _ = predict()
    # 100 tokens: (100 - 1) // 16 = 6 blocks can hit; token 50 is in block 3 (48 to 63);
    # 64 tokens: (64 - 1) // 16 = 3, the fourth block is computed again; 12 shared
    # tokens fill no block.
    assert report.requests == {
        "1a": (100, 0), "1b": (100, 96), "2a": (100, 0), "2b": (100, 48),
        "3a": (64, 0), "3b": (64, 48), "4a": (32, 0), "4b": (32, 0)}
    assert report.resets == [True, True, True]
    assert report.counters == {"vllm:prefix_cache_queries": 592,
                               "vllm:prefix_cache_hits": 192}
    assert [i for i, (a, b) in enumerate(zip(PROMPT, CHANGED)) if a != b] == [50]
    assert len(EXACT) == 64 and len(PROMPT) == 100


def test_the_prompts_are_ordinary_qwen_tokens():
    """Below 151643, where Qwen2.5's special tokens start, and not one repeated."""
    for part in PARTS.values():
        for _, prompt in part:
            assert all(0 <= token < 151643 for token in prompt)
            assert len(set(prompt)) == len(prompt)


def counter_family(name, documentation, value):
    """A counter as prometheus_client.generate_latest writes it: HELP, TYPE, name_total
    with the labels in labelnames' order, and name_created."""
    return (f"# HELP {name}_total {documentation}\n# TYPE {name}_total counter\n"
            f"{name}_total{{{LABELS}}} {float(value)!r}\n"
            f"# HELP {name}_created {documentation}\n# TYPE {name}_created gauge\n"
            f"{name}_created{{{LABELS}}} 1.7328700005e+09\n")


def wheel_counters(vllm_src):
    """The two counters' names and documentation, and the labels, from loggers.py."""
    loggers = ast.parse((vllm_src / "vllm/v1/metrics/loggers.py").read_text("utf-8"))
    found = {}
    for node in ast.walk(loggers):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "_counter_cls":
            keywords = {k.arg: k.value for k in node.keywords}
            name = ast.literal_eval(keywords["name"])
            if name in COUNTERS:
                found[name] = ast.literal_eval(keywords["documentation"])
    source = ast.unparse(loggers)
    assert "labelnames = ['model_name', 'engine']" in source
    return found


def served_output(vllm_src, queries, hits):
    lines = []
    for number, part in enumerate(PARTS.values()):
        if number:  # the JSON answer {"success": true}, printed as Python's True
            lines.append(f"reset_prefix_cache: {True}")
        for name, prompt in part:
            cached = predict()[0].requests[name][1]
            lines.append(f"{name}: {len(prompt)} prompt tokens, {cached} cached")
    documentation = wheel_counters(vllm_src)
    text = "".join(counter_family(name, documentation[name], value)
                   for name, value in zip(COUNTERS, (queries, hits)))
    # lab_prefix_send.py keeps the lines that start with the counters' _total names.
    wanted = tuple(f"{name}_total" for name in COUNTERS)
    return "\n".join(lines + [line for line in text.splitlines() if line.startswith(wanted)])


def test_it_reads_what_the_served_lab_prints(vllm_src):
    assert set(wheel_counters(vllm_src)) == set(COUNTERS)
    text = served_output(vllm_src, 592, 192)
    assert 'vllm:prefix_cache_hits_total{model_name="Qwen/Qwen2.5-7B-Instruct",engine="0"} 192.0' in text
    assert read_report(text) == predict()[0]
    found = read_report(served_output(vllm_src, 592, 208))
    assert "vllm:prefix_cache_hits 208 MISMATCH: predicted 192" in compare(predict()[0], found)


def test_it_reads_what_the_python_lab_prints():
    """LLM.get_metrics() gives Counter(name=..., value=int(sample.value)): no _total, no
    labels (vllm/v1/metrics/reader.py: get_metrics_snapshot)."""
    expected = predict()[0]
    lines = []
    for number, part in enumerate(PARTS.values()):
        if number:
            lines.append(f"reset_prefix_cache: {True}")
        for name, prompt in part:
            cached = expected.requests[name][1]
            lines.append(f"{name}: {len(prompt)} prompt tokens, {cached} cached")
    lines += [f"{name} {int(592.0 if 'queries' in name else 192.0)}" for name in COUNTERS]
    found = read_report("INFO 11-29 17:00:00 [llm.py:1] some log line\n" + "\n".join(lines))
    assert found == expected
    assert all(line.endswith(" match") for line in compare(expected, found))


@pytest.mark.parametrize(("text", "message"), [
    ("", "no line like '1a: 100 prompt tokens, 0 cached'"),
    ("1a: 100 prompt tokens, 0 cached\nvllm:prefix_cache_hits 0", "vllm:prefix_cache_queries"),
    ("1a: 100 prompt tokens, 0 cached\n1a: 100 prompt tokens, 0 cached", "reported twice"),
    ("reset_prefix_cache: maybe\n", "answered 'maybe'"),
    ('vllm:prefix_cache_hits_total{engine="0"} 1.0\nvllm:prefix_cache_hits_total{engine="1"}'
     " 2.0", "appears twice"),
    ("vllm:prefix_cache_hits 1.5", "a counter of tokens is whole"),
])
def test_bad_input_is_a_clear_value_error(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        read_report(text)


def test_a_report_differs_when_a_reset_is_missing():
    expected = predict()[0]
    found = Report(expected.requests, expected.resets[:2], expected.counters)
    assert "resets [True, True] MISMATCH" in compare(expected, found)


# -- the facts of vLLM 0.26.0 the lab stands on ----------------------------------------------


def source(vllm_src, relative, name):
    """The source of a function or method (Class.method) of the wheel, unparsed; of
    several definitions (typing.overload), the last, which runs."""
    node = ast.parse((vllm_src / relative).read_text("utf-8"))
    for part in name.split("."):
        node = [n for n in ast.walk(node) if isinstance(
            n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == part][-1]
    return ast.unparse(node)


def test_the_hit_stops_before_the_last_token_and_counts_tokens(vllm_src):
    text = source(vllm_src, "vllm/v1/core/kv_cache_manager.py",
                  "KVCacheManager.get_computed_blocks")
    assert "max_cache_hit_length = request.num_tokens - 1" in text
    assert "record(num_tokens=request.num_tokens, num_hits=num_new_computed_tokens" in text


def test_a_reset_keeps_the_counters_and_needs_every_block_free(vllm_src):
    pool = source(vllm_src, "vllm/v1/core/block_pool.py", "BlockPool.reset_prefix_cache")
    assert "if num_used_blocks != 1:" in pool and "return False" in pool
    assert "logger.info('Successfully reset prefix cache')" in pool
    manager = source(vllm_src, "vllm/v1/core/kv_cache_manager.py",
                     "KVCacheManager.reset_prefix_cache")
    assert "self.prefix_cache_stats.reset = True" in manager
    # reset only empties the logged hit rate's window; the Prometheus counters only grow.
    observe = source(vllm_src, "vllm/v1/metrics/stats.py", "CachingMetrics.observe")
    assert "if stats.reset:\n        self.reset()" in observe
    record = source(vllm_src, "vllm/v1/metrics/loggers.py", "PrometheusStatLogger.record")
    assert ("self.counter_prefix_cache_hits[engine_idx].inc("
            "scheduler_stats.prefix_cache_stats.hits)") in record
    llm = source(vllm_src, "vllm/entrypoints/llm.py", "LLM.reset_prefix_cache")
    assert "-> bool" in llm


def test_the_cache_starts_empty_and_llm_records_steps_with_outputs(vllm_src):
    init = source(vllm_src, "vllm/v1/engine/core.py", "EngineCore.__init__")
    assert init.index("self._initialize_kv_caches(vllm_config)") < init.index(
        "self.scheduler: SchedulerInterface = Scheduler(")
    step = source(vllm_src, "vllm/v1/engine/llm_engine.py", "LLMEngine.step")
    assert "and (len(outputs.outputs) > 0)" in step


def test_the_served_twin_options_are_vllms(vllm_src):
    serving = source(vllm_src, "vllm/entrypoints/openai/completion/serving.py",
                     "OpenAIServingCompletion.request_output_to_completion_response")
    assert ("usage.prompt_tokens_details = PromptTokenUsageInfo(cached_tokens="
            "last_final_res.num_cached_tokens)") in serving
    app = source(vllm_src, "vllm/entrypoints/openai/api_server.py", "build_app")
    assert "if envs.VLLM_SERVER_DEV_MODE:" in app
    router = (vllm_src / "vllm/entrypoints/serve/dev/cache/api_router.py").read_text("utf-8")
    assert '@router.post("/reset_prefix_cache")' in router
    assert 'JSONResponse(content={"success": bool(success)})' in router
    seq = source(vllm_src, "vllm/renderers/inputs/preprocess.py", "prompt_to_seq")
    assert "isinstance(prompt_or_prompts, (dict, str, bytes))" in seq
