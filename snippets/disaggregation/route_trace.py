"""Step by step: eight requests, two system prompts, three replicas; a request arrives
every 10 ms and generates 40 tokens, so replicas are busy when the next one comes. For
each policy: which replica takes each request, and how many of its prompt tokens that
replica's prefix cache holds when it arrives (router.py's Replica, choose and drive)."""

from router import POLICIES, Replica, choose, drive
from scheduler import Request

SYSTEM = {"S1": list(range(1000, 1064)), "S2": list(range(2000, 2064))}  # 4 blocks
ORDER = ["S1", "S2", "S1", "S1", "S2", "S1", "S2", "S2"]
GAP = 0.010  # seconds between arrivals
OUTPUT = 40  # tokens each request generates


def prompt_of(number: int) -> list[int]:
    """The system prompt, then a question of 10 tokens of its own."""
    return SYSTEM[ORDER[number]] + [5000 + 10 * number + k for k in range(10)]


def trace(policy: str, replicas: int = 3) -> list[tuple[int, int]]:
    """(replica, cached prompt tokens on arrival) for each request, in order."""
    engines = [Replica(f"R{i}", 64) for i in range(replicas)]
    rows = []

    def arrive(item):
        at, number = item
        prompt = prompt_of(number)
        index = choose(policy, engines, prompt, number)
        rows.append((index, engines[index].cache.lookup(prompt)[1]))
        request = Request(f"q{number}", len(prompt), OUTPUT, prompt=tuple(prompt))
        engines[index].add(request, at)

    drive(engines, [(GAP * n, n) for n in range(len(ORDER))], arrive, lambda *_: None)
    return rows


if __name__ == "__main__":
    print("request   " + "".join(f"{p:>15}" for p in POLICIES))
    traces = {policy: trace(policy) for policy in POLICIES}
    for i, system in enumerate(ORDER):
        cells = "".join(
            f"{'R' + str(traces[p][i][0]):>9} {traces[p][i][1]:>3}t" for p in POLICIES
        )
        print(f"q{i}({system})    {cells}")
    tokens = sum(len(prompt_of(n)) for n in range(len(ORDER)))
    for policy in POLICIES:
        cached = sum(c for _, c in traces[policy])
        print(f"{policy}: {cached} of {tokens} prompt tokens cached on arrival")
