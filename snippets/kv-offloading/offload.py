"""vLLM 0.26.0's CPU tier for the KV cache in the standard library: the scheduler-side
manager of `--kv-offloading-size` (CPUOffloadingManager) with its two eviction
policies, LRU and ARC, and the way the scheduler side of OffloadingConnector drives it
for one request after another, on top of lesson 5's GPU prefix cache.

Every rule names the vLLM function it mirrors (vllm/<path>: <function>, read from the
0.26.0 wheel). As for Qwen2.5-7B: one full-attention KV cache group, block size 16,
one offloaded block per GPU block (blocks_per_chunk 1, the default), store_threshold 0
(every block is stored), prompt blocks only (offload_prompt_only, the default).
Keys are the blocks' hashes: vLLM appends the group index (0 here) to each
(vllm/v1/kv_offload/base.py: make_offload_key), which changes no decision.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from block_pool import blocks_for
from prefix_cache import PrefixCache, block_hashes

GIB = 1024**3
HIT, HIT_PENDING, MISS = "HIT", "HIT_PENDING", "MISS"  # LookupResult
MEDIUM = "CPU"  # the events' medium (vllm/distributed/kv_events.py: MEDIUM_CPU)


def cpu_blocks(offloading_size_gib: float, bytes_per_block: int) -> int:
    """How many blocks `--kv-offloading-size` GiB hold: vLLM turns the size into
    cpu_bytes_to_use = size * 2**30 (vllm/config/vllm.py:
    VllmConfig._post_init_kv_transfer_config) and divides it by one block's bytes
    over all layers (vllm/v1/kv_offload/cpu/spec.py: CPUOffloadingSpec.__init__, one
    worker, one block per chunk)."""
    if isinstance(offloading_size_gib, bool) or not isinstance(
        offloading_size_gib, int | float
    ):
        raise ValueError(f"the size is a number of GiB, got {offloading_size_gib!r}")
    if offloading_size_gib <= 0:
        raise ValueError(f"the size must be positive, got {offloading_size_gib}")
    if type(bytes_per_block) is not int or bytes_per_block < 1:
        raise ValueError(
            f"bytes_per_block must be a positive integer: {bytes_per_block!r}"
        )
    return int(offloading_size_gib * GIB) // bytes_per_block


class BlockStatus:
    """One CPU block: ref_cnt -1 while its store is in flight (not readable), then
    the number of loads reading it (vllm/v1/kv_offload/cpu/policies/base.py:
    BlockStatus)."""

    def __init__(self, block_id: int):
        self.ref_cnt = -1
        self.block_id = block_id

    @property
    def is_ready(self) -> bool:
        return self.ref_cnt >= 0


class LRUPolicy:
    """vllm/v1/kv_offload/cpu/policies/lru.py: LRUCachePolicy. A block is used when
    it is stored, when a load of it completes, and when it is touched; the blocks no
    transfer uses wait in an ordered list, least recently used first."""

    def __init__(self, capacity: int):
        self.blocks: dict[bytes, BlockStatus] = {}
        self.evictable: OrderedDict[bytes, None] = OrderedDict()

    def get(self, key: bytes) -> BlockStatus | None:
        return self.blocks.get(key)

    def insert(self, key: bytes, block: BlockStatus) -> None:
        self.blocks[key] = block

    def remove(self, key: bytes) -> None:
        del self.blocks[key]
        self.evictable.pop(key, None)

    def touch(self, keys: Sequence[bytes]) -> None:
        # Last key first, so that a request's first block ends most recent: a prefix
        # outlives its tail. Blocks in a transfer are left alone.
        for key in reversed(keys):
            if key in self.evictable:
                self.evictable.move_to_end(key)

    def evict(self, n: int, protected: set[bytes]) -> list[tuple] | None:
        """(key, block) of the n least recently used idle blocks outside
        `protected`, or None (and no change) if there are not n of them."""
        chosen = [key for key in self.evictable if key not in protected][:n]
        if len(chosen) < n:
            return None
        for key in chosen:
            del self.evictable[key]
        return [(key, self.blocks.pop(key)) for key in chosen]

    def mark_evictable(self, key: bytes) -> None:  # ref_cnt became 0
        self.evictable[key] = None

    def mark_non_evictable(self, key: bytes) -> None:  # ref_cnt left 0
        del self.evictable[key]


class ARCPolicy:
    """vllm/v1/kv_offload/cpu/policies/arc.py: ARCCachePolicy. T1 holds blocks used
    once, T2 blocks used again; B1 and B2 remember the keys evicted from each
    (ghosts, no data). A touch of a ghost moves the target size of T1: up for a B1
    ghost (recency pays), down for a B2 ghost (frequency pays)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.target_t1_size = 0.0
        self.t1: OrderedDict[bytes, BlockStatus] = OrderedDict()
        self.t2: OrderedDict[bytes, BlockStatus] = OrderedDict()
        self.b1: OrderedDict[bytes, None] = OrderedDict()
        self.b2: OrderedDict[bytes, None] = OrderedDict()

    def get(self, key: bytes) -> BlockStatus | None:
        return self.t1.get(key) or self.t2.get(key)

    def insert(self, key: bytes, block: BlockStatus) -> None:
        self.t1[key] = block  # a new block is recent, and no longer a ghost
        self.b1.pop(key, None)
        self.b2.pop(key, None)

    def remove(self, key: bytes) -> None:
        if self.t1.pop(key, None) is None:
            self.t2.pop(key, None)

    def touch(self, keys: Sequence[bytes]) -> None:
        for key in reversed(keys):
            if key in self.t1:
                block = self.t1.pop(key)
                # A block whose store is in flight was not used twice: it stays in
                # T1, most recent; a readable one is promoted to T2.
                (self.t2 if block.is_ready else self.t1)[key] = block
            elif key in self.t2:
                self.t2.move_to_end(key)
            elif key in self.b1:
                delta = max(1, len(self.b2) / len(self.b1))
                self.target_t1_size = min(self.target_t1_size + delta, self.capacity)
                self.b1.move_to_end(key)
            elif key in self.b2:
                delta = max(1, len(self.b1) / len(self.b2))
                self.target_t1_size = max(self.target_t1_size - delta, 0)
                self.b2.move_to_end(key)

    def evict(self, n: int, protected: set[bytes]) -> list[tuple] | None:
        """(key, block) of n idle blocks outside `protected`: from T1 while T1
        holds at least its target (int(target_t1_size)), else from T2; None (and no
        change) if there are not n. Evicted keys become ghosts; each ghost list
        keeps at most `capacity` keys, the oldest dropped."""
        chosen: list[tuple[bytes, bool]] = []  # (key, from T1)
        taken: set[bytes] = set()
        t1_size = len(self.t1)

        def first_idle(lst: OrderedDict) -> bytes | None:
            for key, block in lst.items():
                if block.ref_cnt == 0 and key not in protected and key not in taken:
                    return key
            return None

        for _ in range(n):
            key, from_t1 = None, False
            if t1_size >= int(self.target_t1_size):
                key = first_idle(self.t1)
                if key is not None:
                    from_t1, t1_size = True, t1_size - 1
            if key is None:
                key = first_idle(self.t2)
                if key is None:
                    return None
            chosen.append((key, from_t1))
            taken.add(key)
        evicted = []
        for key, from_t1 in chosen:
            if from_t1:
                evicted.append((key, self.t1.pop(key)))
                self.b1[key] = None
            else:
                evicted.append((key, self.t2.pop(key)))
                self.b2[key] = None
        for ghosts in (self.b1, self.b2):
            for _ in range(len(ghosts) - self.capacity):
                ghosts.popitem(last=False)
        return evicted

    def mark_evictable(self, key: bytes) -> None:
        return

    def mark_non_evictable(self, key: bytes) -> None:
        return


POLICIES = {"lru": LRUPolicy, "arc": ARCPolicy}


@dataclass(frozen=True)
class StoreOutput:
    """vllm/v1/kv_offload/base.py: PrepareStoreOutput, with the CPU block ids the
    store writes (its CPULoadStoreSpec)."""

    keys_to_store: list[bytes]
    block_ids: list[int]
    evicted_keys: list[bytes]


class CPUOffloadingManager:
    """vllm/v1/kv_offload/cpu/manager.py: CPUOffloadingManager, the scheduler-side
    bookkeeping of the CPU tier: which keys it holds, in which CPU block, which are
    readable, and which to evict. The copies themselves run on the worker."""

    def __init__(self, num_blocks: int, policy: str = "lru", events: bool = False):
        if type(num_blocks) is not int or num_blocks < 0:
            raise ValueError(f"num_blocks must be an integer >= 0, got {num_blocks!r}")
        if policy not in POLICIES:
            raise ValueError(
                f"policy must be one of {sorted(POLICIES)}, got {policy!r}"
            )
        self.num_blocks = num_blocks
        self.policy = POLICIES[policy](num_blocks)
        self.num_allocated = 0  # CPU block ids handed out so far, 0, 1, 2, ...
        self.free_list: list[int] = []  # ids of evicted blocks, reused last-in first
        self.num_evictable = 0  # blocks with ref_cnt 0
        self.num_write_pending = 0  # blocks with a store in flight
        self.allocation_sizes: list[int] = []  # since the last get_stats
        self.events: list[tuple[str, list[bytes], str]] | None = [] if events else None

    def lookup(self, key: bytes) -> str:
        """HIT if the CPU tier holds the block and it is readable, HIT_PENDING if its
        store is still in flight, MISS otherwise (CPUOffloadingManager.lookup)."""
        block = self.policy.get(key)
        if block is None:
            return MISS
        return HIT if block.is_ready else HIT_PENDING

    def prepare_load(self, keys: Sequence[bytes]) -> list[int]:
        """The CPU blocks to copy to the GPU; each is protected from eviction until
        complete_load (CPUOffloadingManager.prepare_load)."""
        block_ids = []
        for key in keys:
            block = self.policy.get(key)
            if block is None or not block.is_ready:
                raise ValueError(f"block {key.hex()[:8]} is not readable in the tier")
            if block.ref_cnt == 0:
                self.policy.mark_non_evictable(key)
                self.num_evictable -= 1
            block.ref_cnt += 1
            block_ids.append(block.block_id)
        return block_ids

    def touch(self, keys: Sequence[bytes]) -> None:
        self.policy.touch(keys)

    def complete_load(self, keys: Sequence[bytes]) -> None:
        for key in keys:
            block = self.policy.get(key)
            if block is None or block.ref_cnt <= 0:
                raise ValueError(f"block {key.hex()[:8]} has no load in flight")
            block.ref_cnt -= 1
            if block.ref_cnt == 0:
                self.num_evictable += 1
                self.policy.mark_evictable(key)

    def num_free(self) -> int:
        return len(self.free_list) + self.num_blocks - self.num_allocated

    def prepare_store(self, keys: Sequence[bytes]) -> StoreOutput | None:
        """Room for the keys the tier does not hold yet: free blocks first, then
        evictions chosen by the policy, never among `keys` themselves; None if not
        enough blocks are idle (CPUOffloadingManager.prepare_store)."""
        keys = list(keys)
        keys_to_store = [key for key in keys if self.policy.get(key) is None]
        if not keys_to_store:
            return StoreOutput([], [], [])
        self.allocation_sizes.append(len(keys_to_store))
        to_evict: list[bytes] = []
        num_to_evict = len(keys_to_store) - self.num_free()
        if num_to_evict > 0:
            if num_to_evict > self.num_evictable:
                return None
            evicted = self.policy.evict(num_to_evict, set(keys))
            if evicted is None:
                return None
            self.num_evictable -= len(evicted)
            for key, block in evicted:
                self.free_list.append(block.block_id)
                to_evict.append(key)
        if to_evict and self.events is not None:
            self.events.append(("removed", to_evict, MEDIUM))
        # Never used block ids first, then the freed ones, last freed first
        # (CPUOffloadingManager._allocate_blocks).
        fresh = min(len(keys_to_store), self.num_blocks - self.num_allocated)
        ids = list(range(self.num_allocated, self.num_allocated + fresh))
        self.num_allocated += fresh
        ids += [self.free_list.pop() for _ in range(len(keys_to_store) - fresh)]
        for key, block_id in zip(keys_to_store, ids, strict=True):
            self.policy.insert(key, BlockStatus(block_id))
        self.num_write_pending += len(keys_to_store)
        return StoreOutput(keys_to_store, ids, to_evict)

    def complete_store(self, keys: Sequence[bytes], success: bool = True) -> None:
        """The worker's copies are done: the blocks become readable and evictable;
        after a failed store they are dropped (CPUOffloadingManager.complete_store)."""
        stored = []
        for key in keys:
            block = self.policy.get(key)
            if block is None or block.is_ready:
                continue
            self.num_write_pending -= 1
            if success:
                block.ref_cnt = 0
                self.num_evictable += 1
                self.policy.mark_evictable(key)
                stored.append(key)
            else:
                self.policy.remove(key)
                self.free_list.append(block.block_id)
        if stored and self.events is not None:
            self.events.append(("stored", stored, MEDIUM))

    def take_events(self) -> list[tuple[str, list[bytes], str]]:
        """The events since the last call: ("stored" or "removed", keys, medium); vLLM
        publishes them as BlockStored and BlockRemoved with medium "CPU"."""
        if self.events is None:
            return []
        events, self.events = self.events, []
        return events

    def get_stats(self) -> dict:
        """The three usage gauges vLLM exports (vllm/v1/kv_offload/cpu/common.py:
        CPUOffloadingMetrics, CPU_CACHE_USAGE_PERC, ..._WRITE_..., ..._READ_...) and the
        sizes of the stores since the last call (CPU_ALLOCATION_SIZE), as
        CPUOffloadingManager.get_stats computes them."""
        used = self.num_allocated - len(self.free_list) - self.num_evictable
        usage = used / self.num_blocks if self.num_blocks else 0.0
        write = self.num_write_pending / self.num_blocks if self.num_blocks else 0.0
        sizes, self.allocation_sizes = self.allocation_sizes, []
        return {
            "usage": usage,
            "write_usage": write,
            "read_usage": max(usage - write, 0.0),
            "allocation_sizes": sizes,
        }


@dataclass(frozen=True)
class Visit:
    """What one request found and moved. Tokens: gpu_hit from lesson 5's prefix
    cache, cpu_hit loaded from the CPU tier; blocks: loaded CPU -> GPU, stored
    GPU -> CPU, evicted from the CPU tier to make room; store_failed if the tier
    could not make room (prepare_store returned None)."""

    request_id: str
    prompt_tokens: int
    gpu_hit: int
    cpu_hit: int
    loaded: int
    stored: int
    evicted: int
    store_failed: bool = False

    @property
    def recomputed(self) -> int:
        """Prompt tokens the GPU computes. On a full hit the last one is computed
        again, for its logits (vllm/v1/core/sched/scheduler.py:
        Scheduler._update_waiting_for_remote_kv; the GPU prefix cache stops one
        token short: KVCacheManager.get_computed_blocks)."""
        return self.prompt_tokens - min(
            self.gpu_hit + self.cpu_hit, self.prompt_tokens - 1
        )


class OffloadedCache:
    """A GPU prefix cache (lesson 5's PrefixCache) with a CPU tier behind it, driven
    as the scheduler side of OffloadingConnector drives CPUOffloadingManager
    (vllm/distributed/kv_transfer/kv_connector/v1/offloading/scheduler.py:
    OffloadingConnectorScheduler). Requests run one at a time, each prompt in one
    step, one output token (max_tokens=1), and each store completes before the next
    request arrives: a lookup then sees HIT or MISS, never HIT_PENDING."""

    def __init__(self, num_gpu_blocks: int, num_cpu_blocks: int, policy: str = "lru"):
        self.gpu = PrefixCache(num_gpu_blocks)
        self.cpu = CPUOffloadingManager(num_cpu_blocks, policy)
        self.block_size = self.gpu.block_size

    def num_hit_tokens(self, keys: list[bytes], num_tokens: int, gpu_hit: int) -> int:
        """Tokens past the GPU's hit the CPU tier can give: its longest run of HITs
        from the first block the GPU misses, in whole blocks
        (OffloadingConnectorScheduler._lookup, _maximal_prefix_lookup). Unlike the
        GPU cache it may cover the last prompt token."""
        size = self.block_size
        max_hit = min(num_tokens, len(keys) * size)
        if max_hit - gpu_hit < size:
            return 0  # less than a block to gain: the tier is not even asked
        start = gpu_hit // size
        hits = 0
        for key in keys[start : blocks_for(max_hit, size)]:
            if self.cpu.lookup(key) != HIT:
                break
            hits += 1
        if hits == 0:
            return 0
        new = min(max_hit, size * (start + hits)) - gpu_hit
        return new if new >= size else 0

    def visit(self, request_id: str, prompt: list[int]) -> Visit:
        keys = block_hashes(prompt, self.block_size)
        _, gpu_hit = self.gpu.lookup(prompt)
        # The scheduler asks the connector after the GPU cache
        # (OffloadingConnectorScheduler.get_num_new_matched_tokens), which touches
        # all the request's blocks in the tier, hit or not (_touch).
        cpu_hit = self.num_hit_tokens(keys, len(prompt), gpu_hit)
        self.cpu.touch(keys)
        first_to_store = 0
        loaded: list[bytes] = []
        if cpu_hit:
            # The GPU blocks are allocated, the load is prepared
            # (update_state_after_alloc) and runs asynchronously: the request waits
            # in WAITING_FOR_REMOTE_KVS until the worker reports it done, then
            # complete_load (update_connector_output). Blocks it loaded are not
            # stored again: storing starts after them (BLOCK_LEVEL policy).
            first_to_store = blocks_for(gpu_hit + cpu_hit, self.block_size)
            loaded = keys[gpu_hit // self.block_size : first_to_store]
            self.cpu.prepare_load(loaded)
            self.cpu.complete_load(loaded)
        # The step that computes the prompt also stores its full blocks not stored
        # yet; the copy runs after the forward pass (_build_store_jobs), and
        # prepare_store skips blocks the tier already holds.
        stored: StoreOutput | None = StoreOutput([], [], [])
        if keys[first_to_store:]:
            stored = self.cpu.prepare_store(keys[first_to_store:])
        if stored is None:
            # Too few idle blocks to evict: vLLM logs "Request %s: cannot store
            # chunks", counts an allocation failure and tries again in
            # a later step of the request or once it has finished; those retries
            # come with the next request's calls and are not modelled here.
            failed, stored = True, StoreOutput([], [], [])
        else:
            failed = False
            if stored.keys_to_store:
                self.cpu.touch(keys)
        self.gpu.run(request_id, prompt, max_tokens=1)
        self.cpu.complete_store(stored.keys_to_store)
        return Visit(
            request_id,
            len(prompt),
            gpu_hit,
            cpu_hit,
            len(loaded),
            len(stored.keys_to_store),
            len(stored.evicted_keys),
            failed,
        )


if __name__ == "__main__":
    # A tier of 4 blocks under each policy: block F is stored, then read back twice
    # (a touch and a load each time, as the scheduler does on a hit); then a scan of
    # 6 blocks, each stored once, goes through. LRU lets the scan push F out; ARC
    # has moved F to T2 and evicts the scan's blocks from T1 instead.
    keys = {name: block_hashes([ord(name)] * 16)[0] for name in "FSTUVWX"}
    names = {key: name for name, key in keys.items()}
    for policy in ("lru", "arc"):
        tier = CPUOffloadingManager(4, policy)
        evicted = []
        for number, name in enumerate("FFFSTUVWX"):
            if number in (1, 2):  # F read back
                tier.touch([keys[name]])
                tier.prepare_load([keys[name]])
                tier.complete_load([keys[name]])
                continue
            out = tier.prepare_store([keys[name]])
            tier.complete_store(out.keys_to_store)
            evicted += [names[key] for key in out.evicted_keys]
        held = [name for name, key in keys.items() if tier.lookup(key) == HIT]
        print(f"{policy}: evicted {' '.join(evicted)}; holds {' '.join(held)}")
