"""The mental model's picture: the worked trace of block_trace.py after step 6, with
prefix caching on (vLLM's default): a free block that keeps its hash is marked #."""

from block_pool import BlockPool
from block_trace import run


def picture(pool: BlockPool, per_row: int = 5) -> str:
    """Each request's logical blocks, the physical block its block table maps each
    one to, and what every physical block holds."""
    owner = {pool.null_block: "null"}
    left = []
    for request in pool.requests:
        table, held = pool.block_table(request), pool.num_tokens(request)
        left.append(f"request {request} ({held} tokens)")
        for index, block in enumerate(table):
            owner[block] = f"{request} {index}"
            first = index * pool.block_size
            last = min(held, first + pool.block_size) - 1
            tokens = (
                f"tokens {first:>2}-{last:<3}" if last > first else f"token  {first:<6}"
            )
            left.append(f"  logical {index}: {tokens} -> block {block}")
        left.append("")
    rule = "+" + "------+" * per_row
    right = []
    for start in range(0, pool.num_gpu_blocks, per_row):
        ids = range(start, min(start + per_row, pool.num_gpu_blocks))
        right += [rule, "|" + "".join(f"{i:^6}|" for i in ids)]
        free = {i: "free#" if i in pool.hashed else "free" for i in ids}
        right.append("|" + "".join(f"{owner.get(i, free[i]):^6}|" for i in ids))
    right.append(rule)
    lines = [f"{'':42}physical blocks (each spans all layers)"]
    for row in range(max(len(left), len(right))):
        text = left[row] if row < len(left) else ""
        lines.append(f"{text:<42}{right[row] if row < len(right) else ''}".rstrip())
    queue = ", ".join(f"{b}#" if b in pool.hashed else str(b) for b in pool.free_queue)
    lines.append(f"free queue, head first: [{queue}]")
    request = pool.requests[0]
    last = pool.num_tokens(request) - 1
    block, offset = (
        pool.block_table(request)[last // pool.block_size],
        last % pool.block_size,
    )
    slot = pool.slot(request, last)
    where = f"block {block} * {pool.block_size} + {offset}"
    lines.append(f"slot of {request}'s token {last}: {where} = {slot}")
    return "\n".join(lines)


if __name__ == "__main__":
    pool = next(pool for step, pool, _ in run() if step == 6)
    print(picture(pool))
