"""A worked trace: four requests arrive, grow and finish in a pool of 10 blocks.

After each step it prints what the step added, every block table, the free queue (head
first) and the usage vLLM would export. It runs with prefix caching on, vLLM 0.26.0's
default for Qwen2.5 (full blocks keep a hash and are freed to the queue's tail), then
replays steps 5 and 6 with it off.
"""

from block_pool import BlockPool, blocks_for

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


def run(trace=TRACE, num_gpu_blocks=NUM_GPU_BLOCKS, enable_caching=True):
    """Replay a trace; yields (step, pool, what happened) after each step. Prefix
    caching is on by default, as in vLLM."""
    pool = BlockPool(num_gpu_blocks, enable_caching=enable_caching)
    for step, (request, tokens) in enumerate(trace, 1):
        if tokens is None:
            pool.free(request)
            yield step, pool, f"{request} finishes"
            continue
        held = len(pool.block_table(request)) if request in pool.requests else 0
        added = pool.allocate(request, tokens)
        if added is None:  # too few free blocks: nothing changed
            needed = f"{blocks_for(tokens) - held} more blocks for {tokens} tokens"
            free = f"{pool.num_free_blocks} are free"
            yield (
                step,
                pool,
                f"{request} refused: request {request!r} needs {needed}, {free}",
            )
        else:
            yield step, pool, f"{request} holds {tokens} tokens: +{added}"


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
    pool = BlockPool(NUM_GPU_BLOCKS, enable_caching=True)
    print("prefix caching on (enable_caching=True), vLLM's default")
    print(f"0. start: block {pool.null_block} is the null block")
    print("\n".join(state(pool)))
    for step, pool, happened in run():
        print(f"{step}. {happened}")
        print("\n".join(state(pool)))
    print(f"slot of D's token 99: {pool.slot('D', 99)}")
    print("the same steps 5 and 6 without prefix caching (enable_caching=False):")
    for step, pool, happened in run(enable_caching=False):
        if step in (5, 6):
            print(f"{step}. {happened}")
            print("\n".join(state(pool)))
