"""Lesson 7's figures quote vLLM 0.26.0's own: the SpecDecoding metrics line that
spec_metrics.log_line writes has the format string of vllm/v1/spec_decode/metrics.py:
SpecDecodingLogging.log, and the n-gram defaults the page and ngram.py state are
SpeculativeConfig's, and the draft model row's vocabulary check is vLLM's."""

import ast
import inspect

import spec_metrics

from coursekit import ROOT

PREFIX = "SpecDecoding metrics: "


def format_strings(source: str) -> list[str]:
    """Every string constant of the source that starts as the log line does."""
    return [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith(PREFIX)
    ]


def test_the_log_line_has_vllms_format(vllm_src):
    vllm = format_strings((vllm_src / "vllm/v1/spec_decode/metrics.py").read_text("utf-8"))
    ours = format_strings(inspect.getsource(spec_metrics.log_line))
    assert len(vllm) == 1 and ours == vllm, (ours, vllm)


def test_the_ngram_defaults_are_vllms(vllm_src):
    source = (vllm_src / "vllm/config/speculative.py").read_text("utf-8")
    assert "self.prompt_lookup_min = 5\n                self.prompt_lookup_max = 5" in source


def test_the_05b_draft_needs_use_heterogeneous_vocab(vllm_src):
    """The page's draft model row: Qwen2.5-0.5B-Instruct and the 7B differ in vocab_size,
    and vLLM 0.26.0 refuses a draft model whose vocab_size differs from the target's
    unless use_heterogeneous_vocab is set (SpeculativeConfig._verify_args)."""
    from speedup import DRAFT, QWEN

    assert (DRAFT.config["vocab_size"], QWEN.config["vocab_size"]) == (151936, 152064)
    source = (vllm_src / "vllm/config/speculative.py").read_text("utf-8")
    assert (
        "if not self.use_heterogeneous_vocab:\n"
        "            self.verify_equal_vocab_size_if_draft_model()"
    ) in source
    assert "if target_vocab_size != draft_vocab_size:\n                raise" in source


def _function(source: str, owner: str, name: str) -> ast.FunctionDef:
    cls = next(
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ClassDef) and node.name == owner
    )
    return next(
        node
        for node in cls.body
        if isinstance(node, ast.FunctionDef) and node.name == name
    )


def test_the_server_records_one_itl_per_output_not_per_token(vllm_src):
    """The page's ITL paragraph: IterationStats.update_from_output counts every token of
    an output but appends a single gap, outside any loop over the tokens."""
    source = (vllm_src / "vllm/v1/metrics/stats.py").read_text("utf-8")
    function = _function(source, "IterationStats", "update_from_output")
    text = ast.unparse(function)
    assert "num_new_generation_tokens = len(output.new_token_ids)" in text
    appends = [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.Call)
        and ast.unparse(node.func) == "self.inter_token_latencies_iter.append"
    ]
    assert len(appends) == 1
    loops = [node for node in ast.walk(function) if isinstance(node, (ast.For, ast.While))]
    assert not any(appends[0] in list(ast.walk(loop)) for loop in loops)


# The methods the page names: its table's five, and the list after it.
PAGE_METHODS = {
    "ngram", "ngram_gpu", "draft_model", "eagle", "eagle3", "mtp", "suffix",
    "medusa", "mlp_speculator", "dflash", "dspark", "extract_hidden_states",
    "custom_class",
}  # fmt: skip


def _literal(source: str, name: str) -> set[str]:
    """The strings of a typing.Literal alias, nested aliases expanded."""
    aliases = {
        node.targets[0].id: node.value
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }

    def strings(node) -> set[str]:
        if isinstance(node, ast.Constant):
            return {node.value}
        if isinstance(node, ast.Name):
            return strings(aliases[node.id])
        if isinstance(node, ast.Subscript):  # Literal[...]
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return set().union(*(strings(item) for item in items))
        raise ValueError(ast.unparse(node))

    return strings(aliases[name])


def test_the_page_names_every_speculative_method(vllm_src):
    """Every value of SpeculativeMethod is on both pages, the model-specific MTP names
    as old names of mtp (SpeculativeConfig.__post_init__ replaces them)."""
    source = (vllm_src / "vllm/config/speculative.py").read_text("utf-8")
    methods = _literal(source, "SpeculativeMethod")
    mtp_aliases = _literal(source, "MTPModelTypes") - {"mtp"}
    assert methods - mtp_aliases == PAGE_METHODS
    assert 'logger.warning(\n                "method `%s` is deprecated and replaced with mtp."' in source
    for language in ("zh", "en"):
        page = (ROOT / f"docs/lessons/speculative-decoding.{language}.md").read_text("utf-8")
        missing = [m for m in sorted(PAGE_METHODS) if f"`{m}`" not in page]
        assert missing == [], (language, missing)


def test_rejection_sample_method_values_and_who_reads_block(vllm_src):
    """standard (the default), synthetic, block; only the V2 runner's sampler reads
    block, the V1 runner's (which n-gram runs on) only synthetic."""
    source = (vllm_src / "vllm/config/speculative.py").read_text("utf-8")
    assert _literal(source, "RejectionSampleMethod") == {"standard", "synthetic", "block"}
    assert 'rejection_sample_method: RejectionSampleMethod = "standard"' in source
    v1 = (vllm_src / "vllm/v1/sample/rejection_sampler.py").read_text("utf-8")
    v2 = (vllm_src / "vllm/v1/worker/gpu/spec_decode/rejection_sampler.py").read_text(
        "utf-8"
    )
    assert "rejection_sample_method ==" in v1 and '"block"' not in v1
    assert 'rejection_sample_method == "block"' in v2


def test_ngram_drafts_the_k_the_batch_size_schedule_gives(vllm_src):
    """num_speculative_tokens_per_batch_size: the scheduler looks k up by the number of
    requests it scheduled, the V1 runner passes it to NgramProposer.propose, and the
    n-gram search drafts nothing for a k of 0."""
    scheduler = (vllm_src / "vllm/v1/core/sched/scheduler.py").read_text("utf-8")
    assert (
        "num_spec_tokens_to_schedule = self.dynamic_sd_lookup[\n"
        "                len(num_scheduled_tokens)\n            ]"
    ) in scheduler
    runner = (vllm_src / "vllm/v1/worker/gpu_model_runner.py").read_text("utf-8")
    assert (
        "draft_token_ids = self.drafter.propose(\n"
        "                num_spec_tokens_to_schedule,\n"
        "                sampled_token_ids,"
    ) in runner
    ngram = (vllm_src / "vllm/v1/spec_decode/ngram_proposer.py").read_text("utf-8")
    assert "k = min(k, max_model_len - total_token)\n    if k <= 0:\n        return" in ngram


def test_mlp_speculator_is_accepted_but_not_run(vllm_src):
    """The page: SpeculativeConfig accepts mlp_speculator, but the registry's entry is
    commented out and neither runner builds a proposer for it."""
    registry = (vllm_src / "vllm/model_executor/models/registry.py").read_text("utf-8")
    assert '    # "MLPSpeculatorPreTrainedModel": ("mlp_speculator", "MLPSpeculator"),' in (
        registry
    )
    runners = [vllm_src / "vllm/v1/worker/gpu_model_runner.py"] + sorted(
        (vllm_src / "vllm/v1/worker/gpu").rglob("*.py")
    )
    assert not any("mlp_speculator" in path.read_text("utf-8") for path in runners)
