"""What the GPU job checks of the speculative decoding lab on the RTX 4090 (see
coursekit/gpu_labs.py).

lab_spec_send.py runs twice, against lab_plain_serve.sh's server and lab_spec_serve.sh's
(n-gram, k = 3). Held exactly, for every part with speculation: the spec-decode
counters /metrics gained agree with each other as SpecDecodingStats.observe_draft makes
them (spec_metrics.problems), and the rewriting task produced drafts. Reported only:
each part's acceptance rate, its decode speed without and with speculation, and the
measured ratio next to speedup.py's prediction from the counters
(spec_lab_prediction.compare), an estimate. Both servers must configure the same
engine but for --speculative-config. Held too: the n-gram server runs the V1 model
runner, which logs the CUDA graph memory it estimates and takes off the KV cache, and
the plain one the V2 runner, which estimates none (the page's KV cap rests on both);
the V1 runner's estimate and what its capture took are reported beside the published
figures speedup.py takes for them.
"""

import json
import re

from coursekit.vllm_claims import serve_options
from spec_lab_prediction import K, compare, parts
from spec_metrics import problems
from speedup import V1_GRAPHS_GIB

# vllm/v1/spec_decode/metrics.py: SpecDecodingLogging.log
LOGGED = re.compile(
    r"SpecDecoding metrics: .*?Accepted: (\d+) tokens, Drafted: (\d+) tokens"
)

# The V1 runner's GPUModelRunner.profile_cudagraph_memory (n-gram's runner, in
# vllm/v1/worker/gpu_model_runner.py) and vllm/v1/worker/gpu_worker.py:
# Worker.compile_or_warm_up_model
ESTIMATED = re.compile(r"Estimated CUDA graph memory: ([\d.]+) GiB total")
POOL = re.compile(r"CUDA graph pool memory: ([\d.]+) GiB \(actual\), ([\d.]+) GiB")


def v1_graph_memory(log: str) -> tuple[float, float | None] | None:
    """The V1 runner's CUDA graph estimate (GiB) and what the capture took, from a
    server's log; None when no estimate was logged (the V2 runner estimates none)."""
    estimated = ESTIMATED.findall(log)
    if not estimated:
        return None
    pool = POOL.search(log)
    return float(estimated[-1]), float(pool.group(1)) if pool else None


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
        plain_graphs = v1_graph_memory(server.log)
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
    graphs = v1_graph_memory(log)
    if graphs:
        estimate, took = graphs
        low, high = V1_GRAPHS_GIB
        rows["V1 runner's CUDA graphs: estimated, captured"] = (
            f"{estimate:.2f} GiB, {'not logged' if took is None else f'{took:.2f} GiB'}"
            f" (the page's published figures: {low} to {high} GiB)"
        )
    lab.report("lab_spec_send.py: n-gram speculation, k = 3", rows)
    assert graphs, "the n-gram server logged no CUDA graph estimate: not the V1 runner?"
    assert plain_graphs is None, (
        f"the plain server estimated CUDA graphs {plain_graphs}: not the V2 runner?"
    )
    assert not found, "the spec-decode counters disagree: " + "; ".join(found)
    edit_drafts = [spec[key]["spec"]["drafts"] for key in spec if key[0] == "edit"]
    assert all(edit_drafts), f"the rewriting task verified no drafts: {edit_drafts}"


CHECKS = {"lab_spec_send.py": lab_spec_send_py}
