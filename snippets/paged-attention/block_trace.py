"""A worked trace: four requests arrive, grow and finish in a pool of 10 blocks.

After each step it prints what the step added, every block table, the free queue (head
first) and the usage vLLM would export. It runs with prefix caching on, vLLM 0.26.0's
default for Qwen2.5 (full blocks keep a hash and are freed to the queue's tail), then
replays steps 5 and 6 with it off.
"""

from block_pool import BLOCK_SIZE, BlockPool, blocks_for

NUM_GPU_BLOCKS = 10  # block 0 is the null block: 9 blocks to hand out
# (request, tokens it holds in total after the step); None: the request finished.
TRACE = [
    ("A", 20),  # A arrives with a 20-token prompt
    ("B", 40),  # B arrives with a 40-token prompt
    ("A", 32),  # A has generated 12 tokens: its 2 blocks still hold them
    ("A", 33),  # one more token starts a third block
    ("B", None),  # B finishes
    ("C", 30),  # C arrives and gets B's last blocks first
    ("D", 100),  # D needs 7 blocks, 4 are free: refused, nothing changes
    ("A", None),  # A finishes
    ("D", 100),  # D again: now it fits
]


def run(
    trace=TRACE,
    num_gpu_blocks=NUM_GPU_BLOCKS,
    enable_caching=True,
    block_size=BLOCK_SIZE,
):
    """Replay a trace; yields (step, pool, what happened) at the start (step 0) and
    after each step, with the one pool. What happened is a dict: its kind (start, grew,
    refused, finished), the request r, its tokens n, the blocks the step added or freed
    (last block first), the blocks a refused step needed and those free. Prefix caching
    is on by default, as in vLLM."""
    pool = BlockPool(num_gpu_blocks, block_size, enable_caching)
    yield 0, pool, {"kind": "start", "null": pool.null_block}
    for step, (request, tokens) in enumerate(trace, 1):
        if tokens is None:
            freed = pool.block_table(request)[::-1]
            pool.free(request)
            yield step, pool, {"kind": "finished", "r": request, "blocks": freed}
            continue
        held = len(pool.block_table(request)) if request in pool.requests else 0
        added = pool.allocate(request, tokens)
        if added is None:  # too few free blocks: nothing changed
            needed = blocks_for(tokens, block_size) - held
            free = pool.num_free_blocks
            happened = {"kind": "refused", "needed": needed, "free": free}
        else:
            happened = {"kind": "grew", "blocks": added}
        yield step, pool, happened | {"r": request, "n": tokens}


def said(happened: dict) -> str:
    """What happened, in words (the block table component says it in its labels.yml)."""
    return {
        "start": "start: block {null} is the null block",
        "grew": "{r} holds {n} tokens: +{blocks}",
        "refused": "{r} refused: request {r!r} needs {needed} more blocks for {n}"
        " tokens, {free} are free",
        "finished": "{r} finishes",
    }[happened["kind"]].format(**happened)


def encode(trace=TRACE) -> str:
    """A trace in the words of the block table component's link: A:20 (A holds 20
    tokens), A:free (A finishes)."""
    return ",".join(f"{r}:{'free' if n is None else n}" for r, n in trace)


def state(pool: BlockPool) -> list[str]:
    tables = "  ".join(f"{r}={pool.block_table(r)}" for r in pool.requests)
    used = pool.num_gpu_blocks - 1 - pool.num_free_blocks
    usage = f"usage {used}/{pool.num_gpu_blocks - 1} = {pool.usage:.4f}"
    # A block that keeps a prefix-cache hash while it waits in the queue is marked #.
    free = ", ".join(f"{b}#" if b in pool.hashed else str(b) for b in pool.free_queue)
    return [f"   tables {tables or '-'}", f"   free   [{free}]  {usage}"]


if __name__ == "__main__":
    print("prefix caching on (enable_caching=True), vLLM's default")
    for step, pool, happened in run():
        print(f"{step}. {said(happened)}")
        print("\n".join(state(pool)))
    print(f"slot of D's token 99: {pool.slot('D', 99)}")
    print("the same steps 5 and 6 without prefix caching (enable_caching=False):")
    for step, pool, happened in run(enable_caching=False):
        if step in (5, 6):
            print(f"{step}. {said(happened)}")
            print("\n".join(state(pool)))
