"""A router in front of N replicas of `vllm serve` Qwen2.5-7B-Instruct (BF16), one
RTX 4090 each: which replica takes each request decides what its prefix cache holds.

Each replica is lesson 3's scheduler (scheduler.py: Scheduler) on lesson 5's prefix
cache (prefix_cache.py: PrefixCache), its steps timed by lesson 3's roofline
(chunked_prefill.step_seconds); every time printed is an estimate and a lower bound. The
workload: chats that share a few system prompts, each chat several turns, each turn sent
when the previous answer is back plus a pause, its prompt the whole conversation so far.

Policies, as routers in front of vLLM decide (their docs, read as leads):
- round_robin: replica i mod N, blind to load and cache;
- least_loaded: the fewest requests running and waiting (llm-d's queue scorer, vLLM
  production-stack's least-loaded routing);
- prefix_hash: a hash of the prompt's first blocks picks the replica (lesson 5's
  block_hashes, the first PREFIX_BLOCKS), so one system prompt always meets its cache;
- cache_aware: the replica whose blocks the router has sent match the longest run of the
  prompt's block hashes, unless the load is out of balance, then the least loaded (as
  SGLang's router does with an approximate tree of what it routed, and llm-d's prefix
  scorer; the balance test takes SGLang router's documented defaults, 64 requests and a
  factor of 1.5).
"""

from __future__ import annotations

import heapq
import random

from chunked_prefill import step_seconds
from decode_batch import QWEN
from kv_cache_size import GIB
from kv_capacity import predict
from prefix_cache import PrefixCache, block_hashes
from scheduler import Request, Scheduler, SchedulerConfig, Step
from serving_metrics import percentile

BLOCK_SIZE = 16
PREFIX_BLOCKS = 4  # prefix_hash: the blocks whose hash picks the replica
BALANCE_ABS, BALANCE_REL = 64, 1.5  # cache_aware: SGLang router's documented defaults
POLICIES = ("round_robin", "least_loaded", "prefix_hash", "cache_aware")
# Each replica's KV cache: lesson 6's lab size, 7 GiB of BF16 KV (8,192 blocks).
NUM_GPU_BLOCKS = predict(QWEN.model, 7 * GIB, 4096).num_blocks


class Replica:
    """One engine: lesson 3's scheduler with lesson 5's prefix cache, and its clock."""

    def __init__(self, name: str, num_gpu_blocks: int = NUM_GPU_BLOCKS, **settings):
        self.name = name
        self.cache = PrefixCache(num_gpu_blocks, BLOCK_SIZE)
        self.scheduler = Scheduler(SchedulerConfig(**settings), self.cache)
        self.now = 0.0  # seconds: the end of its last step
        self.tokens: dict[str, list[float]] = {}  # request id -> its tokens' times
        self.sent: set[bytes] = set()  # block hashes the router sent here (cache_aware)

    @property
    def busy(self) -> bool:
        return bool(self.scheduler.waiting or self.scheduler.running)

    @property
    def load(self) -> int:
        return len(self.scheduler.waiting) + len(self.scheduler.running)

    def add(self, request: Request, at: float) -> None:
        """The router sends it a request at time `at` (and notes its block hashes)."""
        if not self.busy:
            self.now = max(self.now, at)  # an idle engine waits for its next request
        self.sent.update(block_hashes(request.prompt, BLOCK_SIZE))
        self.scheduler.add_request(request)

    def finish(self) -> None:
        """Step until every request it holds is done."""
        while self.busy:
            self.step()

    def step(self) -> list[str]:
        """One engine step; returns the requests that finished in it."""
        scheduler = self.scheduler
        states = [*scheduler.running, *scheduler.waiting]
        before = {s.id: s.num_computed_tokens for s in states}
        scheduled, preempted = scheduler.schedule()
        self.now += step_seconds(
            Step(0, scheduled, {i: before[i] for i in scheduled}, [], [], preempted,
                 [], [], [], self.cache.num_free_blocks)
        )  # fmt: skip
        sampled, finished = scheduler.update_from_output(scheduled)
        for request_id in sampled:
            self.tokens.setdefault(request_id, []).append(self.now)
        return finished


def choose(policy: str, replicas: list[Replica], prompt: list[int], number: int) -> int:
    """The replica a policy sends the number-th request to."""
    if policy == "round_robin":
        return number % len(replicas)
    loads = [r.load for r in replicas]
    least = loads.index(min(loads))
    if policy == "least_loaded":
        return least
    hashes = block_hashes(prompt, BLOCK_SIZE)
    if policy == "prefix_hash":
        if len(hashes) < PREFIX_BLOCKS:
            return least  # too short to have a prefix worth keeping
        return int.from_bytes(hashes[PREFIX_BLOCKS - 1][:8], "big") % len(replicas)
    if policy == "cache_aware":
        if max(loads) - min(loads) > BALANCE_ABS and max(loads) > BALANCE_REL * min(
            loads
        ):
            return least
        matched = []
        for replica in replicas:
            run = 0
            while run < len(hashes) and hashes[run] in replica.sent:
                run += 1
            matched.append(run)
        best = max(matched)
        if best == 0:
            return least
        return min(
            (i for i, m in enumerate(matched) if m == best), key=loads.__getitem__
        )
    raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")


def chats(
    num_chats: int = 40,
    turns: int = 4,
    num_system: int = 6,
    system_tokens: int = 1024,
    seed: int = 0,
) -> list[dict]:
    """Each chat: a system prompt (one of num_system), then its user messages and the
    length of each answer; it starts at a random time in the first 10 seconds."""
    if num_chats < 1 or turns < 1 or num_system < 1 or system_tokens < BLOCK_SIZE:
        raise ValueError("chats need at least one chat, turn and system prompt")
    rng = random.Random(seed)
    systems = [
        [rng.randrange(1000, 150000) for _ in range(system_tokens)]
        for _ in range(num_system)
    ]
    return [
        {
            "id": f"c{c}",
            "system": systems[rng.randrange(num_system)],
            "users": [
                [rng.randrange(1000, 150000) for _ in range(rng.randint(32, 256))]
                for _ in range(turns)
            ],
            "answers": [rng.randint(32, 160) for _ in range(turns)],
            "start": rng.uniform(0, 10),
        }
        for c in range(num_chats)
    ]


def drive(replicas: list[Replica], arrivals: list, arrive, finished) -> None:
    """Run replicas and arrivals in time order until all is done: the replica with the
    earliest clock steps first, unless the next arrival comes before it. arrivals: a
    heap of (time, ...) tuples; arrive(item) handles one; finished(replica, request_id)
    is called for each request that finishes (it may push new arrivals)."""
    heapq.heapify(arrivals)
    while arrivals or any(r.busy for r in replicas):
        busy = [r for r in replicas if r.busy]
        first = min(busy, key=lambda r: r.now) if busy else None
        if first is not None and (not arrivals or first.now < arrivals[0][0]):
            for request_id in first.step():
                finished(first, request_id)
        else:
            arrive(heapq.heappop(arrivals))


def simulate(
    policy: str, workload: list[dict], num_replicas: int = 4, think: float = 2.0
) -> dict:
    """Route every turn of every chat; returns the hit rate, TTFTs and load per replica.
    A chat's next turn arrives `think` seconds after its answer, its prompt the whole
    conversation so far (the answer's tokens as lesson 3's scheduler samples them)."""
    if num_replicas < 1:
        raise ValueError(f"num_replicas must be at least 1, got {num_replicas}")
    replicas = [Replica(f"R{i}") for i in range(num_replicas)]
    by_id = {chat["id"]: chat for chat in workload}
    history = {chat["id"]: list(chat["system"]) for chat in workload}
    sent_at, placed, outputs = {}, {}, {}
    arrivals = [(chat["start"], chat["id"], 0) for chat in workload]

    def arrive(item):
        at, chat_id, turn = item
        chat = by_id[chat_id]
        history[chat_id] += chat["users"][turn]
        prompt = list(history[chat_id])
        index = choose(policy, replicas, prompt, len(sent_at))
        request_id = f"{chat_id}/{turn}"
        sent_at[request_id], placed[request_id] = at, index
        outputs[request_id] = chat["answers"][turn]
        replicas[index].add(
            Request(request_id, len(prompt), outputs[request_id], prompt=tuple(prompt)),
            at,
        )

    def finished(replica, request_id):
        chat_id, turn = request_id.rsplit("/", 1)
        history[chat_id] += [-1 - k for k in range(outputs[request_id])]  # the answer
        if int(turn) + 1 < len(by_id[chat_id]["users"]):
            heapq.heappush(arrivals, (replica.now + think, chat_id, int(turn) + 1))

    drive(replicas, arrivals, arrive, finished)
    ttft = [replicas[placed[i]].tokens[i][0] - sent_at[i] for i in sorted(sent_at)]
    hits = sum(r.cache.hits for r in replicas)
    queries = sum(r.cache.queries for r in replicas)
    return {
        "hit_rate": hits / queries,
        "ttft_p50": percentile(ttft, 50),
        "ttft_p99": percentile(ttft, 99),
        "per_replica": [
            sum(1 for p in placed.values() if p == i) for i in range(num_replicas)
        ],  # fmt: skip
    }


if __name__ == "__main__":
    workload = chats()
    turns = sum(len(chat["users"]) for chat in workload)
    print(f"{len(workload)} chats, {turns} requests, 6 system prompts of 1,024 tokens,"
          f" 4 replicas of {NUM_GPU_BLOCKS} blocks each")  # fmt: skip
    print("policy         hit rate  TTFT p50  p99 ms  requests per replica")
    print("                         (times: estimates, lower bounds)")
    for policy in POLICIES:
        result = simulate(policy, workload)
        print(
            f"{policy:<14} {result['hit_rate']:>7.1%}  {result['ttft_p50'] * 1e3:>8.0f}"
            f" {result['ttft_p99'] * 1e3:>7.0f}  {result['per_replica']}"
        )
