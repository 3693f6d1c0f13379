"""The lab, part 2: preemption.py's worked trace on vLLM, with 6 KV blocks.

Run: python lab_preemption.py > preemption.txt 2>&1
     python lab_trace.py lab_preemption.py preemption.txt
"""

import os

os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"  # as in lab_chunks.py

from lab_chunks import print_metrics, step_through  # noqa: E402
from preemption import WORKLOAD  # noqa: E402
from vllm import LLM  # noqa: E402

if __name__ == "__main__":
    llm = LLM(
        model="Qwen/Qwen2.5-7B-Instruct-AWQ",
        max_model_len=96,  # vLLM wants the 6 blocks to hold one request this long
        max_num_batched_tokens=64,  # preemption.py's token budget per step
        max_num_seqs=4,  # and its number of sequences
        num_gpu_blocks_override=6,  # and its blocks: 5 usable, block 0 is null
        enable_prefix_caching=False,  # a preempted request recomputes everything
        async_scheduling=False,
        enable_logging_iteration_details=True,
        disable_log_stats=False,
    )
    step_through(llm, WORKLOAD)
    print_metrics(llm)
