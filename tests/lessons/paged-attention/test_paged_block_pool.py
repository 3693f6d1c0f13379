"""The PagedAttention lesson's block pool (snippets/paged-attention/block_pool.py) behaves as
vLLM 0.26.0's does: each expectation below is worked out by hand from the vLLM function the
test names, not from the simulator."""

import pytest
from block_picture import picture
from block_pool import BLOCK_SIZE, BlockPool, blocks_for, slot_of
from block_trace import TRACE, run, said

from coursekit import ROOT

# The worked trace with prefix caching off, from the start (step 0) step by step: (block
# tables, free queue head first, blocks in use).
EXPECTED_TRACE = [
    ({}, [1, 2, 3, 4, 5, 6, 7, 8, 9], 0),  # block 0 is the null block
    ({"A": [1, 2]}, [3, 4, 5, 6, 7, 8, 9], 2),
    ({"A": [1, 2], "B": [3, 4, 5]}, [6, 7, 8, 9], 5),
    ({"A": [1, 2], "B": [3, 4, 5]}, [6, 7, 8, 9], 5),  # 32 tokens still fit 2 blocks
    ({"A": [1, 2, 6], "B": [3, 4, 5]}, [7, 8, 9], 6),
    ({"A": [1, 2, 6]}, [5, 4, 3, 7, 8, 9], 3),  # freed last block first, to the head
    ({"A": [1, 2, 6], "C": [5, 4]}, [3, 7, 8, 9], 5),
    ({"A": [1, 2, 6], "C": [5, 4]}, [3, 7, 8, 9], 5),  # D refused: nothing changed
    ({"C": [5, 4]}, [6, 2, 1, 3, 7, 8, 9], 2),
    ({"C": [5, 4], "D": [6, 2, 1, 3, 7, 8, 9]}, [], 9),
]


def tables(pool):
    return {request: pool.block_table(request) for request in pool.requests}


def test_the_worked_trace_step_by_step():
    # run() yields its one pool at the start and after each step: read it before the next.
    happened = []
    trace = run(enable_caching=False)
    for (step, pool, what), (expected, free, used) in zip(trace, EXPECTED_TRACE, strict=True):
        assert (tables(pool), pool.free_queue) == (expected, free), f"step {step}"
        assert pool.usage == 1.0 - (9 - used) / 9, f"step {step}"
        happened.append(what)
    assert len(happened) == 1 + len(TRACE)
    assert happened[7] == {"kind": "refused", "r": "D", "n": 100, "needed": 7, "free": 4}
    assert said(happened[7]) == "D refused: request 'D' needs 7 more blocks for 100 tokens, 4 are free"


def test_the_trace_with_prefix_caching_sends_full_blocks_to_the_tail():
    # BlockPool.free_blocks: hashed blocks (B's two full ones, 4 and 3) are appended, the
    # partly filled 5 is prepended; the queue's head was 7.
    # C's first block fills (30 tokens) and gets a hash too (BlockPool.cache_full_blocks).
    # When A finishes, its partly filled 6 goes to the head and its full 2 and 1 to the tail;
    # D then takes the whole queue, head first: taken blocks lose their old hashes, and its
    # 6 full blocks get new ones, not its last, block 1, which holds 4 tokens.
    # Prefix caching is run()'s default, as it is vLLM's.
    steps = {step: (tables(pool), pool.free_queue, set(pool.hashed)) for step, pool, _ in run()}
    assert steps[5] == ({"A": [1, 2, 6]}, [5, 7, 8, 9, 4, 3], {1, 2, 3, 4})
    assert steps[6] == ({"A": [1, 2, 6], "C": [5, 7]}, [8, 9, 4, 3], {1, 2, 3, 4, 5})
    assert steps[8] == ({"C": [5, 7]}, [6, 8, 9, 4, 3, 2, 1], {1, 2, 3, 4, 5})
    assert steps[9] == ({"C": [5, 7], "D": [6, 8, 9, 4, 3, 2, 1]}, [], {5, 6, 8, 9, 4, 3, 2})


def test_the_mental_model_picture_is_the_trace_after_step_6():
    pool = next(pool for step, pool, _ in run() if step == 6)
    lines = picture(pool).splitlines()
    assert lines[4].startswith("  logical 2: token  32     -> block 6")
    assert lines[8] == "  logical 1: tokens 16-29  -> block 7"
    assert lines[3].endswith("| null | A 0  | A 1  |free# |free# |")
    assert lines[6].endswith("| C 0  | A 2  | C 1  | free | free |")
    assert lines[-2:] == ["free queue, head first: [8, 9, 4#, 3#]",
                          "slot of A's token 32: block 6 * 16 + 0 = 96"]
    shown = (ROOT / "snippets/paged-attention/block_picture.out").read_text("utf-8")
    assert shown == picture(pool) + "\n"


def test_block_zero_is_the_null_block_and_never_handed_out():
    # BlockPool.__init__ pops the head of the queue (block 0) as the null block.
    pool = BlockPool(4)
    assert pool.null_block == 0 and pool.free_queue == [1, 2, 3]
    assert pool.allocate("A", 3 * BLOCK_SIZE) == [1, 2, 3]
    pool.free("A")
    assert 0 not in pool.free_queue and pool.num_free_blocks == 3


def test_free_queue_hands_out_from_the_head_and_freed_blocks_come_back_reversed():
    # get_new_blocks pops from the head; SingleTypeKVCacheManager.free passes the blocks
    # reversed and BlockPool.free_blocks prepends the unhashed ones in that order.
    pool = BlockPool(8)
    pool.allocate("A", 40)
    pool.allocate("B", 1)
    assert pool.free_queue == [5, 6, 7]
    pool.free("A")
    assert pool.free_queue == [3, 2, 1, 5, 6, 7]
    assert pool.allocate("C", 17) == [3, 2]


def test_with_caching_only_full_blocks_keep_a_hash_and_lose_it_when_reused():
    pool = BlockPool(8, enable_caching=True)
    pool.allocate("A", 40)  # blocks 1, 2 full (hashed), 3 partly filled
    assert pool.hashed == {1, 2}
    pool.free("A")
    assert pool.free_queue == [3, 4, 5, 6, 7, 2, 1]
    pool.allocate("B", 7 * BLOCK_SIZE)  # reaches the hashed blocks: they are evicted
    assert pool.block_table("B") == [3, 4, 5, 6, 7, 2, 1]
    assert pool.hashed == {3, 4, 5, 6, 7, 2, 1}  # B's own full blocks, hashed afresh
    pool.allocate("B", 7 * BLOCK_SIZE)  # no growth: nothing changes
    assert pool.num_free_blocks == 0


def test_usage_leaves_out_the_null_block():
    # BlockPool.get_usage: 1 - free / (num_gpu_blocks - 1); 0 when only the null block.
    pool = BlockPool(1000)
    assert pool.usage == 0.0
    pool.allocate("A", 500 * BLOCK_SIZE)
    assert pool.usage == 1.0 - 499 / 999 and repr(pool.usage) == "0.5005005005005005"
    assert BlockPool(1).usage == 0 and BlockPool(1).free_queue == []


def test_slot_mapping():
    # _compute_slot_mapping_kernel: block_table[pos // block_size] * block_size + pos % size.
    pool = BlockPool(10)
    pool.allocate("A", 20)
    pool.allocate("B", 5)
    pool.allocate("A", 33)
    assert pool.block_table("A") == [1, 2, 4]
    assert [pool.slot("A", p) for p in (0, 15, 16, 31, 32)] == [16, 31, 32, 47, 64]
    assert pool.slot("B", 4) == 3 * 16 + 4
    assert slot_of([7, 3, 9, 12, 4, 8, 15], 100) == 244
    assert slot_of([5], 3, block_size=4) == 23


def test_a_refused_allocation_changes_nothing():
    pool = BlockPool(5)
    pool.allocate("A", 20)
    before = (tables(pool), pool.free_queue, pool.usage, pool.num_tokens("A"))
    assert pool.allocate("A", 80) is None  # 3 more blocks, 2 are free
    assert pool.allocate("B", 65) is None  # 5 blocks
    assert (tables(pool), pool.free_queue, pool.usage, pool.num_tokens("A")) == before
    assert "B" not in pool.requests


def test_growing_within_a_block_adds_nothing_and_zero_tokens_hold_no_block():
    pool = BlockPool(5)
    assert pool.allocate("A", 0) == [] and pool.block_table("A") == []
    assert pool.allocate("A", 1) == [1]
    assert pool.allocate("A", 16) == []
    assert pool.allocate("A", 17) == [2]


@pytest.mark.parametrize(("call", "message"), [
    (lambda p: BlockPool(0), "num_gpu_blocks must be an integer of at least 1, got 0"),
    (lambda p: BlockPool(10, block_size=0), "block_size must be an integer of at least 1"),
    (lambda p: BlockPool(2.5), "num_gpu_blocks must be an integer of at least 1, got 2.5"),
    (lambda p: p.allocate("A", -1), "num_tokens must be an integer of at least 0, got -1"),
    (lambda p: p.allocate("A", 3.0), "num_tokens must be an integer of at least 0, got 3.0"),
    (lambda p: p.allocate("A", True), "num_tokens must be an integer"),
    (lambda p: p.allocate("", 3), "request_id must be a non-empty string"),
    (lambda p: p.allocate(7, 3), "request_id must be a non-empty string, got 7"),
    (lambda p: p.allocate("R", 10), "request 'R' holds 20 tokens: a block table only grows,"
                                     " it cannot shrink to 10"),
    (lambda p: p.free("X"), "unknown request 'X': it holds no blocks"),
    (lambda p: p.block_table("X"), "unknown request 'X'"),
    (lambda p: p.slot("X", 0), "unknown request 'X'"),
    (lambda p: p.slot("R", 20), r"position must be one of the 20 tokens of request 'R'"
                                r" \(0 to 19\), got 20"),
    (lambda p: p.slot("R", -1), "position must be one of the 20 tokens of request 'R'"),
    (lambda p: slot_of([1], 16), "position 16 is past the 1 blocks of this block table"),
    (lambda p: blocks_for(-5), "num_tokens must be an integer of at least 0, got -5"),
])
def test_bad_input_raises_a_value_error_naming_the_problem(call, message):
    pool = BlockPool(10)
    pool.allocate("R", 20)
    before = (tables(pool), pool.free_queue)
    with pytest.raises(ValueError, match=message):
        call(pool)
    assert (tables(pool), pool.free_queue) == before


def test_a_freed_request_is_gone():
    pool = BlockPool(4)
    pool.allocate("A", 5)
    pool.free("A")
    with pytest.raises(ValueError, match="unknown request 'A'"):
        pool.free("A")
    assert pool.allocate("A", 5) == [1]  # a new request of the same name


def test_blocks_for_rounds_up():
    assert [blocks_for(n) for n in (0, 1, 16, 17, 1000, 1199, 1200)] == [0, 1, 1, 2, 63, 75, 75]
    assert blocks_for(9, block_size=4) == 3


def test_the_pool_answers_the_schedulers_calls_without_a_prefix_cache():
    # KVCacheManager with prefix caching off: no hit, allocate_slots as allocate, None when full.
    pool = BlockPool(5)  # 4 blocks to hand out
    assert pool.get_computed_blocks(list(range(40))) == ([], 0)
    assert pool.allocate_slots("A", list(range(40)), 0, 16) == [1]
    # A waiting request must fit whole: 40 tokens take 3 blocks, 1 held, 3 free, 2 more.
    assert pool.allocate_slots("A", list(range(40)), 16, 16, full_sequence_must_fit=True) == [2]
    assert pool.allocate_slots("B", list(range(50)), 0, 16, full_sequence_must_fit=True) is None
    assert pool.allocate_slots("B", list(range(50)), 0, 16) == [3]
    pool.cache_blocks("A", list(range(40)), 32)  # nothing to cache
    assert (pool.hashed, pool.hits, pool.queries) == (set(), 0, 0)
