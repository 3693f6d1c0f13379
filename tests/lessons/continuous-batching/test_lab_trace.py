"""The continuous batching lab's predictions and parsers (snippets/continuous-batching/
lab_trace.py). The Iteration lines are built from vLLM 0.26.0's own format string, read
from the wheel; the metric text follows prometheus_client's exposition of the histogram and
counter that vllm/v1/metrics/loggers.py registers; the expected lines of the small
workloads below are worked out by hand from the vLLM functions they name, not from the
simulator."""

import ast
import math
import random
from dataclasses import replace

import lab_trace
import long_prompt
import preemption
import pytest
from lab_trace import (
    BUCKETS,
    CHUNKS,
    PREEMPTION,
    Iteration,
    Lab,
    Metrics,
    arrivals,
    iteration_tokens,
    iterations,
    predict_metrics,
    read_generated,
    read_iterations,
    read_metrics,
)
from scheduler import Request

from coursekit import ROOT, vllm_source
from coursekit.code import load
from coursekit.vllm_claims import llm_options, serve_options

FOLDER = ROOT / "snippets/continuous-batching"
LOGGERS = "vllm/v1/metrics/loggers.py"


def iteration_format(src):
    """LoggingStatLogger._log_iteration_details's format string, from the wheel."""
    found = [f for f in vllm_source.log_formats(src / LOGGERS) if "Iteration(" in f]
    assert len(found) == 1, found
    return found[0]


def vllm_line(src, index, ctx, ctx_tokens, gen, gen_tokens, usage, dummy=False,
              encoder="", prefix="INFO 11-29 08:00:00 [loggers.py:182] "):
    """A line as vLLM logs it: its own format string filled in, the arguments in the
    order of the logging call (prefix, index, ..., elapsed ms, dummy mark, usage * 100,
    encoder message)."""
    args = ("Engine 000: ", index, ctx, ctx_tokens, gen, gen_tokens, 12.3456,
            " (dummy)" if dummy else "", usage * 100, encoder)
    return prefix + iteration_format(src) % args


# -- reading the Iteration lines ---------------------------------------------------------------


def test_iteration_lines_as_vllm_formats_them_are_read(vllm_src):
    usage = 1.0 - 50 / 63  # BlockPool.get_usage with 13 of 63 blocks held
    log = "\n".join([
        "INFO 11-29 08:00:00 [llm.py:1] Supported tasks: ['generate']",
        vllm_line(vllm_src, 0, 2, 22, 0, 0, 2 / 63),
        # vllm serve: the API server's process prefixes its lines
        vllm_line(vllm_src, 1, 1, 62, 2, 2, usage, prefix="(APIServer pid=4242) INFO 11-29"
                  " 08:00:00 [loggers.py:182] "),
        # a data-parallel dummy step is no step of ours
        vllm_line(vllm_src, 2, 0, 0, 0, 0, usage, dummy=True),
        # a multimodal model appends its encoder inputs
        vllm_line(vllm_src, 3, 0, 0, 4, 4, 1.0,
                  encoder=", encoder inputs: 1, encoder output embeddings: 64"),
    ])
    assert read_iterations(log) == [
        Iteration(0, 2, 22, 0, 0, "3.2"),
        Iteration(1, 1, 62, 2, 2, "20.6"),
        Iteration(3, 0, 0, 4, 4, "100.0"),
    ]
    assert str(Iteration(1, 1, 62, 2, 2, "20.6")) in vllm_line(vllm_src, 1, 1, 62, 2, 2, usage) \
        .replace("iteration elapsed time: 12.35 ms, ", "")


def test_the_format_and_the_logger_are_vllms(vllm_src):
    source = (vllm_src / LOGGERS).read_text("utf-8")
    assert "def _log_iteration_details(" in source and "logger.info(" in source
    # The observability option behind it, an LLM() keyword and a `vllm serve` flag.
    assert "enable_logging_iteration_details" in vllm_source.llm_keywords(vllm_src)
    assert "--enable-logging-iteration-details" in vllm_source.serve_flags(vllm_src)
    assert vllm_source.declared_default(vllm_src, "enable_logging_iteration_details") is False
    assert vllm_source.declared_default(vllm_src, "async_scheduling") is None


# -- the predictions, for workloads worked out by hand -----------------------------------------


def tiny(*requests, blocks=10, budget=16):
    return Lab("tiny.py", requests, budget, 4, blocks, 64)


def test_a_long_prompt_in_chunks_beside_a_decode():
    """Budget 16, 10 blocks (9 usable). A's 10-token prompt runs in step 0; L arrives at
    step 1 and its 40 tokens get what A's decode token leaves: 15, 15, then 10, which
    samples its first token (Scheduler.schedule, running requests first). A new request
    and a prompt's later chunk are context requests (compute_iteration_details). Usage
    after each step: A's 1 block, L's cdiv(computed, 16), A freed once it has 3 tokens."""
    lab = tiny(Request("A", 10, 3), Request("L", 40, 2, arrival_step=1))
    expected = [
        Iteration(0, 1, 10, 0, 0, "11.1"),  # 1 block of 9
        Iteration(1, 1, 15, 1, 1, "22.2"),  # A 1 block, L 1 block (15 tokens)
        Iteration(2, 1, 15, 1, 1, "22.2"),  # A's third token: A freed; L 2 blocks
        Iteration(3, 1, 10, 0, 0, "33.3"),  # L's last chunk, its first token: 3 blocks
        Iteration(4, 0, 0, 1, 1, "0.0"),  # L's second token: L freed
    ]
    steps = lab.steps()
    assert iterations(lab, steps, every_step=True) == expected
    assert iterations(lab, steps, every_step=False) == expected  # a token every step
    # PromptTokenStats.computed (the whole prompt, once) + num_generation_tokens
    assert iteration_tokens(lab, steps) == [10 + 1, 1, 1, 40 + 1, 1]
    assert predict_metrics(lab, steps) == Metrics(
        {"1.0": 3, "8.0": 3, "16.0": 4, "32.0": 4, **{f"{b}.0": 5 for b in BUCKETS[4:]},
         "+Inf": 5}, 5, 55.0, 0)


def test_llm_logs_no_line_for_a_step_in_which_no_request_got_a_token():
    """L alone: 16 + 16 + 8 tokens. LLMEngine.step records stats only for a step with
    outputs, so LLM() logs Iteration(2) alone; `vllm serve` logs all three (AsyncLLM's
    output handler records every step). The histogram observes only Iteration(2)."""
    lab = tiny(Request("L", 40, 1))
    served = iterations(lab, lab.steps(), every_step=True)
    assert served == [Iteration(0, 1, 16, 0, 0, "11.1"), Iteration(1, 1, 16, 0, 0, "22.2"),
                      Iteration(2, 1, 8, 0, 0, "0.0")]
    assert iterations(lab, lab.steps(), every_step=False) == served[2:]
    assert iteration_tokens(lab, lab.steps()) == [41]  # over the budget of 16


def test_a_preempted_request_comes_back_as_a_context_request():
    """4 blocks, 3 usable. A and B hold one block each; in step 1 A's 17th token takes
    the last block, and B, the last running request, is preempted for its own
    (Scheduler.schedule: self.running.pop()); no waiting request joins in that step. In
    step 2 A finishes, but its blocks are freed only after the step, and B's whole
    sequence (17 tokens, 2 blocks) must fit to rejoin (scheduler_reserve_full_isl). In
    step 3 B recomputes its 17 tokens: sent as a new request by the V2 model runner, a
    context request. The recompute is no prompt token of the histogram."""
    lab = tiny(Request("A", 16, 3), Request("B", 16, 3), blocks=4, budget=64)
    steps = lab.steps()
    assert iterations(lab, steps, every_step=True) == [
        Iteration(0, 2, 32, 0, 0, "66.7"),
        Iteration(1, 0, 0, 1, 1, "66.7"),
        Iteration(2, 0, 0, 1, 1, "0.0"),
        Iteration(3, 1, 17, 0, 0, "66.7"),
        Iteration(4, 0, 0, 1, 1, "0.0"),
    ]
    assert iteration_tokens(lab, steps) == [32 + 2, 1, 1, 1, 1]
    assert predict_metrics(lab, steps).preemptions == 1


def test_the_buckets_are_vllms(vllm_src):
    tree = ast.parse((vllm_src / LOGGERS).read_text("utf-8"))
    call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call) and any(
        k.arg == "name" and getattr(k.value, "value", None) == "vllm:iteration_tokens_total"
        for k in node.keywords))
    buckets = next(k.value for k in call.keywords if k.arg == "buckets")
    assert ast.literal_eval(buckets) == BUCKETS
    # It observes prompt tokens of first outputs plus generated tokens, per output batch.
    record = ast.unparse(next(node for node in ast.walk(tree) if isinstance(
        node, ast.FunctionDef) and "self.histogram_iteration_tokens[engine_idx].observe"
        in ast.unparse(node) and node.name == "record"))
    assert ("self.histogram_iteration_tokens[engine_idx].observe(iteration_stats."
            "prompt_token_stats.computed + iteration_stats.num_generation_tokens)") in record


def test_the_labs_are_the_worked_traces():
    assert (CHUNKS.requests, CHUNKS.max_num_batched_tokens, CHUNKS.max_num_seqs) == (
        tuple(long_prompt.WORKLOAD), long_prompt.CONFIG["max_num_batched_tokens"],
        long_prompt.CONFIG["max_num_seqs"])
    assert PREEMPTION.num_gpu_blocks == preemption.CONFIG["num_gpu_blocks"]
    # CHUNKS's 64 blocks change nothing: its trace is the page's, made with no limit.
    assert [s.scheduled for s in CHUNKS.steps()] == [
        s.scheduled for s in lab_trace.run(long_prompt.WORKLOAD, **long_prompt.CONFIG)]
    assert predict_metrics(CHUNKS, CHUNKS.steps()).preemptions == 0
    assert predict_metrics(PREEMPTION, PREEMPTION.steps()).preemptions >= 1
    # vLLM wants num_gpu_blocks_override blocks to hold one request of max_model_len
    # (kv_cache_utils.py: get_kv_cache_configs, _check_enough_kv_cache_memory).
    for lab in (CHUNKS, PREEMPTION):
        assert lab.num_gpu_blocks >= math.ceil(lab.max_model_len / 16)
        longest = max(r.prompt_tokens + r.max_tokens for r in lab.requests)
        assert longest < lab.max_model_len  # never stopped by max_model_len


# -- reading the metrics ---------------------------------------------------------------------


def exposition(observed, preemptions, tags='model_name="Qwen/Qwen2.5-7B-Instruct-AWQ",'
               'engine="0"'):
    """What prometheus_client.generate_latest writes for vLLM's histogram and counter:
    cumulative _bucket samples with le last among the labels, _count, _sum, the counter's
    _total, and the _created samples as gauges of their own."""
    name = "vllm:iteration_tokens_total"
    lines = [f"# HELP {name} Histogram of number of tokens per engine_step.",
             f"# TYPE {name} histogram"]
    for le in [*BUCKETS, math.inf]:
        bound = "+Inf" if le == math.inf else f"{float(le)!r}"
        lines.append(f'{name}_bucket{{{tags},le="{bound}"}} {float(sum(n <= le for n in observed))!r}')
    lines += [f"{name}_count{{{tags}}} {float(len(observed))!r}",
              f"{name}_sum{{{tags}}} {float(sum(observed))!r}",
              f"# TYPE {name}_created gauge", f"{name}_created{{{tags}}} 1.7328700005e+09",
              "# TYPE vllm:num_preemptions_total counter",
              f"vllm:num_preemptions_total{{{tags}}} {float(preemptions)!r}",
              f"vllm:num_preemptions_created{{{tags}}} 1.7328700005e+09"]
    return "\n".join(lines) + "\n"


def test_metrics_are_read_from_the_prometheus_text():
    observed = [24, 2, 2, 160, 4, 2]
    expected = Metrics({"1.0": 0, "8.0": 4, "16.0": 4, "32.0": 5, "64.0": 5, "128.0": 5,
                        **{f"{b}.0": 6 for b in BUCKETS[6:]}, "+Inf": 6}, 6, 194.0, 1)
    assert read_metrics(exposition(observed, 1)) == expected
    # and from what lab_chunks.py prints (LLM.get_metrics(), no labels)
    printed = "\n".join([*(f'vllm:iteration_tokens_total_bucket{{le="{b}"}} {n}'
                           for b, n in expected.buckets.items()),
                         "vllm:iteration_tokens_total_count 6",
                         "vllm:iteration_tokens_total_sum 194.0",
                         "vllm:num_preemptions_total 1", "A: 6 tokens generated"])
    assert read_metrics(printed) == expected
    assert read_generated(printed) == {"A": 6}
    with pytest.raises(ValueError, match="no vllm:num_preemptions_total here"):
        read_metrics(exposition(observed, 1).replace("num_preemptions_total", "x"))


# -- a served run: arrival steps read off the log ---------------------------------------------


def served_log(lab, requests):
    return iterations(lab, lab.steps(requests), every_step=True)


@pytest.mark.parametrize("arrive", [(0, 0, 1, 2), (0, 2, 4, 7), (0, 6, 20, 21), (0, 1, 1, 1)])
def test_arrival_steps_are_read_off_a_served_log(arrive):
    requests = [replace(r, arrival_step=s) for r, s in zip(CHUNKS.requests, arrive)]
    logged = served_log(CHUNKS, requests)
    placed = arrivals(CHUNKS, logged)
    assert placed is not None
    assert served_log(CHUNKS, placed) == logged
    assert [r.request_id for r in placed] == [r.request_id for r in CHUNKS.requests]


def test_requests_that_arrive_in_another_order_are_found_too():
    a, b, long, short = CHUNKS.requests
    logged = served_log(CHUNKS, [replace(b, arrival_step=0), replace(a, arrival_step=3),
                                 replace(long, arrival_step=3), replace(short, arrival_step=5)])
    placed = arrivals(CHUNKS, logged)
    assert [r.request_id for r in placed][:2] == ["B", "A"]


def test_a_log_no_arrival_steps_explain_is_refused():
    logged = served_log(CHUNKS, list(CHUNKS.requests))
    for n, line in enumerate(logged):  # any line one token off
        wrong = replace(line, context_tokens=line.context_tokens + 1) if line.context_tokens \
            else replace(line, generation_tokens=line.generation_tokens + 1)
        assert arrivals(CHUNKS, [*logged[:n], wrong, *logged[n + 1:]]) is None, n
    assert arrivals(CHUNKS, logged[:-1]) is None  # a line short
    random.seed(3)
    shuffled = random.sample(logged, len(logged))
    assert shuffled == logged or arrivals(CHUNKS, shuffled) is None


# -- the lab's scripts run the labs' engines ---------------------------------------------------


def gpu_checks():
    return load(FOLDER / "gpu_checks.py", "gpu_checks_of_continuous_batching", ROOT)


@pytest.mark.parametrize("lab", [CHUNKS, PREEMPTION], ids=lambda lab: lab.script)
def test_the_python_labs_set_their_engine(lab):
    checks = gpu_checks()
    keywords = llm_options(FOLDER / lab.script, ROOT)
    checks.engine_matches(lab, keywords, lab.script)  # raises if not
    assert keywords["model"] == "Qwen/Qwen2.5-7B-Instruct-AWQ"
    assert keywords["disable_log_stats"] is False
    script = (FOLDER / lab.script).read_text("utf-8")
    assert script.index('os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"') < script.index(
        "from vllm import")


def test_the_served_twin_sets_the_same_engine():
    checks = gpu_checks()
    options = serve_options(FOLDER / "lab_chunks_serve.sh")
    checks.engine_matches(CHUNKS, options, "lab_chunks_serve.sh")
    keywords = llm_options(FOLDER / "lab_chunks.py", ROOT)
    assert options == {k: v for k, v in keywords.items() if k != "disable_log_stats"}
    assert f'MODEL = "{options["model"]}"' in (FOLDER / "lab_send.py").read_text("utf-8")


def test_a_lab_that_leaves_async_scheduling_on_is_refused():
    checks = gpu_checks()
    keywords = {**llm_options(FOLDER / "lab_chunks.py", ROOT), "async_scheduling": None}
    with pytest.raises(AssertionError, match="async_scheduling=False"):
        checks.engine_matches(CHUNKS, keywords, "lab_chunks.py")
    with pytest.raises(AssertionError, match="max_num_seqs=3; lab_chunks.py's trace needs 4"):
        checks.engine_matches(CHUNKS, {**keywords, "max_num_seqs": 3}, "lab_chunks.py")


@pytest.mark.parametrize("arrive", [(0, 0, 1, 2), (0, 2, 4, 7), (0, 6, 20, 21), (0, 9, 9, 30)])
def test_what_a_served_run_adds_up_to_whatever_the_arrivals(arrive):
    """What the page says holds for any arrival steps: the context tokens are the four
    prompts, the generation tokens each request's max_tokens - 1, the histogram's sum the
    prompts plus every generated token."""
    requests = [replace(r, arrival_step=s) for r, s in zip(CHUNKS.requests, arrive)]
    steps = CHUNKS.steps(requests)
    lines = iterations(CHUNKS, steps, every_step=True)
    prompts = sum(r.prompt_tokens for r in requests)
    assert sum(line.context_tokens for line in lines) == prompts == 178
    assert sum(line.generation_tokens for line in lines) == sum(
        r.max_tokens - 1 for r in requests) == 12
    assert predict_metrics(CHUNKS, steps).sum == prompts + sum(r.max_tokens for r in requests) == 194
    for line in lines:  # what the Iteration lines show and the histogram cannot
        assert line.context_tokens + line.generation_tokens <= CHUNKS.max_num_batched_tokens
