"""The prompt sharing component's parity contract: for each link, what the page must
show, computed by running the link's prompts through prefix_cache.py.

A link holds num_gpu_blocks, block_size, max_tokens, prompts (prompts separated by "|",
words by single spaces; each word is one token, ids by order of first appearance) and
step (the request after which the pool is shown, from 0; the last one by default). The
requests are named A, B, C, ... in order. A value missing from the link is the fence's
workload's; a value outside data.py's LIMITS falls back to it too, and the page names it
in a note (the [data-key=fallback] element). A request that needs more blocks than the
pool has (prefix_cache.py's run returns None) shows the component's error.

Hashes are shown as labels, #1, #2, ... by order of first appearance of each distinct
block hash (prefix_cache.block_hashes) over the requests' computed tokens: script.js
needs no SHA-256 to show the same, since two blocks hash alike exactly when their
tokens and all the tokens before them are alike.
"""

import random
import re
from pathlib import Path

from block_pool import blocks_for
from coursekit.code import load
from coursekit.components import read_whole
from prefix_cache import PrefixCache, block_hashes

DATA = load(Path(__file__).with_name("data.py"), "prompt_sharing_data")

FENCE_START = "system-prompt"  # the lesson's fence: start: system-prompt
DEFAULTS = DATA.state(DATA.PRESETS[FENCE_START])
LIMITS = DATA.LIMITS
WORD = re.compile(DATA.WORD)
NAMES = "ABCDEFGH"
NONE = "—"
PARTIAL = "·"  # a partly filled last block: no hash
# A wrong rule the check must catch: why a hit stops, read without the last-token rule
# (max_cache_hit_length = num_tokens instead of num_tokens - 1). The rule itself is in
# prefix_cache.js, which tests/test_js_mirrors.py holds to prefix_cache.py.
BROKEN = (
    "const limit = Math.floor((n - 1) / bs);",
    "const limit = Math.floor(n / bs);",
)
# Full-width digits and commas, as a Chinese input method types them (the reader
# tests' data, coursekit/components.py: CONTRACT): a link, the same link in ASCII, and
# a field with what a reader types into it and the value the link then holds.
FULL_WIDTH = {
    "link": {"num_gpu_blocks": "４０", "step": "０"},
    "ascii": {"num_gpu_blocks": "40", "step": "0"},
    "typed": ("num_gpu_blocks", "３０", "30"),
}
# The hits, the hit rate and the cached blocks after the request shown.
KEY_RESULTS = ['[data-key="hits"]', '[data-key="rate"]', '[data-key="cached"]']


def number(text: str, name: str) -> int:
    value = read_whole(text, *LIMITS[name])  # as component-kit.js: whole reads it
    if value is None:
        raise ValueError(f"{name}: {text!r}")
    return value


def prompts(text: str) -> list[list[str]]:
    """A link's prompts: each a list of words."""
    found = [prompt.split(" ") for prompt in text.split("|")]
    least, most = LIMITS["requests"]
    if not least <= len(found) <= most:
        raise ValueError("prompts: how many")
    for words in found:
        if not LIMITS["words"][0] <= len(words) <= LIMITS["words"][1]:
            raise ValueError("prompts: how long")
        if not all(WORD.fullmatch(word) for word in words):
            raise ValueError("prompts: a word")
    return found


def effective(state: dict[str, str]) -> tuple[dict, list[list[str]], list[str]]:
    """The settings and prompts the page runs, and the link's names that fell back."""
    settings, fallback = {}, []
    for name in DATA.SETTINGS:
        try:
            settings[name] = number(state.get(name, DEFAULTS[name]), name)
        except ValueError:
            settings[name] = number(DEFAULTS[name], name)
            fallback.append(name)
    try:
        workload = prompts(state.get("prompts", DEFAULTS["prompts"]))
    except ValueError:
        workload = prompts(DEFAULTS["prompts"])
        fallback.append("prompts")
    return settings, workload, fallback


def token_ids(workload: list[list[str]]) -> list[list[int]]:
    """Each word's id: by order of first appearance over the whole workload."""
    vocabulary: dict[str, int] = {}
    return [[vocabulary.setdefault(w, len(vocabulary)) for w in ws] for ws in workload]


def percent(hits: int, queries: int) -> str:
    """hits/queries as a percentage with one decimal, halves rounded up."""
    tenths = (2000 * hits + queries) // (2 * queries)
    return f"{tenths // 10}.{tenths % 10}%"


def expected(state: dict[str, str]) -> dict[str, str] | str:
    """What the page shows for a link, or "error" where it shows its error."""
    settings, workload, fallback = effective(state)
    bs, m = settings["block_size"], settings["max_tokens"]
    cache = PrefixCache(settings["num_gpu_blocks"], bs)
    labels: dict[bytes, str] = {}
    out: dict[str, str] = {}
    after = []  # what the pool shows after each request
    for i, prompt in enumerate(token_ids(workload)):
        name = NAMES[i]
        # The stand-in output tokens prefix_cache.py gives request i (PrefixCache.run):
        # its computed tokens are the prompt and all but the last output token.
        output = list(range(-(i + 1) * m, -i * m))
        hashes = block_hashes(prompt + output[: m - 1], bs)
        for h in hashes:
            labels.setdefault(h, f"#{len(labels) + 1}")
        by_hex = {h.hex()[:8]: label for h, label in labels.items()}
        assert len(by_hex) == len(labels), "two hashes share 8 hex digits"
        before = {block: by_hex[x] for block, x in cache.cached_blocks.items()}
        cached_labels = set(before.values())
        cached = cache.run(name, prompt, m)
        if cached is None:  # more blocks than the free ones
            return "error"
        done = cache.history[-1]
        n = len(prompt)
        full = n // bs
        limit = (n - 1) // bs
        stop = cached // bs  # the first block that is not a hit
        if stop < limit:
            reason = "miss"
        elif full > limit:
            reason = "last-token" if labels[hashes[limit]] in cached_labels else "miss"
        else:
            reason = "partial"
        blocks = [labels[h] for h in hashes[:full]] + ([PARTIAL] if n % bs else [])
        out |= {
            f"blocks-{name}": " ".join(blocks),
            f"hit-{name}": f"{cached}/{n}",
            f"stop-{name}": reason,
            f"table-{name}": " ".join(map(str, done.block_table)),
            f"evicted-{name}": ", ".join(f"{b}:{before[b]}" for b in done.evicted)
            or NONE,
        }
        now = {block: by_hex[x] for block, x in cache.cached_blocks.items()}
        after.append(
            {
                "step": name,
                "free": " ".join(
                    f"{b}:{now[b]}" if b in now else str(b) for b in cache.free_queue
                ),
                "cached": f"{len(now)}/{settings['num_gpu_blocks'] - 1}",
                "hits": f"{cache.hits}/{cache.queries}",
                "rate": percent(cache.hits, cache.queries),
            }
        )
    chosen = len(workload) - 1
    if "step" in state:
        step = read_whole(state["step"], 0, len(workload) - 1)
        if step is not None:
            chosen = step
        else:
            fallback.append("step")
    return out | after[chosen] | {"fallback": ", ".join(fallback)}


def random_state(rng: random.Random) -> dict[str, str]:
    """A random workload the kind a reader's edits write: prompts that share prefixes
    of a few bases, in a pool that is sometimes barely large enough."""
    vocabulary = "a b c d e f g h i j k l m n o p".split()
    while True:
        bases = [
            [rng.choice(vocabulary) for _ in range(rng.randint(2, 20))]
            for _ in range(rng.randint(1, 3))
        ]
        workload = []
        for _ in range(rng.randint(1, 8)):
            base = rng.choice(bases)
            words = base[: rng.randint(1, len(base))] + [
                rng.choice(vocabulary) for _ in range(rng.choice([0, 0, 1, 3, 8]))
            ]
            workload.append(words[:64])
        block_size = rng.choice([1, 2, 3, 4, 4, 4, 8, 16])
        max_tokens = rng.choice([1, 1, 1, 2, 5, 9])
        most = max(blocks_for(len(w) + max_tokens - 1, block_size) for w in workload)
        blocks = 1 + most + rng.choice([0, 1, 2, 5, 20])
        if blocks > LIMITS["num_gpu_blocks"][1]:
            continue
        state = {
            "num_gpu_blocks": str(blocks),
            "block_size": str(block_size),
            "max_tokens": str(max_tokens),
            "prompts": "|".join(" ".join(w) for w in workload),
        }
        if rng.random() < 0.5:
            state["step"] = str(rng.randrange(len(workload)))
        if expected(state) != "error":
            return state


def cases() -> list[dict[str, str]]:
    presets = [
        DATA.state(preset) | {"step": str(step)}
        for preset in DATA.PRESETS.values()
        for step in range(len(preset["prompts"]))
    ]
    # The fence's workload first: the first case is checked on the lesson page itself.
    presets.sort(key=lambda s: s["prompts"] != DEFAULTS["prompts"])
    long_prompt = " ".join(f"w{i % 9}" for i in range(64))
    given = [
        {},
        # Rules the presets do not show: a prompt shorter than a block (no hash at
        # all), a prompt of exactly one block (the last-token rule leaves no hit), a
        # duplicate block cached twice, output blocks cached, the tail of a chain
        # evicted first.
        {"block_size": "4", "prompts": "a b c|a b c|a b c d|a b c d|a b c d e"},
        {"block_size": "2", "max_tokens": "5", "prompts": "x y z|x y z w"},
        {"block_size": "1", "num_gpu_blocks": "4", "prompts": "a b c|d e f|a b|a"},
        {
            "block_size": "3",
            "num_gpu_blocks": "5",
            "prompts": "a b c d e f g|h i j k|a b c d e f g",
            "step": "1",
        },
        {"prompts": "你 是 一个 乐于 助人 的 助手|你 是 一个 乐于 助人 的 老师"},
        # The limits: 8 requests of 64 words, the largest pool, block and max_tokens.
        {
            "num_gpu_blocks": "64",
            "block_size": "2",
            "max_tokens": "32",
            "prompts": "|".join([long_prompt] * 8),
        },
        {
            "num_gpu_blocks": "64",
            "block_size": "32",
            "max_tokens": "32",
            "prompts": "|".join([long_prompt] * 8),
            "step": "0",
        },
        {"num_gpu_blocks": "2", "block_size": "32", "prompts": "a|a b|a"},
        {"block_size": "1", "num_gpu_blocks": "64", "prompts": long_prompt},
        {"prompts": "abcdefghijklmnop|abcdefghijklmnop x"},  # 16 characters: a word
        # A request needs more blocks than the pool has: the component's error.
        {"num_gpu_blocks": "2"},
        {
            "num_gpu_blocks": "5",
            "block_size": "4",
            "prompts": "a b c d e f g h i j k l m n o p q",
        },
        {
            "block_size": "1",
            "num_gpu_blocks": "64",
            "prompts": f"{long_prompt}|a",
            "max_tokens": "2",
        },
        # Not what a link may hold: each falls back, and the note names it.
        {"num_gpu_blocks": "1"},
        {"num_gpu_blocks": "65"},
        {"num_gpu_blocks": "1e3", "block_size": "0x10"},
        {"num_gpu_blocks": " 8", "block_size": "-4"},
        {"block_size": "33", "max_tokens": "0"},
        {"max_tokens": "33", "step": "NaN"},
        {"block_size": "Infinity", "max_tokens": "99999999999999999999"},
        {"prompts": ""},
        {"prompts": "a b||c"},
        {"prompts": "a  b"},
        {"prompts": " a b"},
        {"prompts": "a b "},
        {"prompts": "a\tb"},
        {"prompts": "abcdefghijklmnopq"},  # 17 characters
        {"prompts": "|".join(["a b"] * 9)},  # 9 requests
        {"prompts": " ".join(["a"] * 65)},  # 65 words
        {"prompts": "<script>alert(1)</script>"},
        {"prompts": "<img src=x onerror=alert(1)>", "step": "<b>"},
        {"prompts": 'a" onmouseover="alert(1)'},
        {"prompts": "ＡＢ 你好"},  # full-width letters are not words here
        {"prompts": "你好， 世界。|你好， 朋友？"},  # Chinese punctuation is
        {"prompts": "a,b|c"},
        {"step": "4"},
        {"step": "-1"},
        {"step": "1.0"},
        {"step": ""},
        {"unknown": "1", "step": "2"},
    ]
    randoms = [random_state(random.Random(seed)) for seed in range(30)]
    return presets + given + randoms
