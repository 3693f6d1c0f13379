"""The start-up memory bar's parity contract: for each link, what the page must show,
computed with startup_budget.py (the baseline of qwen_budget, with the link's settings).

A link holds gpu_memory_utilization (0.5 to 0.99), max_num_seqs (1 to 1,024),
max_num_batched_tokens (1 to 65,536) and enforce_eager (0 or 1, true or false); a value
missing is the fence's, and so is a value the page does not take, which the kit's note
names (the [data-key=fallback] element). A configuration vLLM refuses (fewer tokens per
step than sequences) and one that leaves no KV cache show the component's error.
"""

import random
from pathlib import Path

from coursekit.code import load
from coursekit.components import read_flag, read_number, read_whole
from kv_cache_size import GIB
from startup_budget import capture_sizes, graphs_captured, qwen_budget

DATA = load(Path(__file__).with_name("data.py"), "startup_memory_bar_data")
LIMITS = DATA.LIMITS
DEFAULTS = {  # the fence on the lesson page
    "gpu_memory_utilization": "0.92",
    "max_num_seqs": "256",
    "max_num_batched_tokens": "8192",
    "enforce_eager": "0",
}
# A wrong formula the check must catch: the largest capture size once max_num_seqs.
BROKEN = (
    "Math.min(seqs * 2, maxCapture, tokens)",
    "Math.min(seqs, maxCapture, tokens)",
)
# Full-width digits and commas, as a Chinese input method types them (the reader
# tests' data, coursekit/components.py: CONTRACT): a link, the same link in ASCII, and
# a field with what a reader types into it and the value the link then holds.
FULL_WIDTH = {
    "link": {"max_num_seqs": "１２８", "gpu_memory_utilization": "０．９"},
    "ascii": {"max_num_seqs": "128", "gpu_memory_utilization": "0.9"},
    "typed": ("max_num_batched_tokens", "４，０９６", "4096"),
}
# The KV cache, what is left outside gpu_memory_utilization's share, the graphs
# captured.
KEY_RESULTS = ['[data-key="kv"]', '[data-key="left"]', '[data-key="captured"]']


def gib(n_bytes: int) -> str:
    return f"{n_bytes / GIB:.2f}"


def read(name: str, text: str):
    """A value from a link's text (script.js: read), or None where the page does not
    take it."""
    if name == "enforce_eager":
        return read_flag(text)
    if name == "gpu_memory_utilization":
        value = read_number(text)
        least, most = LIMITS[name]
        return value if value is not None and least <= value <= most else None
    return read_whole(text, *LIMITS[name])


def expected(state: dict[str, str]) -> dict[str, str] | str:
    """What the page shows for a link, or "error" where it shows its error."""
    values, fallback = {}, []
    for name in DEFAULTS:  # in script.js's order: the fields, then enforce_eager
        values[name] = read(name, state.get(name, DEFAULTS[name]))
        if values[name] is None:
            fallback.append(name)
            values[name] = read(name, DEFAULTS[name])
    utilization, seqs, tokens, eager = values.values()
    try:
        sizes = capture_sizes(seqs, tokens, enforce_eager=eager)
        budget = qwen_budget(utilization, seqs, tokens, eager)
    except ValueError:
        return "error"
    full, piecewise = graphs_captured(sizes, seqs)
    parts = {
        "requested": budget.requested,
        "weights": budget.weights,
        "activation": budget.activation,
        "non_torch": budget.non_torch,
        "kv": budget.kv,
        "context": budget.context,
        "graphs": budget.graphs,
        "left": budget.headroom,
    }
    shown = {
        "fallback": ", ".join(fallback),  # the kit's note: the link's values not taken
        "kv": gib(budget.kv),
        "left": gib(budget.headroom),
        "captured": str(full + piecewise),
        **{f"{name}_row": gib(value) for name, value in parts.items()},
        "sizes": str(len(sizes)),
        "largest": str(max(sizes, default=0)),
        "piecewise": str(piecewise),
        "full": str(full),
    }
    return shown


def cases() -> list[dict[str, str]]:
    given = [
        {},
        {"enforce_eager": "1"},
        {"max_num_seqs": "16"},
        {"max_num_batched_tokens": "2048"},
        {"max_num_seqs": "128", "max_num_batched_tokens": "300"},
        {"max_num_seqs": "3", "max_num_batched_tokens": "5000"},
        {"gpu_memory_utilization": "0.97"},  # the graphs do not fit outside the share
        {
            "gpu_memory_utilization": "０．９"
        },  # full-width, as a Chinese input method types
        {"max_num_batched_tokens": "8,192"},
        {"enforce_eager": "true"},  # a link's yes or no: 1 or true, 0 or false
        {"enforce_eager": "FALSE", "max_num_seqs": "16"},
        # Configurations vLLM refuses: each shows the error.
        {"max_num_seqs": "512", "max_num_batched_tokens": "300"},
        {"gpu_memory_utilization": "0.6"},  # no KV cache left
        {"gpu_memory_utilization": "0.99"},  # the share is more than the card has free
        # Values the page does not take: the fence's, named in the kit's note.
        {"gpu_memory_utilization": "1.5"},
        {"max_num_seqs": "0"},
        {"max_num_seqs": "2.5"},
        {"max_num_batched_tokens": "65537"},
        {"enforce_eager": "yes"},
        {"max_num_seqs": ""},
        {"enforce_eager": "yes", "max_num_batched_tokens": "1e9", "max_num_seqs": "0"},
    ]
    rng = random.Random(8)
    runs = []
    for _ in range(30):
        seqs = rng.choice([rng.randint(1, 64), rng.randint(1, 1024)])
        runs.append(
            {
                "gpu_memory_utilization": f"{rng.uniform(0.8, 0.99):.2f}",
                "max_num_seqs": str(seqs),
                "max_num_batched_tokens": str(rng.randint(seqs, 16384)),
                "enforce_eager": rng.choice("001"),
            }
        )
    return given + runs
