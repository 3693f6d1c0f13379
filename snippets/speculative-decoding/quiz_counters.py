"""Self-test: after a run with num_speculative_tokens 3, GET /metrics shows these lines.
What are the acceptance rate and the mean acceptance length, and do they add up?"""

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
