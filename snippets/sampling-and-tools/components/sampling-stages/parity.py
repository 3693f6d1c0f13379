"""The sampling-stages component's parity contract: for each link, what the page must
show, computed with sampling.py (sample() on its example, with the link's knobs).

A link holds temperature, top_p, min_p and repetition_penalty (numbers),
presence_penalty and frequency_penalty (numbers, maybe negative), top_k (a whole number,
maybe -1) and seed (0 to 4,294,967,295). A value missing, or one that is no such
number, is the fence's (sampling.py's EXAMPLE), and the [data-key=fallback] element
names it; a number that SamplingParams refuses (temperature 2.5, top_p 0) shows the
component's error.
"""

import random
from pathlib import Path

from coursekit.code import load
from coursekit.components import read_number, read_whole
from sampling import (
    LOGITS,
    NEG_INF,
    OUTPUT,
    PROMPT,
    VOCAB,
    Params,
    exponential_noise,
    sample,
    softmax,
    top_logprobs,
)

DATA = load(Path(__file__).with_name("data.py"), "component_sampling_stages")
FENCE = {name: str(value) for name, value in DATA.fence().items()}
GONE = "—"  # a token this stage has set to -inf
# A wrong rule the check must catch: the tokens kept counted before top_p, not after it.
BROKEN = (
    'params.greedy ? "penalties" : "top_p"',
    'params.greedy ? "penalties" : "top_k"',
)
# Full-width digits and a full-width minus, as a Chinese input method types them (the
# reader tests' data, coursekit/components.py: CONTRACT): a link, the same link in
# ASCII, and a field with what a reader types into it and the value the link then holds.
# The field is seed, the one whose limits are the page's own: a knob's number past
# SamplingParams' range (top_p 1.5) is taken, and shows vLLM's refusal as the error.
FULL_WIDTH = {
    "link": {"temperature": "１．２", "presence_penalty": "－０．５", "seed": "４２"},
    "ascii": {"temperature": "1.2", "presence_penalty": "-0.5", "seed": "42"},
    "typed": ("seed", "１，０２４", "1024"),
}
# The sampled token, the greedy one, how many tokens the last stage keeps.
KEY_RESULTS = ['[data-key="token"]', '[data-key="greedy"]', '[data-key="kept"]']
SPACES = " \t\u00a0\u3000"


def signed(text: str) -> float | None:
    """A number with maybe a minus sign (ASCII or full-width) before it, as script.js:
    signed reads it."""
    plain = text.lstrip(SPACES)
    negative = plain[:1] in ("-", "－")
    value = read_number(plain[1:] if negative else plain)
    return None if value is None else -value if negative else value


def whole_signed(text: str) -> int | None:
    value = signed(text)
    return int(value) if value is not None and value.is_integer() else None


READ = {
    "temperature": read_number,
    "top_k": whole_signed,
    "top_p": read_number,
    "min_p": read_number,
    "repetition_penalty": read_number,
    "presence_penalty": signed,
    "frequency_penalty": signed,
    "seed": lambda text: read_whole(text, 0, DATA.SEED_MOST),
}


def effective(state: dict[str, str]) -> tuple[dict, list[str]]:
    values, fallback = {}, []
    for name in DATA.KNOBS:
        value = READ[name](state.get(name, FENCE[name]))
        if value is None:
            fallback.append(name)
            value = READ[name](FENCE[name])
        values[name] = value
    return values, fallback


def percent(logits: list[float]) -> list[str]:
    return [
        GONE if x == NEG_INF else f"{100 * p:.1f}"
        for x, p in zip(logits, softmax(logits))
    ]


def three(x: float) -> str:
    return GONE if x == NEG_INF else f"{x:.3f}"


def expected(state: dict[str, str]) -> dict[str, str] | str:
    """What the page shows for a link, or "error" where it shows its error."""
    values, fallback = effective(state)
    example = DATA.data(DATA.fence())
    try:
        params = Params(
            **values,
            min_tokens=example["min_tokens"],
            stop_token_ids=tuple(example["stop_token_ids"]),
        )
        run = sample(LOGITS, params, PROMPT, OUTPUT)
    except ValueError:
        return "error"
    stages = run["stages"]
    last = stages[DATA.STAGES[-1] if not params.greedy else "penalties"]
    shown = {
        "fallback": ", ".join(fallback),
        "token": VOCAB[run["token"]],
        "greedy": VOCAB[run["greedy"]],
        "kept": str(sum(x != NEG_INF for x in last)),
    }
    for stage in DATA.STAGES:
        row = percent(stages[stage]) if stage in stages else [""] * len(VOCAB)
        shown |= {f"p-{stage}-{i}": text for i, text in enumerate(row)}
    noise = exponential_noise(params.seed or 0, len(VOCAB))
    for i in range(len(VOCAB)):
        shown[f"q-{i}"] = "" if params.greedy else three(noise[i])
        shown[f"ratio-{i}"] = "" if params.greedy else three(run["probs"][i] / noise[i])
        shown[f"raw-{i}"] = three(run["raw_logprobs"][i])
        shown[f"processed-{i}"] = three(run["processed_logprobs"][i])
    for mode in ("raw", "processed"):
        got = top_logprobs(run[f"{mode}_logprobs"], run["token"], 1)
        shown[f"{mode}_rank"] = str(got["rank"])
    return shown


def cases() -> list[dict[str, str]]:
    given = [
        {},
        {"temperature": "0"},  # greedy: the stages after the penalties are not run
        {"temperature": "0.005"},  # raised to 0.01
        {"temperature": "2", "top_k": "0", "top_p": "1", "min_p": "0"},  # nothing cut
        {"top_k": "-1", "min_p": "0.5"},
        {"top_k": "1"},
        {"top_k": "100"},
        {"top_p": "0.01"},  # the largest is always kept
        {"min_p": "1"},
        {"repetition_penalty": "2", "presence_penalty": "-2", "frequency_penalty": "2"},
        {"presence_penalty": "-0.5", "frequency_penalty": "-2"},
        {"seed": "0"},
        {"seed": "4294967295"},
        {"temperature": "１．２", "presence_penalty": "－０．５", "seed": "４２"},
        {"seed": "1,234", "top_p": " 0.9 "},
        # Links the page does not take: each falls back to the fence's value.
        {"temperature": "hot", "top_k": "2.5", "seed": "-1", "top_p": ""},
        {"seed": "4294967296", "min_p": "+0.2", "presence_penalty": "--1"},
        # Numbers SamplingParams refuses: each shows the error.
        {"temperature": "2.5"},
        {"top_p": "0"},
        {"top_p": "1.5"},
        {"top_k": "-2"},
        {"min_p": "1.5"},
        {"repetition_penalty": "0"},
        {"presence_penalty": "2.5"},
        {"frequency_penalty": "-3"},
    ]
    rng = random.Random(10)
    runs = []
    for _ in range(40):
        runs.append(
            {
                "temperature": rng.choice(["0", f"{rng.uniform(0.05, 2):.2f}"]),
                "top_k": str(rng.choice([0, -1, rng.randint(1, 8)])),
                "top_p": rng.choice(["1", f"{rng.uniform(0.05, 1):.2f}"]),
                "min_p": rng.choice(["0", f"{rng.uniform(0, 0.6):.2f}"]),
                "repetition_penalty": f"{rng.uniform(0.8, 1.5):.2f}",
                "presence_penalty": f"{rng.uniform(-2, 2):.1f}",
                "frequency_penalty": f"{rng.uniform(-2, 2):.1f}",
                "seed": str(rng.randrange(2**32)),
            }
        )
    return given + runs
