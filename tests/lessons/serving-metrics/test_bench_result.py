"""bench_result.py recomputes every metric of a saved vllm bench serve JSON. The example file
is what the stand-in's `vllm bench serve` (tests/stand_in_vllm, numpy's arithmetic as
vllm/benchmarks/serve.py has it) writes for its arguments; a figure changed in the JSON is
caught; a JSON without the per-request data is refused by name."""

import json
import sys

import pytest
from bench_result import EXAMPLE, SLOS, compare, read_slos, recompute, tolerance

from coursekit import ROOT

STAND_IN = ROOT / "tests/stand_in_vllm/vllm"
ARGS = ("--model Qwen/Qwen2.5-7B-Instruct --dataset-name random --random-input-len 1024"
        " --random-output-len 8 --num-prompts 6 --seed 0 --request-rate 4 --ignore-eos"
        " --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99"
        " --goodput ttft:500 tpot:50 --save-result --save-detailed")


def test_the_example_is_what_the_stand_in_writes(tmp_path, monkeypatch):
    monkeypatch.setenv("STAND_IN_BENCH_OFFLINE", "1")
    monkeypatch.syspath_prepend(str(STAND_IN))
    sys.modules.pop("vllm", None)
    from vllm import stand_in_bench

    stand_in_bench.main([*ARGS.split(), "--result-dir", str(tmp_path),
                         "--result-filename", "run.json"])  # fmt: skip
    written = json.loads((tmp_path / "run.json").read_text("utf-8"))
    shown = json.loads(EXAMPLE.read_text("utf-8"))
    assert {k: v for k, v in written.items() if k != "date"} == {
        k: v for k, v in shown.items() if k != "date"}  # fmt: skip
    for name in [name for name in sys.modules if name.split(".")[0] == "vllm"]:
        del sys.modules[name]


def test_every_metric_of_the_example_is_recomputed():
    result = json.loads(EXAMPLE.read_text("utf-8"))
    rows = compare(result, SLOS)
    assert all(ok for *_, ok in rows)
    exact = [key for key, *_ in rows if tolerance(key) == 0]
    assert "p99_ttft_ms" in exact and "request_goodput" in exact and "p99_itl_ms" in exact
    assert {key for key, *_ in rows} == {
        key for key in result if key.endswith("_ms") or key in recompute(result, SLOS)}


@pytest.mark.parametrize("key", ["p90_ttft_ms", "mean_itl_ms", "request_goodput",
                                 "total_output_tokens", "p99_e2el_ms"])
def test_a_changed_figure_is_caught(key):
    result = json.loads(EXAMPLE.read_text("utf-8"))
    result[key] += 0.01
    assert [k for k, _, _, ok in compare(result, SLOS) if not ok] == [key]


def test_a_json_without_detail_is_refused():
    result = json.loads(EXAMPLE.read_text("utf-8"))
    del result["itls"]
    with pytest.raises(ValueError, match="--save-detailed"):
        recompute(result)
    with pytest.raises(ValueError, match="NAME one of ttft, tpot, e2el"):
        read_slos(["itl:5"])
