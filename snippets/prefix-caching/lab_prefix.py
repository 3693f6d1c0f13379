"""The lab, Python API: lab_hits.py's requests through vLLM, one at a time; print how
many prompt tokens of each came from the prefix cache, what each reset answered, and
the two prefix cache counters.

Run: python lab_prefix.py > prefix.txt
     python lab_hits.py prefix.txt
"""

from lab_hits import COUNTERS, MAX_TOKENS, PARTS
from vllm import LLM, SamplingParams

if __name__ == "__main__":  # vLLM may start processes that import this file again
    llm = LLM(
        model="Qwen/Qwen2.5-7B-Instruct",
        max_model_len=4096,  # short prompts: a small KV cache will do
        enable_prefix_caching=True,  # vLLM's default, written out
        disable_log_stats=False,  # LLM() keeps no metrics unless asked
    )
    params = SamplingParams(max_tokens=MAX_TOKENS)
    for number, part in enumerate(PARTS.values()):
        if number:  # a fresh prefix cache for each part but the first
            print(f"reset_prefix_cache: {llm.reset_prefix_cache()}")
        for name, prompt in part:
            # A TokensPrompt: exactly these tokens, no tokenizer, no chat template
            request = {"prompt_token_ids": prompt}
            (output,) = llm.generate(request, params, use_tqdm=False)
            tokens, cached = len(output.prompt_token_ids), output.num_cached_tokens
            print(f"{name}: {tokens} prompt tokens, {cached} cached")
    for metric in llm.get_metrics():
        if metric.name in COUNTERS:  # vllm/v1/metrics/reader.py: Counter
            print(f"{metric.name} {metric.value}")
