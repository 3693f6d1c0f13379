"""Lesson 7's figures quote vLLM 0.26.0's own: the SpecDecoding metrics line that
spec_metrics.log_line writes has the format string of vllm/v1/spec_decode/metrics.py:
SpecDecodingLogging.log, and the n-gram defaults the page and ngram.py state are
SpeculativeConfig's."""

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
