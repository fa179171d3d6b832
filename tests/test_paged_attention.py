"""Tests for labs.paged_attention and labs.block_table_svg (Lab 3, PagedAttention)."""

import math
import random
import xml.etree.ElementTree as ET

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from labs.block_table_svg import BlockTableDiagram
from labs.paged_attention import (
    PAD_SLOT_ID,
    BlockAllocator,
    BlockManager,
    BlockTable,
    DoubleFreeError,
    OutOfBlocksError,
    PagedKVCache,
    PageFault,
    UnknownSequenceError,
    paged_attention,
    sample_workload,
    simulate_memory,
)

SVG = "{http://www.w3.org/2000/svg}"


# --- the lab's worked example: block size 16, block table [7, 1, 3], 48 tokens ---------------


@pytest.mark.parametrize("t, slot", [(0, 112), (15, 127), (16, 16), (31, 31), (32, 48), (47, 63)])
def test_translate_worked_example(t, slot):
    table = BlockTable.from_blocks([7, 1, 3], block_size=16, num_tokens=48)
    assert table.translate(t) == slot
    # the same value from first principles: logical block t // 16, offset t % 16
    assert slot == [7, 1, 3][t // 16] * 16 + t % 16


@pytest.mark.parametrize("t", [48, 49, 1000, -1, -48])
def test_page_fault_outside_written_tokens(t):
    table = BlockTable.from_blocks([7, 1, 3], block_size=16, num_tokens=48)
    with pytest.raises(PageFault) as info:
        table.translate(t)
    assert isinstance(info.value, IndexError)
    message = str(info.value)
    assert f"token {t} " in message and "length 48" in message and "block size 16" in message


def test_page_fault_in_last_partial_block():
    table = BlockTable.from_blocks([7, 1, 3], block_size=16, num_tokens=40)
    assert table.translate(39) == 3 * 16 + 7
    with pytest.raises(PageFault):
        table.translate(40)  # slot 56 exists in block 3 but was never written


@pytest.mark.parametrize("t", [1.0, "3", None, True])
def test_translate_rejects_non_int(t):
    with pytest.raises(TypeError):
        BlockTable.from_blocks([7, 1, 3], block_size=16).translate(t)


def test_from_blocks_validates():
    with pytest.raises(ValueError, match="fill 2 blocks, but 3"):
        BlockTable.from_blocks([7, 1, 3], block_size=16, num_tokens=32)
    with pytest.raises(ValueError, match="repeat"):
        BlockTable.from_blocks([1, 1], block_size=16)
    assert BlockTable.from_blocks([], block_size=16).num_tokens == 0


# --- allocator --------------------------------------------------------------------------------


def test_allocator_errors_and_messages():
    pool = BlockAllocator(2, block_size=16)
    a, b = pool.allocate(), pool.allocate()
    assert {a, b} == {0, 1} and pool.num_free == 0 and pool.num_used == 2
    with pytest.raises(OutOfBlocksError, match=r"^Out of memory! No free blocks are available\.") as info:
        pool.allocate()
    assert isinstance(info.value, MemoryError) and "2 blocks" in str(info.value)
    assert pool.free(a) == 0
    with pytest.raises(DoubleFreeError) as info:
        pool.free(a)
    assert str(info.value) == f"Double free! Block {a} is already freed."
    assert isinstance(info.value, ValueError)
    for bad in (2, -1, 99):
        with pytest.raises(ValueError, match=f"invalid physical block id {bad}"):
            pool.ref_count(bad)
    with pytest.raises(TypeError):
        pool.free("0")
    with pytest.raises(ValueError, match="free"):
        pool.share(a)  # a free block cannot gain a reference


def test_shared_block_returns_to_free_list_only_at_zero():
    pool = BlockAllocator(3)
    block = pool.allocate()
    assert pool.share(block) == 2
    assert pool.free(block) == 1 and pool.num_free == 2
    assert pool.free(block) == 0 and pool.num_free == 3


def test_append_tokens_takes_a_block_exactly_when_the_last_is_full():
    block_size = 4
    table = BlockTable(block_size, BlockAllocator(10, block_size))
    for n in range(1, 4 * block_size + 1):
        new = table.append_tokens(1)
        # token n-1 starts a new block iff it is the first of its block
        assert len(new) == (1 if (n - 1) % block_size == 0 else 0)
        assert len(table.physical_blocks) == math.ceil(n / block_size)
    assert table.append_tokens(0) == []
    assert len(table.append_tokens(9)) == 3  # 16 -> 25 tokens: ceil(25/4) - 4 = 3 new blocks


def test_append_out_of_blocks_changes_nothing():
    table = BlockTable(4, BlockAllocator(2, 4))
    table.append_tokens(5)
    with pytest.raises(OutOfBlocksError, match="2 needed, 0 free"):
        table.append_tokens(8)
    assert table.num_tokens == 5 and table.physical_blocks == [0, 1]


# --- manager: fork, copy-on-write, free, slot mapping -------------------------------------------


def _write_tokens(manager, cache, seq_id, start, values):
    for t, value in enumerate(values, start):
        cache.write(manager.translate(seq_id, t), [value, -value], [2 * value, 0.0])


def test_copy_on_write_returns_the_copy_and_keeps_parent_data():
    m, cache = BlockManager(num_blocks=6, block_size=4), PagedKVCache(6, 4, 2)
    m.add_sequence("parent")
    assert m.append("parent", 6) == []
    _write_tokens(m, cache, "parent", 0, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    parent_blocks = m.table("parent").physical_blocks
    m.fork("parent", "child")
    assert [m.allocator.ref_count(b) for b in parent_blocks] == [2, 2]

    copies = m.append("child", 1)  # token 6 lands in the shared, half-full last block
    assert len(copies) == 1
    src, dst = copies[0]
    assert src == parent_blocks[-1] and dst not in parent_blocks
    assert m.table("child").physical_blocks == [parent_blocks[0], dst]
    assert m.table("parent").physical_blocks == parent_blocks
    assert [m.allocator.ref_count(b) for b in (parent_blocks[0], src, dst)] == [2, 1, 1]

    cache.copy_block(src, dst)
    _write_tokens(m, cache, "child", 6, [70.0])
    assert cache.gather(m.table("parent"))[0] == [[v, -v] for v in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)]
    assert cache.gather(m.table("child"))[0] == [[v, -v] for v in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 70.0)]
    # the parent's last block is now exclusively its own: no second copy
    assert m.append("parent", 1) == []


def test_no_copy_when_shared_last_block_is_full():
    m = BlockManager(num_blocks=4, block_size=4)
    m.add_sequence("a")
    m.append("a", 8)
    m.fork("a", "b")
    assert m.append("b", 1) == []  # token 8 starts a fresh block; nothing shared is written
    assert m.table("b").physical_blocks[:2] == m.table("a").physical_blocks


def test_copy_on_write_out_of_blocks_changes_nothing():
    m = BlockManager(num_blocks=2, block_size=4)
    m.add_sequence("a")
    m.append("a", 5)
    m.fork("a", "b")
    with pytest.raises(OutOfBlocksError):
        m.append("b", 1)  # needs one block for the copy, none is free
    assert m.table("b").physical_blocks == m.table("a").physical_blocks == [0, 1]
    assert m.allocator.ref_count(1) == 2


def test_free_sequence_and_reads_after_free():
    m = BlockManager(num_blocks=4, block_size=4)
    table = m.add_sequence("a")
    m.append("a", 5)
    m.fork("a", "b")
    assert m.free_sequence("a") == []  # b still holds both blocks
    assert m.allocator.num_free == 2
    for read in (lambda: m.translate("a", 0), lambda: table.translate(0), lambda: m.free_sequence("a")):
        with pytest.raises(UnknownSequenceError) as info:
            read()
        assert isinstance(info.value, KeyError) and "'a'" in str(info.value)
        assert not str(info.value).startswith('"')  # readable message, not a repr
    # a new sequence reuses the blocks, and the stale table still refuses to read
    assert sorted(m.free_sequence("b")) == [0, 1]
    m.add_sequence("c")
    m.append("c", 8)
    with pytest.raises(UnknownSequenceError):
        table.translate(0)


def test_manager_rejects_duplicates_and_unknown():
    m = BlockManager(4)
    m.add_sequence(1)
    with pytest.raises(ValueError, match="already exists"):
        m.add_sequence(1)
    with pytest.raises(ValueError, match="already exists"):
        m.fork(1, 1)
    with pytest.raises(UnknownSequenceError):
        m.append(2, 1)


def test_slot_mapping_padded_batch():
    m = BlockManager(num_blocks=8, block_size=2)
    m.add_sequence("a")
    m.append("a", 3)  # blocks [0, 1]
    m.add_sequence("b")
    m.append("b", 1)  # block [2]
    assert m.slot_mapping(["a", "b"]) == [[0, 1, 2], [4, PAD_SLOT_ID, PAD_SLOT_ID]]
    assert m.slot_mapping(["b", "a"], [[0, -1], [2, 0]]) == [[4, -1], [2, 0]]
    with pytest.raises(ValueError, match="pad them"):
        m.slot_mapping(["a", "b"], [[0, 1], [0]])
    with pytest.raises(ValueError, match="follows padding"):
        m.slot_mapping(["a"], [[0, -1, 1]])
    with pytest.raises(PageFault):
        m.slot_mapping(["b"], [[1]])
    with pytest.raises(PageFault):
        m.slot_mapping(["a"], [[-2]])


# --- state machine ------------------------------------------------------------------------------


class PagedMemoryMachine(RuleBasedStateMachine):
    """Random allocate / append / fork / free / write-then-read against a plain model."""

    NUM_BLOCKS, BLOCK_SIZE = 10, 4

    def __init__(self):
        super().__init__()
        self.m = BlockManager(self.NUM_BLOCKS, self.BLOCK_SIZE)
        self.cache = PagedKVCache(self.NUM_BLOCKS, self.BLOCK_SIZE, 1)
        self.model = {}  # seq_id -> the value each token must read back
        self.next_id, self.next_value = 0, 1.0

    def _pick(self, index):
        return sorted(self.model)[index % len(self.model)]

    @rule()
    def add(self):
        self.m.add_sequence(self.next_id)
        self.model[self.next_id] = []
        self.next_id += 1

    @precondition(lambda self: self.model)
    @rule(index=st.integers(0, 50), n=st.integers(0, 6))
    def append_and_write(self, index, n):
        seq = self._pick(index)
        before, free_before = self.m.table(seq).physical_blocks, self.m.allocator.num_free
        try:
            copies = self.m.append(seq, n)
        except OutOfBlocksError:
            event("append: out of blocks")
            assert self.m.table(seq).physical_blocks == before
            assert self.m.allocator.num_free == free_before
            return
        for src, dst in copies:
            event("append: copy-on-write")
            assert src == before[-1] and self.m.table(seq).physical_blocks[len(before) - 1] == dst
            self.cache.copy_block(src, dst)
        for t in range(len(self.model[seq]), len(self.model[seq]) + n):
            self.cache.write(self.m.translate(seq, t), [self.next_value], [-self.next_value])
            self.model[seq].append(self.next_value)
            self.next_value += 1.0

    @precondition(lambda self: self.model)
    @rule(index=st.integers(0, 50))
    def fork(self, index):
        parent = self._pick(index)
        self.m.fork(parent, self.next_id)
        self.model[self.next_id] = list(self.model[parent])
        self.next_id += 1

    @precondition(lambda self: self.model)
    @rule(index=st.integers(0, 50))
    def free(self, index):
        seq = self._pick(index)
        self.m.free_sequence(seq)
        del self.model[seq]
        with pytest.raises(UnknownSequenceError):
            self.m.translate(seq, 0)

    @rule(block=st.integers(0, NUM_BLOCKS - 1))
    def double_free_is_refused(self, block):
        if self.m.allocator.ref_count(block) == 0:
            with pytest.raises(DoubleFreeError):
                self.m.allocator.free(block)

    @invariant()
    def reference_counts_match_tables(self):
        tables = [self.m.table(s).physical_blocks for s in self.model]
        users = [sum(block in t for t in tables) for block in range(self.NUM_BLOCKS)]
        counts = [self.m.allocator.ref_count(b) for b in range(self.NUM_BLOCKS)]
        assert counts == users  # shared <=> count >= 2, and the count is the number of users
        assert all(len(set(t)) == len(t) for t in tables)
        assert sum(counts) == sum(len(t) for t in tables)
        assert self.m.allocator.num_free == counts.count(0)
        assert self.m.allocator.num_free + self.m.allocator.num_used == self.NUM_BLOCKS

    @invariant()
    def every_written_token_reads_back(self):
        for seq, values in self.model.items():
            table = self.m.table(seq)
            assert table.num_tokens == len(values)
            assert len(table.physical_blocks) == math.ceil(len(values) / self.BLOCK_SIZE)
            assert [self.cache.read(slot)[0][0] for slot in table.slots()] == values
            assert [self.cache.read(slot)[1][0] for slot in table.slots()] == [-v for v in values]


PagedMemoryMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=30, deadline=None)
TestPagedMemoryMachine = PagedMemoryMachine.TestCase


# --- paged KV cache and paged attention -------------------------------------------------------


def reference_attention(q, k, v, scale):
    """softmax(q k^T * scale) v written out directly, one query row at a time."""
    out = []
    for q_row in q:
        logits = [scale * sum(a * b for a, b in zip(q_row, k_row)) for k_row in k]
        top = max(logits)
        weights = [math.exp(x - top) for x in logits]
        total = sum(weights)
        out.append([sum(w * v_row[c] for w, v_row in zip(weights, v)) / total for c in range(len(v[0]))])
    return out


def _scattered_cache(rng, num_tokens, block_size, head_dim, num_blocks):
    """Write random K, V for num_tokens tokens into a shuffled (non-contiguous) block table."""
    cache = PagedKVCache(num_blocks, block_size, head_dim)
    blocks = rng.sample(range(num_blocks), math.ceil(num_tokens / block_size))
    table = BlockTable.from_blocks(blocks, block_size, num_tokens)
    k = [[rng.uniform(-3, 3) for _ in range(head_dim)] for _ in range(num_tokens)]
    v = [[rng.uniform(-3, 3) for _ in range(head_dim)] for _ in range(num_tokens)]
    for t in range(num_tokens):
        cache.write(blocks[t // block_size] * block_size + t % block_size, k[t], v[t])
    return cache, table, k, v


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    num_tokens=st.integers(1, 40),
    block_size=st.sampled_from([1, 2, 3, 4, 16]),
    head_dim=st.integers(1, 6),
    n_q=st.integers(1, 3),
)
def test_paged_attention_equals_contiguous(seed, num_tokens, block_size, head_dim, n_q):
    rng = random.Random(seed)
    cache, table, k, v = _scattered_cache(rng, num_tokens, block_size, head_dim, num_blocks=48)
    q = [[rng.uniform(-3, 3) for _ in range(head_dim)] for _ in range(n_q)]
    assert cache.gather(table) == (k, v)
    expected = reference_attention(q, k, v, 1 / math.sqrt(head_dim))
    for got in (paged_attention(q, cache, table), paged_attention(q, cache, table.physical_blocks, num_tokens)):
        assert max(abs(a - b) for ge, ex in zip(got, expected) for a, b in zip(ge, ex)) <= 1e-12


def test_paged_attention_matches_labs_attention():
    attention = pytest.importorskip("labs.attention").attention  # the own-reference test above always runs
    rng = random.Random(7)
    cache, table, k, v = _scattered_cache(rng, 37, 16, 8, num_blocks=12)
    q = [[rng.gauss(0, 1) for _ in range(8)] for _ in range(4)]
    got, expected = paged_attention(q, cache, table), attention(q, k, v)
    assert max(abs(a - b) for ge, ex in zip(got, expected) for a, b in zip(ge, ex)) <= 1e-12


def test_paged_attention_prefix_scale_and_errors():
    rng = random.Random(3)
    cache, table, k, v = _scattered_cache(rng, 20, 4, 3, num_blocks=8)
    q = [[0.5, -1.0, 2.0]]
    got = paged_attention(q, cache, table, num_tokens=9, scale=0.25)  # attend to a prefix only
    expected = reference_attention(q, k[:9], v[:9], 0.25)
    assert max(abs(a - b) for a, b in zip(got[0], expected[0])) <= 1e-12
    with pytest.raises(PageFault):
        paged_attention(q, cache, table, num_tokens=21)
    with pytest.raises(ValueError, match="at least one key"):
        paged_attention(q, cache, table, num_tokens=0)
    with pytest.raises(ValueError, match="head_dim 3"):
        paged_attention([[1.0, 2.0]], cache, table)
    with pytest.raises(ValueError, match="nan is not a finite"):
        paged_attention([[math.nan, 0.0, 0.0]], cache, table)
    with pytest.raises(ValueError, match="block size 2"):
        cache.gather(BlockTable.from_blocks([0], block_size=2))


def test_cache_write_checks_slot_and_vectors():
    cache = PagedKVCache(2, 4, 2)
    cache.write(PAD_SLOT_ID, [9.0, 9.0], [9.0, 9.0])  # padding is skipped, as in vLLM
    assert all(row == [0.0, 0.0] for block in cache.k_cache for row in block)
    for slot in (8, -2):
        with pytest.raises(ValueError, match=f"slot {slot} "):
            cache.write(slot, [0.0, 0.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="length 3"):
        cache.write(0, [1.0, 2.0, 3.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="inf"):
        cache.write(0, [math.inf, 0.0], [0.0, 0.0])
    cache.write(5, [1.0, 2.0], [3.0, 4.0])
    assert cache.k_cache[1][1] == [1.0, 2.0] and cache.v_cache[1][1] == [3.0, 4.0]


# --- memory simulation ------------------------------------------------------------------------


def test_simulate_memory_hand_computed():
    # lengths 1, 16, 17, 100 at B = 16 take 1 + 1 + 2 + 7 = 11 blocks = 176 slots for 134 tokens;
    # contiguous reservation of 128 slots each takes 512 slots.
    sim = simulate_memory([1, 16, 17, 100], max_seq_len=128, block_size=16)
    assert (sim.num_tokens, sim.paged_blocks, sim.paged_slots, sim.contiguous_slots) == (134, 11, 176, 512)
    assert sim.contiguous_utilization == 134 / 512
    assert sim.paged_utilization == 134 / 176
    assert sim.paged_waste == pytest.approx(42 / 176)


@settings(max_examples=50, deadline=None)
@given(lengths=st.lists(st.integers(1, 512), min_size=1, max_size=30), block_size=st.sampled_from([1, 8, 16, 32]))
def test_simulate_memory_bounds(lengths, block_size):
    sim = simulate_memory(lengths, max_seq_len=512, block_size=block_size)
    mean = sum(lengths) / len(lengths)
    # each sequence wastes < block_size slots, all in its last block
    assert sim.paged_slots - sim.num_tokens < len(lengths) * block_size
    assert sim.paged_waste < block_size / mean
    assert sim.contiguous_utilization == pytest.approx(mean / 512)
    assert sim.paged_utilization >= sim.contiguous_utilization


def test_sample_workload_reproduces_the_papers_gap():
    lengths = sample_workload(200, max_seq_len=2048, seed=0)
    assert lengths == sample_workload(200, max_seq_len=2048, seed=0)
    assert lengths != sample_workload(200, max_seq_len=2048, seed=1)
    assert all(1 <= n <= 2048 for n in lengths) and len(set(lengths)) > 100
    assert min(lengths) < 256 and max(lengths) > 1024  # a mix of short and long sequences
    sim = simulate_memory(lengths, 2048, 16)
    assert sim.paged_waste < 0.04  # the paper: vLLM wastes under 4 %
    assert sim.contiguous_utilization < 0.5 and sim.paged_utilization > 0.9


def test_simulate_memory_rejects_bad_input():
    with pytest.raises(ValueError, match="empty"):
        simulate_memory([], 16)
    with pytest.raises(ValueError, match=r"seq_lengths\[1\] = 40"):
        simulate_memory([3, 40], max_seq_len=32)
    with pytest.raises(ValueError, match=r"seq_lengths\[0\] = 0"):
        simulate_memory([0], max_seq_len=32)


# --- the picture ------------------------------------------------------------------------------


def _forked_manager():
    m = BlockManager(num_blocks=6, block_size=4)
    m.add_sequence("prompt")
    m.append("prompt", 6)
    m.fork("prompt", "b<1> & 'x'")
    return m


def test_svg_parses_with_title_desc_and_ref_count():
    svg = BlockTableDiagram(_forked_manager())._repr_svg_()
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg" and root.get("role") == "img" and root.get("width") == "100%"
    assert root.get("viewBox").startswith("0 0 ")
    title, desc = root.find(SVG + "title"), root.find(SVG + "desc")
    assert "block size 4" in title.text
    assert "P0 (×2)" in desc.text and "P1 (×2)" in desc.text
    texts = [el.text for el in root.iter(SVG + "text")]
    assert texts.count("×2") == 2  # both blocks of the prompt are shared after the fork
    assert "b<1> & 'x'" in texts  # the id survives as text after XML parsing...
    assert "beam <1>" not in svg and "&lt;1&gt; &amp;" in svg  # ...because it was escaped
    assert "href" not in svg and svg.count("http") == 1  # only the xmlns namespace name


def test_svg_after_copy_on_write_and_from_lists():
    m = _forked_manager()
    m.append("b<1> & 'x'", 1)
    texts = [el.text for el in ET.fromstring(BlockTableDiagram(m)._repr_svg_()).iter(SVG + "text")]
    assert texts.count("×2") == 1  # only block 0 is still shared
    diagram = BlockTableDiagram([("a", [7, 1, 3], 40), ("b", [7], 16)], num_blocks=8, block_size=16)
    assert diagram.ref_counts[7] == 2 and diagram.ref_counts[1] == 1 and diagram.ref_counts[0] == 0
    assert "×2" in diagram._repr_svg_()
    with pytest.raises(ValueError, match="block 9"):
        BlockTableDiagram([("a", [9], 1)], num_blocks=8, block_size=16)
    with pytest.raises(ValueError, match="do not fit"):
        BlockTableDiagram([("a", [1], 17)], num_blocks=8, block_size=16)


def test_paged_attention_refuses_overflowing_logits():
    cache = PagedKVCache(2, 2, 2)
    cache.write(0, [1e308, 1e308], [1.0, 1.0])
    with pytest.raises(ValueError, match="the score of query 0 and key 0 is inf: scale . q . k overflows float64"):
        paged_attention([[1e308, 1e308]], cache, [0], num_tokens=1, scale=1.0)
    with pytest.raises(ValueError, match="invalid physical block id 5"):
        cache.gather([5], 1)


def test_the_diagram_is_inlined_as_html_so_it_follows_the_theme():
    from labs.block_table_svg import BlockTableDiagram

    manager = BlockManager(num_blocks=4, block_size=4)
    manager.add_sequence("a")
    manager.append("a", 5)
    html = BlockTableDiagram(manager)._repr_html_()
    assert html.startswith('<div class="block-table-diagram"><svg') and html.endswith("</svg></div>")
    assert "currentColor" in html


# Found by fuzzing (issue 17): copy-on-write could be bypassed through the table the manager
# hands out, letting two sequences write one slot.
def test_a_shared_partly_filled_block_cannot_be_written_through_the_table():
    from labs.paged_attention import BlockManager, SharedBlockError

    m = BlockManager(num_blocks=4, block_size=4)
    m.add_sequence("a")
    m.append("a", 6)
    m.fork("a", "b")
    with pytest.raises(SharedBlockError, match=r"physical block 1\) is partly filled and shared with 1 other"):
        m.table("b").append_tokens(1)
    assert m.table("b").num_tokens == 6  # nothing changed
    assert m.append("b", 1) == [(1, 2)]  # through the manager: copied first
    assert m.translate("a", 5) != m.translate("b", 6) and m.table("b").append_tokens(1) == []
    # A full shared block is not written into: a new block is taken, and that is allowed.
    m2 = BlockManager(num_blocks=4, block_size=4)
    m2.add_sequence("a")
    m2.append("a", 4)
    m2.fork("a", "b")
    assert m2.table("b").append_tokens(1) == [1]


# Found by fuzzing (issue 17): named errors when the objects are made, not AttributeErrors or hangs.
def test_bad_objects_are_refused_with_named_errors():
    from labs.paged_attention import MAX_CACHE_FLOATS, BlockTable, PagedKVCache, paged_attention

    with pytest.raises(TypeError, match=r"allocator must be a BlockAllocator or None, got True \(bool\)"):
        BlockTable(4, allocator=True)
    with pytest.raises(TypeError, match=r"cache must be a PagedKVCache, got None"):
        paged_attention([[1.0]], None, [0])
    with pytest.raises(ValueError, match=f"expected at most {MAX_CACHE_FLOATS:,}"):
        PagedKVCache(2**62, 16, 8)  # hung allocating


def test_the_block_table_picture_refuses_bad_arguments_when_made():
    import labs.paged_attention as pa
    from labs.block_table_svg import BlockTableDiagram

    m = pa.BlockManager(8, 4)
    m.add_sequence("a")
    m.append("a", 5)
    with pytest.raises(TypeError, match=r"title must be a str or None, got True \(bool\)"):
        BlockTableDiagram(m, title=True)
    with pytest.raises(TypeError, match=r"block_size must be an int >= 1, got True \(bool\)"):
        BlockTableDiagram(m, block_size=True)
    with pytest.raises(TypeError, match=r"num_blocks must be an int >= 1, got '8' \(str\)"):
        BlockTableDiagram(m, num_blocks="8")
