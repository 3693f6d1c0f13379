"""Where the long prompt's extra TTFT comes from when its prefill is chunked: the run of
chunked_prefill.py, step by step, with chunked_prefill.py's step model (every time an
estimate). Each chunk step also carries one decode token of each of the 16 others (they
ride along, "piggyback", on the chunk); a step is compute-bound when its FLOPs take the
GPU longer than its bytes.
"""

from types import SimpleNamespace

from chunked_prefill import ARRIVAL, step_bounds, step_seconds, timeline


def alone(step):
    """The same step with the long prompt's chunk only: no one rides along."""
    return SimpleNamespace(
        scheduled={"long": step.scheduled["long"]},
        computed_before=step.computed_before,
    )


def breakdown(budget: int) -> dict:
    steps, ends = timeline(budget, chunked=True)
    first = next(s.step for s in steps if "long" in s.sampled)
    chunk_steps = steps[ARRIVAL : first + 1]
    memory_bound = [s for s in chunk_steps if step_bounds(s)[0] > step_bounds(s)[1]]
    return {
        "steps": len(chunk_steps),
        "ttft": ends[first] - ends[ARRIVAL - 1],
        "riders": sum(step_seconds(s) - step_seconds(alone(s)) for s in chunk_steps),
        "memory_bound": [sum(s.scheduled.values()) for s in memory_bound],
        "memory_bound_extra": sum(
            step_bounds(s)[0] - step_bounds(s)[1] for s in memory_bound
        ),
    }


if __name__ == "__main__":
    print("budget  steps  its TTFT  decode riders  memory-bound steps (their tokens)")
    rows = {budget: breakdown(budget) for budget in (8192, 2048, 512)}
    for budget, row in rows.items():
        tokens = ", ".join(str(t) for t in row["memory_bound"]) or "none"
        print(
            f"{budget:>6}  {row['steps']:>5}  {row['ttft'] * 1000:>5.1f} ms"
            f"  {row['riders'] * 1000:>10.1f} ms  {len(row['memory_bound'])} ({tokens})"
        )
    small, large = rows[512], rows[8192]
    grown = small["ttft"] - large["ttft"]
    riders = small["riders"] - large["riders"]
    print(f"TTFT at 512 minus at 8192: {grown * 1000:.1f} ms")
    on = f"{small['steps']} steps instead of {large['steps']}"
    print(f"  the others' decode tokens riding on {on}: {riders * 1000:.1f} ms")
    extra = small["memory_bound_extra"]
    print(f"  memory-bound steps, beyond their FLOPs' time: {extra * 1000:.1f} ms")
    print(f"  the rest: {(grown - riders - extra) * 1000:.1f} ms")
