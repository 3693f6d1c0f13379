"""Self-test: after a run with num_speculative_tokens 3, GET /metrics shows these lines.
What are the acceptance rate and the mean acceptance length, and do they add up? And
which rate is the a of 1 + a + ... + a^k?"""

from spec_decode import expected_tokens
from spec_metrics import log_line, problems, read_counters

LABELS = 'engine="0",model_name="Qwen/Qwen2.5-7B-Instruct"'
METRICS = f"""\
vllm:spec_decode_num_drafts_total{{{LABELS}}} 1000.0
vllm:spec_decode_num_draft_tokens_total{{{LABELS}}} 2900.0
vllm:spec_decode_num_accepted_tokens_total{{{LABELS}}} 1500.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{{{LABELS},position="0"}} 700.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{{{LABELS},position="1"}} 500.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{{{LABELS},position="2"}} 300.0
"""

counters = read_counters(METRICS)
print(counters)
print("vLLM's log line, had these been counted in 10 seconds:")
print(log_line(counters, seconds=10.0))
print(f"at most 3 x {counters['drafts']} = {3 * counters['drafts']} draft tokens")
print("problems:", problems(counters, k=3) or "none")
# The formula's a: a draft's chance when the drafts before it passed. Position 0 always
# has its chance; the overall rate also counts drafts after a rejection, which had none.
a = counters["per_pos"][0] / counters["drafts"]
overall = counters["accepted"] / counters["draft_tokens"]
print(f"a from position 0: {a:.3f}; 1 + a + a^2 + a^3 = {expected_tokens(a, 3):.2f}")
print(f"the overall rate {overall:.3f} in its place: {expected_tokens(overall, 3):.2f}")
