"""Lesson 7's figures quote vLLM 0.26.0's own: the SpecDecoding metrics line that
spec_metrics.log_line writes has the format string of vllm/v1/spec_decode/metrics.py:
SpecDecodingLogging.log, and the n-gram defaults the page and ngram.py state are
SpeculativeConfig's, and the draft model row's vocabulary check is vLLM's."""

import ast
import inspect

import spec_metrics

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
