"""The replica router's parity contract: for each link, what the page must show,
computed by routing the link's requests with router.py's choose to router.py's Replica
(lesson 3's scheduler on lesson 5's prefix cache), as script.js does with their twins.

A link holds policy (one of router.py's POLICIES), replicas (1 to 6), blocks (KV cache
blocks per replica, data.py's BLOCKS), gap (engine steps every replica runs between two
requests, data.py's GAPS), requests (as many as data.py's LIMITS allow, such as 1a:
chat a on system prompt S1; a chat written again is its next turn, sent once its answer
is back) and step (from 0, the request shown; without one, the last). A value missing
from the link, or one the page does not take, is the fence's preset's, and the
[data-key=fallback] element names it. A request whose whole chat can never fit a
replica's blocks is refused (the error).
"""

import random
from pathlib import Path

import router
from coursekit.code import load
from coursekit.components import read_whole
from scheduler import Request

DATA = load(Path(__file__).with_name("data.py"), "replica_router_data")

# The fence on the lesson page (start: system).
FENCE = DATA.state(DATA.PRESETS["system"])
# A wrong rule the check must catch: a chat's next turn sent without waiting for its
# answer, so its history never holds the answer.
BROKEN = ("while (answering.has(chat)) stepAll();", "")
# Full-width digits, as a Chinese input method types them (the reader tests' data,
# coursekit/components.py: CONTRACT): a link and the same link in ASCII. The numbers are
# menus: no number is typed.
FULL_WIDTH = {
    "link": {"replicas": "４", "gap": "１０", "step": "３"},
    "ascii": {"replicas": "4", "gap": "10", "step": "3"},
    "typed": None,
}
# The request shown: the replica it went to, its cached tokens, the running hit rate.
KEY_RESULTS = ['[data-key="replica"]', '[data-key="cached"]', '[data-key="rate"]']


def read_requests(text: str) -> list[str] | None:
    """The link's requests, or None: as many as data.py's LIMITS allow, one space
    apart, each a system prompt's number and a chat's letter."""
    found = [word for word in text.split(" ") if word]
    least, most = DATA.LIMITS["requests"]
    if not least <= len(found) <= most:
        return None
    ok = all(len(w) == 2 and w[0] in DATA.SYSTEMS and w[1] in DATA.CHATS for w in found)
    return found if ok else None


def effective(state: dict[str, str]) -> tuple[dict, list[str]]:
    """The values the page computes with, and the names of those that fell back."""
    readers = {
        "policy": lambda t: t if t in router.POLICIES else None,
        "replicas": lambda t: read_whole(t, *DATA.LIMITS["replicas"]),
        "blocks": lambda t: read_whole(t, 1, DATA.BLOCKS[-1]),
        "gap": lambda t: read_whole(t, 1, DATA.GAPS[-1]),
        "requests": read_requests,
    }
    choices = {"blocks": DATA.BLOCKS, "gap": DATA.GAPS}
    values, fallback = {}, []
    for name, read in readers.items():
        value = read(state.get(name, FENCE[name]))
        if value is None or (name in choices and value not in choices[name]):
            fallback.append(name)
            value = read(FENCE[name])
        values[name] = value
    return values, fallback


def run(values: dict) -> list[dict]:
    """Each request in turn: the loads the router sees, the replica it chooses, the
    tokens that replica caches of the prompt; between two requests every busy replica
    runs `gap` engine steps, and a chat's next turn waits until its answer is back."""
    count, blocks = values["replicas"], values["blocks"]
    replicas = [router.Replica(f"R{i}", blocks) for i in range(count)]
    history, in_flight, rows, turns = {}, {}, [], {}

    def step_all():
        for replica in replicas:
            if replica.busy:
                for request_id in replica.step():
                    chat, prompt = in_flight.pop(request_id)
                    history[chat] = prompt + [-1 - k for k in range(DATA.OUTPUT)]

    for number, chat in enumerate(values["requests"]):
        if number:
            for _ in range(values["gap"]):
                step_all()
        while chat in {c for c, _ in in_flight.values()}:
            step_all()
        prompt = history.get(chat, DATA.SYSTEMS[chat[0]]) + DATA.question(number)
        loads = [r.load for r in replicas]
        index = router.choose(values["policy"], replicas, prompt, number)
        # lookup refuses the answers' token ids (-1 - k): _hit is lookup without it
        cached = replicas[index].cache._hit(prompt, None)[1]
        request = Request(f"q{number}", len(prompt), DATA.OUTPUT, prompt=tuple(prompt))
        replicas[index].add(request, 0.0)
        in_flight[request.request_id] = (chat, prompt)
        turns[chat] = turns.get(chat, 0) + 1
        rows.append(
            {"chat": chat, "turn": turns[chat], "replica": index, "loads": loads}
            | {"cached": cached, "tokens": len(prompt), "prompt": prompt}
        )
    return rows


def expected(state: dict[str, str]) -> dict[str, str] | str:
    values, fallback = effective(state)
    try:
        rows = run(values)
    except ValueError:
        return "error"
    last = len(rows) - 1  # the page opens on the last request
    step = read_whole(state.get("step", str(last)), 0, last)
    if step is None:
        fallback.append("step")
        step = last
    shown, before = rows[step], rows[: step + 1]
    cached = sum(r["cached"] for r in before)
    tokens = sum(r["tokens"] for r in before)
    found = {
        "fallback": ", ".join(fallback),
        "step": f"q{step}",
        "request": shown["chat"],
        "turn": str(shown["turn"]),
        "replica": f"R{shown['replica']}",
        "cached": f"{shown['cached']}/{shown['tokens']}",
        "total": f"{cached}/{tokens}",
        "rate": f"{cached / tokens * 100:.1f}%",
    }
    for i in range(values["replicas"]):
        took = [r for r in before if r["replica"] == i]
        found[f"sent-R{i}"] = str(len(took))
        found[f"load-R{i}"] = str(shown["loads"][i])
        found[f"hits-R{i}"] = (
            f"{sum(r['cached'] for r in took)}/{sum(r['tokens'] for r in took)}"
        )
    for n, row in enumerate(before):
        found[f"at-q{n}"] = f"R{row['replica']} {row['cached']}/{row['tokens']}"
    return found


def random_state(rng: random.Random) -> dict[str, str]:
    count = rng.randint(1, DATA.LIMITS["requests"][1])
    chats = [f"{rng.choice(list(DATA.SYSTEMS))}{c}" for c in DATA.CHATS[:4]]
    return {
        "policy": rng.choice(router.POLICIES),
        "replicas": str(rng.randint(*DATA.LIMITS["replicas"])),
        "blocks": str(rng.choice(DATA.BLOCKS[1:])),
        "gap": str(rng.choice(DATA.GAPS)),
        "requests": " ".join(rng.choice(chats) for _ in range(count)),
        "step": str(rng.randint(0, count - 1)),
    }


def cases() -> list[dict[str, str]]:
    presets = [
        DATA.state(preset) | {"policy": policy, "step": "7"}
        for preset in DATA.PRESETS.values()
        for policy in router.POLICIES
    ]
    given = [
        {},  # the fence
        {"requests": "1a 2b 1c 2d " * 3, "policy": "cache_aware", "step": "11"},
        {"replicas": "1", "step": "5"},
        {"replicas": "6", "policy": "prefix_hash", "step": "7"},
        {"requests": "1a 1a 1a", "blocks": "16", "step": "2"},  # the chat still fits
        {"requests": "1a 1a 1a 1a", "blocks": "16"},  # never fits: refused
        {"requests": "1a 2b 1c 2d 1a 2b", "blocks": "16", "gap": "40", "step": "5"},
        {"requests": "1a", "gap": "40"},
        # Not what a link may hold: each falls back, and the note names it.
        {"policy": "random", "replicas": "0", "step": "2"},
        {"replicas": "7", "blocks": "48", "gap": "2"},
        {"blocks": "1e2", "gap": "0x10", "step": "-1"},
        {"requests": ""},
        {"requests": "3a 1b"},
        {"requests": "1i"},
        {"requests": "1a2b"},
        {"requests": " ".join(["1a"] * (DATA.LIMITS["requests"][1] + 1))},
        {"requests": " ".join(DATA.CHATS), "step": "3"},  # not one request
        {"requests": " ".join(f"1{c}" for c in DATA.CHATS), "policy": "prefix_hash"},
        {"requests": "<script>alert(1)</script>", "step": "<b>"},
        {"requests": "１ａ", "step": "8"},
        {"requests": "1a\u30002b"},
        {"replicas": "４", "gap": "１０", "step": "３"},  # full-width digits
        {"step": "99"},
        {"step": "1.0"},
        {"unknown": "1", "step": "2"},
    ]
    randoms = [random_state(random.Random(seed)) for seed in range(16)]
    return presets + given + randoms
