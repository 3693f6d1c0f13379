"""The speculation stepper starts from one of demo_tasks.py's two generations: data.py
gives script.js their words, the limits a link must keep and the fence's task; parity.py
reads the same from here."""

from coursekit.components import fence_choice
from demo_tasks import END, K_MOST, TASKS

LIMITS = {"k": [1, K_MOST], "min": [1, 5], "max": [1, 5]}
DEFAULTS = {"k": 3, "min": 2, "max": 4}  # edit_trace.py's settings


def data(options: dict) -> dict:
    task = fence_choice(options, "task", TASKS)
    return {
        "tasks": {
            name: {"prompt": p.split(), "answer": a.split()}
            for name, (p, a) in TASKS.items()
        },
        "end": END,
        "limits": LIMITS,
        "defaults": {"task": task, **{name: str(v) for name, v in DEFAULTS.items()}},
    }
