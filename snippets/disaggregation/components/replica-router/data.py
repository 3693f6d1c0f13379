"""The replica router starts from one of two workloads: route_trace.py's eight
requests on two system prompts, or chats of several turns on the same system prompts.
data.py gives script.js the system prompts, the number prefix_hash reads from each, the
presets as link values and what a link may hold; parity.py reads the same from here.

A request is written as a system prompt's number and a chat's letter: 1a is chat a on
system prompt S1. A chat written again is its next turn: its prompt is the whole chat so
far (the system prompt, each question and each answer as lesson 3's scheduler samples
it), then a new question. Each question is route_trace.py's: 10 tokens of its own.
"""

from coursekit.components import fence_choice
from prefix_cache import block_hashes
from route_trace import ORDER, OUTPUT, SYSTEM
from router import BALANCE_ABS, BALANCE_REL, BLOCK_SIZE, POLICIES, PREFIX_BLOCKS

# Each request's own question: `tokens` token ids from base + stride * its number
# (route_trace.py: prompt_of).
QUESTION = {"base": 5000, "stride": 10, "tokens": 10}
SYSTEMS = {name.removeprefix("S"): tokens for name, tokens in SYSTEM.items()}
CHATS = "abcdefghijklmnop"  # as many chats as requests
# prefix_hash's number for each system prompt: the first 8 bytes of the SHA-256 of its
# last block (router.py: choose); every prompt after the system prompt starts with its
# PREFIX_BLOCKS blocks. As a decimal string: it is above JavaScript's whole numbers.
if any(len(tokens) != PREFIX_BLOCKS * BLOCK_SIZE for tokens in SYSTEMS.values()):
    raise ValueError("each system prompt is the PREFIX_BLOCKS blocks prefix_hash reads")
PREFIX_NUMBERS = {
    name: str(
        int.from_bytes(block_hashes(tokens, BLOCK_SIZE)[PREFIX_BLOCKS - 1][:8], "big")
    )
    for name, tokens in SYSTEMS.items()
}
BLOCKS = [16, 32, 64, 128]  # KV cache blocks per replica (route_trace.py: 64)
GAPS = [1, 5, 10, 20, 40]  # engine steps each replica runs between two requests
LIMITS = {"replicas": [1, 6], "requests": [1, 16]}
PRESETS = {
    # route_trace.py's workload: its order of system prompts, each request a chat of
    # its own, three replicas of 64 blocks, every replica busy when the next comes.
    "system": {
        "policy": "cache_aware",
        "replicas": 3,
        "blocks": 64,
        "gap": 1,
        "requests": [f"{name[1:]}{CHATS[i]}" for i, name in enumerate(ORDER)],
    },
    # Four chats of three turns on two system prompts, taking turns.
    "chats": {
        "policy": "round_robin",
        "replicas": 3,
        "blocks": 64,
        "gap": 5,
        "requests": ["1a", "2b", "1c", "2d"] * 3,
    },
}
SETTINGS = ("policy", "replicas", "blocks", "gap")


def question(number: int) -> list[int]:
    """The number-th request's own question (route_trace.py: prompt_of)."""
    start = QUESTION["base"] + QUESTION["stride"] * number
    return list(range(start, start + QUESTION["tokens"]))


def state(preset: dict) -> dict[str, str]:
    """A preset as a link: its settings and its requests."""
    values = {name: str(preset[name]) for name in SETTINGS}
    return values | {"requests": " ".join(preset["requests"])}


def data(options: dict) -> dict:
    return {
        "start": fence_choice(options, "start", PRESETS),
        "presets": {name: state(preset) for name, preset in PRESETS.items()},
        "policies": list(POLICIES),
        "blocks": BLOCKS,
        "gaps": GAPS,
        "limits": LIMITS,
        "systems": SYSTEMS,
        "prefix_numbers": PREFIX_NUMBERS,
        "chats": CHATS,
        "output": OUTPUT,
        "question": QUESTION,
        # What the texts say of the workload and the policies.
        "facts": {
            "block_size": BLOCK_SIZE,
            "system": PREFIX_BLOCKS * BLOCK_SIZE,
            "question": QUESTION["tokens"],
            "output": OUTPUT,
            "prefix_blocks": PREFIX_BLOCKS,
            "balance_abs": BALANCE_ABS,
            "balance_rel": BALANCE_REL,
        },
    }
