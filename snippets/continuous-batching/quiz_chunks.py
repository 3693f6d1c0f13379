"""Self-test: ten requests are decoding under `vllm serve`'s default budget of 2048
tokens per step when a 10,000-token prompt arrives. How is it chunked?"""

from scheduler import Request, run, ttft_steps

workload = [Request(f"r{i}", 100, 50) for i in range(10)]
workload.append(Request("long", 10_000, 1, arrival_step=2))
steps = run(workload, max_num_batched_tokens=2048)
chunks = [step.scheduled["long"] for step in steps if "long" in step.scheduled]
print(f"chunks of the long prompt: {chunks}")
print(f"the ten others get {steps[2].scheduled['r0']} token each in those steps")
print(f"time to first token: {ttft_steps(workload, steps)['long']} steps")
