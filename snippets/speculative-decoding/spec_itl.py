"""How speculation shows in ITL and TPOT: edit_trace.py's generation streamed as one
chunk per engine output, each step timed by speedup.py's model at a context of 1,024
tokens (estimates; at batch 64 every request is taken to run the same trace), measured
as vllm bench serve measures it (lesson 6's serving_metrics.request_metrics). The
server's vllm:inter_token_latency_seconds also records one sample per output, not per
token (vllm/v1/metrics/stats.py: IterationStats.update_from_output)."""

from demo_tasks import run_task
from measured_share import realistic_time
from serving_metrics import request_metrics
from speedup import step_seconds

CONTEXT, K = 1024, 3

steps, stats, _ = run_task("edit", k=K, min_n=2, max_n=4)
chunks = [len(step.new_tokens["edit"]) for step in steps]
drafts = [len(step.drafts.get("edit", [])) for step in steps]
tokens = sum(chunks)
print(f"tokens per output: {' '.join(map(str, chunks))} ({tokens} tokens)")
print("              batch  outputs  ITL samples  mean ITL   TPOT")
measured = {}
for batch in (1, 64):
    # The first output comes from the prefill (at 0 here: TTFT is not compared); each
    # later one a step after the one before: a plain step, or a verification step of
    # that step's drafts.
    plain, spec = [0.0], [0.0]
    for _ in range(tokens - 1):
        plain.append(plain[-1] + step_seconds(batch, CONTEXT, 0, False))
    for n in drafts[1:]:
        spec.append(spec[-1] + step_seconds(batch, CONTEXT, n, False))
    for label, times in (("plain", plain), (f"n-gram k={K}", spec)):
        m = request_metrics(0.0, times, tokens)
        itl = sum(m["itls"]) / len(m["itls"])
        measured[label, batch] = itl * 1000, m["tpot"] * 1000
        print(
            f"{label:<12} {batch:>6} {len(times):>8} {len(m['itls']):>12}"
            f" {itl * 1000:>6.2f} ms {m['tpot'] * 1000:>6.2f} ms"
        )
itl, _ = measured["plain", 1]
_, tpot = measured[f"n-gram k={K}", 1]
print("at the share of the bound Qwen's A100 reached (lesson 1, an estimate), batch 1:")
print("  plain ITL {:.1f} to {:.1f} ms, n-gram TPOT {:.1f} to {:.1f} ms".format(
    *realistic_time(itl), *realistic_time(tpot)))  # fmt: skip
# From the counters: each output after the first carries 1 + its accepted drafts, but
# a last verification may pass max_tokens, and the tokens past it are dropped.
least = tokens - 1 - stats.num_accepted_tokens
print(
    f"ITL samples >= {tokens} tokens - 1 - {stats.num_accepted_tokens} accepted ="
    f" {least}; here {len(drafts) - 1}: the last step dropped a token past max_tokens"
)
