"""What the GPU job checks of the prefix caching lab on the RTX 4090 (see
coursekit/gpu_labs.py).

Both labs send lab_hits.py's requests one at a time: a 100-token prompt twice, the same
prompt and a copy with token 50 changed, a 64-token prompt twice, two prompts sharing a
12-token prefix; the prefix cache is reset before each part but the first. Everything
vLLM reports must be exactly what prefix_cache.py predicts: the cached tokens of every
request (RequestOutput.num_cached_tokens, usage.prompt_tokens_details.cached_tokens
over HTTP), True from every reset, with one "Successfully reset prefix cache" line each
in vLLM's log, and the two counters vllm:prefix_cache_queries and vllm:prefix_cache_hits
(LLM.get_metrics(), GET /metrics), in tokens.
"""

from coursekit import ROOT
from coursekit.vllm_claims import llm_options, serve_options
from lab_hits import COUNTERS, predict, read_report
from ttft_hit import medians
from ttft_hit import predict as predict_ttft
from ttft_hit import read as read_ttft

# vllm/v1/core/block_pool.py: BlockPool.reset_prefix_cache logs it on success.
RESET_LINE = "Successfully reset prefix cache"


def report_matches(lab, title, found, log):
    """Every request, reset and counter as predicted; one reset line per reset."""
    expected = predict()[0]
    rows = {}
    for name, (prompt, cached) in expected.requests.items():
        got = found.requests.get(name)
        rows[f"{name}: prompt, cached tokens"] = f"{got} (predicted {(prompt, cached)})"
    rows["reset_prefix_cache"] = f"{found.resets} (predicted {expected.resets})"
    for name in COUNTERS:
        rows[name] = f"{found.counters[name]} (predicted {expected.counters[name]})"
    resets_logged = log.count(RESET_LINE)
    rows[f"'{RESET_LINE}' lines"] = (
        f"{resets_logged} (predicted {len(expected.resets)})"
    )
    lab.report(title, rows)
    assert found == expected, f"{title}: vLLM reported {found}, predicted {expected}"
    assert resets_logged == len(expected.resets), (
        f"{title}: {resets_logged} '{RESET_LINE}' lines, {len(expected.resets)} resets"
    )


def lab_prefix_py(lab):
    """The Python API: num_cached_tokens of each request, the resets, the counters."""
    options = llm_options(lab.folder / "lab_prefix.py", ROOT)
    assert options.get("enable_prefix_caching") is not False, "prefix caching is off"
    assert options.get("disable_log_stats") is False, (
        "LLM() needs disable_log_stats=False"
    )
    run = lab.run_python("lab_prefix.py")
    report_matches(lab, "lab_prefix.py", read_report(run.stdout), run.log)


def lab_prefix_send_py(lab):
    """The served twin: lab_prefix.py's engine, the same requests over HTTP."""
    script = lab.folder / "lab_prefix_serve.sh"
    served = serve_options(script)
    python = llm_options(lab.folder / "lab_prefix.py", ROOT)
    for option in ("model", "max_model_len", "enable_prefix_caching"):
        assert served.get(option) == python.get(option), (
            f"{script.name} sets {option}={served.get(option)!r}, lab_prefix.py"
            f" {python.get(option)!r}"
        )
    assert served.get("enable_prompt_tokens_details") is True, (
        f"{script.name}: without --enable-prompt-tokens-details the usage has no"
        " cached_tokens"
    )
    assert "VLLM_SERVER_DEV_MODE=1 vllm serve" in script.read_text("utf-8"), (
        f"{script.name}: POST /reset_prefix_cache needs VLLM_SERVER_DEV_MODE=1"
    )
    sender = (lab.folder / "lab_prefix_send.py").read_text("utf-8")
    assert f'MODEL = "{served["model"]}"' in sender, (
        "lab_prefix_send.py asks another model"
    )
    with lab.serve(script.name) as server:
        sent = lab.run_python("lab_prefix_send.py", server.url)
        log = server.log
    report_matches(lab, "lab_prefix_send.py", read_report(sent.stdout), log)


def lab_ttft_py(lab):
    """Time to first token, missed and hit: every request's cached tokens as ttft_hit.py
    predicts (0 for a miss, 3,984 for a hit); the median times and their ratio are
    reported, not asserted."""
    options = llm_options(lab.folder / "lab_ttft.py", ROOT)
    assert options.get("enable_prefix_caching") is not False, "prefix caching is off"
    run = lab.run_python("lab_ttft.py")
    found, times = read_ttft(run.stdout)
    expected = predict_ttft()
    rows = {}
    for number, (kind, prompt, cached) in enumerate(expected):
        got = found[number][1:] if number < len(found) else None
        rows[f"{kind} {number // 2 + 1}: prompt, cached tokens"] = (
            f"{got} (predicted {(prompt, cached)})"
        )
    lab.report("lab_ttft.py: cached tokens", rows)
    assert found == expected, (
        f"lab_ttft.py: vLLM reported {found}, predicted {expected}"
    )
    miss, hit = medians(times)
    lab.report(
        "lab_ttft.py: time to first token",
        {
            "median TTFT of a miss": f"{miss:.1f} ms",
            "median TTFT of a hit": f"{hit:.1f} ms",
            "miss / hit": f"{miss / hit:.1f}x (measured, not predicted)"
            if hit
            else "no ratio: a hit took under 0.05 ms",
        },
    )


CHECKS = {
    "lab_prefix.py": lab_prefix_py,
    "lab_prefix_send.py": lab_prefix_send_py,
    "lab_ttft.py": lab_ttft_py,
}
