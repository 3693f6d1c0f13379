"""The GPU layout component's parity contract: for each link, what the page must show,
computed with the lesson's code: tp_memory.layout and kv_tokens (each GPU's share),
tp_budget.gpu_budget (the KV budget of the fullest GPU, the tokens the engine holds) and
tp_comm (the bytes all-reduced, the ring factor, the estimated times).

A link holds model (one of data.py's MODELS), tp (one of TPS), pp (1 to 8), batch (1 to
256: sequences of data.py's CONTEXT tokens in a decode step) and gpu_memory_utilization
(0.5 to 0.99). A value missing from the link, or one the page does not take, is the
fence's, and the [data-key=fallback] element names it. A TP size vLLM refuses shows the
component's error (its reason, tp_memory.refusal); a budget vLLM would not start with
(kv_budget's ValueError) leaves the layout and the bytes on screen, and shows no tokens
and no times. The times also stay blank where the KV cache cannot hold the batch, and
the decode step where there is more than one stage (tp_comm's step model has one).
"""

import math
import random
from pathlib import Path

from coursekit.code import load
from coursekit.components import read_number, read_whole
from hf_config import read_presets
from kv_cache_size import GIB
from kv_capacity import blocks_per_sequence
from tp_budget import MAX_MODEL_LEN, gpu_budget
from tp_comm import LINKS, allreduce_bytes, comm_seconds, ring_factor, step_ms
from tp_memory import kv_head_replicas, kv_tokens, layout, vocab_rows

DATA = load(Path(__file__).with_name("data.py"), "gpu_layout_data")

FENCE = {  # the fence on the lesson page
    "model": "Qwen2.5-7B-Instruct",
    "tp": "2",
    "pp": "1",
    "batch": "16",
    "gpu_memory_utilization": "0.92",
}
NUMBERS = DATA.data(FENCE)
NONE = "—"
# A wrong formula the check must catch: the ring all-reduce's factor without its 2.
BROKEN = ("2 * (n - 1) / n", "(n - 1) / n")
# Full-width digits, as a Chinese input method types them (the reader tests' data,
# coursekit/components.py: CONTRACT): a link, the same link in ASCII, and the batch
# field with what a reader types into it and the value the link then holds.
FULL_WIDTH = {
    "link": {"tp": "４", "batch": "６４", "gpu_memory_utilization": "０．９"},
    "ascii": {"tp": "4", "batch": "64", "gpu_memory_utilization": "0.9"},
    "typed": ("batch", "３２", "32"),
}
# Each GPU's weights, the tokens the engine holds, the bytes all-reduced per token and
# their time per step on PCIe.
KEY_RESULTS = [
    '[data-key="weights"]',
    '[data-key="tokens"]',
    '[data-key="per_token"]',
    '[data-key="ar_pcie"]',
]


def effective(state: dict[str, str]) -> tuple[dict, list[str]]:
    """The link's values the page takes, the fence's in place of the others, and the
    names of those that fell back."""
    readers = {
        "model": lambda text: text if text in DATA.MODELS else None,
        "tp": lambda text: n if (n := read_whole(text, 1, 16)) in DATA.TPS else None,
        "pp": lambda text: n if (n := read_whole(text, 1, 8)) in DATA.PPS else None,
        "batch": lambda text: read_whole(text, *DATA.LIMITS["batch"]),
        "gpu_memory_utilization": lambda text: (
            u
            if (u := read_number(text)) is not None
            and DATA.LIMITS["gpu_memory_utilization"][0]
            <= u
            <= DATA.LIMITS["gpu_memory_utilization"][1]
            else None
        ),
    }
    values, fallback = {}, []
    for name, read in readers.items():
        value = read(state[name]) if name in state else None
        if value is None:
            if name in state:
                fallback.append(name)
            value = read(FENCE[name])
        values[name] = value
    return values, fallback


def gib(n_bytes: int) -> str:
    return f"{n_bytes / GIB:.2f}"


def expected(state: dict[str, str]) -> dict[str, str] | str:
    """What the page shows for a link, or "error" where it shows its error."""
    v, fallback = effective(state)
    name, tp, pp, batch = v["model"], v["tp"], v["pp"], v["batch"]
    utilization = v["gpu_memory_utilization"]
    config = read_presets()[name].config
    try:
        ranks = layout(config, tp, pp)
    except ValueError:  # vLLM refuses this TP size
        return "error"
    fullest = max(ranks, key=lambda rank: rank.weight_bytes)
    model = NUMBERS["models"][name]
    # kv_budget's share and what is left of it for the KV cache, shown even where vLLM
    # would not start; gpu_budget must agree where it does.
    share = math.ceil(NUMBERS["total"] * utilization)
    kv = share - fullest.weight_bytes - model["activation"] - NUMBERS["non_torch"]
    try:
        budget, tokens, concurrency = gpu_budget(name, tp, pp, utilization)
        assert (budget.requested, budget.kv) == (share, kv)
    except ValueError:
        budget = None
    seqs = None
    if budget:
        blocks = min(
            kv_tokens(config, rank, budget.kv, DATA.CONTEXT).num_blocks
            for rank in ranks
        )
        seqs = blocks // blocks_per_sequence(DATA.CONTEXT)
    reachable = seqs is not None and batch <= seqs
    layers, heads = config["num_hidden_layers"], config["num_attention_heads"]
    wire = tp > 1
    per_step = allreduce_bytes(config, batch) if wire else 0
    first = ranks[0]
    shown = {
        "fallback": ", ".join(fallback),
        "gpus": str(tp * pp),
        "weights": gib(fullest.weight_bytes),
        "tokens": f"{tokens:,}" if budget else NONE,
        "per_token": f"{allreduce_bytes(config, 1) if wire else 0:,}",
        "heads": f"{first.heads} / {heads}",
        "kv_heads": f"{first.kv_heads} / {config['num_key_value_heads']}",
        "copies": str(kv_head_replicas(config["num_key_value_heads"], tp)),
        "vocab_rows": f"{vocab_rows(config['vocab_size'], tp, 0)[0]:,}",
        "share": gib(share),
        "activation": gib(model["activation"]),
        "non_torch": gib(NUMBERS["non_torch"]),
        "kv_gib": gib(kv),
        "concurrency": f"{concurrency:.2f}" if budget else NONE,
        "seqs": f"{seqs:,}" if budget else NONE,
        "per_layer": f"{allreduce_bytes(config, 1) // layers if wire else 0:,}",
        "calls": str(2 * layers if wire else 0),
        "per_step": f"{per_step:,}",
        "ring": f"{ring_factor(tp):.2f}",
        "sent": f"{int(per_step * ring_factor(tp)):,}",
    }
    for key, link in (("pcie", "PCIe 4.0, no P2P"), ("nvlink", "NVLink")):
        seconds = comm_seconds(config, tp, batch, LINKS[link])
        step = step_ms(config, tp, batch, DATA.CONTEXT, LINKS[link])
        shown[f"ar_{key}_row"] = f"{seconds * 1e3:.2f}" if reachable else NONE
        shown[f"step_{key}"] = f"{step:.2f}" if reachable and pp == 1 else NONE
    shown["ar_pcie"] = shown["ar_pcie_row"]  # in the summary too
    for stage in range(pp):
        rank = ranks[stage * tp]
        start, end = rank.layers
        tables = ["embed"] * (stage == 0) + ["lm_head"] * (stage == pp - 1)
        gpus = [stage * tp, stage * tp + tp - 1]
        held = (
            kv_tokens(config, rank, budget.kv, MAX_MODEL_LEN).tokens if budget else None
        )
        shown |= {
            f"gpus-{stage}": "–".join(dict.fromkeys(map(str, gpus))),
            f"layers-{stage}": f"{start}–{end - 1}",
            f"tables-{stage}": ", ".join(tables) or NONE,
            f"weights-{stage}": gib(rank.weight_bytes),
            f"tokens-{stage}": f"{held:,}" if budget else NONE,
        }
    return shown


def random_state(rng: random.Random) -> dict[str, str]:
    return {
        "model": rng.choice(DATA.MODELS),
        "tp": str(rng.choice([1, 2, 4, 8, 16, rng.choice(DATA.TPS)])),
        "pp": str(rng.choice(DATA.PPS)),
        "batch": str(rng.choice([1, 16, 64, rng.randint(1, 256)])),
        "gpu_memory_utilization": f"{rng.uniform(0.8, 0.99):.2f}",
    }


def cases() -> list[dict[str, str]]:
    seven, big, huge = DATA.MODELS
    given = [
        {},
        {"tp": "1"},  # one card: nothing on the wire
        {"tp": "4"},
        {"tp": "1", "pp": "2"},
        {"tp": "2", "pp": "2"},
        {"pp": "3"},  # 28 layers over 3 stages: 9, 10, 9
        {"pp": "8", "tp": "4"},
        {"model": big, "tp": "4"},
        {"model": big, "tp": "2"},  # the weights leave no KV cache: no tokens
        {"model": big, "tp": "2", "pp": "2"},
        {"model": big, "tp": "8"},
        {"model": huge, "tp": "8"},
        {"model": huge, "tp": "16"},  # more GPUs than KV heads: two copies of each
        {"model": huge, "tp": "4", "pp": "4"},
        {"model": huge, "tp": "1"},  # 135 GiB on one card
        {"tp": "1", "batch": "256"},  # more sequences than the KV cache holds
        {"tp": "1", "batch": "115"},
        {"tp": "1", "batch": "116"},
        {"gpu_memory_utilization": "0.99"},  # more than the card has free at start-up
        {"gpu_memory_utilization": "0.5"},
        {"gpu_memory_utilization": "０．９５", "batch": "１２８"},  # full-width
        {"batch": "1"},
        # vLLM refuses these TP sizes: each shows the error.
        {"tp": "8"},
        {"tp": "7"},  # passes the config check, fails at the layers (4 KV heads)
        {"tp": "3"},
        {"model": big, "tp": "16"},
        {"model": big, "tp": "5"},
        # Values the page does not take fall back to the fence's.
        {"model": "Qwen2.5-14B-Instruct"},
        {"tp": "0"},
        {"tp": "9"},
        {"tp": "2.0"},
        {"pp": "9"},
        {"pp": ""},
        {"batch": "0"},
        {"batch": "257"},
        {"batch": "abc"},
        {"gpu_memory_utilization": "1.5"},
        {"gpu_memory_utilization": "0.3"},
        {"model": "<b>x</b>", "tp": "-1", "pp": "1e9", "batch": "1.5"},
    ]
    rng = random.Random(11)
    return given + [random_state(rng) for _ in range(40)]
