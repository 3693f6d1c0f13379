"""The scheduler timeline's parity contract: for each link, what the page must show,
computed by running the link's workload through scheduler.py.

A link holds the settings of scheduler.run (max_num_batched_tokens, max_num_seqs,
num_gpu_blocks, empty for enough blocks, block_size, long_prefill_token_threshold,
enable_chunked_prefill as 0 or 1, false or true), requests
(NAME:PROMPT:MAX_TOKENS:ARRIVAL, the arrival optional, comma-separated, names one
capital letter each) and step (the step shown, from 0). A value missing from the link is
the fence's trace's; a value outside data.py's LIMITS falls back to it too, and the page
names it in a note (the [data-key=fallback] element). A link whose settings scheduler.py
refuses (ValueError), or whose run takes more steps than the limit, shows the
component's error.
"""

import random
import re
from pathlib import Path

from block_pool import blocks_for
from coursekit.code import load
from coursekit.components import read_flag, read_whole
from scheduler import Request, Step, enough_blocks, run

DATA = load(Path(__file__).with_name("data.py"), "scheduler_timeline_data")

FENCE_START = "preemption"  # the lesson's fence: start: preemption
DEFAULTS = DATA.state(DATA.PRESETS[FENCE_START])
LIMITS = DATA.LIMITS
# Each number of a request is read as the page reads numbers (component-kit.js: whole).
REQUEST = re.compile(r"([A-Z]):([^:]+):([^:]+)(?::([^:]+))?", re.ASCII)
NONE = "—"
# A wrong rule the check must catch: a preempted request's chunks shown as a prefill,
# not a recompute. (The scheduler's own rules are in scheduler.js, which
# tests/test_js_mirrors.py holds to scheduler.py.)
BROKEN = (': preemptedBefore.has(id) ? "recompute"', ': false ? "recompute"')
# Full-width digits and commas, as a Chinese input method types them (the reader
# tests' data, coursekit/components.py: CONTRACT): a link, the same link in ASCII, and
# a field with what a reader types into it and the value the link then holds.
FULL_WIDTH = {
    "link": {"max_num_batched_tokens": "１，０２４", "step": "１"},
    "ascii": {"max_num_batched_tokens": "1024", "step": "1"},
    "typed": ("max_num_batched_tokens", "２，０４８", "2048"),
}
# The steps until every request has finished, and the preemptions.
KEY_RESULTS = ['[data-key="steps"]', '[data-key="preemptions"]']


def number(text: str, name: str) -> int:
    value = read_whole(text, *LIMITS[name])
    if value is None:
        raise ValueError(f"{name}: {text!r}")
    return value


def requests(text: str) -> list[Request]:
    items = [REQUEST.fullmatch(item) for item in text.split(",")]
    least, most = LIMITS["requests"]
    if not all(items) or not least <= len(items) <= most:
        raise ValueError("requests")
    names = [item[1] for item in items]
    if len(set(names)) != len(names):
        raise ValueError("requests: a name repeats")
    return [
        Request(
            name,
            number(prompt, "prompt_tokens"),
            number(most, "max_tokens"),
            number(arrival or "0", "arrival_step"),
        )
        for name, prompt, most, arrival in (item.groups() for item in items)
    ]


def setting(state: dict[str, str], name: str):
    text = state[name]
    if name == "num_gpu_blocks" and text == "":
        return None  # enough blocks
    if name == "enable_chunked_prefill":  # 1 or true, 0 or false
        if read_flag(text) is None:
            raise ValueError(name)
        return read_flag(text)
    return number(text, name)


def effective(state: dict[str, str]) -> tuple[dict, list[Request], list[str]]:
    """The settings and workload the page runs, and the link's names that fell back."""
    settings, fallback = {}, []
    for name in DATA.SETTINGS:
        try:
            settings[name] = setting(state if name in state else DEFAULTS, name)
        except ValueError:
            settings[name] = setting(DEFAULTS, name)
            fallback.append(name)
    try:
        workload = requests(state.get("requests", DEFAULTS["requests"]))
    except ValueError:
        workload = requests(DEFAULTS["requests"])
        fallback.append("requests")
    return settings, workload, fallback


def listed(ids, separator=", ") -> str:
    return separator.join(ids) or NONE


def shown(
    workload: list[Request],
    settings: dict,
    steps: list[Step],
    chosen: int,
    fallback: list[str],
) -> dict[str, str]:
    """What each [data-key] element of the component shows."""
    out = {"fallback": ", ".join(fallback), "steps": str(len(steps))}
    preempted_before: set[str] = set()
    first: dict[str, int] = {}
    kinds = []  # per step: request id -> prefill, recompute or decode
    for step in steps:
        kinds.append(
            {
                i: "decode"
                if i in step.decoding
                else "recompute"
                if i in preempted_before
                else "prefill"
                for i in step.scheduled
            }
        )
        preempted_before.update(step.preempted)
        for i in step.sampled:
            first.setdefault(i, step.step)
        for r in workload:
            i = r.request_id
            cell = (
                f"{step.scheduled[i]}{'*' if i in step.sampled else ''}"
                if i in step.scheduled
                else "x"
                if i in step.preempted
                else "."
            )
            out[f"t{step.step}-{i}"] = cell
        out[f"t{step.step}-total"] = str(sum(step.scheduled.values()))
        out[f"t{step.step}-waiting"] = ",".join(step.waiting) or "-"
    for r in workload:
        out[f"ttft-{r.request_id}"] = str(first[r.request_id] - r.arrival_step + 1)
    out["preemptions"] = str(sum(len(step.preempted) for step in steps))
    step, kind = steps[chosen], kinds[chosen]
    blocks = settings["num_gpu_blocks"]
    if blocks is None:  # as run() sizes the pool
        blocks = enough_blocks(workload, settings["block_size"])
    total = sum(step.scheduled.values())
    out |= {
        "step": str(chosen),
        "tokens": f"{total}/{settings['max_num_batched_tokens']}",
        "prefill": listed(
            f"{i}:{n}" for i, n in step.scheduled.items() if kind[i] == "prefill"
        ),
        "recompute": listed(
            f"{i}:{n}" for i, n in step.scheduled.items() if kind[i] == "recompute"
        ),
        "decode": listed(i for i in step.scheduled if kind[i] == "decode"),
        "sampled": listed(step.sampled),
        "preempted": listed(step.preempted),
        "finished": listed(step.finished),
        "running": listed(step.running),
        "waiting": listed(step.waiting),
        "free": f"{step.free_blocks}/{blocks - 1}",
    }
    return out


def expected(state: dict[str, str]) -> dict[str, str] | str:
    """What the page shows for a link, or "error" where it shows its error."""
    settings, workload, fallback = effective(state)
    try:
        steps = run(workload, **settings)
    except ValueError:
        return "error"
    if len(steps) > LIMITS["steps"][1]:
        return "error"
    chosen = 0
    if "step" in state:
        step = read_whole(state["step"], 0, len(steps) - 1)
        if step is not None:
            chosen = step
        else:
            fallback.append("step")
    return shown(workload, settings, steps, chosen, fallback)


def random_state(rng: random.Random) -> dict[str, str]:
    """A random workload and settings that scheduler.py accepts, the kind of link a
    reader's edits write, with a random step of its run. Every other one has a pool
    barely larger than its largest request needs, where preemptions happen."""
    tight = rng.random() < 0.5
    while True:
        names = rng.sample("ABCDEFGHIJKLMNOPQRSTUVWXYZ", rng.randint(1, 8))
        workload = [
            Request(
                name,
                rng.choice([rng.randint(1, 40), rng.randint(1, 200)]),
                rng.randint(8, 40) if tight else rng.randint(1, 12),
                rng.choice([0, 0, rng.randint(0, 10)]),
            )
            for name in names
        ]
        budget = rng.choice([8, 16, 32, 64, 128])
        block_size = rng.choice([4, 8] if tight else [4, 8, 16])
        needs = [
            blocks_for(r.prompt_tokens + r.max_tokens - 1, block_size) for r in workload
        ]
        if tight:
            blocks = str(1 + max(needs) + rng.randint(0, max(needs)))
        else:
            blocks = rng.choice(["", "20", "30", "60"])
        state = {
            "max_num_batched_tokens": str(budget),
            "max_num_seqs": str(rng.randint(2 if tight else 1, min(budget, 6))),
            "num_gpu_blocks": blocks,
            "block_size": str(block_size),
            "long_prefill_token_threshold": str(rng.choice([0, 0, 5, 24])),
            "enable_chunked_prefill": rng.choice("1111110"),
            "requests": DATA.encode(workload),
        }
        result = expected(state)
        if result != "error":
            return state | {"step": str(rng.randrange(int(result["steps"])))}


def cases() -> list[dict[str, str]]:
    presets = [
        DATA.state(module) | {"step": str(step)}
        for module in DATA.PRESETS.values()
        for step in range(len(run(module.WORKLOAD, **module.CONFIG)))
    ]
    given = [
        {},
        # Rules the worked traces do not show (tests/lessons/continuous-batching/
        # test_scheduler.py): two victims in one step, a request preempting itself, a
        # chunked recompute, a waiting request whose whole sequence must fit, a cap per
        # chunk, and no chunking.
        {
            "max_num_batched_tokens": "14",
            "max_num_seqs": "3",
            "num_gpu_blocks": "5",
            "block_size": "4",
            "long_prefill_token_threshold": "8",
            "requests": "A:16:1:0,B:3:2:0,C:3:2:0",
            "step": "1",
        },
        {
            "max_num_batched_tokens": "32",
            "max_num_seqs": "2",
            "num_gpu_blocks": "3",
            "requests": "A:14:4:0,B:16:8:0",
            "step": "1",
        },
        {
            "max_num_batched_tokens": "8",
            "max_num_seqs": "2",
            "num_gpu_blocks": "6",
            "block_size": "4",
            "requests": "A:4:10:0,B:4:10:0",
            "step": "10",
        },
        {
            "max_num_batched_tokens": "32",
            "max_num_seqs": "2",
            "num_gpu_blocks": "4",
            "requests": "R:30:3:0,S:20:1:0",
            "step": "3",
        },
        {
            "max_num_batched_tokens": "64",
            "max_num_seqs": "2",
            "num_gpu_blocks": "",
            "long_prefill_token_threshold": "20",
            "requests": "L:50:1:0,M:30:1:0",
        },
        {
            "max_num_batched_tokens": "100",
            "max_num_seqs": "3",
            "num_gpu_blocks": "",
            "enable_chunked_prefill": "0",
            "requests": "L:80:5:0,L2:1:1:0",
        },  # bad name
        {
            "max_num_batched_tokens": "100",
            "max_num_seqs": "3",
            "num_gpu_blocks": "",
            "enable_chunked_prefill": "0",
            "requests": "K:80:5,L:80:5,S:10:5,T:10:5",
            "step": "5",
        },
        # The step limit: 1000 steps run, 1001 do not.
        {
            "max_num_batched_tokens": "1",
            "max_num_seqs": "1",
            "num_gpu_blocks": "",
            "requests": "A:999:2:0",
            "step": "999",
        },
        {
            "max_num_batched_tokens": "1",
            "max_num_seqs": "1",
            "num_gpu_blocks": "",
            "requests": "A:1000:2:0",
        },
        {
            "max_num_batched_tokens": "1",
            "max_num_seqs": "1",
            "requests": "A:4096:1024:100",
        },
        # Refused by scheduler.py: the component's error.
        {"max_num_batched_tokens": "2"},  # less than max_num_seqs=4
        {"num_gpu_blocks": "2"},  # A could never finish
        DATA.state(DATA.PRESETS["long_prompt"]) | {"enable_chunked_prefill": "0"},
        # Not what a link may hold: each falls back, and the note names it.
        {"max_num_batched_tokens": "abc"},
        {"max_num_batched_tokens": "0"},
        {"max_num_batched_tokens": "8193"},
        {"max_num_batched_tokens": "-64"},
        {"max_num_batched_tokens": " 64"},
        {"max_num_batched_tokens": "1e3"},
        {"max_num_batched_tokens": "NaN"},
        {"max_num_batched_tokens": "Infinity", "max_num_seqs": "1e400"},
        {"max_num_seqs": "0", "block_size": "0"},
        {"long_prefill_token_threshold": "8193"},
        {"num_gpu_blocks": "1"},
        {"num_gpu_blocks": "100001"},
        {"num_gpu_blocks": "", "block_size": "65"},
        {"enable_chunked_prefill": "yes"},
        {
            "enable_chunked_prefill": "false"
        },  # a link's yes or no: 1 or true, 0 or false
        DATA.state(DATA.PRESETS["long_prompt"]) | {"enable_chunked_prefill": "True"},
        {"enable_chunked_prefill": "0", "step": "3"},
        {"requests": ""},
        {"requests": "a:10:2:0"},
        {"requests": "A:10:2:0,A:12:2:0"},
        {"requests": ",".join(f"{c}:4:1:0" for c in "ABCDEFGHI")},  # 9 requests
        {"requests": ",".join(f"{c}:4:1:0" for c in "ABCDEFGH")},  # 8: fine
        {"requests": "A:4097:1:0"},
        {"requests": "A:0:1:0"},
        {"requests": "A:1:1025:0"},
        {"requests": "A:1:1:101"},
        {"requests": "A:1:1:0:0"},
        {"requests": "A:10:2:0,"},
        {"requests": "<img src=x onerror=alert(1)>", "step": "<script>"},
        {"step": "6"},
        {"step": "-1"},
        {"step": "2.0"},
        {"step": ""},
        {"unknown": "1", "step": "5"},
    ]
    randoms = [random_state(random.Random(seed)) for seed in range(30)]
    return presets + given + randoms
