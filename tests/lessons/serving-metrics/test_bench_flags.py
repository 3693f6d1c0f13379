"""The flags of `vllm bench serve` the lesson quotes exist in vLLM 0.26.0's source: the claims
test reads them from vllm/benchmarks/serve.py and datasets.py (coursekit.vllm_source.
bench_flags), and so does this test for the command bench_sweep.py builds, which no claim
sees (a Python list of strings)."""

import ast
from pathlib import Path

import bench_sweep

from coursekit.vllm_claims import Claim, check
from coursekit.vllm_source import bench_flags


def test_a_bench_flag_on_a_page_is_checked(vllm_src):
    assert check(Claim("page:1", "flag", "--goodput"), vllm_src) is None
    assert check(Claim("page:1", "flag", "--metric-percentiles"), vllm_src) is None
    refused = check(Claim("page:1", "flag", "--goodputs"), vllm_src)
    assert "has no flag --goodputs" in refused and "--goodput" in refused


def test_every_flag_bench_sweep_passes_exists(vllm_src):
    tree = ast.parse(Path(bench_sweep.__file__).read_text("utf-8"))
    used = {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value.startswith("--")}  # fmt: skip
    assert {"--goodput", "--save-detailed", "--seed", "--max-concurrency"} <= used
    assert used <= bench_flags(vllm_src), used - bench_flags(vllm_src)
