from lab_prediction import MAX_MODEL_LEN, NUM_GPU_BLOCKS, PROMPT_LENGTHS, READ_AT
from vllm import LLM, SamplingParams


def gauge(llm, name):
    """One of vLLM's Prometheus gauges, as LLM.get_metrics() reads them."""
    return next(metric for metric in llm.get_metrics() if metric.name == name)


if __name__ == "__main__":  # vLLM may start processes that import this file again
    llm = LLM(
        model="Qwen/Qwen2.5-7B-Instruct-AWQ",
        max_model_len=MAX_MODEL_LEN,  # 4,096 tokens: 256 blocks per full request
        num_gpu_blocks_override=NUM_GPU_BLOCKS,  # exactly 1,000 blocks
        # LLM() and `vllm serve` default the first differently
        # (EngineArgs.get_batch_defaults: 8192 and 2048 tokens per step below 70 GiB);
        # set both alike in both tabs.
        max_num_batched_tokens=4096,  # tokens per step: all four prompts in one step
        max_num_seqs=16,
        disable_log_stats=False,  # LLM() keeps no metrics unless asked
    )
    info = gauge(llm, "vllm:cache_config_info")
    print(f"vllm:cache_config_info num_gpu_blocks = {info.labels['num_gpu_blocks']}")

    # Step the engine behind LLM.generate by hand, to read the gauge between steps.
    engine = llm.llm_engine
    params = SamplingParams(max_tokens=max(READ_AT) + 16, ignore_eos=True)
    for number, length in enumerate(PROMPT_LENGTHS):
        # Each prompt repeats a token of its own: no two requests share a block.
        prompt = {"prompt_token_ids": [1000 + number] * length}
        engine.add_request(f"request-{number}", prompt, params)

    generated, to_read = {}, list(READ_AT)
    while engine.has_unfinished_requests():
        for output in engine.step():
            generated[output.request_id] = len(output.outputs[0].token_ids)
        counts = [generated.get(f"request-{n}", 0) for n in range(len(PROMPT_LENGTHS))]
        if to_read and min(counts) >= to_read[0]:
            usage = gauge(llm, "vllm:kv_cache_usage_perc").value
            print(
                f"after {counts} generated tokens: vllm:kv_cache_usage_perc = {usage!r}"
            )
            to_read.pop(0)
