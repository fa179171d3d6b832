"""The model runner: a tiny transformer whose attention reads K and V through block tables.

Lab 4, in the shape of nano-vLLM's ``ModelRunner`` (``nanovllm/engine/model_runner.py``)
and vLLM's: keys and values live in paged storage, one
:class:`labs.paged_attention.PagedKVCache` per (layer, head), and each token's
are written at its slot ``block_table[t // B] * B + t % B`` (vLLM's slot
mapping and ``reshape_and_cache``). A step computes, for each request of the
batch, the positions whose K/V are not cached yet: every uncached prompt
position in a prefill, the one last token in a decode.

Attention of one query reads K and V **block by block through the block
table** (:func:`paged_decode_attention`), which is PagedAttention itself (Kwon
et al. 2023, section 5.1; in vLLM's first kernel each warp fetches one block of
keys at a time). Each block gives its max m, sum ℓ and unnormalised output O,
and the blocks are folded in order into a running state with the
online-softmax ⊕ (:class:`labs.attention.PartialAttention`, Lab 2's merge).
Flash-decoding (Dao et al., 2023) and vLLM's ``paged_attention_v2`` use the
same algebra to read the keys *in parallel*: v2 gives each partition of
``PARTITION_SIZE`` = 512 tokens its own thread block, which stores its max
logit, exp sum and output already divided by that sum, and one separate
``paged_attention_v2_reduce_kernel`` takes the global max, rescales each sum
(``exp_sums[i] * expf(l - max_logit)``) and forms the weighted sum of the
outputs; flash-decoding stores each split's output with its log-sum-exp. The
fold here is the sequential form of that reduction. (On CUDA, vLLM v1's default
backend is FlashAttention, ``flash_attn_varlen_func`` with the block table and
split-KV; ``paged_attention_v2`` is its older kernel.)
"""

from __future__ import annotations

import math
from numbers import Real
from operator import mul

from labs.attention import PartialAttention
from labs.paged_attention import PagedKVCache, PageFault
from labs.sampling import sample


def _check_decode_args(q, cache, block_table, num_tokens, scale) -> None:
    """Named errors for paged_decode_attention's inputs (kept out of it: it is the learner's exercise)."""
    if not isinstance(cache, PagedKVCache):
        raise TypeError(f"cache must be a PagedKVCache, got {type(cache).__name__}")
    if isinstance(q, (str, bytes)) or not hasattr(q, "__len__") or len(q) != cache.head_dim:
        raise ValueError(f"q = {q!r:.60}; expected head_dim = {cache.head_dim} floats")
    if isinstance(scale, bool) or not isinstance(scale, Real) or not math.isfinite(scale):
        raise TypeError(f"scale = {scale!r:.60}; expected a finite real number")
    if isinstance(block_table, (str, bytes)) or not hasattr(block_table, "__len__"):
        raise TypeError(f"block_table must be a list of physical block ids, got {type(block_table).__name__}")
    if isinstance(num_tokens, bool) or not isinstance(num_tokens, int):
        raise TypeError(f"num_tokens = {num_tokens!r:.60}; expected an int")
    bs = cache.block_size
    if not 1 <= num_tokens <= len(block_table) * bs:
        raise PageFault(
            f"page fault: num_tokens = {num_tokens}, but the block table maps "
            f"{len(block_table)} blocks of {bs} slots; expected 1 <= num_tokens <= {len(block_table) * bs}"
        )
    for j in range(-(-num_tokens // bs)):
        b = block_table[j]
        if isinstance(b, bool) or not isinstance(b, int) or not 0 <= b < cache.num_blocks:
            raise ValueError(f"block_table[{j}] = {b!r:.60}; expected a physical block id 0 .. {cache.num_blocks - 1}")


def paged_decode_attention(q, cache: PagedKVCache, block_table, num_tokens: int, scale: float) -> list[float]:
    """One query's attention over the first ``num_tokens`` keys and values of a sequence, block by block.

    Args:
        q: (head_dim,) the query.
        cache: the PagedKVCache of this layer and head; k_cache, v_cache are (num_blocks, B, head_dim).
        block_table: (>= ceil(num_tokens / B),) physical block ids, logical order.
        num_tokens: keys to attend to (the query's position + 1), >= 1.
        scale: score multiplier, 1 / sqrt(head_dim).

    Returns (head_dim,): sum_t softmax(scale q . k_t) v_t, equal to dense attention
    over the gathered K, V to rounding. Raises PageFault when num_tokens is below 1
    or past what the block table maps. Source: PagedAttention (Kwon et al. 2023,
    section 5.1) for reading through the block table; the (m, ℓ, O) merge of
    flash-decoding and of vLLM's ``paged_attention_v2_reduce_kernel``, applied
    here one block at a time, in order.

    >>> cache = PagedKVCache(num_blocks=3, block_size=2, head_dim=1)
    >>> for slot, (k, v) in zip([4, 5, 0], [(0.0, 1.0), (0.0, 2.0), (0.0, 6.0)]):
    ...     cache.write(slot, [k], [v])
    >>> paged_decode_attention([1.0], cache, [2, 0], num_tokens=3, scale=1.0)  # mean of 1, 2, 6
    [3.0]
    """
    _check_decode_args(q, cache, block_table, num_tokens, scale)
    bs = cache.block_size
    total = PartialAttention()  # the identity of ⊕: m = -inf, ℓ = 0, O empty
    for j in range(-(-num_tokens // bs)):
        block, n = block_table[j], min(bs, num_tokens - j * bs)  # the last block may be partly filled
        keys, values = cache.k_cache[block][:n], cache.v_cache[block][:n]  # (n, head_dim) each
        scores = [scale * sum(map(mul, q, k)) for k in keys]  # (n,)
        m = max(scores)
        p = [math.exp(s - m) for s in scores]  # (n,) each <= 1: no overflow
        o = [0.0] * len(values[0])  # (head_dim,) unnormalised: sum_t p_t v_t
        for pt, v in zip(p, values):
            o = [a + pt * b for a, b in zip(o, v)]
        total = total.merge(PartialAttention(m, sum(p), tuple(o)))
    return [x / total.d for x in total.o]


class ModelRunner:
    """Runs a TinyLM over paged K/V storage: per (layer, head), a PagedKVCache of ``num_blocks`` x ``block_size``.

    Args:
        model: a ``labs.tiny_lm.TinyLM``.
        num_blocks, block_size: the pool's shape, the KV cache manager's too.
        attention: a function with :func:`paged_decode_attention`'s arguments and
            result; None for that function (Lab 4's exercise 2 plugs in here).

    >>> from labs.tiny_lm import ModelConfig, TinyLM
    >>> runner = ModelRunner(TinyLM.random(ModelConfig(5, 8, 1, 2, 8)), num_blocks=2, block_size=4)
    >>> len(runner.kv_caches), len(runner.kv_caches[0]), runner.kv_caches[0][0].head_dim  # layers, heads, head_dim
    (1, 2, 4)
    """

    def __init__(self, model, num_blocks: int, block_size: int, attention=None):
        config = getattr(model, "config", None)
        if not all(hasattr(config, a) for a in ("n_layer", "n_head", "head_dim")):
            raise TypeError(f"model must be a labs.tiny_lm.TinyLM (with a config), got {type(model).__name__}")
        self.model = model
        self.block_size = block_size
        self.attention = paged_decode_attention if attention is None else attention
        self.scale = 1.0 / math.sqrt(config.head_dim)
        self.kv_caches = [
            [PagedKVCache(num_blocks, block_size, config.head_dim) for _ in range(config.n_head)] for _ in range(config.n_layer)
        ]  # (n_layer, n_head) caches of (num_blocks, B, head_dim)

    def forward_position(self, token: int, position: int, block_table) -> list[float]:
        """Run one token at ``position`` through every layer, storing its K/V; return the residual stream, (d_model,).

        Positions 0 .. position - 1 must already be in the cache through ``block_table``.
        """
        model, bs = self.model, self.block_size
        slot = block_table[position // bs] * bs + position % bs
        x = model.embed(token, position)  # (d_model,)
        for layer, caches in enumerate(self.kv_caches):
            q, k, v = model.qkv(layer, x)  # (n_head, head_dim) each
            heads = []
            for h, cache in enumerate(caches):
                cache.write(slot, k[h], v[h])
                heads.append(self.attention(q[h], cache, block_table, position + 1, self.scale))
            x = model.finish_layer(layer, x, heads)
        return x

    def execute(self, requests, kv) -> list[int]:
        """Compute each request's uncached positions and sample its next token: (len(requests),) ids.

        Requests run in admission order, each to its last position: a request
        whose prefix-cache hit is a block another request of the same prefill
        registered reads it after that request has written it. Each request samples
        with its own parameters and generator (greedy when it has none), once
        per step: a recomputed prefill after preemption draws only the next token.
        """
        tokens = []
        for request in requests:
            table, ids = kv.block_table(request), request.all_token_ids
            for position in range(request.num_computed_tokens, request.num_tokens):
                x = self.forward_position(ids[position], position, table)
            logits = self.model.logits(x)  # of the last position only
            tokens.append(sample(logits, request.sampling_params, request.generator))
        return tokens
