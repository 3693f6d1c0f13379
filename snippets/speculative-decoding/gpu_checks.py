"""What the GPU job checks of the speculative decoding lab on the RTX 4090 (see
coursekit/gpu_labs.py).

lab_spec_send.py runs twice, against lab_plain_serve.sh's server and lab_spec_serve.sh's
(n-gram, k = 3). Held exactly, for every part with speculation: the spec-decode
counters /metrics gained agree with each other as SpecDecodingStats.observe_draft makes
them (spec_metrics.problems), and the rewriting task produced drafts. Reported only:
each part's acceptance rate, its decode speed without and with speculation, and the
measured ratio next to speedup.py's prediction from the counters
(spec_lab_prediction.compare), an estimate. Both servers must configure the same
engine but for --speculative-config.
"""

import json
import re

from coursekit.vllm_claims import serve_options
from spec_lab_prediction import K, compare, parts
from spec_metrics import problems

# vllm/v1/spec_decode/metrics.py: SpecDecodingLogging.log
LOGGED = re.compile(
    r"SpecDecoding metrics: .*?Accepted: (\d+) tokens, Drafted: (\d+) tokens"
)


def lab_spec_send_py(lab):
    plain_options = serve_options(lab.folder / "lab_plain_serve.sh")
    spec_options = serve_options(lab.folder / "lab_spec_serve.sh")
    speculative = json.loads(spec_options.pop("speculative_config"))
    assert plain_options == spec_options, (
        f"the two servers differ beyond speculation: {plain_options} vs {spec_options}"
    )
    assert (
        speculative["method"] == "ngram" and speculative["num_speculative_tokens"] == K
    )
    with lab.serve("lab_plain_serve.sh") as server:
        plain = parts(
            lab.run_python("lab_spec_send.py", server.url, name="plain").stdout
        )
    with lab.serve("lab_spec_serve.sh") as server:
        spec = parts(lab.run_python("lab_spec_send.py", server.url, name="spec").stdout)
        log = server.log
    assert plain.keys() == spec.keys(), f"parts differ: {plain.keys()} vs {spec.keys()}"
    found = []
    for (task, concurrency), row in spec.items():
        broken = problems(row["spec"], K)
        found += [f"{task} x{concurrency}: {p}" for p in broken]
    rows = {}
    for row in compare(plain, spec):
        task, concurrency = row["part"]
        rows[f"{task}, concurrency {concurrency}"] = (
            f"{row['plain']:.1f} -> {row['spec']:.1f} tokens/s,"
            f" {row['spec'] / row['plain']:.2f}x measured,"
            f" {row['predicted']:.2f}x predicted"
            f" (estimate), acceptance {row['acceptance']:.1%}"
        )
    # vLLM's log line (SpecDecodingLogging.log) sums each interval's counts; the last
    # interval may end after the server stops, so the sums are reported, not held.
    logged = [tuple(map(int, m)) for m in LOGGED.findall(log)]
    total = [
        sum(row["spec"][key] for row in spec.values())
        for key in ("accepted", "draft_tokens")
    ]
    rows["SpecDecoding metrics lines: accepted, drafted"] = (
        f"{len(logged)} lines, {sum(a for a, _ in logged)}, {sum(d for _, d in logged)}"
        f" (the counters: {total[0]}, {total[1]})"
    )
    lab.report("lab_spec_send.py: n-gram speculation, k = 3", rows)
    assert not found, "the spec-decode counters disagree: " + "; ".join(found)
    edit_drafts = [spec[key]["spec"]["drafts"] for key in spec if key[0] == "edit"]
    assert all(edit_drafts), f"the rewriting task verified no drafts: {edit_drafts}"


CHECKS = {"lab_spec_send.py": lab_spec_send_py}
