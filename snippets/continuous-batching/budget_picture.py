"""The token budget of each step of worked trace 2 (long_prompt.py), one character
per token: an upper-case letter is a prompt token (L's come in chunks), a lower-case
one a decode token, a dot budget left unused."""

import long_prompt
from scheduler import run


def picture(steps, budget: int) -> str:
    lines = [f"max_num_batched_tokens = {budget}: one character per token"]
    for step in steps:
        bar = "".join(
            (i.lower() if i in step.decoding else i) * n
            for i, n in step.scheduled.items()
        )
        used = f"{len(bar):>2}"
        waiting = f"  waiting: {','.join(step.waiting)}" if step.waiting else ""
        lines.append(f"step {step.step} |{bar:.<{budget}}| {used}{waiting}")
    return "\n".join(lines)


if __name__ == "__main__":
    steps = run(long_prompt.WORKLOAD, **long_prompt.CONFIG)
    print(picture(steps, long_prompt.CONFIG["max_num_batched_tokens"]))
