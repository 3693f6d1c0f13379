"""What the GPU job checks of the continuous batching lab on the RTX 4090 (see
coursekit/gpu_labs.py).

The two Python labs step vLLM by hand through the lesson's worked traces (long_prompt.py
and preemption.py), each request arriving before the step it arrives at in the trace.
Every `Iteration(N)` line vLLM logs must then be the one lab_trace.py predicts with
scheduler.py: the step's number, its context and generation requests and tokens, and the
KV cache usage after it (to the logged 0.1 %); so must vllm:iteration_tokens_total
(every bucket, count and sum) and vllm:num_preemptions, and each request must generate
max_tokens tokens. Only a step's elapsed time is not predicted.

The served twin gets long_prompt.py's requests over HTTP: lab_send.py, the command-line
tab's GPU block, sends them to the server lab_chunks_serve.sh starts (its check starts
it). There a request arrives when it arrives, not at a step of our choosing.
The step each arrived at is read off the log (lab_trace.arrivals: the first step that
the requests sent before it do not account for); with those, every line and both
metrics must match exactly too.
"""

from coursekit import ROOT
from coursekit.vllm_claims import llm_options, serve_options
from lab_trace import (
    CHUNKS,
    PREEMPTION,
    arrivals,
    iterations,
    predict_metrics,
    read_generated,
    read_iterations,
    read_metrics,
)

# vllm/config/vllm.py: VllmConfig.__post_init__ logs which scheduler it chose.
ASYNC_OFF = "Asynchronous scheduling is disabled."
# The options a lab must set for scheduler.py's trace to be vLLM's (values: the Lab's).
ENGINE = {
    "max_num_batched_tokens": "max_num_batched_tokens",
    "max_num_seqs": "max_num_seqs",
    "num_gpu_blocks_override": "num_gpu_blocks",
    "max_model_len": "max_model_len",
}


def engine_matches(spec, options, where):
    """The lab's engine is the trace's (budget, sequences, blocks, max_model_len), with
    the synchronous scheduler, and logs iteration details."""
    for option, field in ENGINE.items():
        expected = getattr(spec, field)
        assert options.get(option) == expected, (
            f"{where} sets {option}={options.get(option)!r}; {spec.script}'s trace"
            f" needs {expected}"
        )
    assert options.get("async_scheduling") is False, (
        f"{where}: scheduler.py mirrors the synchronous scheduler:"
        " async_scheduling=False"
    )
    assert options.get("enable_logging_iteration_details") is True, where


def lines_match(lab, title, predicted, logged):
    rows = {}
    for n in range(max(len(predicted), len(logged))):
        found = logged[n] if n < len(logged) else "(no line)"
        expected = predicted[n] if n < len(predicted) else "(no line)"
        verdict = "match" if found == expected else f"MISMATCH, predicted {expected}"
        rows[f"line {n}"] = f"{found}: {verdict}"
    lab.report(title, rows)
    assert logged == predicted, f"{title}: vLLM's Iteration lines are not the predicted"


def metrics_match(lab, title, spec, steps, text):
    found, expected = read_metrics(text), predict_metrics(spec, steps)
    buckets = f"{found.buckets}"
    if found.buckets != expected.buckets:
        buckets += f" (predicted {expected.buckets})"
    lab.report(
        title,
        {
            "vllm:iteration_tokens_total count, sum": f"{found.count}, {found.sum}"
            f" (predicted {expected.count}, {expected.sum})",
            "vllm:iteration_tokens_total buckets": buckets,
            "vllm:num_preemptions_total": f"{found.preemptions}"
            f" (predicted {expected.preemptions})",
        },
    )
    assert found == expected, f"{title}: {found} (predicted {expected})"


def generated_match(spec, text, where):
    generated = read_generated(text)
    expected = {r.request_id: r.max_tokens for r in spec.requests}
    assert generated == expected, f"{where} generated {generated}, not {expected}"


def python_lab(lab, spec):
    """A Python lab: every Iteration line and both metrics exactly as predicted."""
    engine_matches(spec, llm_options(lab.folder / spec.script, ROOT), spec.script)
    run = lab.run_python(spec.script)
    assert ASYNC_OFF in run.log, f"{spec.script}: vLLM did not log {ASYNC_OFF!r}"
    override = f"with num_gpu_blocks_override={spec.num_gpu_blocks}"
    assert override in run.log, f"{spec.script}: no '{override}' line"
    generated_match(spec, run.stdout, spec.script)
    steps = spec.steps()
    predicted = iterations(spec, steps, every_step=False)
    lines_match(
        lab, f"{spec.script}: Iteration lines", predicted, read_iterations(run.log)
    )
    metrics_match(lab, f"{spec.script}: metrics", spec, steps, run.stdout)


def lab_chunks_py(lab):
    python_lab(lab, CHUNKS)


def lab_preemption_py(lab):
    python_lab(lab, PREEMPTION)


def lab_send_py(lab):
    """The served twin: lab_chunks_serve.sh serves the same engine, lab_send.py sends
    long_prompt.py's requests; with the arrival steps read off the server's log, every
    line and both metrics as predicted."""
    script = lab.folder / "lab_chunks_serve.sh"
    options = serve_options(script)
    engine_matches(CHUNKS, options, script.name)
    sender = (lab.folder / "lab_send.py").read_text("utf-8")
    assert f'MODEL = "{options["model"]}"' in sender, "lab_send.py asks another model"
    with lab.serve(script.name) as server:
        assert ASYNC_OFF in server.log, f"{script.name}: vLLM did not log {ASYNC_OFF!r}"
        # AsyncLLM's output handler logs a step's line before its outputs are answered.
        sent = lab.run_python("lab_send.py", server.url)
        log = server.log
    generated_match(CHUNKS, sent.stdout, "lab_send.py")
    logged = read_iterations(log)
    placed = arrivals(CHUNKS, logged)
    lab.report(
        f"{script.name}: arrival steps read off the log",
        {r.request_id: r.arrival_step for r in placed or []}
        or {"none": "no arrival steps make the simulator log what vLLM logged"},
    )
    assert placed is not None, (
        f"{script.name}: no arrival steps make scheduler.py log what vLLM logged:\n"
        + "\n".join(map(str, logged))
    )
    steps = CHUNKS.steps(placed)
    predicted = iterations(CHUNKS, steps, every_step=True)
    lines_match(lab, f"{script.name}: Iteration lines", predicted, logged)
    metrics_match(lab, f"{script.name}: metrics", CHUNKS, steps, sent.stdout)


CHECKS = {
    "lab_chunks.py": lab_chunks_py,
    "lab_preemption.py": lab_preemption_py,
    "lab_send.py": lab_send_py,
}
