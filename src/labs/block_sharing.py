"""Sharing KV-cache blocks: fork and copy-on-write, and a prefix cache as vLLM v1 keeps it.

After Kwon et al., "Efficient Memory Management for Large Language Model Serving
with PagedAttention", SOSP 2023 (vLLM), and vLLM v1's prefix cache (vLLM design
docs, "Automatic Prefix Caching"; ``vllm/v1/core/kv_cache_utils.py`` and
``block_pool.py``).

Two generations of sharing live here:

- **The paper's (vLLM v0):** sequences that start alike map the same physical
  blocks, counted by reference (section 4.4); a fork shares every block, and a
  sequence about to write into a partly filled block that others share first
  copies it (copy-on-write).
- **vLLM v1's prefix cache:** every *full* block is keyed by
  ``hash((parent_hash, block tokens, extra_keys))`` (``hash_block_tokens``), the
  extra keys carrying what else makes the block unique: what changes its keys and
  values (a LoRA adapter, multimodal inputs, prompt embeddings) and a ``cache_salt``
  in the first block, which changes nothing but isolates tenants. A block whose
  reference count falls to 0 *stays cached*: it waits in a free queue, least
  recently used first, and is evicted only when a new block is needed
  (``FreeKVCacheBlockQueue``); a finished request's blocks join the queue last
  block first, so a prefix's tail is evicted before its head. Blocks filled by
  decoding are cached once full. v1 does not fork for sampling: ``n > 1`` samples are
  ``n`` requests that share full blocks through the cache, and block tables only
  grow (vLLM PR #10980; design docs, "Duplicated blocks").

:class:`CachingBlockManager` does both (fork and copy-on-write for the paper's
cases, the v1 cache for prompts and decoded blocks); it is the reference for the
lab's second exercise. :func:`simulate_sharing` counts the blocks sharing saves in
the paper's cases (section 6.3: parallel sampling and beam search; section 6.4:
shared prefix), with v0's fork or v1's separate requests.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from labs.paged_attention import (
    DEFAULT_BLOCK_SIZE,
    MAX_COUNT,
    LRUBlockAllocator,
    OutOfBlocksError,
    UnknownSequenceError,
    blocks_for,
    check_int,
)

# The most token slots (num_blocks x block_size) in a CachingBlockManager's pool, a list in memory:
# paged_attention's MAX_COUNT blocks of vLLM's 16 slots. Requests in a workload share MAX_COUNT.
MAX_POOL_SLOTS = MAX_COUNT * DEFAULT_BLOCK_SIZE

__all__ = [
    "CachingBlockManager",
    "LRUBlockAllocator",
    "SharingSimulation",
    "block_hash",
    "describe_workload",
    "sharing_workload",
    "simulate_sharing",
]


def _tokens(name: str, tokens) -> tuple[int, ...]:
    if isinstance(tokens, (str, bytes)) or not hasattr(tokens, "__iter__"):
        raise TypeError(f"{name} must be a sequence of token ids (ints), got {tokens!r}")
    tokens = tuple(tokens)
    for i, t in enumerate(tokens):
        if isinstance(t, bool) or not isinstance(t, int):
            raise TypeError(f"{name}[{i}] = {t!r} is not a token id (an int)")
    return tokens


def block_hash(parent_hash, tokens, extra_keys=None) -> int:
    """Prefix-cache key of one full block: its tokens, every token before them, and its extra keys.

    Args:
        parent_hash: the key of the previous block of the sequence, or None
            for its first block.
        tokens: (block_size,) token ids of this block.
        extra_keys: None, or a tuple of what else changes this block's keys
            and values: in vLLM v1 a LoRA adapter's name, multimodal input
            hashes, and a request's ``cache_salt`` (first block only).

    Returns an int: Python's ``hash`` of ``(parent_hash, tokens, extra_keys)``,
    the tuple vLLM v1's ``hash_block_tokens`` hashes. Equal inputs give equal
    keys within one interpreter (a str salt hashes differently in another
    process, and values differ between CPython builds, e.g. 64-bit and
    Pyodide's 32-bit). Chaining makes a block's key depend on the whole prefix,
    so the same tokens at another position, or after another prefix, or with
    another salt, get another key. Like vLLM's builtin hash it may collide in
    principle (vLLM offers SHA-256 for that). Raises TypeError for a non-int
    token. Source: vLLM design docs, "Automatic Prefix Caching" (parent hash,
    block tokens, extra hashes); ``vllm/v1/core/kv_cache_utils.py``.

    >>> first = block_hash(None, [1, 2, 3, 4])
    >>> first == block_hash(None, (1, 2, 3, 4)), block_hash(first, [1, 2, 3, 4]) == first
    (True, False)
    >>> block_hash(None, [1, 2, 3, 4], ("tenant a",)) == first
    False
    """
    if extra_keys is not None and not isinstance(extra_keys, tuple):
        raise TypeError(f"extra_keys must be None or a tuple, got {extra_keys!r}")
    return hash((parent_hash, _tokens("tokens", tokens), extra_keys))


class CachingBlockManager:
    """Block tables over one pool: fork and copy-on-write (the paper), and vLLM v1's prefix cache.

    Args:
        num_blocks: pool size, in physical blocks (>= 1).
        block_size: token slots per block, B (>= 1).
        cache_decoded: also cache a block once decoding fills it (vLLM v1
            does); False caches prompt blocks only.

    Attributes:
        allocator: the LRUBlockAllocator (free queue and reference counts).
        tables: seq_id -> its block table, (num_logical_blocks,) physical ids.
        lengths: seq_id -> tokens written.
        cached: block hash -> physical block, for full blocks; a block stays
            here after its reference count falls to 0, until it is evicted.
        evicted: physical blocks dropped from the cache to be reused, in order.
        pool: (num_blocks * block_size,) the token id in each slot (None if
            never written); it stands in for the slot's key and value.

    A finished sequence's blocks join the free queue last block first, so the
    tail of a prefix is evicted before its head; a block is evicted only when
    :meth:`allocate` hands it out for new tokens. Source: Kwon et al. 2023,
    sections 4.2-4.4 (fork, copy-on-write); vLLM design docs, "Automatic Prefix
    Caching" (free, eviction, duplicated blocks); ``vllm/v1/core/block_pool.py``
    and ``single_type_kv_cache_manager.py`` (``free``: ``reversed(req_blocks)``).

    >>> m = CachingBlockManager(num_blocks=8, block_size=4)
    >>> m.add_sequence("a", [1, 2, 3, 4, 5, 6]), m.fork("a", "b")
    ([0, 1], [0, 1])
    >>> m.append_token("b", 70), m.tables["b"], m.read("b")
    ([(1, 2)], [0, 2], [1, 2, 3, 4, 5, 6, 70])
    >>> m.add_sequence("c", [1, 2, 3, 4, 9])  # block 0 is a cache hit
    [0, 3]
    >>> for seq in ("a", "b", "c"):
    ...     _ = m.free_sequence(seq)
    >>> m.add_sequence("d", [1, 2, 3, 4]), m.allocator.ref_count(0)  # still cached after the end
    ([0], 1)
    """

    def __init__(self, num_blocks: int, block_size: int = DEFAULT_BLOCK_SIZE, cache_decoded: bool = True):
        self.allocator = LRUBlockAllocator(num_blocks, block_size)
        if num_blocks * block_size > MAX_POOL_SLOTS:
            raise ValueError(
                f"a pool of {num_blocks:,} blocks x {block_size:,} slots is {num_blocks * block_size:,} "
                f"slots; expected at most {MAX_POOL_SLOTS:,} (labs.block_sharing.MAX_POOL_SLOTS)"
            )
        self.block_size = block_size
        self.cache_decoded = bool(cache_decoded)
        self.tables: dict = {}
        self.lengths: dict = {}
        self.cached: dict = {}
        self.evicted: list[int] = []
        self._hash_of: dict[int, int] = {}  # cached block -> its key in `cached`, to evict it
        self._prefix_of: dict[int, tuple] = {}  # cached block -> the tokens up to its end, to verify a hit
        self._keys: dict = {}  # seq_id -> keys of its leading full blocks, to chain the next one
        self._salt: dict = {}  # seq_id -> its cache_salt (None: none)
        self.num_hit_blocks: dict = {}  # seq_id -> leading prompt blocks that were prefix-cache hits
        self.pool: list = [None] * (num_blocks * block_size)  # (num_blocks * B,)

    @property
    def seq_ids(self) -> list:
        """Ids of the live sequences, in the order they were added."""
        return list(self.tables)

    def _table(self, seq_id) -> list[int]:
        if seq_id not in self.tables:
            raise UnknownSequenceError(f"unknown sequence {seq_id!r} (never added, or already freed)")
        return self.tables[seq_id]

    def _new(self, seq_id) -> None:
        if seq_id in self.tables:
            raise ValueError(f"sequence {seq_id!r} already exists")

    def slots(self, seq_id) -> list[int]:
        """Slot of every token of ``seq_id``: (num_tokens,) ``table[t // B] * B + t % B``."""
        table, bs = self._table(seq_id), self.block_size
        return [table[t // bs] * bs + t % bs for t in range(self.lengths[seq_id])]

    def read(self, seq_id) -> list:
        """The tokens of ``seq_id`` read through its block table: (num_tokens,) token ids."""
        return [self.pool[s] for s in self.slots(seq_id)]

    def copy_block(self, src: int, dst: int) -> None:
        """Copy every slot of physical block ``src`` into ``dst`` (the copy a copy-on-write needs).

        Raises TypeError / ValueError unless both are physical block ids, 0 <= id < num_blocks
        (a negative id would slice the pool from its end and scramble it).

        >>> m = CachingBlockManager(2, block_size=2)
        >>> m.copy_block(-1, 0)
        Traceback (most recent call last):
        ValueError: invalid physical block id -1: expected 0 <= id < 2
        """
        self.allocator._check_block(src)
        self.allocator._check_block(dst)
        bs = self.block_size
        self.pool[dst * bs : (dst + 1) * bs] = self.pool[src * bs : (src + 1) * bs]

    def allocate(self) -> int:
        """A block for new tokens: the front of the free queue, evicted from the prefix cache if it was cached.

        Raises OutOfBlocksError when every block is in use.
        """
        block = self.allocator.allocate()
        key = self._hash_of.pop(block, None)
        if key is not None:  # the least recently used cached block gives way
            del self.cached[key], self._prefix_of[block]
            self.evicted.append(block)
        return block

    def _register(self, block: int, key: int, prefix: tuple) -> None:
        """Cache a full block under ``key`` unless the key is taken (v1 keeps the first; tables never change)."""
        if key not in self.cached:
            self.cached[key], self._hash_of[block], self._prefix_of[block] = block, key, prefix

    @staticmethod
    def _extra_keys(start: int, cache_salt):
        # vLLM v1 puts the salt in the first block's key only: every later key
        # chains from it, so one salt isolates the whole prefix.
        return (cache_salt,) if start == 0 and cache_salt is not None else None

    def match_prefix(self, prompt, cache_salt=None, max_hit_tokens=None) -> list[tuple]:
        """Look a prompt's blocks up in the prefix cache, changing nothing: one ``(key, block)`` per block.

        Args:
            prompt: (num_tokens,) token ids.
            cache_salt: as for :meth:`add_sequence`.
            max_hit_tokens: hit at most this many leading tokens (None: all).
                vLLM v1 passes ``num_tokens - 1``: a prompt cached to its last
                token still computes that token, for its logits.

        Returns (ceil(num_tokens / B),) pairs: ``key`` is the block's prefix-cache
        key (None for a partly filled block), ``block`` the cached physical block that holds it, or None
        for a miss. Hits come first: the lookup stops at the first miss, as
        vLLM's ``find_longest_cache_hit`` does. Raises TypeError for a non-int token.

        >>> m = CachingBlockManager(4, block_size=2)
        >>> _ = m.add_sequence("a", [1, 2, 3])
        >>> [block for _, block in m.match_prefix([1, 2, 3, 4])], m.match_prefix([1, 2], max_hit_tokens=1)[0][1]
        ([0, None], None)
        """
        prompt, bs = _tokens("prompt", prompt), self.block_size
        limit = len(prompt) if max_hit_tokens is None else check_int("max_hit_tokens", max_hit_tokens, 0)
        plan, parent, hitting = [], None, True  # (key or None, cached block or None) per block
        for start in range(0, len(prompt), bs):
            chunk = prompt[start : start + bs]
            if len(chunk) < bs:  # a partly filled block is never cached
                plan.append((None, None))
                continue
            parent = block_hash(parent, chunk, self._extra_keys(start, cache_salt))
            block = self.cached.get(parent) if hitting and start + bs <= limit else None
            # A hit must hold these very tokens after this very prefix. vLLM trusts
            # its hash (collisions are negligible with SHA-256), but Python's hash of
            # small ints collides trivially (hash(-1) == hash(-2)), and a false hit
            # would make a sequence read another's keys and values. So compare the
            # cached block's whole prefix; on a mismatch, a miss (its key stays with
            # the block that holds it: _register keeps the first).
            if block is not None and self._prefix_of[block] != prompt[: start + bs]:
                block = None
            plan.append((parent, block))
            hitting = block is not None
        return plan

    def blocks_needed(self, prompt, cache_salt=None, max_hit_tokens=None) -> int:
        """Free-queue entries :meth:`add_sequence` would take: one per miss, and one per hit on a free cached block.

        >>> m = CachingBlockManager(4, block_size=2)
        >>> _ = m.add_sequence("a", [1, 2]); _ = m.free_sequence("a")
        >>> m.blocks_needed([1, 2, 3]), m.blocks_needed([1, 2, 3], max_hit_tokens=2)
        (2, 2)
        """
        plan = self.match_prefix(prompt, cache_salt, max_hit_tokens)
        return sum(1 for _, block in plan if block is None or self.allocator.ref_count(block) == 0)

    def add_sequence(self, seq_id, prompt, cache_salt=None, max_hit_tokens=None) -> list[int]:
        """Map a prompt's blocks; return the new block table, (ceil(len(prompt) / B),) physical ids.

        Each full block is looked up in the prefix cache by
        ``block_hash(parent, tokens, extra_keys)``, up to the first miss, as
        vLLM's ``find_longest_cache_hit`` does (:meth:`match_prefix`): a hit shares the cached block
        (reference count + 1; a hit on a free cached block takes it out of the
        free queue), a miss allocates one and registers it. A hit whose block
        holds other tokens (a hash collision) counts as a miss and is not
        registered. A partly filled last block is never cached (the sequence
        will write into it). ``cache_salt`` (any hashable, e.g. a tenant's
        secret) enters the first block's key: prompts with different salts
        share nothing. ``max_hit_tokens`` caps the hit (see :meth:`match_prefix`);
        ``self.num_hit_blocks[seq_id]`` records the blocks that hit. Raises ValueError for an existing id, TypeError for a
        non-int token, OutOfBlocksError (nothing changed) when the pool is short.
        """
        self._new(seq_id)
        prompt, bs = _tokens("prompt", prompt), self.block_size
        plan = self.match_prefix(prompt, cache_salt, max_hit_tokens)
        misses = sum(block is None for _, block in plan)
        woken = sum(1 for _, block in plan if block is not None and self.allocator.ref_count(block) == 0)
        if misses + woken > self.allocator.num_free:  # check first: a failed add leaves nothing behind
            raise OutOfBlocksError(
                f"Out of memory! No free blocks are available. ({misses + woken} needed, {self.allocator.num_free} free)"
            )
        for _, block in plan:  # touch the hits first, so no allocation below evicts them
            if block is not None:
                self.allocator.share(block)
        table = []
        for key, block in plan:
            if block is None:
                block = self.allocate()
                if key is not None:  # a miss on a full block: register it
                    self._register(block, key, prompt[: len(table) * bs + bs])
            table.append(block)
        self.tables[seq_id], self.lengths[seq_id] = table, len(prompt)
        self._keys[seq_id] = [key for key, _ in plan if key is not None]
        self._salt[seq_id] = cache_salt
        self.num_hit_blocks[seq_id] = len(plan) - misses
        for slot, token in zip(self.slots(seq_id), prompt):
            self.pool[slot] = token
        return table

    def fork(self, parent, child) -> list[int]:
        """Make ``child`` share every block of ``parent`` (each reference count + 1); return its table.

        The paper's fork (vLLM v0); vLLM v1 runs each sample as its own request.
        """
        source = self._table(parent)
        self._new(child)
        for block in source:
            self.allocator.share(block)
        self.tables[child], self.lengths[child] = list(source), self.lengths[parent]
        self._keys[child], self._salt[child] = list(self._keys[parent]), self._salt[parent]
        return self.tables[child]

    def append_token(self, seq_id, token: int) -> list[tuple[int, int]]:
        """Write one token at the end of ``seq_id``; return the block copies ``[(src, dst)]`` made first.

        A full last block (or none) gets a new block after it. A partly filled
        last block that other sequences share (reference count >= 2) is
        copied first: a new block ``dst`` gets ``src``'s slots, ``src`` loses
        one reference and ``dst`` takes its place in this table
        (copy-on-write). A block this token fills enters the prefix cache
        (``cache_decoded``), unless an equal block is cached already: vLLM v1
        then keeps both, since a block table never changes an entry. Raises
        OutOfBlocksError (nothing changed) when no block is free, TypeError
        for a non-int token.
        """
        table, n, bs = self._table(seq_id), self.lengths[seq_id], self.block_size
        (token,) = _tokens("token", [token])
        copies = []
        if n % bs == 0:  # the last block is full, or there is none
            table.append(self.allocate())
        elif self.allocator.ref_count(table[-1]) > 1:
            src, dst = table[-1], self.allocate()
            self.copy_block(src, dst)
            self.allocator.free(src)  # the other sequences keep their reference
            table[-1] = dst
            copies.append((src, dst))
        self.pool[table[n // bs] * bs + n % bs] = token
        self.lengths[seq_id] = n + 1
        if self.cache_decoded and (n + 1) % bs == 0:  # the token filled its block
            keys, start = self._keys[seq_id], n + 1 - bs
            tokens = self.read(seq_id)
            key = block_hash(keys[-1] if keys else None, tokens[start:], self._extra_keys(start, self._salt[seq_id]))
            keys.append(key)
            self._register(table[-1], key, tuple(tokens))
        return copies

    def free_sequence(self, seq_id) -> list[int]:
        """Drop ``seq_id``: one reference fewer on each of its blocks; return those that became free.

        Its blocks are released last block first, so they join the free queue
        tail first and a prefix's last blocks are evicted before its first
        ones (vLLM v1: the last block hashes more tokens and is less likely to
        be reused). A freed cached block stays in the prefix cache until
        :meth:`allocate` hands it out again.
        """
        table = self._table(seq_id)
        del self.tables[seq_id], self.lengths[seq_id], self._keys[seq_id], self._salt[seq_id]
        self.num_hit_blocks.pop(seq_id, None)
        return [b for b in reversed(table) if self.allocator.free(b) == 0]


@dataclass(frozen=True)
class SharingSimulation:
    """Blocks held with and without sharing, summed over decoding steps.

    ``block_steps_*`` add up, at every step, the physical blocks held by all
    live sequences: the time-average of KV memory in blocks, times the steps.
    ``block_steps_prompt`` is the part of ``block_steps_unshared`` spent on
    the prompt's *full* blocks (for ``"prefix"``: the shared prefix's): in
    parallel sampling, all that sharing keeps (a partly filled last block is
    copied, or never shared, from the first decoding step on).
    """

    case: str
    block_size: int
    num_requests: int
    width: int
    block_steps_shared: int
    block_steps_unshared: int
    block_steps_prompt: int = 0
    engine: str = "v0"

    @property
    def saving(self) -> float:
        """Blocks saved by sharing over blocks without sharing (the paper's Fig. 15 measure)."""
        return 1.0 - self.block_steps_shared / self.block_steps_unshared

    @property
    def prompt_share(self) -> float:
        """Full prompt blocks' share of the block-steps without sharing: ``block_steps_prompt / block_steps_unshared``."""
        return self.block_steps_prompt / self.block_steps_unshared


def sharing_workload(num_requests: int = 32, seed: int = 0, prompt_range=(8, 40), output_range=(16, 128)) -> list[tuple[int, int]]:
    """Reproducible (prompt_len, output_len) pairs, uniform in the given inclusive ranges, in tokens.

    Short instruction-style requests; integer draws only, so CPython and
    Pyodide give the same list. Raises ValueError for an empty range, or for
    num_requests < 1 or above ``labs.paged_attention.MAX_COUNT`` (100,000).

    >>> sharing_workload(2, seed=1) == sharing_workload(2, seed=1)
    True
    """
    check_int("num_requests", num_requests, 1, MAX_COUNT)
    for name, (low, high) in (("prompt_range", prompt_range), ("output_range", output_range)):
        if not 1 <= check_int(f"{name}[0]", low) <= check_int(f"{name}[1]", high):
            raise ValueError(f"{name} = {(low, high)}: expected 1 <= low <= high")
    rng = random.Random(check_int("seed", seed))
    return [(rng.randint(*prompt_range), rng.randint(*output_range)) for _ in range(num_requests)]


def describe_workload(workload) -> str:
    """One line on a workload of (prompt_len, output_len) pairs: count, ranges and means, in tokens.

    Raises TypeError unless each pair holds two ints, ValueError for an empty
    workload or a negative length.

    >>> describe_workload([(8, 20), (10, 40)])
    '2 requests, prompts 8-10 tokens (mean 9), outputs 20-40 (mean 30)'
    """
    if isinstance(workload, (str, bytes)) or not hasattr(workload, "__iter__"):
        raise TypeError(f"workload must be a list of (prompt_len, output_len) pairs, got {type(workload).__name__}")
    pairs = list(workload)
    if not pairs:
        raise ValueError("workload is empty; expected at least one (prompt_len, output_len) pair")
    for i, pair in enumerate(pairs):
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise TypeError(f"workload[{i}] = {pair!r:.60}; expected a (prompt_len, output_len) pair of token counts")
        check_int(f"workload[{i}][0] (prompt_len)", pair[0], 0)
        check_int(f"workload[{i}][1] (output_len)", pair[1], 0)
    prompts, outputs = [p for p, _ in pairs], [o for _, o in pairs]
    return (
        f"{len(pairs)} requests, prompts {min(prompts)}-{max(prompts)} tokens "
        f"(mean {sum(prompts) / len(prompts):.0f}), outputs {min(outputs)}-{max(outputs)} "
        f"(mean {sum(outputs) / len(outputs):.0f})"
    )


def simulate_sharing(
    case: str, workload, width: int = 1, block_size: int = DEFAULT_BLOCK_SIZE, prefix_len: int = 0, seed: int = 0, engine: str = "v0"
) -> SharingSimulation:
    """Count KV blocks held with sharing (a CachingBlockManager) and without, in one of the paper's cases.

    Args:
        case: ``"parallel"`` (each request's prompt continued by ``width``
            samples, each with its own output length drawn around the
            request's), ``"beam"`` (``width`` beams; at each step every beam
            continues one of the previous step's beams, chosen at random, and
            the others are freed, as a beam search's pruning does), or
            ``"prefix"`` (every prompt starts with the same ``prefix_len``
            tokens, one sequence per request).
        workload: (num_requests,) (prompt_len, output_len) pairs, in tokens.
        width: samples per request (parallel) or beam width (beam), >= 1.
        block_size: slots per block, B.
        prefix_len: tokens of the shared prefix ("prefix" only).
        seed: seed for the random choices (output lengths, beam parents).
        engine: ``"v0"``: parallel samples are forks of the prompt, sharing
            every prompt block, its partly filled last one too until
            copy-on-write (the paper's design); ``"v1"``: each sample is its
            own request with the same prompt, sharing only the prompt's full
            blocks through the prefix cache (vLLM PR #10980). ``"v1"`` is for
            ``"parallel"`` only.

    Returns a SharingSimulation. Requests run one after another, each alone
    in the pool, so ``block_steps`` is the sum over requests of the blocks
    held at every decoding step. Raises ValueError for an unknown case or
    engine, or a bad size. Source: Kwon et al. 2023, section 6.3 (Fig. 15:
    6.1-9.8 % saved in parallel sampling, 37.6-55.2 % in beam search,
    OPT-13B on Alpaca) and section 6.4 (shared prefix; the paper reports
    throughput).

    >>> sim = simulate_sharing("parallel", [(32, 8)], width=2, block_size=16)
    >>> sim.block_steps_shared < sim.block_steps_unshared
    True
    """
    if case not in ("parallel", "beam", "prefix"):
        raise ValueError(f"unknown case {case!r}: expected 'parallel', 'beam' or 'prefix'")
    if engine not in ("v0", "v1"):
        raise ValueError(f"unknown engine {engine!r}: expected 'v0' or 'v1'")
    if engine == "v1" and case != "parallel":
        raise ValueError(f"engine 'v1' models parallel sampling only, got case {case!r}")
    check_int("width", width, 1)
    check_int("block_size", block_size, 1)
    check_int("prefix_len", prefix_len, 0)
    pairs = [(check_int("prompt_len", p, 1), check_int("output_len", o, 1)) for p, o in workload]
    if not pairs:
        raise ValueError("workload is empty; expected at least one (prompt_len, output_len) pair")
    rng = random.Random(check_int("seed", seed))
    shared = unshared = prompt_steps = 0
    if case == "prefix":  # all requests in one batch: they are alive together
        prefix = list(range(prefix_len))
        longest = max(o for _, o in pairs)
        pool = sum(blocks_for(prefix_len + p + o, block_size) for p, o in pairs)
        m = CachingBlockManager(pool, block_size)
        for i, (p, _) in enumerate(pairs):
            # The request's own text after the prefix: a token no other request
            # or the prefix uses (not -1 - i: hash(-1) == hash(-2) in CPython).
            m.add_sequence(i, prefix + [prefix_len + i] * p)
        for step in range(longest):
            for i, (_, o) in enumerate(pairs):
                if step < o:
                    m.append_token(i, step)
            shared += m.allocator.num_used
            unshared += sum(blocks_for(m.lengths[i], block_size) for i in m.seq_ids)
            prompt_steps += len(m.seq_ids) * (prefix_len // block_size)
            for i, (_, o) in enumerate(pairs):
                if step == o - 1:
                    m.free_sequence(i)
        return SharingSimulation(case, block_size, len(pairs), 1, shared, unshared, prompt_steps, engine)
    for p, o in pairs:
        if case == "parallel":  # each sample stops at its own length
            outputs = [rng.randint(max(1, o // 2), o + o // 2) for _ in range(width)]
        else:
            outputs = [o] * width
        pool = width * blocks_for(p + max(outputs), block_size) + width
        m = CachingBlockManager(pool, block_size)
        m.add_sequence(0, list(range(p)))
        for k in range(1, width):
            if engine == "v1":  # its own request: the prompt's full blocks hit the cache
                m.add_sequence(k, list(range(p)))
            else:
                m.fork(0, k)
        live = list(range(width))
        for step in range(max(outputs)):
            if case == "beam" and step > 0:  # each new beam continues a random survivor
                parents = [rng.choice(live) for _ in range(width)]
                new = [max(live) + 1 + k for k in range(width)]
                for child, parent in zip(new, parents):
                    m.fork(parent, child)
                for old in live:
                    m.free_sequence(old)
                live = new
            for s in live:
                m.append_token(s, step)
            shared += m.allocator.num_used
            unshared += sum(blocks_for(m.lengths[s], block_size) for s in live)
            prompt_steps += len(live) * (p // block_size)  # full blocks: all that stays shared
            if case == "parallel":
                for s in list(live):
                    if step == outputs[s] - 1:
                        m.free_sequence(s)
                        live.remove(s)
        for s in live:
            m.free_sequence(s)
    return SharingSimulation(case, block_size, len(pairs), width, shared, unshared, prompt_steps, engine)
