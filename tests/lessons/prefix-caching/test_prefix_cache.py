"""The prefix caching lesson's simulator (snippets/prefix-caching/prefix_cache.py) follows vLLM
0.26.0's rules: each expectation below is worked out by hand from the vLLM function the test
names, not read off the simulator."""

import pickle
import re
from hashlib import sha256

import pytest
from prefix_cache import NONE_HASH, PrefixCache, block_hashes


def tokens(start: int, count: int) -> list[int]:
    return list(range(start, start + count))


def h(value) -> bytes:
    return sha256(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)).digest()


def test_the_root_is_the_hash_of_pythonhashseed():
    # vllm/v1/core/kv_cache_utils.py: init_none_hash, with PYTHONHASHSEED=0 and sha256.
    assert NONE_HASH == h("0")


def test_only_full_blocks_get_a_hash():
    # get_request_block_hasher: "We only hash full blocks".
    assert block_hashes(tokens(1000, 15)) == []
    assert len(block_hashes(tokens(1000, 16))) == 1
    assert len(block_hashes(tokens(1000, 47))) == 2
    assert len(block_hashes(tokens(1000, 48))) == 3
    assert len(block_hashes(tokens(1000, 10), block_size=4)) == 2


def test_each_hash_chains_on_its_parent():
    # hash_block_tokens: hash((parent hash, tuple of the block's tokens, extra keys)).
    prompt = tokens(1000, 40)
    first = h((NONE_HASH, tuple(prompt[:16]), None))
    second = h((first, tuple(prompt[16:32]), None))
    assert block_hashes(prompt) == [first, second]


def test_cache_salt_enters_the_first_block_only():
    # generate_block_hash_extra_keys: [cache_salt] only when start_token_idx == 0.
    prompt = tokens(1000, 48)
    first = h((NONE_HASH, tuple(prompt[:16]), ("tenant",)))
    second = h((first, tuple(prompt[16:32]), None))
    third = h((second, tuple(prompt[32:48]), None))
    assert block_hashes(prompt, cache_salt="tenant") == [first, second, third]
    # ... and the chain carries it: no hash is the unsalted one.
    unsalted = block_hashes(prompt)
    assert not set(unsalted) & {first, second, third}


def test_a_repeated_prompt_hits_all_but_its_last_token_in_whole_blocks():
    # KVCacheManager.get_computed_blocks: max_cache_hit_length = num_tokens - 1, and
    # find_longest_cache_hit returns whole blocks: floor((N - 1) / 16) * 16.
    expected = {1: 0, 15: 0, 16: 0, 17: 16, 31: 16, 32: 16, 33: 32, 48: 32, 49: 48, 64: 48}
    for n, hit in expected.items():
        cache = PrefixCache(num_gpu_blocks=20)
        assert cache.run("first", tokens(1000, n)) == 0, n
        assert cache.run("again", tokens(1000, n)) == hit, n
        assert cache.lookup(tokens(1000, n)) == (list(cache.history[-1].hit_blocks), hit), n


def test_a_changed_block_stops_every_later_hit():
    # find_longest_cache_hit stops at the first miss; later blocks chain on it.
    cache = PrefixCache(num_gpu_blocks=20)
    original = tokens(1000, 65)  # 4 full blocks and 1 token
    cache.run("original", original)
    changed = list(original)
    changed[20] = 7  # block 1
    # Blocks 2 and 3 hold the same tokens as before, and still miss.
    assert changed[32:64] == original[32:64]
    assert cache.lookup(changed) == ([1], 16)
    changed[20] = original[20]
    changed[0] = 7  # block 0: nothing hits
    assert cache.lookup(changed) == ([], 0)
    # The same 16 tokens at another position are another prefix.
    assert cache.lookup(original[16:] + [1]) == ([], 0)


def test_cache_salt_isolates_tenants():
    cache = PrefixCache(num_gpu_blocks=30)
    prompt = tokens(1000, 100)
    assert cache.run("a1", prompt, cache_salt="a") == 0
    assert cache.run("a2", prompt, cache_salt="a") == 96
    assert cache.run("b1", prompt, cache_salt="b") == 0
    assert cache.run("none", prompt) == 0
    assert cache.run("b2", prompt, cache_salt="b") == 96
    assert cache.run("none2", prompt) == 96


def test_generated_tokens_are_cached_but_not_the_last_one():
    # allocate_slots caches the computed tokens: prompt + max_tokens - 1 (the last sampled
    # token is never fed back).
    prompt, answer = tokens(1000, 20), tokens(5000, 13)
    cache = PrefixCache(num_gpu_blocks=20)
    cache.run("turn1", prompt, max_tokens=13, output=answer)  # computes 32 tokens
    assert len(cache.cached_blocks) == 2
    assert cache.run("turn2", prompt + answer + tokens(9000, 5)) == 32

    cache = PrefixCache(num_gpu_blocks=20)
    cache.run("turn1", prompt, max_tokens=12, output=answer[:12])  # computes 31 tokens
    assert len(cache.cached_blocks) == 1
    assert cache.run("turn2", prompt + answer + tokens(9000, 5)) == 16


def test_the_default_output_is_tokens_no_prompt_holds():
    cache = PrefixCache(num_gpu_blocks=20)
    prompt = tokens(1000, 20)
    cache.run("one", prompt, max_tokens=13)  # 2 full blocks, one of made-up output
    assert len(cache.cached_blocks) == 2
    # A prompt that continues with any real tokens hits the prompt's block only.
    assert cache.run("two", prompt + tokens(0, 20)) == 16


def test_eviction_takes_unhashed_blocks_first_then_least_recently_used():
    # BlockPool.free_blocks: unhashed blocks to the head of the free queue, hashed ones to
    # the tail, a request's blocks last first; get_new_blocks takes from the head and
    # evicts the hash of a block it hands out; touch takes hit blocks out of the queue.
    cache = PrefixCache(num_gpu_blocks=8)
    a, b, c = tokens(100, 40), tokens(200, 40), tokens(300, 72)
    cache.run("A", a)  # blocks 1, 2 hashed; 3 holds 8 tokens
    assert cache.free_queue == [3, 4, 5, 6, 7, 2, 1]
    cache.run("B", b)  # takes 3 (no hash to lose), 4, 5
    assert cache.history[-1].evicted == ()
    assert cache.free_queue == [5, 6, 7, 2, 1, 4, 3]
    cache.run("A2", a)  # hits 1, 2; they go back to the tail, behind B's 4, 3
    assert cache.history[-1].hit_blocks == (1, 2)
    assert cache.free_queue == [5, 6, 7, 4, 3, 2, 1]
    cache.run("C", c)  # 5 blocks: 5, 6, 7 have no hash, then B's 4 and 3 are evicted
    assert cache.history[-1].block_table == (5, 6, 7, 4, 3)
    assert cache.history[-1].evicted == (4, 3)
    assert sorted(cache.cached_blocks) == [1, 2, 4, 5, 6, 7]
    assert cache.lookup(b) == ([], 0)  # B's blocks lost their hashes
    assert cache.run("A3", a) == 32
    # Usage counts cached free blocks as free (BlockPool.get_usage).
    assert cache.usage == 0


def test_a_recomputed_block_keeps_the_same_hash_as_the_old_one():
    # BlockHashToBlockMap does not de-duplicate: a 32-token prompt hits block 0 only
    # (its last block is recomputed), and the recomputed block gets the same hash again.
    cache = PrefixCache(num_gpu_blocks=10)
    prompt = tokens(1000, 32)
    assert [cache.run(f"r{i}", prompt) for i in range(3)] == [0, 16, 16]
    assert [step.block_table for step in cache.history] == [(1, 2), (1, 3), (1, 4)]
    hashes = cache.cached_blocks
    assert sorted(hashes) == [1, 2, 3, 4]
    assert hashes[2] == hashes[3] == hashes[4] != hashes[1]
    # A longer prompt hits the first block cached under a hash
    # (BlockHashToBlockMap.get_one_block: the first of its blocks).
    assert cache.lookup(prompt + [1]) == ([1, 2], 32)


def test_reset_prefix_cache_forgets_every_hash_and_keeps_the_counts():
    cache = PrefixCache(num_gpu_blocks=10)
    prompt = tokens(1000, 40)
    cache.run("one", prompt)
    cache.run("two", prompt)
    queue, hits, queries = cache.free_queue, cache.hits, cache.queries
    assert cache.reset_prefix_cache() is True
    assert cache.cached_blocks == {}
    assert cache.lookup(prompt) == ([], 0)
    assert cache.free_queue == queue
    assert (cache.hits, cache.queries) == (hits, queries)
    assert cache.run("three", prompt) == 0


def test_the_stats_count_tokens():
    # PrefixCacheStats.record: queries += request.num_tokens, hits += cached tokens.
    cache = PrefixCache(num_gpu_blocks=200)
    cache.run("long", tokens(1000, 1000))
    cache.run("long again", tokens(1000, 1000))  # 992 hit
    cache.run("short", tokens(5000, 10))
    assert (cache.hits, cache.queries) == (992, 2010)
    assert cache.hit_rate == 992 / 2010


def test_a_request_that_does_not_fit_changes_nothing():
    cache = PrefixCache(num_gpu_blocks=4)  # 3 blocks to hand out
    cache.run("A", tokens(100, 20))
    before = cache.free_queue, cache.cached_blocks, cache.history[:], cache.queries
    assert cache.run("big", tokens(100, 49)) is None  # 4 blocks, 3 are free
    assert (cache.free_queue, cache.cached_blocks, cache.history, cache.queries) == before


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.run("r", "hello"), "prompt must be a list of token ids, got 'hello'"),
        (lambda c: c.run("r", 5), "prompt must be a list of token ids, got 5"),
        (lambda c: c.run("r", []), "prompt must hold at least one token id, got none"),
        (lambda c: c.run("r", [1, -1]), "prompt holds -1: token ids are integers from 0 up"),
        (lambda c: c.run("r", [1, 2.0]), "prompt holds 2.0: token ids are integers from 0 up"),
        (lambda c: c.run("r", [True]), "prompt holds True: token ids are integers from 0 up"),
        (lambda c: c.run("", [1]), "request_id must be a non-empty string, got ''"),
        (lambda c: c.run(7, [1]), "request_id must be a non-empty string, got 7"),
        (lambda c: c.run("r", [1], max_tokens=0),
         "max_tokens must be an integer of at least 1, got 0"),
        (lambda c: c.run("r", [1], max_tokens=2, output=[5]),
         "output holds 1 token ids, max_tokens is 2"),
        (lambda c: c.run("r", [1], output=[-3]),
         "output holds -3: token ids are integers from 0 up"),
        (lambda c: c.run("r", [1], cache_salt=""),
         "cache_salt must be a non-empty string, got ''"),
        (lambda c: c.lookup([1], cache_salt=3), "cache_salt must be a non-empty string, got 3"),
        (lambda c: c.lookup(b"ab"), "prompt must be a list of token ids, got b'ab'"),
        (lambda c: c.hit_rate, "no request has run yet: the hit rate is 0 of 0 tokens"),
        (lambda c: block_hashes([1, 2], block_size=0),
         "block_size must be an integer of at least 1, got 0"),
        (lambda c: PrefixCache(0), "num_gpu_blocks must be an integer of at least 1, got 0"),
    ],
)
def test_bad_input_says_what_is_wrong(call, message):
    cache = PrefixCache(num_gpu_blocks=10)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call(cache)
    assert cache.history == [] and cache.queries == 0


# -- requests at the same time: reference counts (vllm/v1/core/block_pool.py: BlockPool) -------


def test_a_block_two_requests_use_goes_back_only_when_both_freed_it():
    cache = PrefixCache(num_gpu_blocks=10)
    prompt = tokens(1000, 40)
    assert cache.allocate_slots("A", prompt, 0, 40) == [1, 2, 3]
    # A's two full blocks are hashed at once, while A is still being computed.
    hit, cached = cache.get_computed_blocks(prompt)
    assert (hit, cached) == ([1, 2], 32)
    assert cache.allocate_slots("B", prompt, 0, 8, hit) == [4]
    assert cache.block_table("B") == [1, 2, 4]
    assert [cache.ref_cnt(block) for block in (1, 2, 3, 4)] == [2, 2, 1, 1]
    cache.free("A")  # BlockPool.free_blocks: only block 3 has no user left
    assert cache.free_queue == [3, 5, 6, 7, 8, 9]
    assert [cache.ref_cnt(block) for block in (1, 2, 3, 4)] == [1, 1, 0, 1]
    assert not cache.reset_prefix_cache()  # refused while a request holds blocks
    cache.free("B")  # last block first: 4 (no hash) to the head, 2 and 1 to the tail
    assert cache.free_queue == [4, 3, 5, 6, 7, 8, 9, 2, 1]
    assert cache.reset_prefix_cache()


def test_a_hit_on_a_free_block_takes_it_out_of_the_free_queue_and_counts_it():
    cache = PrefixCache(num_gpu_blocks=4)  # 3 blocks to hand out
    prompt = tokens(1000, 33)
    cache.run("A", prompt)  # blocks 1, 2 hashed; 3 (1 token) not
    hit, _ = cache.get_computed_blocks(prompt)
    assert hit == [1, 2]
    # get_num_blocks_to_allocate: 1 new block plus the 2 free hit blocks it touches.
    assert cache.blocks_to_allocate("B", 34, hit) == 3
    assert cache.allocate_slots("B", prompt, 0, 1, hit, full_sequence_must_fit=True) == [3]
    assert cache.num_free_blocks == 0
    assert cache.allocate_slots("C", tokens(5000, 2), 0, 2) is None  # none left, nothing changed
    assert cache.requests == ["B"]


def test_allocate_keeps_the_reference_counts():
    # Lesson 2's allocate, on a prefix cache: new blocks have one user each and no hash, and
    # free gives them back through the reference counts.
    cache = PrefixCache(num_gpu_blocks=4)  # 3 blocks to hand out
    assert cache.allocate("A", 20) == [1, 2]
    assert [cache.ref_cnt(block) for block in (1, 2, 3)] == [1, 1, 0]
    assert cache.allocate("A", 33) == [3]
    assert cache.allocate("B", 1) is None and "B" not in cache.requests
    with pytest.raises(ValueError, match="holds 33 tokens"):
        cache.allocate("A", 5)
    cache.free("A")
    assert [cache.ref_cnt(block) for block in (1, 2, 3)] == [0, 0, 0]
    assert cache.free_queue == [3, 2, 1] and cache.hashed == set()  # last block first
