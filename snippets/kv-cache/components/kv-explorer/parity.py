"""The explorer's parity contract: for each link, what the page must show.

tests/test_components.py opens the page with each of cases() in its link and compares
what every [data-key] output shows with expected(state), which explorer.py computes.
page_form() reads a link as script.js does: a choice the form does not offer, or a
number its field does not take (accepted()), falls back to the form's own value (the
fence's preset's or the field's default) and gets a note of its own (link_notes()); a
number the field takes goes into it. So hostile links are expected to show what the page
shows after that, and read() checks the form as script.js does.
"""

import importlib.util
import math
import random
from pathlib import Path

from coursekit.components import read_number
from explorer import (
    Settings,
    custom_weight_bytes,
    explore,
    preset_weight_bytes,
    shown,
)
from hf_config import MLAConfig, bytes_per_token, read_presets
from kv_cache_size import GIB, ModelConfig

FIRST_MODEL = "Qwen2.5-7B-Instruct"  # the lesson's fence: the preset shown first


def _form_data() -> dict:
    """What data.py gives template.html and script.js for the lesson's fence."""
    path = Path(__file__).with_name("data.py")
    spec = importlib.util.spec_from_file_location("kv_explorer_form_data", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.data({"model": FIRST_MODEL})


FORM = _form_data()
FIELDS = {i["name"]: (i["kind"], i["max"]) for i in FORM["inputs"]}
MODEL_FIELDS = (
    "layers",
    "kv_heads",
    "head_dim",
    "attention_heads",
    "kv_lora_rank",
    "qk_rope_head_dim",
)
SAFE = 2**53 - 1  # every integer up to it is exact in JavaScript

DEFAULTS = {
    "kv_dtype": "2",
    "gpu": "80",
    "weight_dtype": "awq",
    "seq_len": "8192",
    "batch": "4",
    "utilization": "0.92",
    "block_size": "16",
}
# On an RTX 4090 in BF16 the weights of the 14B presets and above do not fit: the page
# still shows what needs no card.
ON_A_4090 = DEFAULTS | {"gpu": "23.64", "weight_dtype": "bf16"}
# Links the form never writes, each with a comment on what the page makes of it.
HOSTILE = [
    {"kv_dtype": "bogus"},  # falls back, with a note: the default BF16
    {"weight_dtype": "bogus"},
    {"gpu": "bogus"},
    {"gpu": "23.640"},  # not the option's value "23.64"
    {"model": "bogus"},  # falls back: the fence's preset
    {"model": "<img src=x onerror=alert(1)>", "kv_dtype": "<script>alert(1)</script>"},
    # Numbers a field does not take: each falls back to the field's own, with a note.
    {"seq_len": "1e308"},  # above the field's maximum
    {"layers": "1e300"},  # the preset's layers stay: not a custom model
    {"seq_len": "1e400"},  # not finite
    {"seq_len": "-8192"},
    {"seq_len": "0"},
    {"batch": "2.5"},
    {"seq_len": "NaN"},
    {"seq_len": "Infinity"},
    {"seq_len": "0x10"},
    {"seq_len": " 8192"},  # a number: the kit drops the spaces around it
    {"seq_len": "abc", "batch": "-1", "model": "nope"},  # a note each, and results
    {"seq_len": "1e4"},  # a number all the same: 10,000 tokens
    {"seq_len": "10000001"},  # one above the maximum
    {"utilization": "1.5"},
    {"block_size": "2048"},
    {"gpu": "custom", "gpu_gib": "1e400"},
    {"weight_dtype": "custom", "weights_gib": "100000"},  # fits the field, not the card
    {"model": "Qwen2.5-7B-Instruct", "layers": "40"},  # custom, of the same size
    # Latent attention keeps its preset, with the numbers the reader typed over it.
    {
        "model": "DeepSeek-V3 (MLA)",
        "kv_lora_rank": "256",
        "gpu": "custom",
        "gpu_gib": "1000",
        "weight_dtype": "fp8",
    },
    {"seq_len": "9" * 300},  # a number too long for any field
    {"utilization": "1e-400"},  # rounds to 0: below the field's minimum
    {"block_size": "0x10"},
    {"gpu": "custom", "gpu_gib": "1e300"},
    # Every field at its maximum: too large to compute exactly.
    {
        "model": "custom",
        "layers": "1000",
        "kv_heads": "1000",
        "head_dim": "4096",
        "attention_heads": "1000",
        "seq_len": "10000000",
        "batch": "100000",
    },
]
# A wrong formula the check must catch: script.js without the factor 2 for K and V.
BROKEN = ("2 * v.layers * v.kv_heads", "v.layers * v.kv_heads")
# Full-width digits and commas, as a Chinese input method types them (the reader
# tests' data, coursekit/components.py: CONTRACT): a link, the same link in ASCII, and
# a field with what a reader types into it and the value the link then holds.
FULL_WIDTH = {
    "link": {"seq_len": "１６，３８４", "batch": "４"},
    "ascii": {"seq_len": "16384", "batch": "4"},
    "typed": ("seq_len", "３２，７６８", "32768"),
}
# KV per token and the full-length sequences that fit, in one sentence.
KEY_RESULTS = [".kv-summary"]


def random_state(rng: random.Random) -> dict[str, str]:
    layers = rng.randint(1, 96)
    heads = rng.choice([8, 16, 28, 32, 40, 64, 128])
    state = {
        "model": "custom",
        "layers": layers,
        "attention_heads": heads,
        "kv_heads": rng.choice([h for h in (1, 2, 4, 8, 16, heads) if h <= heads]),
        "head_dim": rng.choice([64, 80, 96, 128, 256]),
        "kv_dtype": rng.choice(["2", "1:fp8", "1:int8"]),
        "seq_len": rng.randint(1, 131072),
        "batch": rng.randint(1, 64),
        "gpu": "custom",
        "gpu_gib": round(rng.uniform(8, 192), 2),
        "utilization": round(rng.uniform(0.5, 1.0), 3),
        "block_size": rng.choice([8, 16, 32, 64]),
    }
    if rng.random() < 0.5:
        state |= {
            "weight_dtype": "custom",
            "weights_gib": round(rng.uniform(0.5, 60), 2),
        }
    else:
        state |= {
            "weight_dtype": rng.choice(["bf16", "fp8", "awq"]),
            "params_billion": round(rng.uniform(0.5, 80), 2),
        }
    return {key: str(value) for key, value in state.items()}


def cases() -> list[dict[str, str]]:
    """Every preset with the same settings, on an 80 GB card and on a 4090 in BF16, the
    hostile links, then 40 random custom models."""
    presets = [DEFAULTS | {"model": name} for name in read_presets()]
    on_4090 = [ON_A_4090 | {"model": name} for name in read_presets()]
    randoms = [random_state(random.Random(seed)) for seed in range(40)]
    return presets + on_4090 + HOSTILE + randoms


def _number(text: str) -> float:
    """A field's text as the page reads it (component-kit.js: number), NaN for text it
    does not take."""
    value = read_number(text)
    return math.nan if value is None else value


def accepted(name: str, text: str) -> float | None:
    """The number a field takes from a text (script.js: accepted), or None: a number
    as the page reads it, above 0, at most the field's maximum, and a whole number where
    the field wants one."""
    kind, maximum = FIELDS[name]
    value = read_number(text)
    if value is None or not 0 < value <= maximum:
        return None
    return None if kind == "int" and not value.is_integer() else value


# A note on a value of the link that fell back: the key of its message in labels.yml,
# the link's parameter, and the message's other values (max, fallback). It does not
# quote the link's text: a link may hold anything.
Note = tuple[str, str, dict[str, str]]


def page_form(state: dict[str, str]) -> tuple[dict[str, str], list[Note]]:
    """The form once script.js has read a link, and its notes on the link's values that
    fell back, in the page's order."""
    choices = {
        name: [value for value, _ in options]
        for name, options in FORM["choices"].items()
    }
    for name in ("model", "gpu", "weight_dtype"):  # template.html offers "custom" too
        choices[name].append("custom")
    form = {name: values[0] for name, values in choices.items()}
    form |= {"model": FIRST_MODEL} | {
        i["name"]: str(i["value"]) for i in FORM["inputs"]
    }
    texts = {name: {} for name in FORM["choices"]}  # an option's value: its first text
    for name, options in FORM["choices"].items():
        for value, text in options:
            texts[name].setdefault(value, text)
    notes: list[Note] = []
    if "model" in state:
        if state["model"] in choices["model"]:
            form["model"] = state["model"]
        else:
            fallback = texts["model"][form["model"]]
            notes.append(("link_choice", "model", {"fallback": fallback}))
    presets = {p["name"]: p for p in FORM["presets"]}
    preset = presets.get(form["model"])
    if preset:
        form |= {name: str(value) for name, value in preset["fields"].items()}
    for name, value in state.items():
        if name == "model" or name not in form:
            continue
        if name in choices:
            if value in choices[name]:
                form[name] = value
            else:
                fallback = texts[name][form[name]]
                notes.append(("link_choice", name, {"fallback": fallback}))
        elif accepted(name, value) is not None:
            form[name] = repr(accepted(name, value))
        else:
            kind, maximum = FIELDS[name]
            values = {"max": f"{maximum:,}", "fallback": form[name]}
            notes.append((f"link_{kind}", name, values))
    # A link that changes a preset's architecture makes it a custom model, as typing
    # does.
    if (
        preset
        and not preset["mla"]
        and any(
            _number(form[name]) != value
            for name, value in preset["fields"].items()
            if name in MODEL_FIELDS
        )
    ):
        form["model"] = "custom"
    return form, notes


def link_notes(state: dict[str, str]) -> list[Note]:
    """The page's notes on the link's values that fell back, one per value."""
    return page_form(state)[1]


def ignored(state: dict[str, str]) -> list[str]:
    """The link's parameters whose values fell back."""
    return [name for _, name, _ in link_notes(state)]


def read(form: dict[str, str], name: str) -> float:
    """A field's value as script.js reads it; ValueError where the page shows the
    field's error: not a number the form takes, not above 0, above the field's maximum,
    or not a whole number where the field wants one."""
    kind, maximum = FIELDS[name]
    value = _number(form[name])
    if not 0 < value <= maximum or (kind == "int" and not value.is_integer()):
        raise ValueError(f"{name}: {form[name]!r}")
    return value


def settings(form: dict[str, str]) -> Settings:
    """The settings the page computes with, from its form as script.js reads it."""
    preset = read_presets().get(form["model"])
    mla = preset is not None and isinstance(preset.model, MLAConfig)
    needed = ["layers", "seq_len", "batch", "utilization", "block_size"]
    needed += (
        ["kv_lora_rank", "qk_rope_head_dim"]
        if mla
        else ["kv_heads", "head_dim", "attention_heads"]
    )
    needed += ["gpu_gib"] if form["gpu"] == "custom" else []
    if form["weight_dtype"] == "custom":
        needed.append("weights_gib")
    elif preset is None:
        needed.append("params_billion")
    v = {name: read(form, name) for name in needed}
    n = {name: int(value) for name, value in v.items() if FIELDS[name][0] == "int"}

    dtype = int(form["kv_dtype"].split(":")[0])
    if mla:  # the preset's numbers, or what the reader typed over them
        model = MLAConfig(
            preset.name, n["layers"], n["kv_lora_rank"], n["qk_rope_head_dim"], dtype
        )
        heads = preset.attention_heads
    else:
        shape = [n[name] for name in ("layers", "kv_heads", "head_dim")]
        model = ModelConfig(form["model"], *shape, dtype)
        heads = n["attention_heads"]
    precision = form["weight_dtype"]
    if precision == "custom":
        weights = int(v["weights_gib"] * GIB)
    elif preset:  # counted from its architecture
        weights = preset_weight_bytes(preset, precision)
    else:
        weights = custom_weight_bytes(v["params_billion"], precision)
    gpu = v["gpu_gib"] if form["gpu"] == "custom" else float(form["gpu"])

    # script.js computes with doubles: past 2**53 its integers are no longer exact.
    seq_len, batch = n["seq_len"], n["batch"]
    mha = None if mla else 2 * n["layers"] * heads * n["head_dim"] * dtype
    too_large = mha is not None and mha * seq_len > SAFE
    if too_large or bytes_per_token(model) * seq_len * batch > SAFE:
        raise ValueError("more than the page computes exactly")
    return Settings(
        model, heads, seq_len, batch, gpu, v["utilization"], weights, n["block_size"]
    )


def expected(state: dict[str, str]) -> dict[str, str] | str:
    """What each output shows, or "error" where the page shows its error instead."""
    try:
        return shown(explore(settings(page_form(state)[0])))
    except ValueError:
        return "error"
