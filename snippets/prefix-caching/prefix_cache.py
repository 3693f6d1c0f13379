"""vLLM 0.26.0's automatic prefix caching in the standard library.

What vLLM does (vllm/v1/core/kv_cache_manager.py: KVCacheManager, with
enable_caching): every full block gets a hash chained on its parent's; a new request
reuses the longest run of cached blocks from its first token; a block counts the
requests that use it, and a finished request's blocks stay cached in the free queue
until they are handed out again.

PrefixCache is lesson 2's block pool with those rules: it answers the calls of lesson
3's scheduler (get_computed_blocks, allocate_slots, free, cache_blocks) as vLLM's
KVCacheManager does with prefix caching on, and run() takes one request through them
at a time, as LLM.generate does for one prompt after another. Every rule names the
vLLM function it mirrors (vllm/<path>: <function>, read from the 0.26.0 wheel). As
for Qwen2.5-7B: one full-attention KV cache group, block size 16, no LoRA, no
multimodal inputs, no KV connector.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Sequence
from dataclasses import dataclass

from block_pool import BLOCK_SIZE, BlockPool, blocks_for

# The root of every chain: with PYTHONHASHSEED set, vLLM hashes its value; unset, it
# draws 32 random bytes, so hashes differ from one process to the next
# (vllm/v1/core/kv_cache_utils.py: init_none_hash).
PYTHONHASHSEED = "0"


def sha256(value) -> bytes:
    """prefix_caching_hash_algo "sha256", the default (vllm/config/cache.py:
    CacheConfig): SHA-256 of the pickled value (vllm/utils/hashing.py: sha256)."""
    return hashlib.sha256(
        pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    ).digest()


NONE_HASH = sha256(PYTHONHASHSEED)


def block_hashes(
    tokens: Sequence[int], block_size: int = BLOCK_SIZE, cache_salt: str | None = None
) -> list[bytes]:
    """One hash per full block of tokens; a partly filled last block gets none.

    Each hash covers the parent block's hash, the block's token ids and its extra
    keys (vllm/v1/core/kv_cache_utils.py: hash_block_tokens, for each full block in
    get_request_block_hasher). The only extra key here is cache_salt, and it enters
    the first block only (vllm/v1/core/kv_cache_utils.py:
    generate_block_hash_extra_keys); the chain carries it to every later block.
    """
    if block_size < 1:
        raise ValueError(
            f"block_size must be an integer of at least 1, got {block_size}"
        )
    hashes, parent = [], NONE_HASH
    for start in range(0, len(tokens) - block_size + 1, block_size):
        extra_keys = (cache_salt,) if start == 0 and cache_salt else None
        parent = sha256((parent, tuple(tokens[start : start + block_size]), extra_keys))
        hashes.append(parent)
    return hashes


@dataclass(frozen=True)
class Admission:
    """What one run did: its hit, its block table, and the cached blocks it evicted."""

    request_id: str
    prompt_tokens: int
    cached_tokens: int  # RequestOutput.num_cached_tokens
    block_table: tuple[int, ...]
    hit_blocks: tuple[int, ...]
    new_blocks: tuple[int, ...]
    evicted: tuple[int, ...]  # handed out again, their hashes dropped


def _tokens(name: str, tokens) -> list[int]:
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise ValueError(f"{name} must be a list of token ids, got {tokens!r}")
    if not tokens:
        raise ValueError(f"{name} must hold at least one token id, got none")
    for token in tokens:
        if type(token) is not int or token < 0:
            raise ValueError(
                f"{name} holds {token!r}: token ids are integers from 0 up"
            )
    return list(tokens)


class PrefixCache(BlockPool):
    """A block pool with prefix caching on, as vLLM 0.26.0 runs by default
    (vllm/config/cache.py: CacheConfig.enable_prefix_caching)."""

    def __init__(self, num_gpu_blocks: int, block_size: int = BLOCK_SIZE):
        super().__init__(num_gpu_blocks, block_size)
        # hash -> the blocks cached under it, first inserted first: vLLM does not
        # de-duplicate, so a recomputed block can hold the same hash as an older one
        # (vllm/v1/core/block_pool.py: BlockHashToBlockMap).
        self._cached: dict[bytes, list[int]] = {}
        self._hash_of: dict[int, bytes] = {}  # KVCacheBlock.block_hash
        # How many requests use each block that is not free (KVCacheBlock.ref_cnt).
        self._ref_cnt: dict[int, int] = {}
        # How many of a request's first blocks already have their hash, num_cached_block
        # (vllm/v1/core/single_type_kv_cache_manager.py: SingleTypeKVCacheManager).
        self._num_cached_block: dict[str, int] = {}
        self._stand_in = 0
        # PrefixCacheStats, in tokens; a request looked up again after a preemption
        # counts apart (vllm/v1/metrics/stats.py: PrefixCacheStats.record).
        self.hits = self.queries = 0
        self.preempted_hits = self.preempted_queries = 0
        self.history: list[Admission] = []

    def lookup(self, prompt: Sequence[int], cache_salt: str | None = None):
        """The cached blocks a new request with this prompt would reuse, and how many
        of its tokens they cover."""
        prompt = _tokens("prompt", prompt)
        if cache_salt is not None and (
            not isinstance(cache_salt, str) or not cache_salt
        ):
            raise ValueError(
                f"cache_salt must be a non-empty string, got {cache_salt!r}"
            )
        return self._hit(prompt, cache_salt)

    def _hit(self, tokens: Sequence[int], cache_salt: str | None):
        # The last prompt token is always recomputed, to get its logits:
        # max_cache_hit_length = num_tokens - 1
        # (vllm/v1/core/kv_cache_manager.py: KVCacheManager.get_computed_blocks).
        hashes = block_hashes(tokens, self.block_size, cache_salt)
        hashes = hashes[: (len(tokens) - 1) // self.block_size]
        # The longest run of cached blocks from the first one: a miss ends it, since
        # every later hash chains on the missing one
        # (vllm/v1/core/single_type_kv_cache_manager.py:
        # FullAttentionManager.find_longest_cache_hit, with
        # vllm/v1/core/block_pool.py: BlockPool.get_cached_block).
        hit = []
        for block_hash in hashes:
            if block_hash not in self._cached:
                break
            hit.append(self._cached[block_hash][0])
        return hit, len(hit) * self.block_size

    def get_computed_blocks(
        self,
        tokens: Sequence[int],
        cache_salt: str | None = None,
        preempted: bool = False,
    ):
        """lookup, counted in the stats as vLLM counts every lookup, also one whose
        request then finds too few free blocks and is looked up again the next step
        (vllm/v1/core/kv_cache_manager.py: KVCacheManager.get_computed_blocks).
        tokens: all the request has, its output tokens too after a preemption."""
        hit, num_tokens = self._hit(tokens, cache_salt)
        if preempted:
            self.preempted_queries += len(tokens)
            self.preempted_hits += num_tokens
        else:
            self.queries += len(tokens)
            self.hits += num_tokens
        return hit, num_tokens

    def blocks_to_allocate(
        self, request_id: str, num_tokens: int, hit: Sequence[int] = ()
    ) -> int:
        """Free blocks a request takes to hold num_tokens tokens: new blocks, plus
        the hit blocks that sit in the free queue, which a hit takes out of it
        (vllm/v1/core/single_type_kv_cache_manager.py:
        SingleTypeKVCacheManager.get_num_blocks_to_allocate)."""
        held = len(self._tables.get(request_id, ()))
        new = max(blocks_for(num_tokens, self.block_size) - held - len(hit), 0)
        return new + sum(1 for block in hit if block not in self._ref_cnt)

    def allocate_slots(
        self,
        request_id: str,
        tokens: Sequence[int],
        num_computed_tokens: int,
        num_new_tokens: int,
        hit: Sequence[int] = (),
        full_sequence_must_fit: bool = False,
        cache_salt: str | None = None,
    ) -> list[int] | None:
        """Give the request blocks for its computed tokens, its hit and
        num_new_tokens more; None, changing nothing, if too few blocks are free
        (vllm/v1/core/kv_cache_manager.py: KVCacheManager.allocate_slots). tokens:
        the request's tokens known so far, prompt and output."""
        hit_tokens = len(hit) * self.block_size
        computed = num_computed_tokens + hit_tokens
        # A waiting request must fit whole, hit included (scheduler_reserve_full_isl).
        if (
            full_sequence_must_fit
            and self.blocks_to_allocate(request_id, len(tokens), hit)
            > self.num_free_blocks
        ):
            return None
        needed = self.blocks_to_allocate(request_id, computed + num_new_tokens, hit)
        if needed > self.num_free_blocks:
            return None
        table = self._tables.setdefault(request_id, [])
        if hit:
            self.touch(hit)
            table.extend(hit)
            self._num_cached_block[request_id] = len(hit)
        new = self._take(
            blocks_for(computed + num_new_tokens, self.block_size) - len(table)
        )
        table.extend(new)
        self._tokens[request_id] = computed + num_new_tokens
        # Only tokens the request already has are cached, never ones still to be
        # sampled: min(computed + new, request.num_tokens).
        self.cache_blocks(
            request_id, tokens, min(computed + num_new_tokens, len(tokens)), cache_salt
        )
        return new

    def allocate(self, request_id: str, num_tokens: int) -> list[int] | None:
        """Lesson 2's allocate, with reference counts: new blocks, one user each, no
        hash; None, changing nothing, if too few are free."""
        held = self._tokens.get(request_id, 0)
        if num_tokens < held:
            raise ValueError(f"request {request_id!r} holds {held} tokens, not fewer")
        return self.allocate_slots(request_id, (), held, num_tokens - held)

    def touch(self, blocks: Sequence[int]) -> None:
        """A hit takes a free block out of the free queue, and counts one more user
        (vllm/v1/core/block_pool.py: BlockPool.touch)."""
        for block in blocks:
            if block not in self._ref_cnt:
                self._free.remove(block)
            self._ref_cnt[block] = self._ref_cnt.get(block, 0) + 1

    def _take(self, count: int) -> list[int]:
        """New blocks from the head of the free queue; one that still had a hash
        loses it (vllm/v1/core/block_pool.py: BlockPool.get_new_blocks, with
        BlockPool._maybe_evict_cached_block)."""
        new = [self._free.popleft() for _ in range(count)]
        for block in new:
            self._ref_cnt[block] = 1
            block_hash = self._hash_of.pop(block, None)
            if block_hash is not None:
                self._cached[block_hash].remove(block)
                if not self._cached[block_hash]:
                    del self._cached[block_hash]
        return new

    def cache_blocks(
        self,
        request_id: str,
        tokens: Sequence[int],
        num_tokens: int,
        cache_salt: str | None = None,
    ) -> None:
        """Hash the request's full blocks up to num_tokens that have no hash yet,
        prompt and output alike (vllm/v1/core/single_type_kv_cache_manager.py:
        SingleTypeKVCacheManager.cache_blocks, with
        vllm/v1/core/block_pool.py: BlockPool.cache_full_blocks)."""
        done = self._num_cached_block.get(request_id, 0)
        full = num_tokens // self.block_size
        if full <= done:
            return
        table = self._tables[request_id]
        hashes = block_hashes(
            tokens[: full * self.block_size], self.block_size, cache_salt
        )
        for block, block_hash in zip(table[done:full], hashes[done:full]):
            self._hash_of[block] = block_hash
            self._cached.setdefault(block_hash, []).append(block)
        self._num_cached_block[request_id] = full

    def free(self, request_id: str) -> None:
        """The request finished or was preempted: each of its blocks has one user
        fewer, last block first; a block no one uses any more goes back to the free
        queue, to its head without a hash (reused first), to its tail with one
        (cached longest) (vllm/v1/core/single_type_kv_cache_manager.py:
        SingleTypeKVCacheManager.free, with vllm/v1/core/block_pool.py:
        BlockPool.free_blocks)."""
        table = self._table_of(request_id)
        del self._tables[request_id], self._tokens[request_id]
        self._num_cached_block.pop(request_id, None)
        unhashed, hashed = [], []
        for block in reversed(table):
            self._ref_cnt[block] -= 1
            if not self._ref_cnt[block]:
                del self._ref_cnt[block]
                (hashed if block in self._hash_of else unhashed).append(block)
        self._free.extendleft(reversed(unhashed))
        self._free.extend(hashed)

    def ref_cnt(self, block: int) -> int:
        """How many requests use the block (0: it is free)."""
        return self._ref_cnt.get(block, 0)

    def run(
        self,
        request_id: str,
        prompt: list[int],
        max_tokens: int = 1,
        *,
        output: Sequence[int] | None = None,
        cache_salt: str | None = None,
    ) -> int | None:
        """Admit a request, compute it and finish it; return how many prompt tokens
        came from the cache (what vLLM reports as RequestOutput.num_cached_tokens),
        or None, changing nothing, if its blocks are more than the free ones.

        output: the token ids the model generates, if later prompts are to hit on
        them (a conversation sends its answers back); by default they are tokens no
        prompt contains. cache_salt: the request's cache_salt.
        """
        if not isinstance(request_id, str) or not request_id:
            raise ValueError(
                f"request_id must be a non-empty string, got {request_id!r}"
            )
        if request_id in self._tables:
            raise ValueError(f"request {request_id!r} already holds blocks")
        prompt = _tokens("prompt", prompt)
        if type(max_tokens) is not int or max_tokens < 1:
            raise ValueError(
                f"max_tokens must be an integer of at least 1, got {max_tokens!r}"
            )
        if output is None:
            self._stand_in -= max_tokens
            output = range(self._stand_in, self._stand_in + max_tokens)
        elif len(_tokens("output", output)) != max_tokens:
            raise ValueError(
                f"output holds {len(output)} token ids, max_tokens is {max_tokens}"
            )
        # 1. The cached blocks it starts from.
        hit, cached_tokens = self.lookup(prompt, cache_salt)
        # 2. Refused if its blocks are more than the free ones. The last sampled token
        # is never fed back, so its K and V are never computed.
        computed = len(prompt) + max_tokens - 1
        if self.blocks_to_allocate(request_id, computed, hit) > self.num_free_blocks:
            return None
        # 3. The lookup counts in the stats once the request fits.
        self.get_computed_blocks(prompt, cache_salt)
        # 4. Blocks for all it computes, and a hash for each full one.
        cached_before = set(self._hash_of)
        tokens = (prompt + list(output))[:computed]
        new = self.allocate_slots(
            request_id, tokens, 0, computed - cached_tokens, hit, cache_salt=cache_salt
        )
        # 5. What it did; then it finishes and its blocks go back.
        self.history.append(
            Admission(
                request_id,
                len(prompt),
                cached_tokens,
                tuple(self._tables[request_id]),
                tuple(hit),
                tuple(new),
                tuple(block for block in new if block in cached_before),
            )
        )
        self.free(request_id)
        return cached_tokens

    def reset_prefix_cache(self) -> bool:
        """Forget every hash; the free queue keeps its order. Refused (False) while
        a request holds blocks (vllm/v1/core/block_pool.py:
        BlockPool.reset_prefix_cache). The hit and query counters go on: they count
        what happened."""
        if self._tables:
            return False
        self._cached.clear()
        self._hash_of.clear()
        return True

    @property
    def hashed(self) -> set[int]:
        return set(self._hash_of)

    @property
    def cached_blocks(self) -> dict[int, str]:
        """Cached blocks and the first 8 hex digits of their hash."""
        return {block: h.hex()[:8] for block, h in sorted(self._hash_of.items())}

    @property
    def hit_rate(self) -> float:
        """Token-weighted: hits over queries (vllm/v1/metrics/stats.py)."""
        if not self.queries:
            raise ValueError("no request has run yet: the hit rate is 0 of 0 tokens")
        return self.hits / self.queries


if __name__ == "__main__":
    cache = PrefixCache(num_gpu_blocks=10)  # block 0 is the null block: 9 to hand out
    prompt = list(range(1000, 1040))  # 40 token ids: 2 full blocks and 8 tokens
    for request_id in ("A", "B"):
        cached = cache.run(request_id, prompt)
        done = cache.history[-1]
        print(
            f"{request_id}: {cached} of {done.prompt_tokens} prompt tokens cached,"
            f" block table {list(done.block_table)}, hit {list(done.hit_blocks)}"
        )
    print(f"cached blocks and hashes: {cache.cached_blocks}")
    print(f"free queue {cache.free_queue}")
    print(f"hits {cache.hits} of {cache.queries} tokens: {cache.hit_rate:.1%}")
