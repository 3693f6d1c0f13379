"""offload.py's CPU tier, on cases worked from vLLM 0.26.0's CPUOffloadingManager, LRUCachePolicy
and ARCCachePolicy (tests/conformance/test_kv_offloading_conformance.py compares them with vLLM
itself), and the scheduler's order of calls in OffloadedCache.visit."""

import pytest
from offload import (
    HIT,
    HIT_PENDING,
    MISS,
    CPUOffloadingManager,
    OffloadedCache,
    cpu_blocks,
)
from prefix_cache import block_hashes, sha256
from reload_vs_recompute import break_even, bytes_per_block, reload_seconds


def key(name: str) -> bytes:
    return sha256(name)


def stored(tier: CPUOffloadingManager, *names: str):
    out = tier.prepare_store([key(n) for n in names])
    tier.complete_store(out.keys_to_store)
    return out


def test_the_tier_size_is_vllms_division():
    # 4 GiB of 917,504-byte blocks: int(4 * 2**30) // 917504.
    assert bytes_per_block() == 917_504 and bytes_per_block(1) == 458_752
    assert cpu_blocks(4, bytes_per_block()) == 4 * 1024**3 // 917_504 == 4681
    assert cpu_blocks(0.5, 1000) == 536_870
    for bad in (0, -1, "4", True):
        with pytest.raises(ValueError):
            cpu_blocks(bad, 1000)
    with pytest.raises(ValueError):
        cpu_blocks(4, 0)


def test_lookup_answers_pending_then_hit():
    tier = CPUOffloadingManager(2)
    assert tier.lookup(key("a")) == MISS
    out = tier.prepare_store([key("a")])
    assert out.block_ids == [0] and tier.lookup(key("a")) == HIT_PENDING
    tier.complete_store([key("a")])
    assert tier.lookup(key("a")) == HIT


def test_a_store_evicts_the_least_recently_used_and_reuses_its_id():
    tier = CPUOffloadingManager(2)
    stored(tier, "a")
    stored(tier, "b")
    tier.touch([key("a")])  # a is now more recent than b
    out = stored(tier, "c")
    assert out.evicted_keys == [key("b")] and out.block_ids == [1]


def test_keys_being_stored_are_never_evicted_and_none_when_too_few_are_idle():
    tier = CPUOffloadingManager(2)
    stored(tier, "a")
    # a is held and protected; b needs one more block than the one free
    assert stored(tier, "a", "b").keys_to_store == [key("b")]
    assert tier.prepare_store([key("a"), key("b"), key("c")]) is None  # both protected
    assert tier.prepare_store([key("a"), key("c")]).evicted_keys == [key("b")]
    tier.complete_store([key("c")])
    tier.prepare_load([key("a")])
    assert tier.prepare_store([key("d"), key("e")]) is None  # a is being read
    tier.complete_load([key("a")])


def test_a_failed_store_frees_its_blocks():
    tier = CPUOffloadingManager(3)
    out = tier.prepare_store([key("a"), key("b")])
    tier.complete_store(out.keys_to_store, success=False)
    assert tier.lookup(key("a")) == MISS and tier.free_list == [0, 1]
    assert tier.prepare_store([key("c")]).block_ids == [2]  # fresh ids first
    assert tier.prepare_store([key("d")]).block_ids == [1]  # then the last freed


def test_arc_keeps_a_block_read_twice_through_a_scan():
    for policy, kept in (("lru", False), ("arc", True)):
        tier = CPUOffloadingManager(4, policy)
        stored(tier, "F")
        for _ in range(2):
            tier.touch([key("F")])
            tier.prepare_load([key("F")])
            tier.complete_load([key("F")])
        for name in "STUVWX":
            stored(tier, name)
        assert (tier.lookup(key("F")) == HIT) is kept, policy


def test_arc_refuses_a_store_when_its_target_fills_t1():
    """The ghosts of an ordered scan push target_t1_size to the capacity with T2 empty: the
    second eviction finds T1 below its target and nothing in T2 (ARCCachePolicy.evict)."""
    tier = CPUOffloadingManager(2, "arc")
    stored(tier, "a", "b")
    stored(tier, "c", "d")  # a, b become B1 ghosts
    tier.touch([key("a"), key("b")])  # B1 hits: the target grows to 2
    assert tier.policy.target_t1_size == 2
    assert tier.prepare_store([key("e"), key("f")]) is None


def test_stats_and_events():
    tier = CPUOffloadingManager(2, events=True)
    tier.prepare_store([key("a"), key("b")])
    assert tier.get_stats() == {"usage": 1.0, "write_usage": 1.0, "read_usage": 0.0,
                                "allocation_sizes": [2]}
    tier.complete_store([key("a"), key("b")])
    stored(tier, "c")
    assert [(kind, len(keys), medium) for kind, keys, medium in tier.take_events()] == [
        ("stored", 2, "CPU"), ("removed", 1, "CPU"), ("stored", 1, "CPU")]
    assert tier.take_events() == []


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="policy"):
        CPUOffloadingManager(4, "fifo")
    with pytest.raises(ValueError, match="num_blocks"):
        CPUOffloadingManager(-1)
    tier = CPUOffloadingManager(4)
    with pytest.raises(ValueError, match="not readable"):
        tier.prepare_load([key("a")])
    with pytest.raises(ValueError, match="no load"):
        tier.complete_load([key("a")])


def test_a_visit_takes_the_gpu_hit_then_the_cpu_tier():
    """blocks_moving.py's A3: one block from the GPU, the next from the CPU, the last token
    computed; a whole-prompt CPU hit recomputes only the last token."""
    cache = OffloadedCache(num_gpu_blocks=7, num_cpu_blocks=6)
    docs = {n: list(range(100 * i, 100 * i + 33)) for i, n in enumerate("ABC")}
    for name in "ABC":
        assert cache.visit(name, docs[name]).recomputed == 33
    again = cache.visit("A again", docs["A"])
    assert (again.gpu_hit, again.cpu_hit, again.loaded, again.stored, again.recomputed) == (
        16, 16, 1, 0, 1)
    whole = OffloadedCache(num_gpu_blocks=4, num_cpu_blocks=8)
    prompt = list(range(48))  # 3 full blocks, no partial one
    whole.visit("first", prompt)
    whole.visit("other", list(range(1000, 1048)))  # pushes the prompt off the GPU
    back = whole.visit("back", prompt)
    assert (back.gpu_hit, back.cpu_hit, back.recomputed) == (0, 48, 1)


def test_less_than_a_block_from_the_tier_is_no_hit():
    cache = OffloadedCache(num_gpu_blocks=20, num_cpu_blocks=8)
    prompt = list(range(40))  # 2 full blocks; the GPU hits both (39 tokens cap at 32)
    cache.visit("first", prompt)
    keys = block_hashes(prompt)
    assert cache.num_hit_tokens(keys, 40, 32) == 0  # the tier is not even asked
    assert cache.num_hit_tokens(keys, 40, 16) == 16 and cache.num_hit_tokens(keys, 40, 0) == 32
    again = cache.visit("again", prompt)
    assert (again.gpu_hit, again.cpu_hit, again.stored) == (32, 0, 0)


def test_reload_beats_recompute_past_the_break_even():
    assert break_even() == break_even(1) == 176
    assert reload_seconds(4096) == 256 * 917_504 / 25e9
