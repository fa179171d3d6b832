"""labs.block_sharing: copy-on-write, the prefix cache and the sharing simulation, on real values."""

from __future__ import annotations

import pytest

import labs.block_sharing as bs
from labs.block_table_svg import BlockTableDiagram
from labs.paged_attention import OutOfBlocksError, UnknownSequenceError


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
    assert (m.read("a"), m.read("b"), m.read("c")) == ([1, 2, 3, 4, 5, 6, 90], [1, 2, 3, 4, 5, 6, 70],
                                                       [1, 2, 3, 4, 5, 6, 80])
    assert [m.allocator.ref_count(b) for b in range(4)] == [3, 1, 1, 1]


def test_a_full_shared_block_gets_a_new_block_not_a_copy():
    m = bs.CachingBlockManager(4, 2)
    m.add_sequence("a", [1, 2])
    m.fork("a", "b")
    assert m.append_token("b", 3) == [] and m.tables["b"] == [0, 1] and m.tables["a"] == [0]


def test_the_prefix_cache_shares_full_blocks_only_and_forgets_freed_ones():
    m = bs.CachingBlockManager(8, 4)
    assert m.add_sequence("a", [1, 2, 3, 4, 5]) == [0, 1]
    assert m.add_sequence("b", [1, 2, 3, 4, 5]) == [0, 2]
    assert len(m.cached) == 1 and m.allocator.ref_count(0) == 2
    assert m.free_sequence("a") == [1] and m.cached  # block 0 is still b's
    assert m.free_sequence("b") == [2, 0] and m.cached == {}
    assert m.add_sequence("c", [9, 9, 9, 9]) == [0]  # block 0 reused for other tokens: a miss, not a stale hit
    assert m.add_sequence("d", [1, 2, 3, 4]) == [2] and m.read("c") == [9, 9, 9, 9]


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
    assert (bs.simulate_sharing("beam", work, width=4).saving
            > bs.simulate_sharing("parallel", work, width=4).saving)
    short, long = (bs.simulate_sharing("prefix", work, prefix_len=n).saving for n in (80, 341))
    assert 0 < short < long < 1


def test_the_parallel_case_counts_what_a_hand_count_gives():
    # Prompt 32 tokens (2 full blocks of 16), 2 samples, output 1 token each (the draw gives 1..1).
    sim = bs.simulate_sharing("parallel", [(32, 1)], width=2, block_size=16)
    # One step: each sample holds 3 blocks (2 prompt + 1 new); shared: 2 + 1 + 1.
    assert (sim.block_steps_shared, sim.block_steps_unshared) == (4, 6)


@pytest.mark.parametrize("kwargs, match", [
    ({"case": "greedy"}, "unknown case 'greedy'"),
    ({"width": 0}, "width must be >= 1"),
    ({"workload": []}, "workload is empty"),
    ({"workload": [(0, 3)]}, "prompt_len must be >= 1"),
])
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
