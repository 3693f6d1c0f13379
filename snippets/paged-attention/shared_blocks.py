"""Reference counts: parallel sampling (n=3) of one 40-token prompt, in plain dicts.

vLLM 0.26.0 fans a request with n=3 out into three child requests with the same prompt
(vllm/v1/engine/llm_engine.py: LLMEngine.add_request, ParentRequest.get_child_info);
prefix caching lets the second and third hit the first child's full prompt blocks.
Every KV block carries ref_cnt (vllm/v1/core/kv_cache_utils.py: KVCacheBlock):
  - a new block starts at 1 (vllm/v1/core/block_pool.py: BlockPool.get_new_blocks);
  - a hit adds 1, and takes the block out of the free queue if it sat there at 0
    (BlockPool.touch);
  - freeing subtracts 1; only a block that reaches 0 goes back to the free queue, to
    the tail if it has a prefix-cache hash, to the head if not (BlockPool.free_blocks).
Lesson 5's simulator (prefix_cache.py) runs the same rules on any workload.
"""

BLOCK_SIZE = 16
PROMPT = 40  # tokens: 2 full blocks and 8 tokens
NEW_TOKENS = 4  # each child generates 4 tokens: 44 tokens, still 3 blocks

ref_cnt = {block: 0 for block in range(1, 10)}  # block 0 is the null block
free_queue = list(ref_cnt)  # head first
hashed = set()  # full blocks that carry a prefix-cache hash
cache = {}  # block index in the prompt -> block holding it (hash -> block in vLLM)
tables = {}


def show(what: str) -> None:
    print(what)
    for child, table in tables.items():
        counts = ", ".join(f"{b}:{ref_cnt[b]}" for b in table)
        print(f"   {child} table {table}  ref_cnt {counts}")
    marked = ", ".join(f"{b}#" if b in hashed else str(b) for b in free_queue)
    print(f"   free [{marked}]")


def admit(child: str) -> None:
    # A hit stops before the last prompt token, whose logits are needed:
    # vllm/v1/core/kv_cache_manager.py: KVCacheManager.get_computed_blocks
    hit = [cache[i] for i in range((PROMPT - 1) // BLOCK_SIZE) if i in cache]
    for block in hit:  # BlockPool.touch
        if ref_cnt[block] == 0:
            free_queue.remove(block)
        ref_cnt[block] += 1
    need = -(-PROMPT // BLOCK_SIZE) - len(hit)
    new, free_queue[:need] = free_queue[:need], []  # BlockPool.get_new_blocks
    for block in new:
        ref_cnt[block] = 1
    tables[child] = hit + new
    # Full prompt blocks get their hash when allocated (BlockPool.cache_full_blocks).
    for i, block in enumerate(tables[child][: PROMPT // BLOCK_SIZE]):
        cache.setdefault(i, block)
        hashed.add(block)
    computed = PROMPT - len(hit) * BLOCK_SIZE
    show(f"{child} arrives: hits {len(hit)} blocks, computes {computed} tokens")


def finish(child: str) -> None:
    # Last block first (SingleTypeKVCacheManager.free), then BlockPool.free_blocks.
    to_head, to_tail = [], []
    for block in reversed(tables.pop(child)):
        ref_cnt[block] -= 1
        if ref_cnt[block] == 0:
            (to_tail if block in hashed else to_head).append(block)
    free_queue[:0] = to_head  # prepend_n keeps the order: the first freed at the head
    free_queue.extend(to_tail)
    show(f"{child} finishes ({PROMPT + NEW_TOKENS} tokens)")


if __name__ == "__main__":
    print(f"n=3 on a {PROMPT}-token prompt, {BLOCK_SIZE}-token blocks")
    for child in ("0_req", "1_req", "2_req"):
        admit(child)
    held = len({b for table in tables.values() for b in table})
    print(f"3 children hold {held} blocks; unshared they would hold {3 * 3}")
    for child in ("0_req", "1_req", "2_req"):
        finish(child)
