"""The speculation stepper's parity contract: for each link, what the page must show,
computed by running the link's task through demo_tasks.run_task (spec_scheduler.py).

A link holds task (edit or free), k, min and max (prompt_lookup_min and _max) and step
(from 0, the prefill). A value missing from the link, or one outside data.py's LIMITS,
is the fence's (task: edit, and data.py's DEFAULTS), and the [data-key=fallback] element
names it; a step past the last falls back to 0. min above max is refused (the error).
"""

import random
from pathlib import Path

from coursekit.code import load
from coursekit.components import read_whole
from demo_tasks import TASKS, run_task

DATA = load(Path(__file__).with_name("data.py"), "spec_decode_steps_data")

FENCE = {"task": "edit", **{name: str(v) for name, v in DATA.DEFAULTS.items()}}
NONE = "—"
# A wrong rule the check must catch: the latest occurrence of the n-gram wins, not the
# earliest.
BROKEN = ("if (n > bestN) {", "if (n >= bestN && n) {")
# Full-width digits, as a Chinese input method types them (the reader tests' data,
# coursekit/components.py: CONTRACT): a link and the same link in ASCII. Its fields
# are menus: no number is typed.
FULL_WIDTH = {
    "link": {"k": "５", "step": "３"},
    "ascii": {"k": "5", "step": "3"},
    "typed": None,
}
# The step's drafts with their verdicts, what the step yields, the running rate.
KEY_RESULTS = ['[data-key="drafts"]', '[data-key="new"]', '[data-key="rate"]']


def effective(state: dict[str, str]) -> tuple[dict, list[str]]:
    values, fallback = {}, []
    for name in ("task", "k", "min", "max"):
        text = state.get(name, FENCE[name])
        value = text if name == "task" and text in TASKS else None
        if name != "task":
            value = read_whole(text, *DATA.LIMITS[name])
        if value is None:
            fallback.append(name)
            value = FENCE[name] if name == "task" else int(FENCE[name])
        values[name] = value
    return values, fallback


def expected(state: dict[str, str]) -> dict[str, str] | str:
    values, fallback = effective(state)
    if values["min"] > values["max"]:
        return "error"
    steps, _, words = run_task(
        values["task"], values["k"], values["min"], values["max"]
    )
    task = values["task"]
    step = read_whole(state.get("step", "0"), 0, 1000)
    if step is None or step > len(steps) - 1:
        fallback.append("step")
        step = 0
    shown = steps[step]
    drafts = shown.drafts.get(task, [])
    accepted = shown.accepted.get(task, 0)
    before = [s for s in steps[1 : step + 1] if s.drafts.get(task)]
    drafted = sum(len(s.drafts[task]) for s in before)
    taken = sum(s.accepted[task] for s in before)
    marks = [
        "✓" if i < accepted else "✗" if i == accepted else "·"
        for i in range(len(drafts))
    ]
    added = [words[t] for s in steps[: step + 1] for t in s.new_tokens[task]]
    return {
        "fallback": ", ".join(fallback),
        "step": str(step),
        "drafts": " ".join(words[t] for t in drafts) or NONE,
        "marks": " ".join(marks) or NONE,
        "new": " ".join(words[t] for t in shown.new_tokens[task]),
        "produced": str(len(added)),
        "steps": str(step + 1),
        "rate": f"{taken / drafted * 100:.1f}%" if drafted else NONE,
        "length": f"{1 + taken / len(before):.2f}" if before else NONE,
        "output": " ".join(added),
    }


def cases() -> list[dict[str, str]]:
    found = [
        {"task": "edit", "k": "3", "min": "2", "max": "4", "step": "2"},  # all rejected
        {"task": "edit", "k": "3", "min": "2", "max": "4", "step": "5"},  # all accepted
        {"task": "edit", "k": "3", "min": "2", "max": "4", "step": "7"},  # the last
        {"task": "free", "k": "5", "min": "1", "max": "3", "step": "15"},
        {"task": "edit", "k": "8", "min": "1", "max": "1", "step": "0"},  # the prefill
        {"task": "nope", "k": "0", "min": "9", "max": "4", "step": "999"},  # fall back
        {"task": "edit", "k": "３", "min": "1", "max": "5", "step": "3"},  # full-width
        {"task": "free", "k": "2", "min": "4", "max": "2", "step": "1"},  # refused
    ]
    rng = random.Random(7)
    for _ in range(12):
        low = rng.randint(1, 5)
        found.append(
            {
                "task": rng.choice(list(TASKS)),
                "k": str(rng.randint(1, 8)),
                "min": str(low),
                "max": str(rng.randint(low, 5)),
                "step": str(rng.randint(0, 9)),
            }
        )
    return found
