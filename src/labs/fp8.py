"""FP8 (e4m3) rounding and FlashAttention-3's incoherent processing, emulated in pure Python.

Lab 2, a read-and-run section. FlashAttention-3 (Shah et al., 2024,
arXiv:2407.08608, section 3.3) runs its GEMMs in FP8 e4m3 and, to tame
outlier features, multiplies Q and K by the same random orthogonal matrix
M = diag(s) H / sqrt(d) (s random signs, H a Hadamard matrix) before
quantizing: (Q M)(K M)^T = Q M M^T K^T = Q K^T in exact arithmetic, while
each outlier is spread over all d features ("incoherent processing", from
the QuIP line of quantization work).

The format is OCP/NVIDIA e4m3fn: 1 sign bit, 4 exponent bits (bias 7),
3 mantissa bits, no infinities; largest finite 448, smallest normal 2**-6,
subnormals down to 2**-9. A value is rounded to the nearest e4m3 value, ties
to even. Scaling follows the baseline FP8 attention of the paper's section 4.3:
one scale per tensor that maps its largest magnitude to 448 (or, for
FlashAttention-3's block quantization, one scale per block of rows).

Standard library only; matrices are lists of rows.
"""

from __future__ import annotations

import math
import operator
import random

E4M3_MAX = 448.0  # largest finite e4m3fn value, 1.75 * 2**8
E4M3_MIN_NORMAL = 2.0**-6
E4M3_MANTISSA_BITS = 3
# The most rows or columns of a matrix this module makes (hadamard, with_outliers, incoherence_errors):
# FlashAttention-3's head dimensions go to 256; a 1024 x 1024 Hadamard matrix takes a tenth of a
# second in pure Python, and 2**62 would never finish.
MAX_DIM = 1024


class Fp8Overflow(OverflowError, ValueError):
    """A value rounds past e4m3's largest finite value, 448 (e4m3fn has no infinity).

    >>> round_e4m3(465.0)
    Traceback (most recent call last):
    labs.fp8.Fp8Overflow: 465.0 rounds past e4m3's largest finite value, 448; scale the tensor first (quantize)
    """


def _finite(x, where: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"{where} = {x!r} is a {type(x).__name__}; expected a float")
    if not math.isfinite(x):
        raise ValueError(f"{where} = {x!r}; expected a finite float")
    return float(x)


def round_e4m3(x: float) -> float:
    """Round a float to the nearest FP8 e4m3fn value (ties to even), returned as a float.

    Args:
        x: a finite float (dimensionless).

    Returns:
        The e4m3 value nearest to x: 3 mantissa bits, so a relative spacing of
        2**-3 in each binade [2**e, 2**(e+1)), e >= -6; below 2**-6 the
        subnormal spacing 2**-9 is absolute. Signed zero is kept.

    Raises:
        Fp8Overflow: |x| rounds above 448, i.e. |x| > 464 (464, halfway to
            the next step, 480, rounds to even: 448). Raising here while
            ``quantize`` saturates at 448 is this module's choice: the OCP
            OFP8 specification allows e4m3 conversions to saturate or to give NaN.
        TypeError, ValueError: not a finite float.

    Source: OCP 8-bit Floating Point Specification (OFP8) 1.0, E4M3; used by
    FlashAttention-3 (Shah et al., 2024), section 3.3.

    >>> [round_e4m3(x) for x in (1.0, 1.0625, 1.1875, 0.3, 2.0**-9, 2.0**-11, 448.0, -300.0)]
    [1.0, 1.0, 1.25, 0.3125, 0.001953125, 0.0, 448.0, -288.0]
    """
    x = _finite(x, "x")
    r = _round_abs(abs(x))
    if r > E4M3_MAX:
        raise Fp8Overflow(f"{x!r} rounds past e4m3's largest finite value, 448; scale the tensor first (quantize)")
    return math.copysign(r, x)


def _round_abs(a: float) -> float:
    """round_e4m3 of a finite a >= 0, unchecked and with no upper limit (quantize clamps first)."""
    if a == 0.0:
        return a
    e = max(math.frexp(a)[1], -5)  # a = f * 2**e, f in [0.5, 1); subnormals share 2**-6's spacing
    # a * 2**(3 - (e - 1)) is exact (a power of two); round() ties to even
    return math.ldexp(round(math.ldexp(a, E4M3_MANTISSA_BITS + 1 - e)), e - 1 - E4M3_MANTISSA_BITS)


def _check_dim(value, name: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} = {value!r} is a {type(value).__name__}; expected an int")
    if not low <= value <= MAX_DIM:
        raise ValueError(f"{name} = {value}; expected {low} <= {name} <= {MAX_DIM} (labs.fp8.MAX_DIM)")
    return value


def _matrix(x, name: str) -> list[list[float]]:
    if isinstance(x, (str, bytes)) or not hasattr(x, "__iter__"):
        raise TypeError(f"{name} must be a list of rows (lists of floats), got {type(x).__name__}")
    rows = [[_finite(v, f"{name}[{i}][{j}]") for j, v in enumerate(r)] for i, r in enumerate(x)]
    if not rows or not rows[0] or any(len(r) != len(rows[0]) for r in rows):
        raise ValueError(f"{name} must be a non-empty rectangular list of rows")
    return rows


def quantize(x, block_rows: int | None = None) -> list[list[float]]:
    """Quantize a matrix to FP8 e4m3 with a scale per tensor (or per block of rows), then dequantize.

    Each group (the whole tensor, or ``block_rows`` consecutive rows) is
    multiplied by scale = 448 / max|x| over the group, rounded with
    ``round_e4m3`` and divided by the scale again: the float64 values the
    FP8 GEMM would see, in the tensor's own units.

    Args:
        x: (N, d) finite floats.
        block_rows: None for one scale per tensor (the paper's baseline), or an
            int >= 1 for one scale per block of rows (FlashAttention-3's block
            quantization, one scale per tile of Q or K).

    Returns:
        (N, d) the dequantized matrix. An all-zero group stays zero.

    Raises:
        TypeError, ValueError: x not a rectangular list of finite floats; a bad block_rows.

    Source: Shah et al. (2024), FlashAttention-3, sections 3.3 and 4.3.

    >>> quantize([[1.0, 0.3], [-448.0, 2.0]])
    [[1.0, 0.3125], [-448.0, 2.0]]
    >>> [round(v, 6) for v in quantize([[1.0, 0.3], [-448.0, 2.0]], block_rows=1)[0]]  # 0.3 * 448 -> 128
    [1.0, 0.285714]
    """
    x = _matrix(x, "x")
    if block_rows is not None and (isinstance(block_rows, bool) or not isinstance(block_rows, int) or block_rows < 1):
        raise ValueError(f"block_rows = {block_rows!r}; expected None or an int >= 1")
    return _quantize(x, block_rows)


def _amax(x) -> float:
    return max(max(map(abs, row)) for row in x)


def _quantize(x: list[list[float]], block_rows: int | None, amax: float | None = None) -> list[list[float]]:
    """quantize on rows already checked; ``amax``, if given, sets the one scale (rows of a larger tensor)."""
    if block_rows is None:
        block_rows = len(x)
    out = []
    for r0 in range(0, len(x), block_rows):
        block = x[r0 : r0 + block_rows]
        if amax is None or block_rows != len(x):
            amax = _amax(block)
        if amax == 0.0:
            out += [list(row) for row in block]
            continue
        scale = E4M3_MAX / amax
        # The largest entry maps to 448 up to one rounding of the product: clamp that last ulp.
        out += [[math.copysign(_round_abs(min(abs(v) * scale, E4M3_MAX)), v) / scale for v in row] for row in block]
    return out


def hadamard(n: int) -> list[list[float]]:
    """The Sylvester Hadamard matrix H_n (entries +-1, H H^T = n I).

    Args:
        n: a power of two, >= 1.

    Returns:
        (n, n) floats.

    Raises:
        ValueError: n not a power of two >= 1 (Sylvester's construction doubles),
            or above MAX_DIM (1024). TypeError: n not an int.

    >>> hadamard(2)
    [[1.0, 1.0], [1.0, -1.0]]
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n = {n!r} is a {type(n).__name__}; expected an int, a power of two")
    if n < 1 or n & (n - 1):
        raise ValueError(f"n = {n!r}; expected a power of two >= 1 for a Sylvester Hadamard matrix")
    _check_dim(n, "n")
    h = [[1.0]]
    while len(h) < n:
        h = [row + row for row in h] + [row + [-v for v in row] for row in h]
    return h


def random_orthogonal(d: int, rng: random.Random) -> list[list[float]]:
    """M = diag(s) H / sqrt(d): a Hadamard matrix with random row signs, scaled to be orthogonal.

    The signs come first: each entry of q M = (q * s) H / sqrt(d) is a sum of q's entries under
    random signs (the paper's "random sum of entries of Q"). Signs applied after H would only flip
    whole entries of q H, which changes no rounding error.

    Args:
        d: head dimension, a power of two.
        rng: a ``random.Random`` for the signs s (each +1 or -1 with probability 1/2).

    Returns:
        (d, d) floats with M M^T = I, every entry +-1/sqrt(d).

    Raises:
        ValueError: d not a power of two; TypeError: rng not a random.Random.

    Source: Shah et al. (2024), FlashAttention-3, section 3.3 (incoherent processing).

    >>> m = random_orthogonal(4, random.Random(0))
    >>> [[round(sum(a * b for a, b in zip(r, s)), 12) for s in m] for r in m][0]
    [1.0, 0.0, 0.0, 0.0]
    """
    if not isinstance(rng, random.Random):
        raise TypeError(f"rng must be a random.Random, got {type(rng).__name__}")
    h = hadamard(d)
    signs = [rng.choice((-1.0, 1.0)) for _ in range(d)]
    return [[signs[i] * h[i][j] / math.sqrt(d) for j in range(d)] for i in range(d)]


def _shape(x: list[list[float]]) -> tuple[int, int]:
    return len(x), len(x[0])


def matmul(a, b) -> list[list[float]]:
    """a b for (N, d) a and (d, M) b, lists of rows.

    Raises TypeError, ValueError: a or b not a rectangular list of rows of
    finite floats, or a's columns (d) not b's rows.

    >>> matmul([[1.0, 2.0]], [[3.0], [4.0]])
    [[11.0]]
    >>> matmul([[1.0, 2.0]], [[3.0, 4.0]])
    Traceback (most recent call last):
    ValueError: matmul: a is (1, 2) and b is (1, 2); expected a's 2 columns to match b's rows
    """
    a, b = _matrix(a, "a"), _matrix(b, "b")
    if len(a[0]) != len(b):
        raise ValueError(f"matmul: a is {_shape(a)} and b is {_shape(b)}; expected a's {len(a[0])} columns to match b's rows")
    cols = list(zip(*b))
    return [[sum(x * y for x, y in zip(row, col)) for col in cols] for row in a]


def matmul_t(a, b) -> list[list[float]]:
    """a b^T for (N, d) a and (M, d) b: the score matrix Q K^T.

    Raises TypeError, ValueError: a or b not a rectangular list of rows of
    finite floats, or their rows of different lengths (d).

    >>> matmul_t([[1.0, 2.0]], [[3.0, 4.0], [1.0, 0.0]])
    [[11.0, 1.0]]
    """
    a, b = _matrix(a, "a"), _matrix(b, "b")
    if len(a[0]) != len(b[0]):
        raise ValueError(f"matmul_t: a is {_shape(a)} and b is {_shape(b)}; expected rows of one length d")
    return [[sum(x * y for x, y in zip(row, col)) for col in b] for row in a]


def rmse(a, b) -> float:
    """Root-mean-square difference of two matrices of one shape.

    Raises TypeError, ValueError: a or b not a rectangular list of rows of
    finite floats, or of different shapes.

    >>> rmse([[1.0, 2.0]], [[1.0, 4.0]])
    1.4142135623730951
    >>> rmse([[1.0, 2.0]], [[1.0]])
    Traceback (most recent call last):
    ValueError: rmse: a is (1, 2) and b is (1, 1); expected one shape
    """
    a, b = _matrix(a, "a"), _matrix(b, "b")
    if _shape(a) != _shape(b):
        raise ValueError(f"rmse: a is {_shape(a)} and b is {_shape(b)}; expected one shape")
    n = sum(len(r) for r in a)
    try:
        total = sum((x - y) ** 2 for ra, rb in zip(a, b) for x, y in zip(ra, rb))
    except OverflowError:
        total = math.inf
    if total == math.inf:  # a difference past 1.3e154 squares past float64's range
        raise ValueError("rmse: the squared differences of a and b overflow float64; scale them first")
    return math.sqrt(total / n)


def with_outliers(n: int, d: int, rng: random.Random, rate: float = 0.001, outlier_std: float = 10.0):
    """An (n, d) matrix drawn from the paper's section 4.3 distribution, N(0, 1) + N(0, outlier_std**2) * Bernoulli(rate).

    Every entry is N(0, 1); with probability ``rate`` an independent
    N(0, outlier_std**2) term is *added* to it (not substituted). The paper:
    "each entry is normally distributed with zero mean and standard deviation 1,
    but for 0.1% of entries we add an independent term that's normally
    distributed with standard deviation 10" (Shah et al., 2024, section 4.3).

    Args:
        n, d: rows and columns. rng: a ``random.Random``.
        rate: probability of an outlier term per entry. outlier_std: its standard deviation.

    Returns:
        (n, d) floats. Outliers sit in random entries, not in fixed channels.

    Raises TypeError, ValueError: n or d not an int in 0..MAX_DIM (1024), rng
    not a ``random.Random``, rate not in [0, 1], outlier_std not a finite float >= 0.

    >>> len(with_outliers(3, 4, random.Random(0))), len(with_outliers(3, 4, random.Random(0))[0])
    (3, 4)
    """
    _check_dim(n, "n", 0)
    _check_dim(d, "d", 0)
    if not isinstance(rng, random.Random):
        raise TypeError(f"rng must be a random.Random, got {type(rng).__name__}")
    if not 0.0 <= _finite(rate, "rate") <= 1.0:
        raise ValueError(f"rate = {rate!r}; expected a probability in [0, 1]")
    if _finite(outlier_std, "outlier_std") < 0.0:
        raise ValueError(f"outlier_std = {outlier_std!r}; expected a standard deviation >= 0")
    return [[rng.gauss(0.0, 1.0) + (rng.gauss(0.0, outlier_std) if rng.random() < rate else 0.0) for _ in range(d)] for _ in range(n)]


def with_channel_outliers(n: int, d: int, rng: random.Random, channels=(3, 17), factor: float = 20.0):
    """An (n, d) matrix of N(0, 1) entries whose columns ``channels`` are multiplied by ``factor``.

    Outlier *features*: the same few channels are large in every token, as in
    the activations of large language models (Dettmers et al., 2022, LLM.int8();
    Sun et al., 2024, "Massive activations"), which FlashAttention-3 cites for
    its outliers. Draw Q and K with the same channels to make q and k large in
    the same channels.

    Args:
        n, d: rows and columns. rng: a ``random.Random``.
        channels: column indices in [0, d). factor: their scale.

    Raises:
        ValueError: a channel outside [0, d).

    >>> x = with_channel_outliers(2, 4, random.Random(0), channels=(1,), factor=100.0)
    >>> [abs(row[1]) > 5 for row in x]
    [True, True]
    """
    _check_dim(n, "n", 0)
    _check_dim(d, "d", 0)
    if not isinstance(rng, random.Random):
        raise TypeError(f"rng must be a random.Random, got {type(rng).__name__}")
    if any(not 0 <= c < d for c in channels):
        raise ValueError(f"channels = {tuple(channels)!r}; expected column indices in [0, {d})")
    big = set(channels)
    return [[rng.gauss(0.0, 1.0) * (factor if c in big else 1.0) for c in range(d)] for _ in range(n)]


def random_signs(d: int, rng: random.Random) -> list[float]:
    """d random signs s (each +1 or -1 with probability 1/2), the diagonal of M = diag(s) H / sqrt(d).

    >>> random_signs(4, random.Random(0))
    [1.0, 1.0, -1.0, 1.0]
    """
    _check_dim(d, "d")
    if not isinstance(rng, random.Random):
        raise TypeError(f"rng must be a random.Random, got {type(rng).__name__}")
    return [rng.choice((-1.0, 1.0)) for _ in range(d)]


def rotate(x, signs) -> list[list[float]]:
    """x M for M = diag(s) H / sqrt(d), by the fast Walsh-Hadamard transform: O(d log d) per row.

    Gives the same matrix as ``matmul(x, M)`` with M built from the same signs
    (``random_orthogonal``), without the O(d**2) product: the butterflies
    the signs first, then the butterflies (a, b) -> (a + b, a - b) of Sylvester's construction and 1 / sqrt(d).

    Args:
        x: (N, d) floats, d a power of two. signs: d floats, each +1 or -1.

    Returns:
        (N, d) the rotated rows.

    Raises:
        ValueError: d not a power of two, or len(signs) != d.

    >>> rotate([[1.0, 2.0, 0.0, 0.0]], [1.0, -1.0, 1.0, 1.0])  # (1, -2, 0, 0) H / 2
    [[-0.5, 1.5, -0.5, 1.5]]
    """
    out = []
    for row in x:
        d = len(row)
        if d < 1 or d & (d - 1) or len(signs) != d:
            raise ValueError(f"rows of {d} features and {len(signs)} signs; expected one sign per feature, a power of two")
        a = [v * s for v, s in zip(row, signs)]
        h = 1
        while h < d:
            for i in range(0, d, 2 * h):
                for j in range(i, i + h):
                    a[j], a[j + h] = a[j] + a[j + h], a[j] - a[j + h]
            h *= 2
        r = 1.0 / math.sqrt(d)
        out.append([v * r for v in a])
    return out


P_OFFSET = 8  # FlashAttention-3 FP8: exp2(... - max + 8), so P~ lies in (0, 2**8] (hopper/softmax.h, Max_offset)


def attention_fp8(q, k, v, signs=None, block_rows: int | None = None, n_queries: int | None = None):
    """Attention with Q, K, V and P rounded to e4m3 as FlashAttention-3's FP8 forward pass does, the rest in float64.

    Q and K (rotated by M = diag(signs) H / sqrt(d) first, if ``signs`` is
    given) and V are quantized with ``quantize`` (per tensor, or per block of
    rows). Then, for each query row: S = q K^T / sqrt(d), m = max S,
    P~ = 2**8 * exp(S - m) in (0, 256] (``Max_offset = 8``, so small
    probabilities stay above e4m3's normal range 2**-6 instead of underflowing),
    l = sum P~ from the *unrounded* P~, and O = round_e4m3(P~) V / l. The
    kernel does this one key tile at a time with the online softmax; with a
    single tile, as here, m is the row's max.

    Args:
        q: (N_q, d), k: (N_k, d), v: (N_k, d_v) floats; d a power of two if ``signs``.
        signs: None (no rotation) or d signs for ``rotate``.
        block_rows: None for one scale per tensor, or rows per scale.
        n_queries: compute only the first n_queries rows of O (the whole Q is
            still quantized, so its scale is that of the whole tensor).

    Returns:
        O: (n_queries or N_q, d_v).

    Source: Shah et al. (2024), FlashAttention-3, section 3.3; flash-attention
    hopper/softmax.h (``scale_apply_exp2`` with ``Max_offset``; ``row_sum`` is
    summed from the float scores before the FP8 conversion).

    >>> o = attention_fp8([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])
    >>> [round(x, 4) for x in o[0]]
    [0.6698, 0.3349]
    """
    q, k, v = _matrix(q, "q"), _matrix(k, "k"), _matrix(v, "v")
    if signs is not None:
        q, k = rotate(q, signs), rotate(k, signs)
    return _attention_quantized(quantize(q, block_rows)[:n_queries], quantize(k, block_rows), quantize(v, block_rows))


def _attention_quantized(qq, kq, vq, round_p: bool = True) -> list[list[float]]:
    """attention_fp8 after the quantization of Q (the rows wanted), K and V; float64 attention if not round_p."""
    scale = 1.0 / math.sqrt(len(qq[0]))
    out = []
    for qi in qq:
        s = [scale * sum(map(operator.mul, qi, kj)) for kj in kq]  # (N_k,)
        m = max(s)
        p = [math.ldexp(math.exp(x - m), P_OFFSET) for x in s]  # P~ in (0, 256]
        ell = sum(p)  # from the unrounded P~, as the kernel's row_sum
        p8 = [_round_abs(x) for x in p] if round_p else p  # P~ <= 256 < 448: no scale needed
        out.append([sum(map(operator.mul, p8, col)) / ell for col in zip(*vq)])
    return out


def scores(q, k, n_queries: int | None = None) -> list[list[float]]:
    """S = Q K^T / sqrt(d) for the first n_queries rows of Q: (n_queries, N_k).

    >>> scores([[2.0, 0.0, 0.0, 0.0]], [[1.0, 1.0, 0.0, 0.0]])
    [[1.0]]
    """
    q, k = _matrix(q, "q"), _matrix(k, "k")
    if len(q[0]) != len(k[0]):
        raise ValueError(f"q has {len(q[0])} features and k {len(k[0])}; expected the same head dimension d")
    scale = 1.0 / math.sqrt(len(q[0]))
    s = [[scale * sum(map(operator.mul, qi, kj)) for kj in k] for qi in q[:n_queries]]
    if not all(math.isfinite(x) for row in s for x in row):
        raise OverflowError("a score q . k / sqrt(d) overflowed float64; expected entries small enough for their products")
    return s


def dot_error_model(q, k, sigma2: float, n_queries: int | None = None) -> float:
    """Predicted RMSE of S = Q K^T / sqrt(d) when each entry of Q and K gets an independent relative error of variance sigma2.

    With q_c -> q_c (1 + e_c) and k_c -> k_c (1 + f_c), to first order
    d(q . k) = sum_c q_c k_c (e_c + f_c), whose variance is
    2 sigma2 sum_c q_c**2 k_c**2. The RMSE over the (n_queries, N_k) scores is
    the square root of the mean of that, divided by d (the 1 / sqrt(d) scale, squared).

    Args:
        q: (N_q, d), k: (N_k, d) floats. sigma2: variance of the relative rounding error.

    Returns:
        The predicted RMSE, in the units of S.

    >>> dot_error_model([[1.0, 0.0]], [[1.0, 0.0]], 0.5)
    0.7071067811865476
    """
    d = len(q[0])
    k2 = [[x * x for x in kj] for kj in k]
    qs = q[:n_queries]
    total = sum(sum(map(operator.mul, [x * x for x in qi], kj)) for qi in qs for kj in k2)
    return math.sqrt(2.0 * sigma2 * total / (len(qs) * len(k) * d))


def relative_error_variance(x, xq) -> float:
    """Mean of ((xq - x) / x)**2 over the nonzero entries: sigma2 of ``dot_error_model``, measured.

    >>> relative_error_variance([[1.0, 2.0]], [[1.0, 2.5]])
    0.03125
    """
    x, xq = _matrix(x, "x"), _matrix(xq, "xq")
    if len(x) != len(xq) or len(x[0]) != len(xq[0]):
        raise ValueError(f"x is {len(x)}x{len(x[0])} and xq {len(xq)}x{len(xq[0])}; expected the same shape")
    r = [((b - a) / a) ** 2 for ra, rb in zip(x, xq) for a, b in zip(ra, rb) if a != 0.0]
    if not r:
        raise ValueError("x has no nonzero entry; expected at least one to measure a relative error on")
    variance = sum(r) / len(r)
    if not math.isfinite(variance):
        raise OverflowError("a relative error overflowed float64; expected xq close to x")
    return variance


def incoherence_errors(
    seed: int, n_keys: int, d: int = 64, n_queries: int = 16, outliers: str = "paper", block_rows: int = 64
) -> dict[str, float]:
    """One run of the section 4.3 experiment, emulated: RMSE against float64 with and without the rotation.

    Q and K (n_keys, d) and V are drawn, seeded, with ``with_outliers`` (the
    paper's distribution) or, for ``outliers="channels"``, Q and K with
    ``with_channel_outliers`` (the same two channels) and V with N(0, 1).
    Errors are measured on the first ``n_queries`` rows of S = Q K^T / sqrt(d)
    and of O (every key is used; fewer query rows keep pure Python fast).

    Args:
        seed: seed of the ``random.Random`` that draws Q, K, V and the signs.
        n_keys: N, rows of Q, K and V. d: head dimension, a power of two.
        n_queries: query rows measured, 1 <= n_queries <= n_keys.
        outliers: "paper" or "channels". block_rows: rows per scale for block quantization.

    Returns:
        A dict of floats: ``exact_diff``, the float64 max |S - S_rotated|;
        ``s_fp8``, ``s_fp8_rot``: RMSE of S with Q, K in e4m3 (per tensor),
        without and with the rotation; ``s_model``, ``s_model_rot``: the same
        predicted by ``dot_error_model`` with sigma2 measured on the rounded Q, K;
        ``o_fp8``, ``o_fp8_rot``, ``o_fp8_block_rot``: RMSE of O from
        ``attention_fp8`` (per tensor without and with the rotation; per block
        of ``block_rows`` rows with it, FlashAttention-3's combination).

    Raises:
        TypeError: a size or seed that is not an int; ValueError: a bad size,
        d not a power of two, or unknown ``outliers``.

    Source: Shah et al. (2024), FlashAttention-3, sections 3.3 and 4.3.

    >>> e = incoherence_errors(0, n_keys=8, d=8, n_queries=2, block_rows=4)
    >>> e["exact_diff"] < 1e-12, e["s_fp8"] > 0.0
    (True, True)
    """
    for name, value in (("seed", seed), ("n_keys", n_keys), ("n_queries", n_queries), ("block_rows", block_rows)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} = {value!r}; expected an int")
        if value < (0 if name == "seed" else 1):
            raise ValueError(f"{name} = {value!r}; expected an int >= {0 if name == 'seed' else 1}")
    if n_queries > n_keys:
        raise ValueError(f"n_queries = {n_queries} > n_keys = {n_keys}; expected at most one query per key row")
    if outliers not in ("paper", "channels"):
        raise ValueError(f"outliers = {outliers!r}; expected 'paper' or 'channels'")
    hadamard(d)  # raises for a d that is not a power of two
    _check_dim(n_keys, "n_keys")
    _check_dim(block_rows, "block_rows")
    rng = random.Random(seed)
    if outliers == "paper":
        q, k, v = (with_outliers(n_keys, d, rng) for _ in range(3))  # (N, d) each
    else:
        q, k = (with_channel_outliers(n_keys, d, rng) for _ in range(2))
        v = [[rng.gauss(0.0, 1.0) for _ in range(d)] for _ in range(n_keys)]
    signs = random_signs(d, rng)
    qm, km = rotate(q, signs), rotate(k, signs)  # (N, d), rows of Q M and K M
    s = scores(q, k, n_queries)  # (n_queries, N), float64 reference
    o = _attention_quantized(q[:n_queries], k, v, round_p=False)  # (n_queries, d), float64 reference
    # Per tensor: the scale of all of Q (or QM), but only the rows measured are rounded.
    qq, qmq = (_quantize(x[:n_queries], None, _amax(x)) for x in (q, qm))
    kq, kmq, vq = (_quantize(x, None) for x in (k, km, v))
    sigma2 = relative_error_variance(q[:n_queries] + k, qq + kq)
    sigma2_rot = relative_error_variance(qm[:n_queries] + km, qmq + kmq)
    blocks = [_quantize(x, block_rows) for x in (qm[:n_queries], km, v)]  # rows < n_queries keep their blocks
    return {
        "exact_diff": max(abs(a - b) for ra, rb in zip(s, scores(qm, km, n_queries)) for a, b in zip(ra, rb)),
        "s_fp8": rmse(scores(qq, kq, n_queries), s),
        "s_fp8_rot": rmse(scores(qmq, kmq, n_queries), s),
        "s_model": dot_error_model(q, k, sigma2, n_queries),
        "s_model_rot": dot_error_model(qm, km, sigma2_rot, n_queries),
        "o_fp8": rmse(_attention_quantized(qq[:n_queries], kq, vq), o),
        "o_fp8_rot": rmse(_attention_quantized(qmq[:n_queries], kmq, vq), o),
        "o_fp8_block_rot": rmse(_attention_quantized(*blocks), o),
    }
