"""Every vLLM name the course quotes exists, with that value, in the pinned vLLM release; each
kind of claim fails on a broken copy of the fixture course. The two tabs of a lab (LLM(...) and
`vllm serve`) configure the engine alike."""

import pytest

from coursekit import ROOT, vllm_source
from coursekit.vllm_claims import CONTEXT_DEFAULTS, Claim, check, claims, serve_options, tab_problems

CLAIMS = claims(ROOT)
# One test per file that makes claims (over a thousand claims: a test each cost pytest-xdist
# more than checking them).
BY_FILE = {}
for found in CLAIMS:
    BY_FILE.setdefault(found.where.split(":")[0], []).append(found)


@pytest.mark.parametrize("file", sorted(BY_FILE))
def test_vllm_agrees(file, vllm_src):
    wrong = [f"{claim}: {problem}" for claim in BY_FILE[file]
             if (problem := check(claim, vllm_src)) is not None]
    assert wrong == []


def test_the_kv_cache_lesson_quotes_what_its_lab_needs():
    quoted = {(claim.kind, claim.name) for claim in CLAIMS if "kv-cache" in claim.where}
    assert {("keyword", "LLM.kv_cache_dtype"), ("flag", "--kv-cache-dtype"),
            ("env", "VLLM_USE_MODELSCOPE"), ("default", "gpu_memory_utilization"),
            ("default", "block_size"), ("choice", "kv_cache_dtype")} <= quoted
    assert sum(claim.kind == "log" and "kv-cache" in claim.where for claim in CLAIMS) >= 3


BREAKAGES = {
    "misspelled flag": (
        "snippets/first/serve.sh", "--kv-cache-dtype fp8", "--kv-cache-dtyp fp8",
        "flag --kv-cache-dtyp", "`vllm serve` has no flag --kv-cache-dtyp"),
    "wrong default": (
        "docs/lessons/first.zh.md", "| `0.92` |", "| `0.9` |",
        "default gpu_memory_utilization = 0.9", "the default of gpu_memory_utilization is 0.92"),
    "unaccepted value": (
        "docs/lessons/first.en.md", "`auto`, `fp8` |", "`auto`, `fp7` |",
        "choice kv_cache_dtype = fp7", "kv_cache_dtype accepts"),
    "unknown keyword": (
        "snippets/second/second_lab.py", "max_model_len=2048", "max_seq_len=2048",
        "keyword LLM.max_seq_len", "vllm.LLM takes no keyword 'max_seq_len'"),
    "invented log line": (
        "snippets/first/startup.log", "GPU KV cache size:", "GPU KV cache blocks:",
        "log GPU KV cache blocks", "no log format in vLLM's source prints this line"),
    "other version": (
        "snippets/first/install.sh", "vllm==0.26.0", "vllm==0.25.1",
        "version vllm = 0.25.1", "the course pins vllm==0.26.0"),
}


def test_fixture_course_claims_hold(pristine_fixture, vllm_src):
    assert [str(c) for c in claims(pristine_fixture) if check(c, vllm_src)] == []


@pytest.mark.parametrize("breakage", BREAKAGES.values(), ids=BREAKAGES.keys())
def test_claims_fail_on_broken_copy(breakage, course, vllm_src, edit):
    file, old, new, claim_text, expected = breakage
    edit(course / file, old, new)
    failures = [f"{claim}: {check(claim, vllm_src)}" for claim in claims(course)
                if check(claim, vllm_src) is not None]
    assert len(failures) == 1 and claim_text in failures[0] and expected in failures[0], failures


def test_claim_names_page_claim_and_source(vllm_src):
    claim = Claim("docs/x.zh.md:3", "flag", "--kv-cache-dtpe")
    assert check(claim, vllm_src).startswith(
        "`vllm serve` has no flag --kv-cache-dtpe; similar flags: --kv-cache-dtype,")


# -- what the lab pages say about the wheel, the backend and the two tabs -----------------------


def test_the_lab_page_states_what_the_wheel_requires():
    quoted = {(claim.kind, claim.name, claim.value) for claim in CLAIMS
              if claim.where.startswith("docs/lessons/kv-cache.")}
    assert {("requires", "torch", "==2.11.0"), ("cuda", "CUDA", "13"),
            ("python", "Python", "3.10-3.14"),
            ("log", "Using AttentionBackendEnum.TRITON_ATTN backend.", "")} <= quoted


@pytest.mark.parametrize(("claim", "expected"), [
    (Claim("x", "requires", "torch", "==2.10.0"), "vLLM 0.26.0 requires torch==2.11.0"),
    (Claim("x", "requires", "nosuchpackage", "==1.0.0"), "requires nosuchpackage not at all"),
    (Claim("x", "cuda", "CUDA", "12"), "the vLLM 0.26.0 wheel links libcudart.so.13: CUDA 13"),
    (Claim("x", "python", "Python", "3.9-3.14"), "Requires-Python <3.15,>=3.10: Python 3.10 to 3.14"),
    (Claim("x", "log", "Using AttentionBackendEnum.TRITON_ATTN backends."), "no log format"),
    (Claim("x", "default", "block_size", "32"), "the default of block_size is None (resolved: 16)"),
    (Claim("x", "source", "vllm/v1/core/block_pool.py", "BlockPool.free_all"),
     "vllm/v1/core/block_pool.py defines no BlockPool.free_all"),
    (Claim("x", "source", "vllm/v1/core/no_such_file.py", "BlockPool"),
     "vLLM 0.26.0 has no vllm/v1/core/no_such_file.py"),
    (Claim("x", "source", "vllm/v1/worker/block_table.py", "BlockTable.append_row"),
     "Qwen2.5-7B-Instruct runs vLLM 0.26.0's V2 model runner"),
    (Claim("x", "file", "vllm/v1/worker/gpu_model_runner.py"),
     "vllm/v1/worker/gpu_model_runner.py is the V1 runner's"),
    (Claim("x", "file", "vllm/v1/worker/no_such_file.py"), "vLLM 0.26.0 has no"),
    (Claim("x", "metric", "vllm:num_preemption"), "exports no metric vllm:num_preemption"),
    (Claim("x", "metric", "vllm:num_preemptions_totals"), "exports no metric"),
])
def test_new_kinds_of_claim_fail_when_wrong(claim, expected, vllm_src):
    assert expected in (check(claim, vllm_src) or "")


def test_citations_and_metrics_are_found_in_pages_and_every_snippet_file():
    found = {(claim.kind, claim.name, claim.value) for claim in claims(ROOT)}
    assert {("source", "vllm/v1/core/block_pool.py", "BlockPool.free_blocks"),  # block_pool.py
            ("source", "vllm/v1/worker/gpu/block_table.py", "_compute_slot_mappings_kernel"),
            ("file", "vllm/v1/core/block_pool.py", ""),
            ("metric", "vllm:kv_cache_usage_perc", ""),
            ("metric", "vllm:cache_config_info", "")} <= found


# -- which GPU model runner a model gets ---------------------------------------------------------


def _preset(name):
    import json

    models = json.loads((ROOT / "snippets/kv-cache/model_presets.json").read_text())["models"]
    return next(model["config"] for model in models if model["name"] == name)


@pytest.mark.parametrize(("config", "runner"), [
    (_preset("Qwen2.5-7B-Instruct"), "V2"),  # dense
    (_preset("Llama-3.1-8B-Instruct"), "V2"),
    (_preset("DeepSeek-V3 (MLA)"), "V1"),  # experts, not in DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES
    ({"architectures": ["MixtralForCausalLM"], "num_local_experts": 8}, "V1"),
    ({"architectures": ["Qwen2MoeForCausalLM"], "num_experts": 60}, "V2"),  # in that set
])
def test_a_model_gets_the_runner_vllm_decides(config, runner, vllm_src):
    assert vllm_source.model_runner(vllm_src, config) == runner


def test_the_runners_files_are_told_apart(vllm_src):
    files = vllm_source.runner_files(vllm_src)
    assert {"vllm/v1/worker/gpu_model_runner.py", "vllm/v1/worker/block_table.py",
            "vllm/v1/worker/gpu_input_batch.py"} <= files["V1"]
    assert {"vllm/v1/worker/gpu/model_runner.py", "vllm/v1/worker/gpu/block_table.py"} <= files["V2"]
    assert "vllm/v1/worker/utils.py" not in files["V1"] | files["V2"]  # both use it
    from coursekit.vllm_claims import runner_problem
    moe = {"architectures": ["MixtralForCausalLM"], "num_local_experts": 8}
    assert "is the V2 runner's" in runner_problem(vllm_src, "vllm/v1/worker/gpu/block_table.py", moe)


@pytest.mark.parametrize(("old", "new"), [
    ("            or not model_config.is_moe\n", "            or model_config.is_moe\n"),
    ("        if not self._is_default_v2_model_runner_model():\n            return False\n", ""),
])
def test_the_runner_rule_refuses_a_decision_it_does_not_read(old, new, vllm_src, tmp_path):
    """A copy of the wheel whose VllmConfig decides otherwise: the rule says so instead of
    answering from what it used to read."""
    import shutil

    for relative in ("vllm/config/vllm.py", "vllm/config/model.py",
                     "vllm/model_executor/models/registry.py", "vllm/model_executor/models/qwen2.py",
                     "vllm/transformers_utils/model_arch_config_convertor.py"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(vllm_src / relative, tmp_path / relative)
    assert vllm_source.model_runner(tmp_path, _preset("Qwen2.5-7B-Instruct")) == "V2"
    config = tmp_path / "vllm/config/vllm.py"
    text = config.read_text()
    assert text.count(old) == 1
    config.write_text(text.replace(old, new))
    vllm_source._tree.cache_clear()
    with pytest.raises(ValueError, match="no longer decides as coursekit/vllm_source.py reads it"):
        vllm_source.model_runner(tmp_path, _preset("Qwen2.5-7B-Instruct"))


RAW_PROMPTS = ("Passing raw prompts to InputProcessor is deprecated and will be removed in v0.18."
               " You should instead pass the outputs of Renderer.render_cmpl() or"
               " Renderer.render_chat().")


def test_a_message_written_as_several_literals_is_found(vllm_src):
    """input_processor.py writes this warning as three string literals: it is one line."""
    assert check(Claim("x", "log", RAW_PROMPTS), vllm_src) is None
    assert "no log format" in check(Claim("x", "log", RAW_PROMPTS.replace("v0.18", "v0.19")),
                                     vllm_src)
    assert ("log", RAW_PROMPTS) in {(claim.kind, claim.name) for claim in CLAIMS
                                    if claim.where.startswith("docs/lessons/paged-attention.")}


def test_a_log_format_itself_may_be_quoted(vllm_src):
    assert check(Claim("x", "log", "Setting kv cache block size to %d for %s backend."),
                 vllm_src) is None


def test_the_pinned_backend_logs_what_the_page_quotes(vllm_src):
    """get_attn_backend_cls logs `Using %s backend.` with the selected AttentionBackendEnum
    member, which a plain Enum prints as AttentionBackendEnum.NAME."""
    import ast

    from coursekit.gpu_labs import check_function, gpu_blocks

    cuda = ast.parse((vllm_src / "vllm/platforms/cuda.py").read_text())
    calls = [ast.unparse(node) for node in ast.walk(cuda) if isinstance(node, ast.Call)
             and getattr(node.func, "attr", "") == "info" and node.args
             and getattr(node.args[0], "value", None) == "Using %s backend."]
    assert calls == ["logger.info('Using %s backend.', selected_backend)"]
    registry = ast.parse((vllm_src / "vllm/v1/attention/backends/registry.py").read_text())
    enum = next(node for node in registry.body if isinstance(node, ast.ClassDef)
                and node.name == "AttentionBackendEnum")
    meta = next(node for node in registry.body if isinstance(node, ast.ClassDef)
                and node.name == "_AttentionBackendEnumMeta")
    assert [ast.unparse(base) for base in enum.bases] == ["Enum"]
    assert not {"__str__", "__format__", "__repr__"} & {
        node.name for node in enum.body + meta.body if isinstance(node, ast.FunctionDef)}
    assert "TRITON_ATTN" in {node.targets[0].id for node in enum.body if isinstance(node, ast.Assign)}
    line = "Using AttentionBackendEnum.TRITON_ATTN backend."
    block = next(block for block in gpu_blocks(ROOT) if block.include == "kv-cache/serve_kv.py")
    assert check_function(block).__globals__["BACKEND_LINE"] == line
    for language in ("zh", "en"):
        assert f"`{line}`" in (ROOT / f"docs/lessons/kv-cache.{language}.md").read_text()


def test_triton_attention_takes_fp8_on_sm_8_9_and_keeps_16_token_blocks(vllm_src):
    triton = (vllm_src / "vllm/v1/attention/backends/triton_attn.py").read_text()
    backend = triton[triton.index("class TritonAttentionBackend"):]
    assert '"fp8",' in backend[:backend.index("def ")]
    assert ("def supports_compute_capability(cls, capability: DeviceCapability) -> bool:\n"
            "        return True") in backend
    assert "return [MultipleOf(16)]" in backend and "return block_size % 16 == 0" in backend
    flash = (vllm_src / "vllm/v1/attention/backends/flash_attn.py").read_text()
    assert ("get_flash_attn_version() == 3\n"
            "                and current_platform.is_device_capability_family(90)") in flash


def test_modelscope_accepts_true_in_any_case(vllm_src):
    import ast

    envs = ast.parse((vllm_src / "vllm/envs.py").read_text())
    mapping = next(node.value for node in envs.body if isinstance(node, ast.AnnAssign)
                   and getattr(node.target, "id", "") == "environment_variables")
    rule = next(ast.unparse(value) for key, value in zip(mapping.keys, mapping.values)
                if getattr(key, "value", None) == "VLLM_USE_MODELSCOPE")
    assert rule == "lambda: os.environ.get('VLLM_USE_MODELSCOPE', 'False').lower() == 'true'"
    assert "`True`、`TRUE` 也可以" in (ROOT / "docs/lessons/kv-cache.zh.md").read_text()
    assert "in any case: `True` and `TRUE` work too" in (
        ROOT / "docs/lessons/kv-cache.en.md").read_text()


def test_the_scheduler_defaults_the_pages_quote(vllm_src):
    """LLM() and `vllm serve` resolve max_num_batched_tokens differently (CONTEXT_DEFAULTS)."""
    source = (vllm_src / "vllm/engine/arg_utils.py").read_text()
    under_70_gib = source[source.index("if device_memory >= 70 * GiB_bytes"):]
    under_70_gib = under_70_gib[under_70_gib.index("else:"):under_70_gib.index("# tpu specific")]
    for line in ("UsageContext.LLM_CLASS: 8192,", "UsageContext.OPENAI_API_SERVER: 2048,",
                 "UsageContext.LLM_CLASS: 256,", "UsageContext.OPENAI_API_SERVER: 256,"):
        assert line in under_70_gib
    llm = (vllm_src / "vllm/entrypoints/llm.py").read_text()
    assert 'if "disable_log_stats" not in kwargs:\n            kwargs["disable_log_stats"] = True' in llm
    assert CONTEXT_DEFAULTS["disable_log_stats"] == (True, vllm_source.declared_default(
        vllm_src, "disable_log_stats"))


def test_the_tabs_of_every_lab_configure_the_engine_alike():
    assert tab_problems(ROOT) == []


LAB_PY = """\
from vllm import LLM

MODEL = "Qwen/Qwen2.5-0.5B-Instruct"

if __name__ == "__main__":
    llm = LLM(model=MODEL, max_model_len=4096, kv_cache_dtype="fp8", max_num_seqs=8,
              disable_log_stats=True, swap_space=4)
"""

TABS = """
=== "Python API"

    ```{.python title="lab.py" data-run="gpu"}
    --8<-- "first/lab.py"
    ```

=== "CLI"

    ```{.bash title="serve.sh" data-run="gpu"}
    --8<-- "first/serve.sh"
    ```
"""


def test_tabs_that_configure_the_engine_differently_are_reported(course):
    (course / "snippets/first/lab.py").write_text(LAB_PY)
    page = course / "docs/lessons/first.en.md"
    page.write_text(page.read_text() + TABS)
    line = page.read_text().splitlines().index('=== "Python API"') + 1
    where = f"docs/lessons/first.en.md:{line}: first/lab.py and first/serve.sh"
    assert tab_problems(course) == [
        f"{where}: disable_log_stats is True for LLM(...) but False for `vllm serve` (its default"
        " there): set it in both tabs",
        f"{where}: max_model_len is 4096 in LLM(...) but 2048 in `vllm serve`",
        f"{where}: LLM() and `vllm serve` default max_num_batched_tokens differently (by the"
        " machine): set it in both tabs",
        f"{where}: only LLM(...) sets max_num_seqs, and LLM() and `vllm serve` default"
        " max_num_seqs differently (by the machine): set it in both tabs",
        f"{where}: only LLM(...) sets swap_space: set it in both tabs, or in neither",
    ]


def test_serve_options_read_flags_as_vllm_does(tmp_path):
    script = tmp_path / "serve.sh"
    script.write_text("vllm serve some/model \\\n  --max-model-len=8192 --enable-prefix-caching \\\n"
                      "  --no-enable-chunked-prefill --gpu-memory-utilization 0.90  # a comment\n")
    assert serve_options(script) == {"model": "some/model", "max_model_len": 8192,
                                     "enable_prefix_caching": True,
                                     "enable_chunked_prefill": False,
                                     "gpu_memory_utilization": 0.9}


@pytest.mark.parametrize(("flag", "exists"), [
    ("--no-async-scheduling", True),       # SchedulerConfig.async_scheduling: bool | None
    ("--no-enable-prefix-caching", True),  # **{**cache_kwargs[...], "default": None}
    ("--no-enable-lora", True),            # action=argparse.BooleanOptionalAction
    ("--no-max-model-len", False),         # an int: no --no- form
])
def test_boolean_flags_have_their_no_form(vllm_src, flag, exists):
    assert (flag in vllm_source.serve_flags(vllm_src)) is exists
