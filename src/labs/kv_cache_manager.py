"""The engine's KV cache manager: a block table per request, allocated through vLLM v1's prefix cache.

Lab 4. A thin layer over Lab 3's :class:`labs.block_sharing.CachingBlockManager`
(full blocks keyed by parent hash + tokens; a block whose reference count
falls to 0 stays cached in an LRU free queue and is evicted only when a new
block is needed; blocks filled while decoding are cached too), in the terms
of vLLM v1's ``KVCacheManager`` (``vllm/v1/core/kv_cache_manager.py``):
``get_computed_blocks`` + ``allocate_slots`` at admission, one slot per
decode step, ``free`` when a request finishes or is preempted. It counts
prefix-cache queries and hits in tokens, as vLLM's ``PrefixCacheStats`` does.

As in vLLM v1, the prefix cache is looked up for at most ``num_tokens - 1``
tokens (``max_cache_hit_length = request.num_tokens - 1`` in
``get_computed_blocks``), so that the last token is computed and its logits give
the first new token. Hits are whole blocks, so ⌊(n − 1) / B⌋ blocks hit at most:
when the whole prompt is cached, its last block is computed again, not only its
last token (v1's comment: "This can trigger recomputation of an entire block,
rather than just the single last token").
"""

from __future__ import annotations

from labs.block_sharing import CachingBlockManager
from labs.paged_attention import DEFAULT_BLOCK_SIZE, UnknownSequenceError, blocks_for


class KVCacheManager:
    """Block tables of the running requests over one pool of ``num_blocks`` blocks of ``block_size`` slots.

    Args:
        num_blocks: physical blocks in the pool (>= 1).
        block_size: token slots per block, B (>= 1; vLLM's default 16).

    Attributes:
        blocks: the CachingBlockManager (tables, free queue, prefix cache).
        prefix_queries: tokens looked up in the prefix cache at admissions.
        prefix_hits: of those, tokens found cached (their K/V not computed again).

    Raises TypeError / ValueError for bad sizes, as the allocator does.

    >>> from labs.scheduler import Request
    >>> kv = KVCacheManager(num_blocks=4, block_size=2)
    >>> a, b = Request("a", [1, 2, 3], 2), Request("b", [1, 2, 9], 2)
    >>> kv.allocate(a), kv.allocate(b)  # b finds a's first block cached
    (0, 2)
    >>> kv.block_table(a), kv.block_table(b), kv.prefix_hit_rate
    ([0, 1], [0, 2], 0.3333333333333333)
    """

    def __init__(self, num_blocks: int, block_size: int = DEFAULT_BLOCK_SIZE):
        self.blocks = CachingBlockManager(num_blocks, block_size)
        self.num_blocks, self.block_size = num_blocks, block_size
        self.prefix_queries = 0
        self.prefix_hits = 0

    def blocks_for(self, num_tokens: int) -> int:
        """Blocks that hold ``num_tokens`` token slots: ceil(num_tokens / B)."""
        return blocks_for(num_tokens, self.block_size)

    @property
    def num_free(self) -> int:
        """Blocks with reference count 0 (some may still hold cached prefixes)."""
        return self.blocks.allocator.num_free

    @property
    def num_cached(self) -> int:
        """Blocks in the prefix cache, in use or free."""
        return len(self.blocks.cached)

    @property
    def num_evicted(self) -> int:
        """Cached blocks evicted so far to hold new tokens."""
        return len(self.blocks.evicted)

    @property
    def prefix_hit_rate(self) -> float:
        """prefix_hits / prefix_queries, in tokens (0.0 before any admission)."""
        return self.prefix_hits / self.prefix_queries if self.prefix_queries else 0.0

    def can_allocate(self, request) -> bool:
        """True when the free queue holds every block admitting ``request`` would take."""
        tokens = request.all_token_ids
        return self.blocks.blocks_needed(tokens, max_hit_tokens=len(tokens) - 1) <= self.num_free

    def allocate(self, request) -> int:
        """Map all of ``request``'s tokens (prompt and any output kept from a preemption) to blocks.

        Sets ``request.num_computed_tokens`` to the tokens the prefix cache
        holds (whole blocks, at most num_tokens - 1) and returns it. Raises
        OutOfBlocksError (nothing changed) when the pool is short, ValueError
        if the request holds blocks already.
        """
        tokens = request.all_token_ids
        self.blocks.add_sequence(request.request_id, tokens, max_hit_tokens=len(tokens) - 1)
        hit = self.blocks.num_hit_blocks[request.request_id] * self.block_size
        self.prefix_queries += len(tokens)
        self.prefix_hits += hit
        request.num_computed_tokens = hit
        return hit

    def can_append(self, request) -> bool:
        """True when the slot for ``request``'s last token is there, or a free block can hold it."""
        return self.blocks.lengths[request.request_id] % self.block_size != 0 or self.num_free > 0

    def append_slot(self, request) -> None:
        """Give ``request``'s last token (the one sampled last step) a slot; a block it fills is cached.

        Raises OutOfBlocksError when a block is needed and none is free.
        """
        self.blocks.append_token(request.request_id, request.all_token_ids[-1])

    def free(self, request) -> list[int]:
        """Release ``request``'s blocks (last block first); return those now free. Cached ones stay cached."""
        return self.blocks.free_sequence(request.request_id)

    def block_table(self, request) -> list[int]:  # the manager's own list: read it, do not change it
        """(ceil(num_slots / B),) physical block ids of ``request``; UnknownSequenceError if it holds none."""
        if request.request_id not in self.blocks.tables:
            raise UnknownSequenceError(f"request {request.request_id!r} holds no blocks (waiting, finished or preempted)")
        return self.blocks.tables[request.request_id]

    def slot(self, request, position: int) -> int:
        """Slot of token ``position``: block_table[position // B] * B + position % B."""
        table, bs = self.block_table(request), self.block_size
        return table[position // bs] * bs + position % bs
