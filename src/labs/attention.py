"""Online softmax and a tiled FlashAttention forward pass, in pure Python.

Lab 2. The online softmax of Milakov & Gimelshein, "Online normalizer
calculation for softmax" (2018, arXiv:1805.02867, Algorithm 3; the merge
operator of section 3.1) keeps a running max ``m`` and a running normalizer
``d`` in one pass, and rescales ``d`` by the rescaling factor
alpha = exp(m_prev - m_curr) <= 1 whenever the running max grows. FlashAttention
(Dao et al., 2022, Algorithm 1; Dao, FlashAttention-2, 2023, Algorithm 1)
applies the same rescaling to an output accumulator tile by tile, so the
N_q x N_k score matrix never exists in memory.

Everything is float64 on plain lists (standard library only, so it runs in
Pyodide). ``softmax_naive`` is here to fail: exp overflows past
ln(DBL_MAX) = 709.782712893384. The ``*_float32`` functions replay the same
story in emulated float32, where exp overflows past 88.72283905206835.

Conventions: a logit may be any float or -inf (a masked entry), never NaN or
+inf. A row whose logits are all -inf (or an empty row) has probabilities 0.0
and logsumexp -inf, never NaN (as FlashAttention's reference and PyTorch's
``_safe_softmax`` do).

One rule at the edges of float64, for ``attention``, ``flash_attention`` and
``labs.paged_attention.paged_attention`` alike: a score (scale * q . k) must be
a finite float, and one that overflows (+-inf, or NaN from inf - inf) raises
AttentionOverflow naming the query, the key and the score (it is not taken
for a masked entry); an output is a weighted average of the values and stays
finite whenever they are (``flash_attention`` recomputes a row whose
unnormalized accumulator overflowed, with the weights normalized first).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

NEG_INF = -math.inf
FLOAT64_EXP_MAX = 709.782712893384  # ln(DBL_MAX)
FLOAT32_EXP_MAX = 88.72283905206835  # ln(FLT_MAX)


def _as_float(x, where: str, allow_neg_inf: bool) -> float:
    """One validated entry: a real number, never NaN or +inf (nor -inf unless allowed)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"{where} = {x!r} is a {type(x).__name__}; expected a float")
    x = float(x)
    if math.isnan(x):
        raise ValueError(f"{where} is NaN; expected a finite float" + (" or -inf" if allow_neg_inf else ""))
    if x == math.inf or (x == NEG_INF and not allow_neg_inf):
        raise ValueError(
            f"{where} is {x:+}; expected a finite float" + (" or -inf (a +inf logit has no float softmax)" if allow_neg_inf else "")
        )
    return x


def _rows_of(x, name: str, what: str):
    if isinstance(x, (str, bytes)) or not isinstance(x, Iterable):
        raise TypeError(f"{name} must be {what}, got {type(x).__name__}")
    return x


def as_logits(logits, name: str = "logits") -> list[float]:
    """A row of logits (floats or -inf) as a list of floats, checked as every function here checks it.

    Raises TypeError (not a sequence of numbers) or ValueError (NaN or +inf), naming the entry.

    >>> as_logits((1, 2.5, float("-inf")))
    [1.0, 2.5, -inf]
    """
    row = _rows_of(logits, name, "a sequence of floats")
    return [_as_float(x, f"{name}[{i}]", True) for i, x in enumerate(row)]


def rescaling_factor(m_prev: float, m_curr: float) -> float:
    """Rescaling factor alpha = exp(m_prev - m_curr), guarded so it is never NaN.

    Args:
        m_prev: running max before the step (float or -inf).
        m_curr: running max after the step, ``m_curr >= m_prev``.

    Returns:
        alpha in [0, 1]. When both maxima are -inf, exp(-inf - -inf) would be
        exp(NaN); alpha is defined as 1.0 then (nothing seen, nothing to rescale).

    Raises:
        ValueError: if ``m_curr < m_prev`` (a running max never decreases), or
            either is NaN or +inf.

    Source: Milakov & Gimelshein (2018), Algorithm 3.

    >>> rescaling_factor(3.0, 1000.0), rescaling_factor(-math.inf, -math.inf)
    (0.0, 1.0)
    """
    m_prev, m_curr = _as_float(m_prev, "m_prev", True), _as_float(m_curr, "m_curr", True)
    if m_curr < m_prev:
        raise ValueError(f"m_curr = {m_curr!r} < m_prev = {m_prev!r}; expected a running max")
    if m_curr == NEG_INF:  # both -inf
        return 1.0
    return math.exp(m_prev - m_curr)  # exp(-inf) == 0.0 when m_prev is -inf


def softmax_naive(logits) -> list[float]:
    """Textbook softmax exp(x_i) / sum_j exp(x_j): the version that fails.

    Args:
        logits: (N,) floats, dimensionless.

    Returns:
        (N,) probabilities.

    Raises:
        OverflowError: if some logit exceeds ln(DBL_MAX) = 709.782712893384
            (``math.exp`` overflows) or the sum of exponentials overflows. This
            is the point of the lab: compare ``softmax``.
        ZeroDivisionError: if every exp underflows to 0.0 (e.g. all logits
            below -745), or the row is empty.
        ValueError, TypeError: NaN / +inf / non-float logits.

    Source: Milakov & Gimelshein (2018), Algorithm 1.

    >>> softmax_naive([0.0, 0.0])
    [0.5, 0.5]
    >>> softmax_naive([1000.0, 1000.0])
    Traceback (most recent call last):
    OverflowError: exp(1000.0) overflows float64 (logit > 709.782712893384); use softmax()
    """
    row = as_logits(logits)
    exps = []
    for x in row:
        try:
            exps.append(math.exp(x))
        except OverflowError:
            raise OverflowError(f"exp({x!r}) overflows float64 (logit > {FLOAT64_EXP_MAX}); use softmax()") from None
    total = sum(exps)
    if total == math.inf:
        raise OverflowError("sum of exp(logits) overflows float64; use softmax()")
    if total == 0.0:
        raise ZeroDivisionError("sum of exp(logits) is 0.0 (underflow or empty row); use softmax()")
    return [e / total for e in exps]


def logsumexp(logits) -> float:
    """log(sum_i exp(x_i)), computed safely as m + log(sum_i exp(x_i - m)), m = max.

    Args:
        logits: (N,) floats or -inf.

    Returns:
        A float; -inf for an empty row or a row of all -inf.

    Raises:
        ValueError, TypeError: NaN / +inf / non-float logits.

    >>> logsumexp([1000.0, 1000.0])
    1000.6931471805599
    >>> logsumexp([])
    -inf
    """
    row = as_logits(logits)
    m = max(row, default=NEG_INF)
    if m == NEG_INF:
        return NEG_INF
    return m + math.log(sum(math.exp(x - m) for x in row))


def softmax(logits) -> list[float]:
    """Safe (two-pass) softmax: subtract the max, then exp and normalize.

    Args:
        logits: (N,) floats or -inf.

    Returns:
        (N,) probabilities; all 0.0 for a row of all -inf; [] for an empty row.

    Raises:
        ValueError, TypeError: NaN / +inf / non-float logits.

    Source: Milakov & Gimelshein (2018), Algorithm 2.

    >>> softmax([1000.0, -1000.0]), softmax([-math.inf, 0.0, 0.0])
    ([1.0, 0.0], [0.0, 0.5, 0.5])
    """
    row = as_logits(logits)
    m = max(row, default=NEG_INF)
    if m == NEG_INF:
        return [0.0] * len(row)
    exps = [math.exp(x - m) for x in row]
    total = sum(exps)  # >= 1.0: the max contributes exp(0)
    return [e / total for e in exps]


class OnlineSoftmaxStep(NamedTuple):
    """State after one step: running max ``m``, running normalizer ``d``, and
    the rescaling factor ``alpha`` = exp(m_prev - m) applied to the old ``d``.

    >>> online_softmax([0.0, 0.0]).steps[-1]
    OnlineSoftmaxStep(m=0.0, d=2.0, alpha=1.0)
    """

    m: float
    d: float
    alpha: float


@dataclass(frozen=True)
class SoftmaxState:
    """Streaming softmax state (m, d): running max and running normalizer.

    ``d`` = sum_i exp(x_i - m) over the logits seen so far. The identity state
    (nothing seen) is ``SoftmaxState()`` = (m=-inf, d=0.0). States are
    immutable; ``update`` and ``merge`` return new ones.

    Raises:
        ValueError: m NaN or +inf; d negative or not finite; d == 0 with a
            finite m, or d != 0 with m == -inf.

    Source: Milakov & Gimelshein (2018), Algorithm 3 and section 3.1.

    >>> s = SoftmaxState().update([1.0, 2.0]).update([3.0, 4.0]).update([5.0])
    >>> round(s.logsumexp, 12)
    5.451914395938
    """

    m: float = NEG_INF
    d: float = 0.0

    def __post_init__(self):
        for name in ("m", "d"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TypeError(f"SoftmaxState.{name} = {v!r}; expected a float")
            object.__setattr__(self, name, float(v))
        if math.isnan(self.m) or self.m == math.inf:
            raise ValueError(f"SoftmaxState.m = {self.m!r}; expected a finite float or -inf")
        if not (math.isfinite(self.d) and self.d >= 0.0):
            raise ValueError(f"SoftmaxState.d = {self.d!r}; expected a finite float >= 0")
        if (self.m == NEG_INF) != (self.d == 0.0):
            raise ValueError(f"SoftmaxState(m={self.m!r}, d={self.d!r}): d must be 0.0 exactly when m is -inf")

    def merge(self, other: SoftmaxState) -> SoftmaxState:
        """Combine two partial states: (m_a, d_a) (+) (m_b, d_b) =
        (M, d_a exp(m_a - M) + d_b exp(m_b - M)), M = max(m_a, m_b).

        Associative and commutative, with identity ``SoftmaxState()``; this is
        what lets blocks of a row be reduced in any grouping.

        Args:
            other: a SoftmaxState.

        Returns:
            A new SoftmaxState.

        Raises:
            TypeError: if ``other`` is not a SoftmaxState.

        Source: Milakov & Gimelshein (2018), section 3.1, the (+) operator.

        >>> SoftmaxState(2.0, 1.3678794411714423).merge(SoftmaxState(5.0, 1.5032147244080551))
        SoftmaxState(m=5.0, d=1.5713174316646532)
        """
        if not isinstance(other, SoftmaxState):
            raise TypeError(f"merge() expects a SoftmaxState, got {type(other).__name__}")
        big = max(self.m, other.m)
        d = self.d * rescaling_factor(self.m, big) + other.d * rescaling_factor(other.m, big)
        return SoftmaxState(big, d)

    def update(self, block) -> SoftmaxState:
        """Fold a block of logits (any size, even 0) into the state.

        The block is reduced to its own state (block max, sum of exp(x - block
        max)) and merged, as FlashAttention does with one tile of a row.

        Args:
            block: (B,) floats or -inf.

        Returns:
            A new SoftmaxState.

        Raises:
            ValueError, TypeError: NaN / +inf / non-float logits.

        >>> SoftmaxState().update([0.0, 0.0])
        SoftmaxState(m=0.0, d=2.0)
        """
        row = as_logits(block, "block")
        mb = max(row, default=NEG_INF)
        if mb == NEG_INF:  # empty or fully masked block: the identity
            return self
        return self.merge(SoftmaxState(mb, sum(math.exp(x - mb) for x in row)))

    @property
    def logsumexp(self) -> float:
        """log(sum exp(x)) of everything seen: m + log(d), or -inf if nothing.

        >>> SoftmaxState(0.0, 1.0).logsumexp, SoftmaxState().logsumexp
        (0.0, -inf)
        """
        return self.m + math.log(self.d) if self.d > 0.0 else NEG_INF

    def probs(self, logits) -> list[float]:
        """Second pass: exp(x_i - m) / d for each logit of the row.

        Args:
            logits: (N,) the same logits the state was built from.

        Returns:
            (N,) probabilities; all 0.0 if the state is the identity.

        Raises:
            ValueError, TypeError: NaN / +inf / non-float logits.

        >>> SoftmaxState().update([0.0, 0.0]).probs([0.0, 0.0])
        [0.5, 0.5]
        """
        row = as_logits(logits)
        if self.d == 0.0:
            return [0.0] * len(row)
        return [math.exp(x - self.m) / self.d for x in row]


@dataclass(frozen=True)
class PartialAttention(SoftmaxState):
    """One query's attention over a part of the keys: running max m, sum ℓ and unnormalised output O.

    ``m`` = max of the part's scores, ``d`` (the ℓ of the papers) = sum_j exp(s_j - m)
    and ``o`` = sum_j exp(s_j - m) v_j, a (d_v,) tuple. The part's output is
    ``o / d``; parts merge with the online-softmax ⊕, O rescaled by the same
    factors as ℓ: O = O_a e^{m_a - M} + O_b e^{m_b - M}. The identity
    ``PartialAttention()`` (m = -inf, ℓ = 0, O empty) stands for zeros of any length.

    Raises as SoftmaxState; ValueError when two parts' O differ in length.
    Source: flash-decoding (Dao et al., 2023, "Flash-Decoding for long-context
    inference") and vLLM's paged attention v2, which split the keys into partitions
    processed in parallel and then reduce them in one pass: the global max, each
    partition's sum rescaled by exp(m_i - M), the outputs weighted accordingly
    (``paged_attention_v2_reduce_kernel``; v2 stores O already divided by ℓ,
    flash-decoding stores O with its log-sum-exp). ⊕ is the same algebra, one pair
    at a time.

    >>> a = PartialAttention(0.0, 1.0, (2.0,))  # one key: score 0, value 2
    >>> b = PartialAttention(0.0, 1.0, (4.0,))  # one key: score 0, value 4
    >>> both = a.merge(b); both.o[0] / both.d
    3.0
    """

    o: tuple = ()

    def merge(self, other: PartialAttention) -> PartialAttention:
        """(m_a, ℓ_a, O_a) ⊕ (m_b, ℓ_b, O_b): associative, with identity ``PartialAttention()``."""
        if not isinstance(other, PartialAttention):
            raise TypeError(f"merge() expects a PartialAttention, got {type(other).__name__}")
        if other.m == NEG_INF:  # the identity (nothing seen): also keeps exp(-inf - -inf) from being taken
            return self
        if self.m == NEG_INF:
            return other
        if len(self.o) != len(other.o):
            raise ValueError(
                f"cannot merge partial outputs of lengths {len(self.o)} and {len(other.o)}; expected the same value dimension d_v"
            )
        big = max(self.m, other.m)
        a, b = math.exp(self.m - big), math.exp(other.m - big)  # rescaling factors, <= 1, one of them 1
        return PartialAttention._merged(big, self.d * a + other.d * b, tuple(x * a + y * b for x, y in zip(self.o, other.o)))

    @classmethod
    def _merged(cls, m: float, d: float, o: tuple) -> PartialAttention:
        # Two valid parts merge into a valid one (finite M, ℓ >= the larger part's ℓ > 0), so the
        # checks of __post_init__ are skipped here: they were a third of a paged decode step's time.
        part = object.__new__(cls)
        object.__setattr__(part, "m", m)
        object.__setattr__(part, "d", d)
        object.__setattr__(part, "o", o)
        return part


@dataclass(frozen=True)
class OnlineSoftmaxResult:
    """Output of ``online_softmax``: ``probs`` (N,), ``logsumexp`` (a float),
    and ``steps``: one OnlineSoftmaxStep per logit (or per block).

    >>> r = online_softmax([])
    >>> r.probs, r.logsumexp, r.steps
    ([], -inf, [])
    """

    probs: list[float]
    logsumexp: float
    steps: list[OnlineSoftmaxStep]


def _block_bounds(n: int, block_sizes) -> list[tuple[int, int]]:
    if block_sizes is None:
        return [(i, i + 1) for i in range(n)]
    bounds, start = [], 0
    for i, b in enumerate(block_sizes):
        if isinstance(b, bool) or not isinstance(b, int):
            raise TypeError(f"block_sizes[{i}] = {b!r}; expected an int >= 1")
        if b < 1:
            raise ValueError(f"block_sizes[{i}] = {b}; expected an int >= 1")
        bounds.append((start, start + b))
        start += b
    if start != n:
        raise ValueError(f"block_sizes sum to {start}; expected the number of logits, {n}")
    return bounds


def online_softmax(logits, block_sizes=None) -> OnlineSoftmaxResult:
    """Softmax with the normalizer computed in one pass (running max m, running
    normalizer d, rescaling factor alpha = exp(m_prev - m) <= 1 at each step).

    Per step j: m_j = max(m_{j-1}, x_j); d_j = d_{j-1} alpha_j + exp(x_j - m_j).
    A second pass gives the probabilities exp(x_i - m_N) / d_N.

    Args:
        logits: (N,) floats or -inf.
        block_sizes: optional ints >= 1 summing to N; then the logits are taken
            a block at a time (``SoftmaxState.update``), one step per block.

    Returns:
        OnlineSoftmaxResult(probs (N,), logsumexp, steps (N,) or (n_blocks,)).
        The first step's alpha is 0.0 (m_prev = -inf; it rescales d = 0).

    Raises:
        ValueError, TypeError: NaN / +inf / non-float logits; bad block sizes.

    Source: Milakov & Gimelshein (2018), Algorithm 3.

    >>> r = online_softmax([-1000.0, -1000.0])
    >>> r.probs, r.logsumexp
    ([0.5, 0.5], -999.3068528194401)
    >>> [s.alpha for s in online_softmax([3.0, 1000.0, 999.0]).steps]
    [0.0, 0.0, 1.0]
    """
    row = as_logits(logits)
    state, steps = SoftmaxState(), []
    for lo, hi in _block_bounds(len(row), block_sizes):
        new = state.update(row[lo:hi])
        steps.append(OnlineSoftmaxStep(new.m, new.d, rescaling_factor(state.m, new.m)))
        state = new
    return OnlineSoftmaxResult(state.probs(row), state.logsumexp, steps)


# --------------------------------------------------------------------------- attention


def _as_matrix(x, name: str) -> list[list[float]]:
    rows = []
    for i, r in enumerate(_rows_of(x, name, "a list of rows (lists of floats)")):
        row = [_as_float(v, f"{name}[{i}][{j}]", False) for j, v in enumerate(_rows_of(r, f"{name}[{i}]", "a list of floats"))]
        if rows and len(row) != len(rows[0]):
            raise ValueError(f"{name} is ragged: row {i} has {len(row)} entries, expected {len(rows[0])} like row 0")
        if not row:
            raise ValueError(f"{name}[{i}] is empty; expected a head dimension >= 1")
        rows.append(row)
    return rows


class AttentionOverflow(OverflowError, ValueError):
    """A score scale * q . k overflowed float64 (+-inf, or NaN from inf - inf).

    An OverflowError, and a ValueError like every other bad input of the labs.

    >>> attention([[1e200]], [[-1e200]], [[1.0]], scale=1.0)
    Traceback (most recent call last):
    labs.attention.AttentionOverflow: the score of query 0 and key 0 is -inf: scale * q . k overflows float64; ...
    """


def attention_score(scale: float, q_row, k_row, i: int, j: int) -> float:
    """scale * q_row . k_row: the score of query i and key j, a float.

    Args:
        scale: the score multiplier (usually 1 / sqrt(d)).
        q_row, k_row: (d,) a query and a key, floats.
        i, j: the query's and the key's index, named in the error.
    Raises:
        AttentionOverflow: the score is not finite (names i, j and the score).

    >>> attention_score(0.5, [1.0, 2.0], [3.0, 4.0], 0, 1)
    5.5
    """
    s = scale * sum(a * b for a, b in zip(q_row, k_row))
    if not math.isfinite(s):
        raise AttentionOverflow(
            f"the score of query {i} and key {j} is {s!r}: scale * q . k overflows float64; "
            "expected a finite float (reduce the scale or the inputs)"
        )
    return s


def _attend(scores, v) -> list[float]:
    """The weighted average of the rows of v under softmax(scores): weights normalized first, so it
    is finite whenever the values are. scores (N_k,), -inf masked; v (N_k, d_v). All masked: zeros."""
    p = softmax(scores)  # (N_k,)
    return [sum(p[j] * v[j][c] for j in range(len(v))) for c in range(len(v[0]))]


def check_attention_inputs(q, k, v, causal, scale):
    """(q, k, v, scale) checked as ``attention`` takes them: rows as lists of floats, scale a float.

    Args:
        q: (N_q, d), k: (N_k, d), v: (N_k, d_v), as for ``attention``.
        causal: a bool. scale: a finite number, or None for 1 / sqrt(d).
    Returns:
        (q, k, v, scale): the matrices as lists of float lists, scale as a float.
    Raises:
        TypeError: non-list / non-float inputs, a ``causal`` that is not a bool, a bad ``scale``.
        ValueError: ragged rows, NaN/inf entries, mismatched d or N_k, no keys.

    >>> check_attention_inputs([[1.0]], [[2.0], [3.0]], [[0.0], [1.0]], False, None)[3]
    1.0
    """
    q, k, v = _as_matrix(q, "q"), _as_matrix(k, "k"), _as_matrix(v, "v")
    if not k:
        raise ValueError("k has no rows; expected N_k >= 1 keys")
    if q and len(q[0]) != len(k[0]):
        raise ValueError(f"head dimension mismatch: q rows have d = {len(q[0])}, k rows have d = {len(k[0])}; expected equal")
    if len(v) != len(k):
        raise ValueError(f"v has {len(v)} rows, k has {len(k)}; expected one value per key")
    if not isinstance(causal, bool):
        raise TypeError(f"causal = {causal!r}; expected True or False")
    if scale is None:
        scale = 1.0 / math.sqrt(len(k[0]))
    elif isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale):
        raise TypeError(f"scale = {scale!r}; expected a finite float or None")
    return q, k, v, float(scale)


def attention(q, k, v, causal: bool = False, scale=None) -> list[list[float]]:
    """Reference attention softmax(scale * q k^T [+ causal mask]) v, materializing
    the full (N_q, N_k) score matrix.

    Args:
        q: (N_q, d) queries. k: (N_k, d) keys, N_k >= 1. v: (N_k, d_v) values.
        causal: mask so query i attends key j iff j <= i + N_k - N_q
            (bottom-right aligned, as FlashAttention >= 2.1 does for N_q != N_k).
        scale: score multiplier; default 1 / sqrt(d).

    Returns:
        O: (N_q, d_v). A query with every key masked (causal, N_q > N_k) gets
        a row of zeros.

    Raises:
        TypeError: non-list / non-float inputs, bad ``causal`` or ``scale``.
        ValueError: ragged rows, NaN/inf entries, mismatched d or N_k, no keys.
        AttentionOverflow: a score overflows float64 (see the module's conventions).

    Source: Vaswani et al. (2017), eq. 1; mask as in flash-attention's
    ``attention_ref``.

    >>> attention([[1.0]], [[0.0], [0.0]], [[1.0, 2.0], [3.0, 4.0]])
    [[2.0, 3.0]]
    """
    q, k, v, scale = check_attention_inputs(q, k, v, causal, scale)
    n_q, n_k = len(q), len(k)
    out = []
    for i, qi in enumerate(q):
        visible = n_k if not causal else max(0, min(n_k, i + n_k - n_q + 1))  # keys j < visible are seen
        scores = [attention_score(scale, qi, kj, i, j) if j < visible else NEG_INF for j, kj in enumerate(k)]  # (N_k,)
        out.append(_attend(scores, v))
    return out


def check_block_sizes(block_q, block_k) -> None:
    """Check FlashAttention's tile sizes: block_q (query rows) and block_k (keys), ints >= 1.

    Raises:
        TypeError: a size is not an int (a bool is not taken for one).
        ValueError: a size is below 1 (names it).

    >>> check_block_sizes(2, 0)
    Traceback (most recent call last):
    ValueError: block_k = 0; expected an int >= 1
    """
    for name, b in (("block_q", block_q), ("block_k", block_k)):
        if isinstance(b, bool) or not isinstance(b, int):
            raise TypeError(f"{name} = {b!r} is a {type(b).__name__}; expected an int >= 1")
        if b < 1:
            raise ValueError(f"{name} = {b}; expected an int >= 1")


def flash_attention(q, k, v, block_q: int, block_k: int, causal: bool = False, scale=None, trace=None):
    """Tiled attention forward pass with online softmax (FlashAttention).

    Rows are taken block_q at a time, keys block_k at a time; only one
    (block_q, block_k) score tile exists at once. Per row, the running max m,
    running normalizer l and unnormalized output acc are rescaled by
    alpha = exp(m_prev - m_new) when a tile raises the max; acc / l at the end.

    Args:
        q: (N_q, d), k: (N_k, d), v: (N_k, d_v): as for ``attention``.
        block_q, block_k: tile sizes in rows / keys, ints >= 1 (need not
            divide N_q, N_k: the last tile is smaller).
        causal: bottom-right aligned causal mask, query i attends key j iff
            j <= i + N_k - N_q (FlashAttention >= 2.1). Tiles entirely masked
            are skipped.
        scale: score multiplier; default 1 / sqrt(d).
        trace: optional list; after each tile that runs, ``(r0, c0, m)`` is
            appended: the tile's first query row and first key, and the running
            max of the block's query rows after it (``labs.flash_tiles`` draws it).

    Returns:
        (O, L): O (N_q, d_v) output; L (N_q,) logsumexp of each row's scaled,
        masked scores. A row with every key masked has O = zeros, L = -inf.

    Raises:
        TypeError: non-int block sizes, a trace that is not a list, plus everything ``attention`` raises.
        ValueError: block sizes < 1, plus everything ``attention`` raises.

    Source: Dao et al. (2022), Algorithm 1; Dao (2023), FlashAttention-2, Algorithm 1.

    >>> q = k = v = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> o, L = flash_attention(q, k, v, block_q=2, block_k=2, causal=True)
    >>> o[0], L[0]
    ([1.0, 0.0], 0.7071067811865475)
    """
    check_block_sizes(block_q, block_k)
    if trace is not None and not isinstance(trace, list):
        raise TypeError(f"trace = {trace!r}; expected a list to append to, or None")
    q, k, v, scale = check_attention_inputs(q, k, v, causal, scale)
    n_q, n_k, d_v = len(q), len(k), len(v[0])
    offset = n_k - n_q  # bottom-right alignment: query i sees keys j <= i + offset
    out, lse = [], []
    for r0 in range(0, n_q, block_q):
        rows = range(r0, min(r0 + block_q, n_q))
        m = [NEG_INF] * len(rows)  # (block_q,) running max
        l = [0.0] * len(rows)  # (block_q,) running normalizer  # noqa: E741 (the paper's l)
        acc = [[0.0] * d_v for _ in rows]  # (block_q, d_v) unnormalized output
        for c0 in range(0, n_k, block_k):
            cols = range(c0, min(c0 + block_k, n_k))
            if causal and c0 > rows[-1] + offset:
                break  # this tile and all later ones are fully masked
            tile = [
                [attention_score(scale, q[i], k[j], i, j) if not causal or j <= i + offset else NEG_INF for j in cols] for i in rows
            ]  # (block_q, block_k) scores
            for t, s_row in enumerate(tile):
                m_new = max(m[t], max(s_row))
                if m_new == NEG_INF:
                    continue  # nothing visible yet in this row
                alpha = rescaling_factor(m[t], m_new)
                p = [math.exp(s - m_new) for s in s_row]  # (block_k,), masked -> 0.0
                l[t] = l[t] * alpha + sum(p)
                acc[t] = [a * alpha + sum(p[u] * v[j][c] for u, j in enumerate(cols)) for c, a in enumerate(acc[t])]
                m[t] = m_new
            if trace is not None:
                trace.append((r0, c0, list(m)))
        for t, i in enumerate(rows):
            if l[t] == 0.0:  # every key masked
                out.append([0.0] * d_v)
                lse.append(NEG_INF)
                continue
            row = [a / l[t] for a in acc[t]]
            if not all(math.isfinite(x) for x in row):
                # The unnormalized accumulator (up to l * max|v|) passed 1.8e308 although the
                # average may not: this row again, with the weights normalized first.
                row = _attend(
                    [attention_score(scale, q[i], k[j], i, j) if not causal or j <= i + offset else NEG_INF for j in range(n_k)], v
                )
            out.append(row)
            lse.append(m[t] + math.log(l[t]))
    return out, lse


def check_backward_inputs(q, k, v, o, lse, d_o, causal, scale):
    """The backward pass's inputs checked: q, k, v, causal, scale as ``attention`` takes them, and the forward's O, L and dO.

    Args:
        q: (N_q, d), k: (N_k, d), v: (N_k, d_v); causal, scale: as for ``attention``.
        o: (N_q, d_v) the forward pass's output; lse: (N_q,) its logsumexp L, -inf
            only for a query that sees no key (causal, N_q > N_k).
        d_o: (N_q, d_v) the gradient of the loss with respect to O.
    Returns:
        (q, k, v, o, lse, d_o, scale): lists of float rows, lse a list of floats, scale a float.
    Raises:
        TypeError, ValueError: what ``check_attention_inputs`` raises; o or d_o not
            N_q x d_v; lse not N_q long, NaN or +inf, or -inf for a query that sees keys.

    >>> check_backward_inputs([[1.0]], [[2.0]], [[3.0]], [[3.0]], [2.0], [[1.0, 0.0]], False, None)
    Traceback (most recent call last):
    ValueError: d_o is 1 x 2; expected N_q x d_v = 1 x 1
    """
    q, k, v, scale = check_attention_inputs(q, k, v, causal, scale)
    n_q, n_k, d_v = len(q), len(k), len(v[0])
    o, d_o = _as_matrix(o, "o"), _as_matrix(d_o, "d_o")
    for name, x in (("o", o), ("d_o", d_o)):
        if len(x) != n_q or (x and len(x[0]) != d_v):
            raise ValueError(f"{name} is {len(x)} x {len(x[0]) if x else 0}; expected N_q x d_v = {n_q} x {d_v}")
    lse = as_logits(lse, "lse")
    if len(lse) != n_q:
        raise ValueError(f"lse has {len(lse)} entries; expected one per query, {n_q}")
    offset = n_k - n_q  # bottom-right causal alignment, as in the forward pass
    for i, x in enumerate(lse):
        if x == NEG_INF and (not causal or i + offset >= 0):
            raise ValueError(f"lse[{i}] is -inf but query {i} sees keys; expected the forward pass's logsumexp")
    return q, k, v, o, lse, d_o, scale


def flash_attention_backward(q, k, v, o, lse, d_o, block_q: int, block_k: int, causal: bool = False, scale=None):
    """Gradients of attention by recomputation, tile by tile (FlashAttention-2's backward pass).

    The forward pass keeps only O and the logsumexp L of each row. Here each
    tile's probabilities are recomputed from Q, K and L, P_ij = exp(s_ij - L_i),
    so no N_q x N_k matrix lives between the passes. With D_i = rowsum(dO ∘ O)_i:
    dV_j += P_ij dO_i, dP_ij = dO_i . V_j, dS_ij = P_ij (dP_ij - D_i),
    dQ_i += scale dS_ij K_j, dK_j += scale dS_ij Q_i. Key blocks form the
    outer loop, as in the paper (each owns its dK, dV); query blocks the inner one.

    Args:
        q: (N_q, d), k: (N_k, d), v: (N_k, d_v): the forward pass's inputs.
        o: (N_q, d_v) the forward's output; lse: (N_q,) its logsumexp L (-inf
            for a query that sees no key), as ``flash_attention`` returns them.
        d_o: (N_q, d_v) gradient of the loss with respect to O.
        block_q, block_k, causal, scale: as for ``flash_attention``.

    Returns:
        (dQ, dK, dV): (N_q, d), (N_k, d), (N_k, d_v), the gradients of the loss
        with respect to q, k and v. A query that sees no key contributes nothing.

    Raises:
        TypeError, ValueError: everything ``flash_attention`` raises; o, d_o or
            lse of the wrong shape; lse NaN or +inf, or -inf for a query that sees keys.
        AttentionOverflow: a score overflows float64.

    Source: Dao (2023), FlashAttention-2, section 3.1.2 and Algorithm 2
    (D = rowsum(dO ∘ O), the recomputation of P from L).

    >>> q, k, v = [[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [0.0]]
    >>> o, L = flash_attention(q, k, v, 1, 1, scale=1.0)
    >>> dq, dk, dv = flash_attention_backward(q, k, v, o, L, [[1.0]], 1, 1, scale=1.0)
    >>> [round(x, 6) for x in dv[0] + dv[1]], [round(x, 6) for x in dq[0]]
    ([0.731059, 0.268941], [0.196612, -0.196612])
    """
    check_block_sizes(block_q, block_k)
    q, k, v, o, lse, d_o, scale = check_backward_inputs(q, k, v, o, lse, d_o, causal, scale)
    n_q, n_k, d, d_v = len(q), len(k), len(k[0]), len(v[0])
    offset = n_k - n_q  # bottom-right causal alignment, as in the forward pass
    big_d = [sum(a * b for a, b in zip(d_o[i], o[i])) for i in range(n_q)]  # (N_q,) D = rowsum(dO ∘ O)
    dq = [[0.0] * d for _ in range(n_q)]  # (N_q, d)
    dk = [[0.0] * d for _ in range(n_k)]  # (N_k, d)
    dv = [[0.0] * d_v for _ in range(n_k)]  # (N_k, d_v)
    for c0 in range(0, n_k, block_k):  # key block: its dK, dV stay in fast memory
        cols = range(c0, min(c0 + block_k, n_k))
        for r0 in range(0, n_q, block_q):
            rows = range(r0, min(r0 + block_q, n_q))
            if causal and c0 > rows[-1] + offset:
                continue  # every score of this tile is masked: P = 0
            for i in rows:
                if lse[i] == NEG_INF:
                    continue  # a query that sees no key: its output is 0 whatever q, k, v are
                for j in cols:
                    if causal and j > i + offset:
                        continue
                    p = math.exp(attention_score(scale, q[i], k[j], i, j) - lse[i])  # P_ij, recomputed, <= 1
                    dp = sum(a * b for a, b in zip(d_o[i], v[j]))  # dP_ij = dO_i . V_j
                    ds = p * (dp - big_d[i])  # dS_ij, the softmax's backward
                    for c in range(d_v):
                        dv[j][c] += p * d_o[i][c]
                    for c in range(d):
                        dq[i][c] += scale * ds * k[j][c]
                        dk[j][c] += scale * ds * q[i][c]
    return dq, dk, dv


# --------------------------------------------------------------------------- float32 demo


class Float32Overflow(OverflowError):
    """exp overflowed to inf in emulated float32 (the next step would be inf/inf = NaN).

    >>> issubclass(Float32Overflow, OverflowError)
    True
    """


def to_float32(x: float) -> float:
    """Round a float64 to the nearest float32 (struct 'f' round trip).

    Values beyond the float32 range round to +-inf, as IEEE 754 does; NaN stays NaN.

    Raises TypeError when ``x`` is not a real number (an int or a float, not a bool).

    >>> to_float32(0.1), to_float32(1e39)
    (0.10000000149011612, inf)
    >>> to_float32(None)
    Traceback (most recent call last):
    TypeError: to_float32: x must be a real number (int or float), got None (NoneType)
    """
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"to_float32: x must be a real number (int or float), got {x!r:.60} ({type(x).__name__})")
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:  # some CPython versions raise instead of rounding to inf
        return math.copysign(math.inf, x)


FLOAT32_MAX = 3.4028234663852886e38  # the largest finite float32, (2 - 2**-23) * 2**127


def _as_float32_logits(logits) -> list[float]:
    """Validate a row of logits and round it to float32.

    Raises Float32Overflow for a finite logit that float32 cannot hold
    (it would round to +-inf: +inf makes inf / inf = NaN, -inf would mask it
    silently), besides ``as_logits``' ValueError / TypeError.

    >>> _as_float32_logits([0.1, float("-inf")])
    [0.10000000149011612, -inf]
    """
    row = []
    for i, x in enumerate(as_logits(logits)):
        r = to_float32(x)
        if math.isinf(r) and math.isfinite(x):
            raise Float32Overflow(
                f"logits[{i}] = {x!r} does not fit float32 (finite floats up to +-{FLOAT32_MAX!r}): "
                "it would round to " + ("inf, and inf / inf is NaN" if x > 0 else "-inf, masking it")
            )
        row.append(r)
    return row


def _exp32(x: float) -> float:
    try:
        return to_float32(math.exp(x))
    except OverflowError:
        return math.inf


def softmax_naive_float32(logits) -> list[float]:
    """Textbook softmax in emulated float32 (every operation rounded to float32).

    Args:
        logits: (N,) floats, rounded to float32 first.

    Returns:
        (N,) float32-valued probabilities.

    Raises:
        Float32Overflow: if some logit exceeds 88.72283905206835 = ln(FLT_MAX),
            so exp is inf in float32 and the division would give NaN (we raise
            rather than return NaN), or does not fit float32 at all.
        ZeroDivisionError: if every exp underflows to 0.0.
        ValueError, TypeError: NaN / +inf / non-float logits.

    >>> softmax_naive_float32([88.0, 88.0])
    [0.5, 0.5]
    >>> softmax_naive_float32([89.0, 0.0])
    Traceback (most recent call last):
    labs.attention.Float32Overflow: float32 exp(89.0) = inf (logit > 88.72283905206835); ...
    """
    row = _as_float32_logits(logits)
    exps = []
    for x in row:
        e = _exp32(x)
        if e == math.inf:
            raise Float32Overflow(f"float32 exp({x!r}) = inf (logit > {FLOAT32_EXP_MAX}); inf / inf would be NaN")
        exps.append(e)
    total = 0.0
    for e in exps:
        total = to_float32(total + e)
    if total == math.inf:
        raise Float32Overflow("float32 sum of exp(logits) = inf; inf / inf would be NaN")
    if total == 0.0:
        raise ZeroDivisionError("float32 sum of exp(logits) underflowed to 0.0")
    return [to_float32(e / total) for e in exps]


def online_softmax_float32(logits) -> OnlineSoftmaxResult:
    """``online_softmax`` in emulated float32: every operation rounded to float32.

    Stays finite for any float32 logits, since every exp argument is <= 0.

    Args:
        logits: (N,) floats or -inf, rounded to float32 first.

    Returns:
        OnlineSoftmaxResult with float32-valued probs, logsumexp and steps.

    Raises:
        Float32Overflow: a finite logit past float32's range (|x| > 3.4e38).
        ValueError, TypeError: NaN / +inf / non-float logits.

    >>> online_softmax_float32([1000.0, 1000.0]).probs
    [0.5, 0.5]
    """
    row = _as_float32_logits(logits)
    m, d, steps = NEG_INF, 0.0, []
    for x in row:
        m_new = max(m, x)
        alpha = 1.0 if m_new == NEG_INF else _exp32(to_float32(m - m_new))
        term = 0.0 if m_new == NEG_INF else _exp32(to_float32(x - m_new))
        d = to_float32(to_float32(d * alpha) + term)
        m = m_new
        steps.append(OnlineSoftmaxStep(m, d, alpha))
    if d == 0.0:
        return OnlineSoftmaxResult([0.0] * len(row), NEG_INF, steps)
    probs = [to_float32(_exp32(to_float32(x - m)) / d) for x in row]
    return OnlineSoftmaxResult(probs, to_float32(m + to_float32(math.log(d))), steps)
