"""What the GPU job checks of the sampling and tools lab on the RTX 4090 (see
coursekit/gpu_labs.py).

lab_requests.py runs against lab_serve.sh's server (hermes parser, auto tool choice).
Held exactly: the tool request came back as a call of get_weather whose arguments parse
as JSON with a "city" (finish_reason "tool_calls", as vLLM's chat serving sets it when
the parser found calls); the JSON-schema answer parses and satisfies the schema
(lab_json_problems); every logprob of the greedy answer is the largest of its
top_logprobs (greedy with no penalty picks the raw argmax, and logprobs_mode
raw_logprobs reports the raw logits' log_softmax) and the top ones sum to at most 1 in
probability; all 64 prompts got answers both ways. Reported only: how many of the 64
greedy answers differ between one at a time and 64 at once (the batch changes the
reduction order of the kernels; 0 is not promised).

lab_bench_schema.py benches the same server twice, plain and held to the schema. Held
exactly: every request completed, and every schema answer that ended before max_tokens
satisfies the schema (the grammar ended it). Reported only: the median TTFT and TPOT of
both runs and their ratio, what the mask costs on this card."""

import json

from lab_answers import lab_json_problems, logprob_problems
from lab_bench_schema import PROMPTS, RUNS
from lab_requests import BATCH


def parts(stdout: str) -> dict:
    return {p["part"]: p for p in map(json.loads, stdout.splitlines()) if p}


def lab_requests_py(lab):
    with lab.serve("lab_serve.sh") as server:
        got = parts(lab.run_python("lab_requests.py", server.url).stdout)
    tool = got["tool"]["choice"]
    calls = tool["message"].get("tool_calls") or []
    assert tool["finish_reason"] == "tool_calls" and calls, f"no tool call: {tool}"
    assert calls[0]["function"]["name"] == "get_weather", calls
    assert "city" in json.loads(calls[0]["function"]["arguments"]), calls
    answer = got["json"]["choice"]["message"]["content"]
    assert not lab_json_problems(answer), (answer, lab_json_problems(answer))
    content = got["logprobs"]["choice"]["logprobs"]["content"]
    assert content and not logprob_problems(content), logprob_problems(content)
    alone, together = got["batch"]["alone"], got["batch"]["together"]
    assert len(alone) == len(together) == BATCH
    differ = sum(a != b for a, b in zip(alone, together))
    call = calls[0]["function"]
    top = content[0]["top_logprobs"]
    rows = {
        "tool call": f"{call['name']}({call['arguments']})",
        "JSON answer": answer,
        "first token's top logprobs": [
            (t["token"], round(t["logprob"], 3)) for t in top
        ],
        f"greedy answers that differ, alone vs {BATCH} at once": f"{differ} of {BATCH}",
    }
    lab.report("lab_requests.py: tools, JSON schema, logprobs, batch", rows)


def lab_bench_schema_py(lab):
    with lab.serve("lab_serve.sh") as server:
        out = lab.log_dir / "bench-schema"
        printed = lab.run_python("lab_bench_schema.py", server.url, str(out)).stdout
    runs = {row["run"]: row for row in map(json.loads, printed.splitlines())}
    assert set(runs) == set(RUNS), runs
    for name, row in runs.items():
        assert row["completed"] == PROMPTS, (name, row)
    schema = runs["schema"]
    # An answer the grammar ended is valid JSON of the schema: exact. One cut at
    # max_tokens is counted, not judged.
    assert schema["ended_and_valid"] == schema["ended_before_max_tokens"] > 0, schema
    plain = runs["plain"]
    rows = {
        f"{name}: median TTFT / TPOT (ms)": (
            f"{row['median_ttft_ms']:.1f} / {row['median_tpot_ms']:.2f}"
        )
        for name, row in runs.items()
    }
    rows["TPOT with the schema / without"] = (
        f"{schema['median_tpot_ms'] / plain['median_tpot_ms']:.2f}"
    )
    rows["schema answers ended and valid"] = (
        f"{schema['ended_and_valid']} of {schema['completed']}"
    )
    lab.report("lab_bench_schema.py: what a JSON schema costs", rows)


CHECKS = {
    "lab_requests.py": lab_requests_py,
    "lab_bench_schema.py": lab_bench_schema_py,
}
