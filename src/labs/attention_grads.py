"""Two references for attention's gradients, and a comparison that names what disagrees.

Lab 2, exercise 3 (FlashAttention-2's backward pass, Dao 2023, section 3.1.2 and
Algorithm 2) is checked against gradients computed in two ways that share no code
with a tiled backward pass:

- ``central_differences``: (loss(x + h) - loss(x - h)) / 2h for every entry of Q,
  K and V, with loss = sum(dO ∘ O) and O from the full-matrix ``attention``
  (a gradient checker in the spirit of minitorch's ``derivative_check``);
- ``autograd_gradients``: reverse mode through the plain attention formula,
  O = softmax(s Q K^T) V, built from Lab 1's ``labs.autograd.Value``.

``compare_gradients`` says, per tensor, "ok" or how far off it is. Standard
library only: the checks run in Pyodide too.
"""

from __future__ import annotations

import math

from labs.attention import attention, check_attention_inputs
from labs.autograd import Value

__all__ = ["attention_loss", "central_differences", "autograd_gradients", "compare_gradients"]

NAMES = ("dQ", "dK", "dV")


def _rows_sum(o, d_o) -> float:
    return sum(a * b for ro, rd in zip(o, d_o) for a, b in zip(ro, rd))


def attention_loss(q, k, v, d_o, causal: bool = False, scale=None) -> float:
    """loss = sum(dO ∘ O) with O = attention(q, k, v): a loss whose gradient with respect to O is dO.

    Args:
        q: (N_q, d), k: (N_k, d), v: (N_k, d_v); causal, scale: as for ``attention``.
        d_o: (N_q, d_v), the weights of O's entries (the upstream gradient dO).
    Returns:
        the loss, a float.
    Raises:
        what ``attention`` raises.

    >>> attention_loss([[1.0]], [[0.0], [0.0]], [[1.0], [3.0]], [[0.5]])
    1.0
    """
    return _rows_sum(attention(q, k, v, causal=causal, scale=scale), d_o)


def central_differences(q, k, v, d_o, causal: bool = False, scale=None, h: float = 1e-5):
    """dloss/dQ, dK, dV of loss = sum(dO ∘ O) by central differences, one entry at a time.

    Each entry x is moved to x + h and x - h and the full-matrix ``attention`` run
    again: (loss(x + h) - loss(x - h)) / 2h. Its error is the truncation
    h**2 |loss'''| / 6 plus rounding of about eps |loss| / h (eps = 2**-52): near
    1e-10 at the default h for inputs of order 1. Costs 2 (N_q + N_k) d + 2 N_k d_v
    attention calls.

    Args:
        q: (N_q, d), k: (N_k, d), v: (N_k, d_v), d_o: (N_q, d_v); causal, scale: as for ``attention``.
        h: the step, a finite float > 0.
    Returns:
        (dQ, dK, dV): (N_q, d), (N_k, d), (N_k, d_v), lists of float rows.
    Raises:
        ValueError: h is not a finite number > 0; besides what ``attention`` raises.

    >>> dq, dk, dv = central_differences([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [0.0]], [[1.0]], scale=1.0)
    >>> [round(x, 6) for x in dq[0]], [round(row[0], 6) for row in dv]
    ([0.196612, -0.196612], [0.731059, 0.268941])
    """
    if not (isinstance(h, (int, float)) and math.isfinite(h) and h > 0):
        raise ValueError(f"step h must be a finite number > 0, got {h!r}")
    q, k, v, scale = check_attention_inputs(q, k, v, causal, scale)
    grads = []
    for x in (q, k, v):  # moved in place, and put back: the other two stay as given
        g = []
        for row in x:
            g.append([])
            for c, keep in enumerate(row):
                row[c] = keep + h
                up = attention_loss(q, k, v, d_o, causal, scale)
                row[c] = keep - h
                down = attention_loss(q, k, v, d_o, causal, scale)
                row[c] = keep
                g[-1].append((up - down) / (2 * h))
        grads.append(g)
    return tuple(grads)


def autograd_gradients(q, k, v, d_o, causal: bool = False, scale=None, Value=Value):
    """dloss/dQ, dK, dV of loss = sum(dO ∘ O) by reverse mode, through the plain attention formula.

    Every entry of q, k and v becomes a leaf ``Value``; S = scale q k^T, P =
    softmax(S) per row (the row's max subtracted as a constant, which changes
    neither P nor its gradient), O = P V, loss = sum(dO ∘ O); ``loss.backward()``
    leaves the gradients in the leaves' ``.grad``. Masked keys (causal, bottom-right
    aligned) are left out of the row; a row that sees no key contributes 0.

    Args:
        q: (N_q, d), k: (N_k, d), v: (N_k, d_v), d_o: (N_q, d_v); causal, scale: as for ``attention``.
        Value: the engine, micrograd's interface (+, *, /, exp, backward, .data, .grad);
            Lab 1's ``labs.autograd.Value`` by default.
    Returns:
        (dQ, dK, dV): (N_q, d), (N_k, d), (N_k, d_v), lists of float rows.
    Raises:
        what ``check_attention_inputs`` raises.

    Source: Karpathy's micrograd (2020), the engine of Lab 1; Vaswani et al. (2017), eq. 1.

    >>> dq, dk, dv = autograd_gradients([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [0.0]], [[1.0]], scale=1.0)
    >>> [round(x, 6) for x in dq[0]], [round(row[0], 6) for row in dv]
    ([0.196612, -0.196612], [0.731059, 0.268941])
    """
    q, k, v, scale = check_attention_inputs(q, k, v, causal, scale)
    n_q, n_k = len(q), len(k)
    leaves = [[[Value(x) for x in row] for row in m] for m in (q, k, v)]
    vq, vk, vv = leaves
    loss = Value(0.0)
    for i in range(n_q):
        seen = range(n_k if not causal else max(0, min(n_k, i + n_k - n_q + 1)))  # keys j < i + N_k - N_q + 1
        if not seen:
            continue  # O_i = 0 whatever q, k, v are
        s = [scale * sum((a * b for a, b in zip(vq[i], vk[j])), Value(0.0)) for j in seen]  # (N_seen,)
        top = max(x.data for x in s)  # a constant: softmax(s - top) = softmax(s)
        e = [(x - top).exp() for x in s]
        total = sum(e, Value(0.0))
        for c in range(len(v[0])):
            o_ic = sum((e_j / total * vv[j][c] for e_j, j in zip(e, seen)), Value(0.0))
            loss = loss + o_ic * d_o[i][c]
    loss.backward()
    return tuple([[x.grad for x in row] for row in m] for m in leaves)


def compare_gradients(got, expected, tol: float = 1e-6) -> list[str]:
    """Compare (dQ, dK, dV) with a reference: per tensor, "dQ ok" or what is wrong with it.

    A tensor is ok when every entry is within tol * max|expected| of the reference
    (tol relative to the tensor's largest gradient, so an entry near 0 is not held to
    a relative error of its own). Otherwise the entry says its shape is wrong, that
    it holds a NaN or infinity, or its max relative error.

    Args:
        got: (dQ, dK, dV), lists of float rows, as ``flash_attention_backward`` returns them.
        expected: (dQ, dK, dV) from a reference of the same shapes.
        tol: relative tolerance, a float > 0.
    Returns:
        a list of three strings, e.g. ["dQ ok", "dK ok", "dV ok"].

    >>> compare_gradients(([[1.0]], [[2.0]], [[3.0]]), ([[1.0]], [[2.5]], [[3.0, 0.0]]))
    ['dQ ok', 'dK off: max relative error 0.2', 'dV is 1 x 1; expected 1 x 2']
    """
    if not (isinstance(got, (tuple, list)) and len(got) == 3):
        return [f"expected (dQ, dK, dV), three lists of rows; got {got!r:.60}"]
    report = []
    for name, g, e in zip(NAMES, got, expected):
        shape = f"{len(e)} x {len(e[0]) if e else 0}"
        try:
            rows = [[float(x) for x in row] for row in g]
        except (TypeError, ValueError):
            report.append(f"{name} is {g!r:.40}; expected {shape} rows of floats")
            continue
        if len(rows) != len(e) or any(len(a) != len(b) for a, b in zip(rows, e)):
            report.append(f"{name} is {len(rows)} x {len(rows[0]) if rows else 0}; expected {shape}")
        elif not all(math.isfinite(x) for row in rows for x in row):
            report.append(f"{name} holds NaN or infinity")
        else:
            size = max((abs(x) for row in e for x in row), default=0.0) or 1.0
            err = max((abs(a - b) for ra, rb in zip(rows, e) for a, b in zip(ra, rb)), default=0.0) / size
            report.append(f"{name} ok" if err <= tol else f"{name} off: max relative error {err:.2g}")
    return report
