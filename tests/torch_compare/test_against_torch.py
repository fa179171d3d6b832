"""labs against PyTorch in float64 (``nox -s torch``: optional, it installs torch).

Not part of the main suite: torch is large. Gradients of random expressions
(labs.autograd vs torch.autograd), softmax and logsumexp (labs.attention vs
torch.softmax / torch.logsumexp), and attention (labs.attention.attention and
flash_attention vs torch.nn.functional.scaled_dot_product_attention).
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
F = torch.nn.functional

from labs import attention as la  # noqa: E402
from labs.autograd import Value  # noqa: E402

torch.set_default_dtype(torch.float64)

UNARY = ["tanh", "exp", "sigmoid", "relu", "neg"]
BINARY = ["+", "-", "*", "/"]


def build(ops, xs, lib):
    """The same expression on labs Values or torch tensors: a fold over the inputs."""

    def un(name, a):
        if name == "neg":
            return -a
        if lib == "torch":
            return {"tanh": torch.tanh, "exp": torch.exp, "sigmoid": torch.sigmoid, "relu": torch.relu}[name](a)
        return getattr(a, name)()

    acc = xs[0]
    for (u, b), x in zip(ops, xs[1:]):
        acc = un(u, acc)
        if b == "/":
            acc = acc / (x * x + 1.0)  # keep the divisor away from 0
        else:
            acc = {"+": acc + x, "-": acc - x, "*": acc * x}[b]
    return acc


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(-2, 2, allow_nan=False), min_size=2, max_size=6),
    st.lists(st.tuples(st.sampled_from(UNARY), st.sampled_from(BINARY)), min_size=5, max_size=5),
)
def test_gradients_match_torch_autograd(xs, ops):
    ops = ops[: len(xs) - 1]
    ours = [Value(x) for x in xs]
    out = build(ops, ours, "labs")
    out.backward()
    theirs = [torch.tensor(x, requires_grad=True) for x in xs]
    ref = build(ops, theirs, "torch")
    ref.backward()
    assert math.isclose(out.data, ref.item(), rel_tol=1e-12, abs_tol=1e-12)
    for v, t in zip(ours, theirs):
        g = 0.0 if t.grad is None else t.grad.item()
        assert math.isclose(v.grad, g, rel_tol=1e-9, abs_tol=1e-12)


def test_the_neuron_matches_torch():
    x1, x2, w1, w2, b = (torch.tensor(v, requires_grad=True) for v in (2.0, 0.0, -3.0, 1.0, 6.8813735870195432))
    o = torch.tanh(x1 * w1 + x2 * w2 + b)
    o.backward()
    from labs.autograd import build_neuron

    nn = build_neuron()
    nn.o.backward()
    for name, t in zip(("x1", "x2", "w1", "w2", "b"), (x1, x2, w1, w2, b)):
        assert math.isclose(getattr(nn, name).grad, t.grad.item(), rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize(
    "row",
    [
        [1000.0, 1000.0],
        [1000.0, -1000.0],
        [-1000.0, -1000.0],
        [-math.inf, 0.0, 0.0],
        [1.0, 2.0, 3.0, 4.0, 5.0],
        [3.0, 1000.0, -1000.0, 999.0, 1000.0, -2.0],
    ],
)
def test_softmax_and_logsumexp_match_torch(row):
    t = torch.tensor(row)
    ours = la.online_softmax(row)
    assert ours.probs == pytest.approx(torch.softmax(t, 0).tolist(), rel=1e-15, abs=1e-300)
    assert ours.logsumexp == pytest.approx(torch.logsumexp(t, 0).item(), rel=1e-15)
    assert la.softmax(row) == pytest.approx(torch.softmax(t, 0).tolist(), rel=1e-15, abs=1e-300)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n_q, n_k, block_q, block_k", [(5, 5, 2, 2), (7, 7, 3, 4), (16, 16, 4, 8), (4, 9, 2, 3)])
def test_attention_matches_scaled_dot_product_attention(n_q, n_k, block_q, block_k, causal):
    rng = random.Random(n_q * 100 + n_k)
    d, dv = 8, 6
    q = [[rng.gauss(0, 1) for _ in range(d)] for _ in range(n_q)]
    k = [[rng.gauss(0, 1) for _ in range(d)] for _ in range(n_k)]
    v = [[rng.gauss(0, 1) for _ in range(dv)] for _ in range(n_k)]
    mask = None
    if causal:  # bottom-right aligned, as FlashAttention >= 2.1 (and labs) do
        mask = torch.tensor([[j <= i + n_k - n_q for j in range(n_k)] for i in range(n_q)])
    ref = F.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v), attn_mask=mask)
    ours = la.attention(q, k, v, causal=causal)
    flash, lse = la.flash_attention(q, k, v, block_q, block_k, causal=causal)
    for row_ours, row_flash, row_ref in zip(ours, flash, ref.tolist()):
        assert row_ours == pytest.approx(row_ref, rel=1e-12, abs=1e-12)
        assert row_flash == pytest.approx(row_ref, rel=1e-12, abs=1e-12)
    scores = torch.tensor(q) @ torch.tensor(k).T / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    assert lse == pytest.approx(torch.logsumexp(scores, 1).tolist(), rel=1e-13)
