"""bench_result.py recomputes every metric of a saved vllm bench serve JSON. The example file
is what the stand-in's `vllm bench serve` (tests/stand_in_vllm, numpy's arithmetic as
vllm/benchmarks/serve.py has it) writes for its arguments; a figure changed in the JSON is
caught; a JSON without the per-request data is refused by name."""

import json
import subprocess
import sys

import pytest
from bench_result import EXAMPLE, SLOS, compare, read_slos, recompute, tolerance

from coursekit import ROOT

STAND_IN = ROOT / "tests/stand_in_vllm/vllm"
ARGS = ("--model Qwen/Qwen2.5-7B-Instruct --dataset-name random --random-input-len 1024"
        " --random-output-len 8 --num-prompts 6 --seed 0 --request-rate 4 --ignore-eos"
        " --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99"
        " --goodput ttft:500 tpot:50 --save-result --save-detailed")


def stand_in_run(tmp_path, monkeypatch, args: str) -> dict:
    monkeypatch.setenv("STAND_IN_BENCH_OFFLINE", "1")
    monkeypatch.syspath_prepend(str(STAND_IN))
    sys.modules.pop("vllm", None)
    from vllm import stand_in_bench

    stand_in_bench.main([*args.split(), "--result-dir", str(tmp_path), "--result-filename", "run.json"])
    for name in [name for name in sys.modules if name.split(".")[0] == "vllm"]:
        del sys.modules[name]
    return json.loads((tmp_path / "run.json").read_text("utf-8"))


def test_the_example_is_what_the_stand_in_writes(tmp_path, monkeypatch):
    written = stand_in_run(tmp_path, monkeypatch, ARGS)
    shown = json.loads(EXAMPLE.read_text("utf-8"))
    assert {k: v for k, v in written.items() if k != "date"} == {
        k: v for k, v in shown.items() if k != "date"}  # fmt: skip


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


def test_a_run_without_goodput_is_read_with_and_without_slos(tmp_path, monkeypatch, capsys):
    """vLLM saves "request_goodput": null without --goodput (vllm/benchmarks/serve.py:
    benchmark); the command line's SLOs, the lesson's or the reader's, then give a goodput of
    their own, printed beside the comparison, not compared with the null."""
    result = stand_in_run(tmp_path, monkeypatch, ARGS.replace(" --goodput ttft:500 tpot:50", ""))
    assert result["request_goodput"] is None
    capsys.readouterr()
    for slos in (None, SLOS, read_slos(["e2el:600"])):
        rows = compare(result, slos)
        assert "request_goodput" not in {key for key, *_ in rows} and all(ok for *_, ok in rows)
    path = tmp_path / "run.json"
    for argv, line in [([], "with ttft:500 tpot:50: 0.8141 req/s"), (["e2el:600"], "with e2el:600: ")]:
        shown = subprocess.run([sys.executable, str(EXAMPLE.with_name("bench_result.py")), str(path), *argv],
                               capture_output=True, text=True, check=True).stdout
        assert "metrics agree" in shown and f"request_goodput: not in the JSON (a run without --goodput); {line}" \
            in shown, shown


def test_a_failed_request_with_an_empty_error_is_a_failure():
    """vLLM's client fails a request whose status is not 200 with error = response.reason or "":
    a bare status line leaves "" (vllm/benchmarks/lib/endpoint_request_func.py). It counts by
    the success flag, which the JSON does not keep: the failure shows as TTFT 0.0, no ITLs and
    an output length of 0 (vllm/benchmarks/serve.py: calculate_metrics), and its TTFT of 0
    must not enter the statistics."""
    result = json.loads(EXAMPLE.read_text("utf-8"))
    result["ttfts"][5], result["itls"][5], result["output_lens"][5] = 0.0, [], 0
    found = recompute(result, SLOS)
    assert (found["completed"], found["failed"], found["total_input_tokens"]) == (5, 1, 5 * 1024)
    assert found["mean_ttft_ms"] == pytest.approx(sum(result["ttfts"][:5]) / 5 * 1000)
