"""vLLM 0.26.0's automatic prefix caching in the standard library, on lesson 2's
block pool: full blocks get a hash chained on their parent's, a new request reuses
the longest run of cached blocks from its first token, and finished blocks stay
cached in the free queue until they are handed out again.

Every rule names the vLLM function it mirrors (vllm/<path>: <function>, read from
the 0.26.0 wheel). As for Qwen2.5-7B: one full-attention KV cache group, block size
16, no LoRA, no multimodal inputs, no KV connector. Requests run one at a time, as
with LLM.generate on one prompt after another: each is admitted, computed and
finished before the next, so a block a request hits is always a free one
(ref_cnt 0) that the request takes out of the free queue.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Sequence
from dataclasses import dataclass

from block_pool import BLOCK_SIZE, BlockPool, NoFreeBlocks, _whole, blocks_for

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
    _whole("block_size", block_size, 1)
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
        self._stand_in = 0
        self.hits = self.queries = 0  # PrefixCacheStats, in tokens
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
        # The last prompt token is always recomputed, to get its logits:
        # max_cache_hit_length = num_tokens - 1
        # (vllm/v1/core/kv_cache_manager.py: KVCacheManager.get_computed_blocks).
        hashes = block_hashes(prompt, self.block_size, cache_salt)
        hashes = hashes[: (len(prompt) - 1) // self.block_size]
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

    def run(
        self,
        request_id: str,
        prompt: list[int],
        max_tokens: int = 1,
        *,
        output: Sequence[int] | None = None,
        cache_salt: str | None = None,
    ) -> int:
        """Admit a request, compute it and finish it; return how many prompt tokens
        came from the cache (what vLLM reports as RequestOutput.num_cached_tokens).

        output: the token ids the model generates, if later prompts are to hit on
        them (a conversation sends its answers back); by default they are tokens no
        prompt contains. cache_salt: the request's cache_salt.
        """
        if not isinstance(request_id, str) or not request_id:
            raise ValueError(
                f"request_id must be a non-empty string, got {request_id!r}"
            )
        prompt = _tokens("prompt", prompt)
        _whole("max_tokens", max_tokens, 1)
        if output is None:
            self._stand_in -= max_tokens
            output = range(self._stand_in, self._stand_in + max_tokens)
        elif len(_tokens("output", output)) != max_tokens:
            raise ValueError(
                f"output holds {len(output)} token ids, max_tokens is {max_tokens}"
            )
        hit, cached_tokens = self.lookup(prompt, cache_salt)
        # The last sampled token is never fed back, so its K and V are never computed.
        computed = len(prompt) + max_tokens - 1
        # New blocks, plus the hit blocks: touching one takes it out of the free
        # queue (vllm/v1/core/single_type_kv_cache_manager.py:
        # SingleTypeKVCacheManager.get_num_blocks_to_allocate).
        needed = blocks_for(computed, self.block_size)
        if needed > self.num_free_blocks:
            raise NoFreeBlocks(
                f"request {request_id!r} needs {needed} blocks for its {computed}"
                f" tokens, the pool has {self.num_free_blocks} free"
            )
        # Queries and hits are counted in tokens, per new request
        # (vllm/v1/metrics/stats.py: PrefixCacheStats.record).
        self.queries += len(prompt)
        self.hits += cached_tokens
        for block in hit:  # vllm/v1/core/block_pool.py: BlockPool.touch
            self._free.remove(block)
        self._tables[request_id], self._tokens[request_id] = hit, cached_tokens
        new = super().allocate(request_id, computed)
        # A block handed out loses its hash: vllm/v1/core/block_pool.py:
        # BlockPool.get_new_blocks, with BlockPool._maybe_evict_cached_block.
        evicted = [block for block in new if block in self._hash_of]
        for block in evicted:
            block_hash = self._hash_of.pop(block)
            self._cached[block_hash].remove(block)
            if not self._cached[block_hash]:
                del self._cached[block_hash]
        # Every full block of computed tokens gets its hash: prompt and output alike
        # (vllm/v1/core/kv_cache_manager.py: KVCacheManager.allocate_slots caches up
        # to the computed tokens; vllm/v1/core/block_pool.py:
        # BlockPool.cache_full_blocks).
        tokens = prompt + list(output)
        table = self._tables[request_id]
        hashes = block_hashes(tokens[:computed], self.block_size, cache_salt)
        for block, block_hash in zip(table[len(hit) :], hashes[len(hit) :]):
            self._hash_of[block] = block_hash
            self._cached.setdefault(block_hash, []).append(block)
            self._hashed.add(block)
        self.history.append(
            Admission(
                request_id,
                len(prompt),
                cached_tokens,
                tuple(table),
                tuple(hit),
                tuple(new),
                tuple(evicted),
            )
        )
        # Finished: its blocks go back, last first; hashed ones to the tail of the
        # free queue, to stay cached longest (lesson 2's BlockPool.free, as
        # vllm/v1/core/block_pool.py: BlockPool.free_blocks).
        self.free(request_id)
        return cached_tokens

    def reset_prefix_cache(self) -> bool:
        """Forget every hash; the free queue keeps its order
        (vllm/v1/core/block_pool.py: BlockPool.reset_prefix_cache). The hit and query
        counters go on: they count what happened."""
        self._cached.clear()
        self._hash_of.clear()
        self._hashed.clear()
        return True

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
