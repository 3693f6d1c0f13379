"""The lab, part 1: long_prompt.py's worked trace on vLLM, one engine step at a time.

Run: python lab_chunks.py > chunks.txt 2>&1
     python lab_trace.py lab_chunks.py chunks.txt
"""

import os

# vLLM's engine core in this process, stepping only when step() is called, so that a
# request added before step s is scheduled in step s. By default the core runs in a
# process of its own and steps as soon as the first request reaches it.
os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"

from long_prompt import WORKLOAD  # noqa: E402
from vllm import LLM, SamplingParams  # noqa: E402


def step_through(llm, workload):
    """Add each request just before the step it arrives at, as scheduler.py does, and
    step the engine until every request has finished; print what each generated."""
    engine = llm.llm_engine
    pending = sorted(workload, key=lambda request: request.arrival_step)
    generated, step = {}, 0
    while pending or engine.has_unfinished_requests():
        while pending and pending[0].arrival_step <= step:
            request = pending.pop(0)
            # Token ids, not text: exactly prompt_tokens tokens, an id of its own
            token = 1000 + workload.index(request)
            prompt = {"prompt_token_ids": [token] * request.prompt_tokens}
            # ignore_eos: no end-of-sequence token stops it before max_tokens
            params = SamplingParams(max_tokens=request.max_tokens, ignore_eos=True)
            engine.add_request(request.request_id, prompt, params)
        for output in engine.step():
            generated[output.request_id] = len(output.outputs[0].token_ids)
        step += 1
    for request_id, tokens in generated.items():
        print(f"{request_id}: {tokens} tokens generated")


def print_metrics(llm):
    """The two metrics the lab predicts, written as GET /metrics writes them."""
    for metric in llm.get_metrics():
        if metric.name == "vllm:iteration_tokens_total":
            for bound, count in metric.buckets.items():
                print(f'{metric.name}_bucket{{le="{bound}"}} {count}')
            print(f"{metric.name}_count {metric.count}")
            print(f"{metric.name}_sum {metric.sum}")
        elif metric.name == "vllm:num_preemptions":
            print(f"{metric.name}_total {metric.value}")


if __name__ == "__main__":  # vLLM may start processes that import this file again
    llm = LLM(
        model="Qwen/Qwen2.5-7B-Instruct-AWQ",
        max_model_len=256,  # room for the longest request of long_prompt.py
        max_num_batched_tokens=64,  # long_prompt.py's token budget per step
        max_num_seqs=4,  # and its number of sequences
        num_gpu_blocks_override=64,  # 63 usable blocks: the usage is predictable
        async_scheduling=False,  # the synchronous scheduler that scheduler.py mirrors
        enable_logging_iteration_details=True,  # an "Iteration(N)" line per step
        disable_log_stats=False,  # LLM() keeps no stats unless asked
    )
    step_through(llm, WORKLOAD)
    print_metrics(llm)
