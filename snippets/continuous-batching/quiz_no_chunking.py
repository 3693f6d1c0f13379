"""Self-test (after vLLM's test_schedule_order): a budget of 1024 tokens, two
800-token prompts, then two 10-token ones. What runs in the first step?"""

from scheduler import Request, simulate

workload = [Request("long1", 800, 8), Request("long2", 800, 8)]
workload += [Request("short1", 10, 8), Request("short2", 10, 8)]
for chunked in (True, False):
    first = simulate(
        workload, max_num_batched_tokens=1024, enable_chunked_prefill=chunked
    )[0]
    print(f"enable_chunked_prefill={chunked}: step 0 runs {first}")
