"""The request timeline's parity contract: for each link, what the page must show,
computed with serving_metrics.py as vllm bench serve computes it.

A link holds requests (each request its send time then its token times, in whole
milliseconds, joined by "/"; requests joined by ";"), the SLOs ttft and tpot (ms) and
p, the percentile shown (0 to 100). A value missing is the fence's; so is a value the
page does not take (data.py's LIMITS, times that go back, more requests or tokens than
the limits), which the kit's note names (the [data-key=fallback] element). A run of no
duration shows the component's error.
"""

import random
from pathlib import Path

from coursekit.code import load
from coursekit.components import read_number, read_whole
from serving_metrics import MS, goodput, request_metrics, summary

DATA = load(Path(__file__).with_name("data.py"), "request_metrics_data")
LIMITS = DATA.LIMITS
DEFAULTS = {  # the fence on the lesson page: serving_metrics.py's example
    "requests": "0/250/280/310/340/370;100/300/340/420/460;200/360",
    "ttft": "200",
    "tpot": "40",
    "p": "99",
}
GOOD, BAD = "✓", "✗"
# A wrong formula the check must catch: TPOT over all n tokens, the first included.
BROKEN = ("(e2el - ttft) / (n - 1)", "(e2el - ttft) / n")
# Full-width digits and commas, as a Chinese input method types them (the reader
# tests' data, coursekit/components.py: CONTRACT): a link, the same link in ASCII, and
# a field with what a reader types into it and the value the link then holds.
FULL_WIDTH = {
    "link": {"requests": "０/１２０/１５０;５０/３００", "p": "９０"},
    "ascii": {"requests": "0/120/150;50/300", "p": "90"},
    "typed": ("ttft", "１，５００", "1500"),
}
# The goodput, and the p-th percentile of TTFT and ITL.
KEY_RESULTS = ['[data-key="goodput"]', '[data-key="p_ttft"]', '[data-key="p_itl"]']


def two(x: float) -> str:
    return f"{x:.2f}"


# A Chinese input method's separators as the ASCII ones (script.js: SEPARATORS): ／
# and 、 join a request's times as / does, ； its requests as ; does, and so does a
# line break (Enter in the field); ， stays the comma read_number groups digits with.
SEPARATORS = str.maketrans(
    {"\uff0f": "/", "\u3001": "/", "\uff1b": ";", "\n": ";", "\r": None}
)


def parse(text: str) -> list[list[int]] | None:
    runs = text.strip().translate(SEPARATORS).split(";")
    if not LIMITS["requests"][0] <= len(runs) <= LIMITS["requests"][1]:
        return None
    parsed = []
    for run in runs:
        times = [read_whole(word, *LIMITS["ms"]) for word in run.split("/")]
        if None in times or not 1 <= len(times) - 1 <= LIMITS["tokens"][1]:
            return None
        if any(b < a for a, b in zip(times, times[1:])):
            return None
        parsed.append(times)
    return parsed


def read(name: str, text: str):
    """A field's value from a link's text (script.js: read), or None where the page does
    not take it."""
    if name == "requests":
        return parse(text)
    if name == "p":
        p = read_number(text)
        return p if p is not None and LIMITS["p"][0] <= p <= LIMITS["p"][1] else None
    return read_whole(text, *LIMITS[name])


def expected(state: dict[str, str]) -> dict[str, str] | str:
    """What the page shows for a link, or "error" where it shows its error."""
    values, fallback = {}, []
    for name in DEFAULTS:  # the fields' order, data.py's FIELDS
        values[name] = read(name, state.get(name, DEFAULTS[name]))
        if values[name] is None:
            fallback.append(name)
            values[name] = read(name, DEFAULTS[name])
    runs, ttft, tpot, p = (values[name] for name in DEFAULTS)
    requests = [request_metrics(t[0] / MS, [x / MS for x in t[1:]]) for t in runs]
    duration = max(t[-1] for t in runs) / MS  # the run starts at t = 0, as bench's does
    if duration <= 0:
        return "error"
    stats = summary(requests, (p,))
    # The note naming the link's values the page does not take, in place of which it
    # computes with the fence's.
    shown = {"fallback": ", ".join(fallback), "duration": two(duration * MS)}
    shown["goodput"] = two(goodput(requests, {"ttft": ttft, "tpot": tpot}, duration))
    for name in ("ttft", "tpot", "itl", "e2el"):
        shown[f"mean_{name}"] = two(stats[f"mean_{name}_ms"])
        shown[f"median_{name}"] = two(stats[f"median_{name}_ms"])
        shown[f"p_{name}"] = two(
            next(
                v
                for k, v in stats.items()
                if k.startswith("p") and k.endswith(f"_{name}_ms")
            )
        )
    for i, r in enumerate(requests):
        shown[f"ttft-{i}"] = two(r["ttft"] * MS)
        shown[f"tpot-{i}"] = two(r["tpot"] * MS)
        shown[f"e2el-{i}"] = two(r["e2el"] * MS)
        good = ttft / MS >= r["ttft"] and tpot / MS >= r["tpot"]
        shown[f"good-{i}"] = GOOD if good else BAD
    return shown


def random_state(rng: random.Random) -> dict[str, str]:
    runs = []
    for _ in range(rng.randint(1, 8)):
        now = rng.randint(0, 2000)
        times = [now]
        for _ in range(rng.randint(1, 12)):
            now += rng.choice([0, rng.randint(1, 80), rng.randint(100, 900)])
            times.append(now)
        runs.append("/".join(map(str, times)))
    return {
        "requests": ";".join(runs),
        "ttft": str(rng.randint(50, 800)),
        "tpot": str(rng.randint(5, 80)),
        "p": rng.choice(["50", "90", "99", "99.9", str(rng.randint(0, 100))]),
    }


def cases() -> list[dict[str, str]]:
    given = [
        {},
        {"p": "50"},
        {"p": "0"},
        {"p": "100"},
        {"p": "12.5"},
        {"ttft": "250", "tpot": "60"},  # everyone is good
        {"requests": "0/100"},  # one request of one token: TPOT 0, no ITL
        # bench's duration starts at t = 0, not the first send
        {"requests": "300/400/450"},
        {"requests": "0/100/100/100"},  # tokens in one chunk: ITLs of 0
        {"requests": "0/1,000/2,000"},  # grouped digits
        {
            "requests": "０/１２０/１５０",
            "ttft": "１２０",
        },  # full-width, as typed in Chinese
        # A Chinese input method's separators: ／ and 、 as /, ； as ;
        {"requests": "0／250／280；100、300、340;200/360"},
        {"requests": "０／１，０００；５０／２，０００"},  # ， still groups digits
        {"requests": "0/250/280\n100/300/340\n"},  # Enter between requests
        {"requests": ";".join(f"{i}/{i + 5}/{i + 9}" for i in range(8))},  # 8: fine
        # Not taken from a link: the fence's value, named in the note.
        {"requests": ";".join(f"{i}/{i + 5}" for i in range(9))},  # 9 requests
        {"requests": "0/" + "/".join(str(i) for i in range(1, 66))},  # 65 tokens
        {"requests": "100/50"},  # a token before its request
        {"requests": "0/50/40"},  # time going back
        {"requests": "0"},  # no token
        {"requests": "0/0"},  # no duration: the error
        {"ttft": "1e9", "p": "101", "tpot": "0"},  # three at once, named in order
        {"requests": ""},
        {"requests": "0/-5"},
        {"requests": "0/600001"},
        {"requests": "0/1.5"},
        {"requests": "<img src=x onerror=alert(1)>"},
        {"ttft": "0"},
        {"tpot": "abc"},
        {"p": "101"},
        {"p": "-1"},
        {"p": ""},
    ]
    rng = random.Random(6)
    return given + [random_state(rng) for _ in range(30)]
