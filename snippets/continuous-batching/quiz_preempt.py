"""Self-test: worked trace 3 with B and C swapped in the arrival order. Who is
preempted, and what does it recompute?"""

from preemption import CONFIG, WORKLOAD
from scheduler import run

a, b, c, d = WORKLOAD
steps = run([a, c, b, d], **CONFIG)
for step in steps:
    for request_id in step.preempted:
        print(f"step {step.step}: {request_id} preempted, waiting: {step.waiting}")
back = next(s for s in steps if s.step > 2 and "B" in s.scheduled)
print(f"B comes back at step {back.step} and computes {back.scheduled['B']} tokens")
