"""The block table component's parity contract: for each link, what the page must show,
computed by replaying the link's operations with block_pool.py.

A link holds blocks (the pool, 2 to 64), block_size (1 to 64), caching (0 or 1, false or
true), ops (A:20 grows request A to 20 tokens, A:free finishes it; names are one capital
letter) and step (how many of the ops are applied). A value the page does not take falls
back to the lesson's, and the kit's note names it (the [data-key=fallback] element):
each is read in turn, in that order, against the values kept before it, and kept where
the pool then replays the operations (a request that shrinks or finishes twice does
not).
"""

import random
import re

from block_pool import BLOCK_SIZE, BlockPool
from block_trace import NUM_GPU_BLOCKS, TRACE, encode
from coursekit.components import read_flag, read_whole

# A request's name and its tokens (read as the page reads numbers) or free.
OP = re.compile(r"([A-Z]):([^:]+)")
TOKENS = (0, 999_999)
DEFAULTS = {
    "blocks": str(NUM_GPU_BLOCKS),
    "block_size": str(BLOCK_SIZE),
    "caching": "0",
    "ops": encode(TRACE),
}
# A wrong formula the check must catch: the null block counted as a used block. (The
# pool's rules are in block_pool.js, which tests/test_js_mirrors.py holds to
# block_pool.py.)
BROKEN = ("pool.num_gpu_blocks - 1 - free.length", "pool.num_gpu_blocks - free.length")
# Full-width digits and commas, as a Chinese input method types them (the reader
# tests' data, coursekit/components.py: CONTRACT): a link, the same link in ASCII, and
# a field with what a reader types into it and the value the link then holds.
FULL_WIDTH = {
    "link": {"blocks": "１２", "ops": "A:２０,B:４０"},
    "ascii": {"blocks": "12", "ops": "A:20,B:40"},
    "typed": ("blocks", "１６", "16"),
}
# What the step did, and the pool's usage as vLLM's gauge and log line read it.
KEY_RESULTS = [
    ".bt-happened",
    '[data-key="used"]',
    '[data-key="gauge"]',
    '[data-key="percent"]',
]


def number(state: dict[str, str], key: str, least: int, most: int) -> int:
    value = read_whole(state[key], least, most)  # component-kit.js: whole
    if value is None:
        raise ValueError(f"{key} must be a whole number from {least} to {most}")
    return value


def operation(text: str) -> tuple[str, int | str]:
    """A link's operation: (request, tokens or "free")."""
    match = OP.fullmatch(text)
    if match and match[2] == "free":
        return match[1], "free"
    tokens = read_whole(match[2], *TOKENS) if match else None
    if tokens is None:
        raise ValueError("ops are A:20 or A:free, separated by commas")
    return match[1], tokens


def replay(state: dict[str, str]) -> tuple[BlockPool, list[str]]:
    """The pool after the link's steps, and the operations it refused."""
    blocks = number(state, "blocks", 2, 64)
    block_size = number(state, "block_size", 1, 64)
    caching = read_flag(state["caching"])
    if caching is None:
        raise ValueError("caching is 0 or 1, false or true")
    ops = [operation(op) for op in state["ops"].split(",")] if state["ops"] else []
    step = number(state, "step", 0, len(ops)) if "step" in state else len(ops)
    pool, refused = BlockPool(blocks, block_size, caching), []
    for request, tokens in ops[:step]:
        if tokens == "free":
            pool.free(request)
            continue
        if pool.allocate(request, tokens) is None:
            refused.append(f"{request}:{tokens}")
    return pool, refused


def shown(pool: BlockPool, refused: list[str], step: int, total: int) -> dict[str, str]:
    """What each [data-key] element of the component shows."""
    owner = {pool.null_block: "null"}
    out = {"step": f"{step}/{total}"}
    for request in sorted(pool.requests):
        table, held = pool.block_table(request), pool.num_tokens(request)
        owner.update({block: f"{request}{i}" for i, block in enumerate(table)})
        out[f"tokens-{request}"] = str(held)
        out[f"table-{request}"] = " ".join(map(str, table)) or "—"
        out[f"slot-{request}"] = str(pool.slot(request, held - 1)) if held else "—"
    hashed = pool.hashed
    for block in range(pool.num_gpu_blocks):
        label = owner.get(block, "free#" if block in hashed else "free")
        out[f"block-{block}"] = label
    queue = [f"{b}#" if b in hashed else str(b) for b in pool.free_queue]
    used = pool.num_gpu_blocks - 1 - pool.num_free_blocks
    out |= {
        "free": " ".join(queue) or "—",
        "used": f"{used}/{pool.num_gpu_blocks - 1}",
        # The gauge to 4 decimals, as block_trace.py prints it, and as vLLM's log
        # writes it, "%.1f%%" of usage * 100 (vllm/v1/metrics/loggers.py:
        # LoggingStatLogger.log).
        "gauge": f"{pool.usage:.4f}",
        "percent": f"{pool.usage * 100:.1f}%",
        "refused": ", ".join(refused) or "—",
    }
    return out


def replays(state: dict[str, str]) -> bool:
    try:
        replay(state)
    except ValueError:
        return False
    return True


def effective(link: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The values the page keeps of a link (no step: the last), and those it names as
    fallen back to the lesson's (script.js: setup)."""
    state, fallback = dict(DEFAULTS), []
    for name in ("blocks", "block_size", "caching", "ops", "step"):
        if name not in link:
            continue
        tried = state | {name: link[name]}  # the step last: read against the ops kept
        if replays(tried):
            state = tried
        else:
            fallback.append(name)
    return state, fallback


def expected(state: dict[str, str]) -> dict[str, str] | str:
    """What the page shows for a link."""
    state, fallback = effective(state)
    pool, refused = replay(state)
    total = len(state["ops"].split(",")) if state["ops"] else 0
    return shown(pool, refused, int(state.get("step", total)), total) | {
        "fallback": ", ".join(fallback)
    }


def random_ops(rng: random.Random, pool: BlockPool) -> str:
    """A random run on the pool: requests arrive, grow by a token or about a block,
    finish; some are refused."""
    ops = []
    for _ in range(rng.randint(1, 30)):
        held, roll = sorted(pool.requests), rng.random()
        if held and roll < 0.2:
            request = rng.choice(held)
            pool.free(request)
            ops.append(f"{request}:free")
            continue
        if held and roll < 0.7:
            request = rng.choice(held)
            tokens = pool.num_tokens(request) + rng.choice([1, 1, 15, 16, 17])
        else:
            request = rng.choice([c for c in "ABCDEFGH" if c not in held] or held)
            tokens = pool.num_tokens(request) if request in held else 0
            tokens += rng.randint(1, 3 * pool.block_size)
        ops.append(f"{request}:{tokens}")
        pool.allocate(request, tokens)  # None, changing nothing, when refused
    return ",".join(ops)


def cases() -> list[dict[str, str]]:
    trace = encode(TRACE)
    given = [
        {"ops": trace},
        {"ops": trace, "caching": "1"},
        *({"ops": trace, "step": str(step)} for step in range(len(TRACE))),
        {"ops": trace, "blocks": "6"},
        {},
        {"ops": ""},
        {"blocks": "2", "ops": "A:16,A:17,B:0,A:free,B:1"},
        # Not a link the page takes: each falls back to the lesson's, named in the note.
        {"ops": trace, "blocks": "6", "block_size": "4"},  # frees B, which was refused
        {"ops": trace, "blocks": "1"},
        {"ops": trace, "blocks": "65"},
        {"ops": trace, "block_size": "0"},
        {"ops": trace, "caching": "yes"},
        {"ops": "A:20,A:10"},  # a block table never shrinks
        {"ops": "A:free"},  # unknown request
        {"ops": "a:20"},
        {"ops": trace, "step": "10"},
        {"ops": "A:20,A:10", "step": "1"},  # the step read against the lesson's ops
        {"blocks": "1e9", "block_size": "65537", "caching": "true", "step": "2"},
        {"ops": trace, "caching": "false"},  # 1 or true, 0 or false
    ]
    runs = []
    for seed in range(30):
        rng = random.Random(seed)
        state = {
            "blocks": str(rng.randint(2, 24)),
            "block_size": str(rng.choice([4, 8, 16])),
            "caching": rng.choice("01"),
        }
        pool = BlockPool(*(int(state[k]) for k in ("blocks", "block_size")))
        runs.append(state | {"ops": random_ops(rng, pool)})
    return given + runs
