"""A repetitive task, step by step: the model is asked to copy a sentence with one word
changed (demo_tasks.py's "edit"). Words stand for tokens. The n-gram proposer drafts
from the prompt and the output so far: k = 3 drafts, prompt_lookup_min 2,
prompt_lookup_max 4."""

from demo_tasks import run_task

steps, stats, words = run_task("edit", k=3, min_n=2, max_n=4)
print("step  scheduled  drafts                 accepted  new tokens")
for number, step in enumerate(steps):
    drafts = " ".join(words[t] for t in step.drafts.get("edit", [])) or "-"
    accepted = step.accepted.get("edit", "-")
    new = " ".join(words[t] for t in step.new_tokens["edit"])
    print(
        f"{number:>4}  {step.scheduled['edit']:>9}  {drafts:<21}"
        f"  {accepted!s:>8}  {new}"
    )
produced = sum(len(step.new_tokens["edit"]) for step in steps)
print(f"{produced} tokens in {len(steps)} steps, the prefill's included;")
print(f"without drafts: {produced} steps, one token each")
print(
    f"drafts {stats.num_drafts}, draft tokens {stats.num_draft_tokens},"
    f" accepted {stats.num_accepted_tokens},"
    f" per position {stats.accepted_per_pos} of {stats.draft_per_pos}"
)
# The two figures of vLLM's log line
# (vllm/v1/spec_decode/metrics.py: SpecDecodingLogging.log)
length = 1 + stats.num_accepted_tokens / stats.num_drafts
rate = stats.num_accepted_tokens / stats.num_draft_tokens * 100
print(f"Mean acceptance length: {length:.2f}, Avg Draft acceptance rate: {rate:.1f}%")
