"""FP8 (e4m3) rounding and FlashAttention-3's incoherent processing, emulated in pure Python.

Lab 2, a read-and-run section. FlashAttention-3 (Shah et al., 2024,
arXiv:2407.08608, section 3.3) runs its GEMMs in FP8 e4m3 and, to tame
outlier features, multiplies Q and K by the same random orthogonal matrix
M = H diag(s) / sqrt(d) (H a Hadamard matrix, s random signs) before
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
            the next step, 480, rounds to even: 448).
        TypeError, ValueError: not a finite float.

    Source: OCP 8-bit Floating Point Specification (OFP8) 1.0, E4M3; used by
    FlashAttention-3 (Shah et al., 2024), section 3.3.

    >>> [round_e4m3(x) for x in (1.0, 1.0625, 1.1875, 0.3, 2.0**-9, 2.0**-11, 448.0, -300.0)]
    [1.0, 1.0, 1.25, 0.3125, 0.001953125, 0.0, 448.0, -288.0]
    """
    x = _finite(x, "x")
    a = abs(x)
    if a == 0.0:
        return x
    exponent = max(math.frexp(a)[1] - 1, -6)  # floor(log2 a), exactly; subnormals share 2**-6's spacing
    step = math.ldexp(1.0, exponent - E4M3_MANTISSA_BITS)
    r = round(a / step) * step  # a / step is exact (a power of two); round() ties to even
    if r > E4M3_MAX:
        raise Fp8Overflow(f"{x!r} rounds past e4m3's largest finite value, 448; scale the tensor first (quantize)")
    return math.copysign(r, x)


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
    if block_rows is None:
        block_rows = len(x)
    elif isinstance(block_rows, bool) or not isinstance(block_rows, int) or block_rows < 1:
        raise ValueError(f"block_rows = {block_rows!r}; expected None or an int >= 1")
    out = []
    for r0 in range(0, len(x), block_rows):
        block = x[r0:r0 + block_rows]
        amax = max(abs(v) for row in block for v in row)
        if amax == 0.0:
            out += [list(row) for row in block]
            continue
        scale = E4M3_MAX / amax
        # The largest entry maps to 448 up to one rounding of the product: clamp that last ulp.
        out += [[round_e4m3(min(max(v * scale, -E4M3_MAX), E4M3_MAX)) / scale for v in row] for row in block]
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
    """M = H diag(s) / sqrt(d): a Hadamard matrix with random column signs, scaled to be orthogonal.

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
    return [[h[i][j] * signs[j] / math.sqrt(d) for j in range(d)] for i in range(d)]


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
    """An (n, d) matrix of N(0, 1) entries, each replaced with probability ``rate`` by one from N(0, outlier_std**2).

    The paper's section 4.3 draws Q, K, V from N(0, 1) with 0.1% of the
    entries from N(0, 10) "to simulate outliers"; here 10 is the standard deviation.

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
    return [[rng.gauss(0.0, outlier_std) if rng.random() < rate else rng.gauss(0.0, 1.0) for _ in range(d)]
            for _ in range(n)]


def quantize_int8(x) -> list[list[float]]:
    """Symmetric per-tensor INT8, dequantized: a uniform grid of step max|x| / 127.

    The contrast to e4m3: on a uniform grid every entry's rounding error is up
    to half a step, set by the largest entry, whatever its own size.

    >>> quantize_int8([[127.0, 0.4, -0.6]])
    [[127.0, 0.0, -1.0]]
    """
    x = _matrix(x, "x")
    amax = max(abs(v) for row in x for v in row)
    if amax == 0.0:
        return [list(row) for row in x]
    step = amax / 127
    if step == 0.0:  # amax is subnormal: amax / 127 underflows, so measure each entry in units of amax
        return [[round(v / amax * 127) / 127 * amax for v in row] for row in x]
    return [[round(v / step) * step for v in row] for row in x]


def incoherence_errors(seed: int, n: int = 32, d: int = 64, block_rows: int = 16) -> dict[str, float]:
    """One run of the section 4.3 experiment, emulated: RMSE against float64 with and without the rotation.

    Q, K, V (n, d) from ``with_outliers`` (seeded), M from ``random_orthogonal``.
    Only Q, K, V are quantized; products, sums and the softmax run in float64
    (``labs.attention.attention``, scale 1 / sqrt(d)).

    Args:
        seed: seed of the ``random.Random`` that draws Q, K, V and the signs of M.
        n: rows of Q, K and V (queries = keys). d: head dimension, a power of two.
        block_rows: rows per scale for block quantization.

    Returns:
        A dict of floats: ``exact_diff``, the float64 max |QK^T - (QM)(KM)^T|;
        RMSE of QK^T with e4m3 per-tensor scaling, without and with the rotation
        (``s_fp8``, ``s_fp8_rot``); RMSE of the attention output O, e4m3 per-tensor
        (``o_fp8``, ``o_fp8_rot``) and per-block after the rotation (``o_fp8_block_rot``);
        RMSE of QK^T with INT8 per-tensor (``s_int8``, ``s_int8_rot``).

    Raises:
        ValueError: d not a power of two; TypeError, ValueError: bad sizes
            (n, d and block_rows at most MAX_DIM, 1024).

    Source: Shah et al. (2024), FlashAttention-3, sections 3.3 and 4.3.

    >>> e = incoherence_errors(0, n=4, d=4, block_rows=2)
    >>> e["exact_diff"] < 1e-12, e["s_fp8"] > 0.0
    (True, True)
    """
    from labs.attention import attention

    for name, value in (("seed", seed), ("n", n), ("block_rows", block_rows)):
        if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "seed" else 1):
            raise TypeError(f"{name} = {value!r}; expected an int >= {0 if name == 'seed' else 1}")
    _check_dim(n, "n")
    _check_dim(block_rows, "block_rows")
    rng = random.Random(seed)
    q, k, v = (with_outliers(n, d, rng) for _ in range(3))  # (n, d) each
    m = random_orthogonal(d, rng)  # (d, d), M M^T = I
    qm, km = matmul(q, m), matmul(k, m)
    s = matmul_t(q, k)  # (n, n), float64 reference
    o = attention(q, k, v)  # (n, d)
    return {
        "exact_diff": max(abs(a - b) for ra, rb in zip(s, matmul_t(qm, km)) for a, b in zip(ra, rb)),
        "s_fp8": rmse(matmul_t(quantize(q), quantize(k)), s),
        "s_fp8_rot": rmse(matmul_t(quantize(qm), quantize(km)), s),
        "o_fp8": rmse(attention(quantize(q), quantize(k), quantize(v)), o),
        "o_fp8_rot": rmse(attention(quantize(qm), quantize(km), quantize(v)), o),
        "o_fp8_block_rot": rmse(attention(quantize(qm, block_rows), quantize(km, block_rows),
                                          quantize(v, block_rows)), o),
        "s_int8": rmse(matmul_t(quantize_int8(q), quantize_int8(k)), s),
        "s_int8_rot": rmse(matmul_t(quantize_int8(qm), quantize_int8(km)), s),
    }
