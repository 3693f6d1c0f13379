"""The offload tiers component's parity contract: for each link, what the page must
show, computed by sending the link's documents through offload.py's OffloadedCache
(lesson 5's GPU prefix cache, the CPU tier behind it) and estimating each request's TTFT
with revisits.py's ttft.

A link holds num_gpu_blocks, num_cpu_blocks, policy (lru or arc), doc_tokens, order (the
documents A to H in the order they are sent, e.g. ABCADBC) and step (the request after
which both tiers are shown, from 0; the first by default). Request i of document d is
named d + str(i), as blocks_moving.py names them. A value missing from the link is the
fence's workload's; one outside data.py's LIMITS falls back to it too, and the page
names it in a note (the [data-key=fallback] element). A document that needs more GPU
blocks than the pool has (PrefixCache.run refuses it, so the GPU's history does not
grow) shows the component's error.

What each tier holds of a document is counted block by block: on the GPU, its full
blocks whose hash the prefix cache holds (PrefixCache.cached_blocks); on the CPU, those
the tier answers HIT for, as blocks_moving.py counts them.
"""

import random
from pathlib import Path

from coursekit.code import load
from coursekit.components import read_whole
from offload import HIT, OffloadedCache
from prefix_cache import block_hashes
from revisits import ttft

DATA = load(Path(__file__).with_name("data.py"), "offload_tiers_data")

FENCE_START = "blocks-moving"  # the lesson's fence: start: blocks-moving
DEFAULTS = DATA.state(DATA.PRESETS[FENCE_START])
LIMITS = DATA.LIMITS
# A wrong formula the check must catch: the reload copies a block per token of the CPU's
# hit, not one per 16 tokens.
BROKEN = (
    "(Math.floor(v.cpu_hit / m.block_size) * m.bytes_per_block)",
    "(v.cpu_hit * m.bytes_per_block)",
)
# Full-width digits, as a Chinese input method types them (the reader tests' data,
# coursekit/components.py: CONTRACT): a link, the same link in ASCII, and a field with
# what a reader types into it and the value the link then holds.
FULL_WIDTH = {
    "link": {"num_cpu_blocks": "１２", "doc_tokens": "４８", "step": "３"},
    "ascii": {"num_cpu_blocks": "12", "doc_tokens": "48", "step": "3"},
    "typed": ("num_cpu_blocks", "８", "8"),
}
# Where the shown request's tokens came from, and its TTFT without and with the tier.
KEY_RESULTS = [
    '[data-key="gpu_hit"]',
    '[data-key="cpu_hit"]',
    '[data-key="recomputed"]',
    '[data-key="ttft_without"]',
    '[data-key="ttft_with"]',
]


def setting(name: str, text: str):
    """A link's value as the page takes it, or None."""
    if name == "policy":
        return text if text in DATA.POLICIES else None
    if name == "order":
        least, most = LIMITS["order"]
        ok = least <= len(text) <= most and set(text) <= set(DATA.DOCUMENTS)
        return text if ok else None
    return read_whole(text, *LIMITS[name])  # as component-kit.js: whole reads it


def effective(state: dict[str, str]) -> tuple[dict, list[str]]:
    """The settings and order the page runs, and the link's names that fell back."""
    values, fallback = {}, []
    for name in (*DATA.SETTINGS, "order"):
        value = setting(name, state.get(name, DEFAULTS[name]))
        if value is None:
            fallback.append(name)
            value = setting(name, DEFAULTS[name])
        values[name] = value
    return values, fallback


def documents(doc_tokens: int, names) -> dict[str, list[int]]:
    first = DATA.FIRST_TOKEN
    return {
        d: list(range(first + i * doc_tokens, first + (i + 1) * doc_tokens))
        for i, d in enumerate(DATA.DOCUMENTS)
        if d in names
    }


def grouped(n: int) -> str:
    return f"{n:,}"


def expected(state: dict[str, str]) -> dict[str, str] | str:
    """What the page shows for a link, or "error" where it shows its error."""
    values, fallback = effective(state)
    docs = documents(values["doc_tokens"], values["order"])
    keys = {d: block_hashes(tokens) for d, tokens in docs.items()}
    short = {k.hex()[:8] for ks in keys.values() for k in ks}
    assert len(short) == sum(map(len, keys.values())), "two hashes share 8 hex digits"
    gpu, cpu = values["num_gpu_blocks"], values["num_cpu_blocks"]
    cache = OffloadedCache(gpu, cpu, values["policy"])
    after = []
    total = {"gpu": 0, "cpu": 0, "recomputed": 0, "failed": 0}
    for i, d in enumerate(values["order"]):
        ran = len(cache.gpu.history)
        v = cache.visit(f"{d}{i}", docs[d])
        if len(cache.gpu.history) == ran:  # the document never fits the GPU
            return "error"
        without, tier = ttft(v)
        total["gpu"] += v.gpu_hit
        total["cpu"] += v.cpu_hit
        total["recomputed"] += v.recomputed
        total["failed"] += v.store_failed
        on_gpu = set(cache.gpu.cached_blocks.values())  # first 8 hex digits of each
        shown = {
            "step": v.request_id,
            "gpu_hit": grouped(v.gpu_hit),
            "cpu_hit": grouped(v.cpu_hit),
            "recomputed": grouped(v.recomputed),
            "ttft_without": f"{without * 1000:.1f}",
            "ttft_with": f"{tier * 1000:.1f}",
            "loaded": grouped(v.loaded),
            "stored": grouped(v.stored),
            "evicted": grouped(v.evicted),
            "total_gpu": grouped(total["gpu"]),
            "total_cpu": grouped(total["cpu"]),
            "total_recomputed": grouped(total["recomputed"]),
            "failed": grouped(total["failed"]),
            "gpu_used": f"{grouped(len(cache.gpu.cached_blocks))}/{grouped(gpu - 1)}",
            "cpu_used": f"{grouped(cache.cpu.num_allocated - len(cache.cpu.free_list))}"
            f"/{grouped(cpu)}",
        }
        for doc, ks in keys.items():
            shown[f"gpu-{doc}"] = grouped(sum(k.hex()[:8] in on_gpu for k in ks))
            shown[f"cpu-{doc}"] = grouped(sum(cache.cpu.lookup(k) == HIT for k in ks))
        after.append(shown)
    chosen = 0
    if "step" in state:
        step = read_whole(state["step"], 0, len(after) - 1)
        if step is None:
            fallback.append("step")
        else:
            chosen = step
    return after[chosen] | {"fallback": ", ".join(fallback)}


def random_state(rng: random.Random) -> dict[str, str]:
    """A workload the kind a reader's edits write: a few documents revisited, on pools
    from barely one document to all of them."""
    while True:
        doc_tokens = rng.choice([1, 15, 16, 17, 33, 64, 100, 256, 1024])
        docs = DATA.DOCUMENTS[: rng.randint(1, 8)]
        order = "".join(rng.choice(docs) for _ in range(rng.randint(1, 16)))
        per_doc = doc_tokens // 16 + 1
        state = {
            "num_gpu_blocks": str(rng.randint(per_doc + 1, per_doc * 4 + 2)),
            "num_cpu_blocks": str(rng.randint(1, per_doc * 6)),
            "policy": rng.choice(DATA.POLICIES),
            "doc_tokens": str(doc_tokens),
            "order": order,
            "step": str(rng.randrange(len(order))),
        }
        if expected(state) != "error":
            return state


def cases() -> list[dict[str, str]]:
    presets = [
        DATA.state(preset) | {"step": str(step)}
        for preset in DATA.PRESETS.values()
        for step in range(0, len(preset["order"]), 3)
    ]
    # The fence's workload first: the first case is checked on the lesson page itself.
    presets.sort(key=lambda s: s["order"] != DEFAULTS["order"])
    big = {"num_gpu_blocks": "4096", "num_cpu_blocks": "4096", "doc_tokens": "1024"}
    given = [
        {},
        {"step": "3"},  # A3: a block from each tier
        {"step": "6"},  # the last: C is in neither tier
        {"policy": "arc", "step": "6"},
        # Rules the presets do not show: no full block at all, exactly one block (the
        # last-token rule leaves the GPU no hit, the tier gives the whole block), a tier
        # of one block, a GPU of one usable block.
        {"doc_tokens": "15", "order": "AAB"},
        {"doc_tokens": "16", "order": "ABA", "step": "2"},
        {"doc_tokens": "17", "num_cpu_blocks": "1", "order": "ABAB", "step": "3"},
        {"num_gpu_blocks": "2", "doc_tokens": "16", "order": "ABAB", "step": "2"},
        # The limits: 16 requests, documents of 1,024 tokens, the largest pools.
        big | {"order": "ABCDEFGHHGFEDCBA", "step": "15"},
        big | {"order": "A" * 16, "policy": "arc", "step": "1"},
        {"doc_tokens": "1", "order": "H"},
        # A document needs more GPU blocks than the pool has: the component's error.
        {"num_gpu_blocks": "3"},
        {"num_gpu_blocks": "64", "doc_tokens": "1024", "order": "A"},
        # Not what a link may hold: each falls back, and the note names it.
        {"num_gpu_blocks": "1"},
        {"num_gpu_blocks": "4097", "num_cpu_blocks": "0"},
        {"num_cpu_blocks": "4097", "doc_tokens": "0"},
        {"doc_tokens": "1025", "policy": "LRU"},
        {"num_gpu_blocks": "1e3", "num_cpu_blocks": "0x10", "policy": ""},
        {"num_gpu_blocks": " 8", "doc_tokens": "-4", "step": "NaN"},
        {"doc_tokens": "Infinity", "num_cpu_blocks": "99999999999999999999"},
        {"order": ""},
        {"order": "ABCI"},
        {"order": "abc"},
        {"order": "A" * 17},
        {"order": "A B"},
        {"order": "<script>alert(1)</script>", "step": "<b>"},
        {"order": "ＡＢ"},
        {"step": "7"},
        {"step": "-1"},
        {"step": "1.0"},
        {"step": ""},
        {"unknown": "1", "step": "2"},
        {"num_cpu_blocks": "１２", "doc_tokens": "４８", "step": "３"},
    ]
    randoms = [random_state(random.Random(seed)) for seed in range(16)]
    return presets + given + randoms
