"""labs.block_sharing: copy-on-write, the prefix cache and the sharing simulation, on real values."""

from __future__ import annotations

import pytest

import labs.block_sharing as bs
from labs.block_table_svg import BlockTableDiagram
from labs.paged_attention import DoubleFreeError, OutOfBlocksError, UnknownSequenceError


def test_block_hash_is_chained_and_takes_lists_or_tuples():
    first = bs.block_hash(None, [1, 2, 3, 4])
    assert first == bs.block_hash(None, (1, 2, 3, 4))
    assert bs.block_hash(first, [5, 6]) != bs.block_hash(None, [5, 6])
    assert bs.block_hash(first, [5, 6]) != bs.block_hash(bs.block_hash(None, [1, 2, 3, 5]), [5, 6])
    with pytest.raises(TypeError, match=r"tokens\[1\] = 'x' is not a token id"):
        bs.block_hash(None, [1, "x"])
    with pytest.raises(TypeError, match="sequence of token ids"):
        bs.block_hash(None, "abcd")


def test_fork_then_copy_on_write_keeps_each_sequence_its_tokens():
    m = bs.CachingBlockManager(8, 4)
    m.add_sequence("a", [1, 2, 3, 4, 5, 6])
    m.fork("a", "b")
    m.fork("a", "c")
    assert [m.allocator.ref_count(b) for b in (0, 1)] == [3, 3]
    assert m.append_token("b", 70) == [(1, 2)]
    assert m.append_token("c", 80) == [(1, 3)]
    assert m.append_token("a", 90) == []  # the last owner writes in place
    assert (m.read("a"), m.read("b"), m.read("c")) == ([1, 2, 3, 4, 5, 6, 90], [1, 2, 3, 4, 5, 6, 70], [1, 2, 3, 4, 5, 6, 80])
    assert [m.allocator.ref_count(b) for b in range(4)] == [3, 1, 1, 1]


def test_a_full_shared_block_gets_a_new_block_not_a_copy():
    m = bs.CachingBlockManager(4, 2)
    m.add_sequence("a", [1, 2])
    m.fork("a", "b")
    assert m.append_token("b", 3) == [] and m.tables["b"] == [0, 1] and m.tables["a"] == [0]


def test_the_prefix_cache_shares_full_blocks_only_and_keeps_freed_ones_until_evicted():
    m = bs.CachingBlockManager(8, 4)
    assert m.add_sequence("a", [1, 2, 3, 4, 5]) == [0, 1]
    assert m.add_sequence("b", [1, 2, 3, 4, 5]) == [0, 2]
    assert len(m.cached) == 1 and m.allocator.ref_count(0) == 2
    assert m.free_sequence("a") == [1] and m.cached  # block 0 is still b's
    assert m.free_sequence("b") == [2, 0] and list(m.cached.values()) == [0]  # free, and still cached
    assert m.allocator.free_queue == [3, 4, 5, 6, 7, 1, 2, 0]
    assert m.add_sequence("d", [1, 2, 3, 4]) == [0] and m.evicted == []  # a hit on a free block wakes it
    assert m.allocator.free_queue == [3, 4, 5, 6, 7, 1, 2] and m.allocator.ref_count(0) == 1
    assert m.add_sequence("c", [9, 9, 9, 9]) == [3] and m.read("d") == [1, 2, 3, 4]


def test_the_design_docs_example_step_by_step():
    """vLLM's design docs, "Automatic Prefix Caching", Example: block size 4, 10 blocks, times 1 to 7."""
    m = bs.CachingBlockManager(10, 4)
    prompt_0 = list(range(100, 115))  # 15 tokens: 3 full blocks and 3 of 4
    assert m.add_sequence(0, prompt_0) == [0, 1, 2, 3] and sorted(m.cached.values()) == [0, 1, 2]
    m.append_token(0, 115)  # time 2: block 3 is full, so cached
    m.append_token(0, 116)  # time 3: a new block
    assert m.tables[0] == [0, 1, 2, 3, 4] and sorted(m.cached.values()) == [0, 1, 2, 3]
    prompt_1 = prompt_0[:10] + [7, 7, 7, 7]  # time 4: 14 tokens, the first 10 as request 0's
    assert m.add_sequence(1, prompt_1) == [0, 1, 5, 6]  # only 2 blocks (8 tokens) hit
    assert m.free_sequence(0) == [4, 3, 2]  # time 5: reverse order; 0 and 1 are request 1's
    assert m.free_sequence(1) == [6, 5, 1, 0]  # time 6
    assert m.allocator.free_queue == [7, 8, 9, 4, 3, 2, 6, 5, 1, 0]
    prompt_2 = prompt_0[:12] + list(range(200, 217))  # time 7: 29 tokens, the first 12 as request 0's
    assert m.add_sequence(2, prompt_2) == [0, 1, 2, 7, 8, 9, 4, 3]
    assert m.evicted == [3]  # the only cached block among those handed out
    assert m.allocator.free_queue == [6, 5]


def test_eviction_takes_the_least_recently_used_prefix_and_its_tail_first():
    m = bs.CachingBlockManager(4, 2)
    m.add_sequence("old", [1, 2, 3, 4])  # blocks 0, 1
    m.add_sequence("new", [5, 6, 7, 8])  # blocks 2, 3
    m.free_sequence("old")
    m.free_sequence("new")
    assert m.allocator.free_queue == [1, 0, 3, 2]  # old before new, each tail first
    m.add_sequence("x", [9, 9])
    assert m.evicted == [1] and m.add_sequence("again", [1, 2, 3, 4]) == [0, 3]  # the head survived
    assert m.evicted == [1, 3]  # the next least recently used: new's tail


def test_decoded_blocks_are_cached_once_full_and_v1_keeps_duplicates():
    """The design docs' "Duplicated blocks": a block table never changes an entry, so equal blocks coexist."""
    m = bs.CachingBlockManager(8, 4)
    m.add_sequence(1, [1, 2, 3, 4, 5, 6])
    for token in (7, 8, 9):
        m.append_token(1, token)
    assert m.tables[1] == [0, 1, 2] and sorted(m.cached.values()) == [0, 1]
    m.add_sequence(2, [1, 2, 3, 4, 5, 6])
    for token in (7, 8):
        m.append_token(2, token)
    assert m.tables[2] == [0, 3] and sorted(m.cached.values()) == [0, 1]  # block 3 duplicates 1, not cached
    assert m.add_sequence(3, [1, 2, 3, 4, 5, 6, 7, 8, 0]) == [0, 1, 4]  # a later prompt hits the decoded block
    off = bs.CachingBlockManager(8, 4, cache_decoded=False)
    off.add_sequence(1, [1, 2, 3, 4, 5, 6])
    off.append_token(1, 7), off.append_token(1, 8)
    assert list(off.cached.values()) == [0]


def test_a_cache_salt_isolates_tenants():
    system = list(range(50, 58))
    m = bs.CachingBlockManager(12, 4)
    assert m.add_sequence("a1", system + [1], cache_salt="tenant a") == [0, 1, 2]
    assert m.add_sequence("b1", system + [2], cache_salt="tenant b") == [3, 4, 5]  # no shared hit
    assert m.add_sequence("a2", system + [3], cache_salt="tenant a") == [0, 1, 6]  # same salt: hits
    assert m.add_sequence("n", system + [4]) == [7, 8, 9]  # no salt is a salt of its own
    salted = bs.block_hash(None, system[:4], ("tenant a",))
    # The salt enters the first block only; the second block differs through the chain.
    assert bs.block_hash(salted, system[4:]) != bs.block_hash(bs.block_hash(None, system[:4]), system[4:])
    with pytest.raises(TypeError, match="extra_keys must be None or a tuple"):
        bs.block_hash(None, [1], "tenant a")


def test_a_hit_on_a_free_cached_block_needs_a_free_queue_entry():
    m = bs.CachingBlockManager(2, 2)
    m.add_sequence("a", [1, 2])
    m.free_sequence("a")
    m.add_sequence("b", [3])  # block 1: one free block left, block 0, still cached
    with pytest.raises(OutOfBlocksError, match="2 needed, 1 free"):
        m.add_sequence("c", [1, 2, 5])  # waking block 0 and a new block for token 5
    assert m.allocator.free_queue == [0] and list(m.cached.values()) == [0] and "c" not in m.tables
    assert m.add_sequence("d", [1, 2]) == [0]


def test_the_lru_allocator_counts_and_refuses_a_double_free():
    pool = bs.LRUBlockAllocator(3, 4)
    a, b = pool.allocate(), pool.allocate()
    assert (pool.num_used, pool.num_free, pool.free(b), pool.free_queue) == (2, 1, 0, [2, 1])
    with pytest.raises(DoubleFreeError, match="Block 1 is already freed"):
        pool.free(b)
    assert pool.share(a) == 2 and pool.free(a) == 1 and pool.free_queue == [2, 1]


def test_errors_name_what_was_wrong_and_change_nothing():
    m = bs.CachingBlockManager(2, 2)
    m.add_sequence("a", [1, 2, 3])
    with pytest.raises(ValueError, match="'a' already exists"):
        m.add_sequence("a", [1])
    with pytest.raises(UnknownSequenceError, match="unknown sequence 'z'"):
        m.append_token("z", 1)
    with pytest.raises(OutOfBlocksError, match="2 needed, 0 free"):
        m.add_sequence("b", [5, 6, 7])
    assert m.seq_ids == ["a"] and m.allocator.num_used == 2
    m.fork("a", "b")
    with pytest.raises(OutOfBlocksError):  # b's copy-on-write needs a block
        m.append_token("b", 4)
    assert m.tables["b"] == [0, 1] and m.lengths["b"] == 3 and m.allocator.ref_count(1) == 2
    with pytest.raises(TypeError, match="not a token id"):
        m.append_token("a", 1.5)


@pytest.mark.parametrize("case", ["parallel", "beam"])
def test_one_sample_or_one_beam_shares_nothing(case):
    work = bs.sharing_workload(4, seed=3)
    sim = bs.simulate_sharing(case, work, width=1, block_size=16)
    assert sim.saving == 0.0 and sim.block_steps_shared > 0


def test_sharing_saves_more_with_more_samples_and_beams_and_longer_prefixes():
    work = bs.sharing_workload(16, seed=0)
    for case in ("parallel", "beam"):
        saved = [bs.simulate_sharing(case, work, width=k, block_size=16).saving for k in (2, 4, 6)]
        assert 0 < saved[0] < saved[1] < saved[2] < 1, (case, saved)
    assert bs.simulate_sharing("beam", work, width=4).saving > bs.simulate_sharing("parallel", work, width=4).saving
    short, long = (bs.simulate_sharing("prefix", work, prefix_len=n).saving for n in (80, 341))
    assert 0 < short < long < 1


def test_the_parallel_case_counts_what_a_hand_count_gives():
    # Prompt 32 tokens (2 full blocks of 16), 2 samples, output 1 token each (the draw gives 1..1).
    sim = bs.simulate_sharing("parallel", [(32, 1)], width=2, block_size=16)
    # One step: each sample holds 3 blocks (2 prompt + 1 new); shared: 2 + 1 + 1.
    assert (sim.block_steps_shared, sim.block_steps_unshared) == (4, 6)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"case": "greedy"}, "unknown case 'greedy'"),
        ({"width": 0}, "width must be >= 1"),
        ({"workload": []}, "workload is empty"),
        ({"workload": [(0, 3)]}, "prompt_len must be >= 1"),
    ],
)
def test_simulate_sharing_rejects_bad_input(kwargs, match):
    args = {"case": "parallel", "workload": [(4, 4)], **kwargs}
    with pytest.raises(ValueError, match=match):
        bs.simulate_sharing(**args)


def test_the_picture_marks_cached_blocks_and_reference_counts_that_disagree():
    m = bs.CachingBlockManager(6, 2)
    m.add_sequence("a", [1, 2, 3])
    m.add_sequence("b", [1, 2, 4])
    svg = BlockTableDiagram(m)._repr_svg_()
    assert "P0 cached" in svg and "×2" in svg and "mapped by" not in svg
    m.allocator.free(0)  # a bug: one reference fewer than the tables that map block 0
    diagram = BlockTableDiagram(m)
    assert "P0 has reference count 1 but 2 table(s) map it" in diagram.description()
    assert "count 1, mapped by 2" in diagram._repr_svg_()


def test_a_hash_collision_is_a_miss_not_a_false_hit():
    """hash(-1) == hash(-2) in CPython (and Pyodide): the two blocks' keys are equal, their tokens are not."""
    assert bs.block_hash(None, [-1] * 4) == bs.block_hash(None, [-2] * 4)
    m = bs.CachingBlockManager(8, 4)
    assert m.add_sequence(0, [-1] * 4) == [0]
    assert m.add_sequence(1, [-2] * 4) == [1]  # not [0]: block 0 holds other tokens
    assert m.read(0) == [-1] * 4 and m.read(1) == [-2] * 4
    assert m.cached == {bs.block_hash(None, [-1] * 4): 0}  # the key stays with the block that holds it
    # Same tokens after a colliding prefix: the later block's key collides too, and still misses.
    assert m.add_sequence(2, [-1] * 4 + [5] * 4) == [0, 2]
    assert m.add_sequence(3, [-2] * 4 + [5] * 4) == [3, 4]
    assert m.read(3) == [-2] * 4 + [5] * 4
    assert m.add_sequence(4, [-1] * 4 + [5] * 4) == [0, 2]  # a true hit still hits
    for seq in (4, 3, 2, 1, 0):
        m.free_sequence(seq)
    assert sorted(m.cached.values()) == [0, 2] and m.allocator.num_used == 0  # freed, still cached
    assert m.add_sequence(5, [-2] * 4 + [5] * 4) == [5, 6]  # a collision never hits, cached or not
    assert m.read(5) == [-2] * 4 + [5] * 4


def test_with_no_shared_prefix_the_prefix_case_saves_nothing():
    workload = bs.sharing_workload(8, seed=3, prompt_range=(16, 40), output_range=(4, 20))
    sim = bs.simulate_sharing("prefix", workload, prefix_len=0, block_size=4)
    assert sim.block_steps_shared == sim.block_steps_unshared and sim.saving == 0.0


def test_a_failed_add_leaves_nothing_behind():
    m = bs.CachingBlockManager(2, 4)
    with pytest.raises(OutOfBlocksError):
        m.add_sequence("a", list(range(9)))
    assert (m.tables, m.allocator.num_used, m.cached) == ({}, 0, {})


def test_the_legend_calls_the_badge_a_reference_count():
    m = bs.CachingBlockManager(6, 2)
    m.add_sequence("a", [1, 2, 3])
    m.fork("a", "b")
    svg = BlockTableDiagram(m)._repr_svg_()
    assert "×n = reference count: n block tables map the block" in svg
    assert "shared by n sequences" not in svg


def test_v1_parallel_sampling_shares_the_full_prompt_blocks_and_holds_what_v0_holds():
    """The partly filled prompt block is copied at the first decoding step (v0) or never shared (v1)."""
    work = bs.sharing_workload(8, seed=2)
    for k in (2, 4, 6):
        v0, v1 = (bs.simulate_sharing("parallel", work, width=k, engine=e) for e in ("v0", "v1"))
        assert (v0.block_steps_shared, v0.block_steps_unshared) == (v1.block_steps_shared, v1.block_steps_unshared)
        # Only full prompt blocks stay shared: (k - 1) of k copies saved, at most.
        assert 0 < v1.saving <= v1.prompt_share * (k - 1) / k
    with pytest.raises(ValueError, match="engine 'v1' models parallel sampling only"):
        bs.simulate_sharing("beam", work, width=2, engine="v1")
    with pytest.raises(ValueError, match="unknown engine 'v2'"):
        bs.simulate_sharing("parallel", work, engine="v2")


def test_with_equal_sample_lengths_the_saving_is_the_prompt_share_times_k_minus_1_over_k():
    # Prompt 32 tokens (2 full blocks), 3 samples of 1 token each: all live equally long.
    sim = bs.simulate_sharing("parallel", [(32, 1)], width=3, block_size=16, engine="v1")
    assert (sim.block_steps_shared, sim.block_steps_unshared, sim.block_steps_prompt) == (5, 9, 6)
    assert sim.saving == pytest.approx(sim.prompt_share * 2 / 3)


def test_match_prefix_looks_up_without_changing_anything_and_stops_at_max_hit_tokens():
    m = bs.CachingBlockManager(6, 2)
    m.add_sequence("a", [1, 2, 3, 4, 5])
    before = (dict(m.cached), m.allocator.free_queue, dict(m.tables))
    plan = m.match_prefix([1, 2, 3, 4, 9])
    assert [block for _, block in plan] == [0, 1, None] and plan[2][0] is None  # the partial block has no key
    assert (dict(m.cached), m.allocator.free_queue, dict(m.tables)) == before
    assert [block for _, block in m.match_prefix([1, 2, 3, 4], max_hit_tokens=3)] == [0, None]
    assert m.blocks_needed([1, 2, 3, 4], max_hit_tokens=3) == 1  # block 0 is in use: sharing it takes nothing
    m.add_sequence("b", [1, 2, 3, 4], max_hit_tokens=3)
    assert m.tables["b"] == [0, 3] and m.num_hit_blocks["b"] == 1
    assert m.cached[plan[1][0]] == 1  # the duplicate keeps the first block under the key (vLLM v1)
    m.free_sequence("a")
    assert m.blocks_needed([1, 2, 3, 4, 5]) == 2  # block 1 waits in the free queue: waking it takes an entry
    assert "a" not in m.num_hit_blocks
