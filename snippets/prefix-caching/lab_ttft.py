"""The lab, time to first token: a 4,000-token prompt after a reset of the prefix cache
(a miss), then again (a hit), ROUNDS times. A request of 1 output token: the time
LLM.generate takes is its TTFT, seen from this process.

Run: python lab_ttft.py > ttft.txt
     python ttft_hit.py ttft.txt
"""

import time

from ttft_hit import LONG_PROMPT, ROUNDS
from vllm import LLM, SamplingParams

if __name__ == "__main__":  # vLLM may start processes that import this file again
    llm = LLM(
        model="Qwen/Qwen2.5-7B-Instruct",
        max_model_len=4096,  # the 4,000-token prompt and its 1 output token
        enable_prefix_caching=True,  # vLLM's default, written out
    )
    params = SamplingParams(max_tokens=1)
    request = {"prompt_token_ids": LONG_PROMPT}
    for number in range(1, ROUNDS + 1):
        llm.reset_prefix_cache()  # so that the first request of each round misses
        for kind in ("miss", "hit"):
            start = time.perf_counter()
            (output,) = llm.generate(request, params, use_tqdm=False)
            elapsed = (time.perf_counter() - start) * 1000
            tokens, cached = len(output.prompt_token_ids), output.num_cached_tokens
            print(
                f"round {number} {kind}: {tokens} prompt tokens, {cached} cached,"
                f" {elapsed:.1f} ms"
            )
