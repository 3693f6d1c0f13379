"""vLLM 0.26.0's KV cache block pool in the standard library: blocks, block tables, the
free queue, the null block, usage and slot mapping.

Every rule names the vLLM function it mirrors (vllm/<path>: <function>, read from the
0.26.0 wheel). It models one full-attention KV cache group, as for Qwen2.5-7B, and
requests that share no prefix, so a block belongs to one request at a time.
"""

from collections import deque

# Tokens per block: vllm/config/cache.py: CacheConfig.DEFAULT_BLOCK_SIZE
BLOCK_SIZE = 16


def _whole(name: str, value, least: int) -> int:
    if type(value) is not int or value < least:
        raise ValueError(
            f"{name} must be an integer of at least {least}, got {value!r}"
        )
    return value


def blocks_for(num_tokens: int, block_size: int = BLOCK_SIZE) -> int:
    """Blocks that hold num_tokens tokens: whole blocks, rounded up, as cdiv does in
    vllm/v1/core/single_type_kv_cache_manager.py:
    SingleTypeKVCacheManager.allocate_new_blocks."""
    _whole("num_tokens", num_tokens, 0)
    return -(-num_tokens // _whole("block_size", block_size, 1))


def slot_of(block_table: list[int], position: int, block_size: int = BLOCK_SIZE) -> int:
    """Where a token's K and V are written in the KV cache tensor: its block's id times
    the block size, plus its offset in the block
    (vllm/v1/worker/gpu/block_table.py: _compute_slot_mappings_kernel)."""
    _whole("position", position, 0)
    if position >= len(block_table) * block_size:
        raise ValueError(
            f"position {position} is past the {len(block_table)} blocks of this block"
            f" table ({len(block_table) * block_size} slots)"
        )
    return block_table[position // block_size] * block_size + position % block_size


class BlockPool:
    """num_gpu_blocks blocks of block_size tokens; block 0 is the null block.

    enable_caching=True adds prefix caching's effect on the free queue: every full
    block gets a hash (vllm/v1/core/block_pool.py: BlockPool.cache_full_blocks), so a
    finished request's full blocks go to the tail of the queue, not to its head.
    """

    def __init__(
        self,
        num_gpu_blocks: int,
        block_size: int = BLOCK_SIZE,
        enable_caching: bool = False,
    ):
        self.num_gpu_blocks = _whole("num_gpu_blocks", num_gpu_blocks, 1)
        self.block_size = _whole("block_size", block_size, 1)
        self.enable_caching = bool(enable_caching)
        # The free queue starts ordered by block id
        # (vllm/v1/core/kv_cache_utils.py: FreeKVCacheBlockQueue.__init__).
        self._free = deque(range(num_gpu_blocks))
        # Block 0 is taken at start as the null block, a placeholder that is never
        # handed out or freed (vllm/v1/core/block_pool.py: BlockPool.__init__).
        self.null_block = self._free.popleft()
        self._tables: dict[
            str, list[int]
        ] = {}  # SingleTypeKVCacheManager.req_to_blocks
        self._tokens: dict[str, int] = {}
        self._hashed: set[int] = set()  # blocks with a prefix-cache hash

    def _table_of(self, request_id: str) -> list[int]:
        if request_id not in self._tables:
            raise ValueError(f"unknown request {request_id!r}: it holds no blocks")
        return self._tables[request_id]

    def allocate(self, request_id: str, num_tokens: int) -> list[int] | None:
        """Grow the request's block table to hold num_tokens tokens in total; return
        the block ids it added. If too few blocks are free, return None and change
        nothing, as vLLM's KVCacheManager.allocate_slots does: its scheduler then
        keeps the request waiting or preempts another."""
        if not isinstance(request_id, str) or not request_id:
            raise ValueError(
                f"request_id must be a non-empty string, got {request_id!r}"
            )
        _whole("num_tokens", num_tokens, 0)
        held = self._tokens.get(request_id, 0)
        if num_tokens < held:
            raise ValueError(
                f"request {request_id!r} holds {held} tokens: a block table only grows,"
                f" it cannot shrink to {num_tokens}"
            )
        table = self._tables.get(request_id, [])
        # New blocks = blocks needed - blocks held:
        # vllm/v1/core/single_type_kv_cache_manager.py:
        # SingleTypeKVCacheManager.get_num_blocks_to_allocate.
        needed = blocks_for(num_tokens, self.block_size) - len(table)
        if needed > self.num_free_blocks:
            return None
        # Blocks come from the head of the free queue (vllm/v1/core/block_pool.py:
        # BlockPool.get_new_blocks, with FreeKVCacheBlockQueue.popleft_n); a block that
        # still had a hash loses it (BlockPool._maybe_evict_cached_block).
        new = [self._free.popleft() for _ in range(needed)]
        self._hashed.difference_update(new)
        # Appended, never rewritten: block tables are append-only
        # (vllm/v1/worker/gpu/block_table.py: BlockTables.append_block_ids).
        self._tables[request_id] = table + new
        self._tokens[request_id] = num_tokens
        if self.enable_caching:  # full blocks get a hash: BlockPool.cache_full_blocks
            self._hashed.update(
                self._tables[request_id][: num_tokens // self.block_size]
            )
        return new

    def free(self, request_id: str) -> None:
        """The request finished (or was preempted): give all its blocks back."""
        table = self._table_of(request_id)
        del self._tables[request_id], self._tokens[request_id]
        # Last block first: vllm/v1/core/single_type_kv_cache_manager.py:
        # SingleTypeKVCacheManager.free. Blocks without a hash go to
        # the head of the queue, to be reused first, blocks with one to the tail, to
        # stay cached longest: vllm/v1/core/block_pool.py: BlockPool.free_blocks, with
        # FreeKVCacheBlockQueue.prepend_n and append_n.
        ordered = table[::-1]
        unhashed = [block for block in ordered if block not in self._hashed]
        self._free.extendleft(reversed(unhashed))
        self._free.extend(block for block in ordered if block in self._hashed)

    # What lesson 3's scheduler calls: vLLM's KVCacheManager with prefix caching off
    # (vllm/v1/core/kv_cache_manager.py: KVCacheManager). Lesson 5 answers the same
    # calls with prefix caching on.
    hits = queries = 0  # prefix cache lookups, in tokens: none here

    def get_computed_blocks(
        self, tokens: list[int], preempted: bool = False
    ) -> tuple[list[int], int]:
        """The cached blocks a request starts from and the tokens they hold: none
        (KVCacheManager.get_computed_blocks with prefix caching off)."""
        return [], 0

    def allocate_slots(
        self,
        request_id: str,
        tokens: list[int],
        num_computed_tokens: int,
        num_new_tokens: int,
        new_computed_blocks: list[int] = (),
        full_sequence_must_fit: bool = False,
    ) -> list[int] | None:
        """Blocks for the request's computed tokens and num_new_tokens more; None,
        changing nothing, if too few are free (KVCacheManager.allocate_slots, one
        full-attention group, no lookahead, no watermark). tokens: all the request
        has so far; with full_sequence_must_fit (a waiting request, as
        SchedulerConfig.scheduler_reserve_full_isl asks) they must all fit.
        new_computed_blocks, the cached blocks it starts from, are none here."""
        held = len(self._tables.get(request_id, ()))
        whole = blocks_for(len(tokens), self.block_size)
        if full_sequence_must_fit and whole - held > self.num_free_blocks:
            return None
        return self.allocate(request_id, num_computed_tokens + num_new_tokens)

    def cache_blocks(self, request_id: str, tokens: list[int], num_tokens: int):
        """Nothing to cache with prefix caching off (KVCacheManager.cache_blocks)."""

    def block_table(self, request_id: str) -> list[int]:
        return list(self._table_of(request_id))

    def num_tokens(self, request_id: str) -> int:
        self._table_of(request_id)
        return self._tokens[request_id]

    def slot(self, request_id: str, position: int) -> int:
        """The KV cache slot of the request's token at position (0-based)."""
        held = self.num_tokens(request_id)
        if type(position) is not int or not 0 <= position < held:
            raise ValueError(
                f"position must be one of the {held} tokens of request {request_id!r}"
                f" (0 to {held - 1}), got {position!r}"
            )
        return slot_of(self._tables[request_id], position, self.block_size)

    @property
    def requests(self) -> list[str]:
        return list(self._tables)

    @property
    def free_queue(self) -> list[int]:
        """The free blocks, head (handed out next) first."""
        return list(self._free)

    @property
    def hashed(self) -> set[int]:
        return set(self._hashed)

    @property
    def num_free_blocks(self) -> int:  # BlockPool.get_num_free_blocks
        return len(self._free)

    @property
    def usage(self) -> float:
        """What vLLM exports as vllm:kv_cache_usage_perc, from 0 to 1: the null block is
        never counted (vllm/v1/core/block_pool.py: BlockPool.get_usage)."""
        total_gpu_blocks = self.num_gpu_blocks - 1
        if not total_gpu_blocks:
            return 0
        return 1.0 - (self.num_free_blocks / total_gpu_blocks)


if __name__ == "__main__":
    pool = BlockPool(num_gpu_blocks=10)  # block 0 is the null block: 9 to hand out
    print(f"null block {pool.null_block}, free queue {pool.free_queue}")
    for tokens in (20, 33):
        added = pool.allocate("A", tokens)
        print(f"A holds {tokens} tokens: +{added}, block table {pool.block_table('A')}")
    table = pool.block_table("A")
    print(
        f"token 32 of A: slot {pool.slot('A', 32)} = {table[32 // 16]} * 16 + {32 % 16}"
    )
    used = pool.num_gpu_blocks - 1 - pool.num_free_blocks
    print(f"usage {pool.usage:.4f}: {used} of {pool.num_gpu_blocks - 1} blocks in use")
    pool.free("A")
    print(f"A finished: free queue {pool.free_queue}")
