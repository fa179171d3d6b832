"""Tests for labs.autograd: micrograd's scalar Value, checked against hand
derivatives (the chain rule worked out below each case) and central differences."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labs.autograd import Value, build_neuron, numerical_gradient, topological_order

approx = pytest.approx


# --- the seed's values -----------------------------------------------------


def test_reused_node_accumulates_for_add():
    a = Value(3)
    y = a + a  # dy/da = 1 + 1
    y.backward()
    assert a.grad == 2.0


def test_reused_node_accumulates_for_mul():
    a = Value(3)
    y = a * a  # dy/da = 2a = 6
    y.backward()
    assert a.grad == 6.0
    assert y.data == 9.0


def test_neuron_eight_assertions():
    nn = build_neuron()
    nn.o.backward()
    # b was chosen so n = atanh(1/sqrt 2); then do/dn = 1 - o**2 = 1/2 and the
    # products route it: d/dx1 = w1/2, d/dw1 = x1/2, d/dx2 = w2/2, d/dw2 = x2/2.
    assert nn.n.data == approx(math.atanh(math.sqrt(0.5)), abs=1e-12)
    assert nn.o.data == approx(0.70710678, abs=1e-8)
    assert nn.o.grad == 1.0
    assert nn.n.grad == approx(0.5)
    assert nn.b.grad == approx(0.5)
    assert nn.x1.grad == approx(-1.5)
    assert nn.w1.grad == approx(1.0)
    assert nn.x2.grad == approx(0.5)
    assert nn.w2.grad == approx(0.0, abs=1e-15)


def test_neuron_labels_and_graph_size():
    nn = build_neuron()
    names = ["x1", "x2", "w1", "w2", "b", "x1w1", "x2w2", "x1w1x2w2", "n", "o"]
    assert [getattr(nn, name).label for name in names] == names
    order = topological_order(nn.o)
    assert len(order) == 10
    assert sum(len(node._prev) for node in order) == 9
    assert {node._op for node in order} == {"", "*", "+", "tanh"}


def test_second_backward_accumulates_leaves_not_intermediates():
    nn = build_neuron()
    nn.o.backward()
    nn.o.backward()
    assert nn.x1.grad == approx(-3.0)  # leaves accumulate, as in PyTorch
    assert nn.w1.grad == approx(2.0)
    assert nn.n.grad == approx(0.5)  # non-leaves hold the latest pass
    assert nn.x1w1.grad == approx(0.5)
    assert nn.o.grad == 1.0
    nn.o.zero_grad()
    assert all(node.grad == 0.0 for node in vars(nn).values())
    nn.o.backward()
    assert nn.x1.grad == approx(-1.5)
    assert nn.w1.grad == approx(1.0)


def test_reversed_subtraction():
    v = Value(3)
    y = 1 - v
    y.backward()
    assert y.data == -2.0
    assert v.grad == -1.0


def test_sum_of_values():
    a, b = Value(1), Value(2)
    s = sum([a, b])  # 0 + a + b
    s.backward()
    assert s.data == 3.0
    assert (a.grad, b.grad) == (1.0, 1.0)


def test_pow_with_number_exponent():
    x = Value(2)
    y = x**3
    y.backward()
    assert y.data == 8.0
    assert x.grad == 12.0  # 3 x**2
    assert y._op == "**3"


def test_pow_with_value_exponent():
    a, b = Value(2), Value(3)
    y = a**b
    y.backward()
    assert y.data == 8.0
    assert b.grad == approx(8 * math.log(2), rel=1e-15)  # a**b ln a
    assert b.grad == approx(5.545177444479562, rel=1e-15)
    assert a.grad == approx(12.0)  # b a**(b-1)


def test_1500_additions_iterative():
    # micrograd's recursive build_topo fails on this (RecursionError in CPython)
    x = Value(1)
    y = x
    for _ in range(1500):
        y = y + 1
    y.backward()
    assert y.data == 1501.0
    assert x.grad == 1.0


def test_chain_of_100000_nodes():
    x = Value(1.5)
    y = x
    for _ in range(99_999):
        y = -y  # 100 000 nodes in one chain
    y.backward()
    assert len(topological_order(y)) == 100_000
    assert y.data == -1.5  # an odd number of negations
    assert x.grad == -1.0
    y.zero_grad()
    assert x.grad == 0.0


# --- numerics ----------------------------------------------------------------


@pytest.mark.parametrize("x, t", [(400, 1.0), (-400, -1.0), (1e300, 1.0), (0, 0.0)])
def test_tanh_saturates_without_overflow(x, t):
    v = Value(x)
    y = v.tanh()
    y.backward()
    assert y.data == t
    assert v.grad == (1.0 if x == 0 else 0.0)


def test_exp_boundary_and_overflow():
    edge = 709.782712893384  # ln(DBL_MAX)
    assert Value(edge).exp().data == approx(1.7976931348623157e308, rel=1e-12)
    with pytest.raises(OverflowError, match="709.79"):
        Value(709.79).exp()
    with pytest.raises(OverflowError):
        Value(math.nextafter(edge, math.inf)).exp()


@pytest.mark.parametrize("x", [-1e6, -1000, -745.2, -30, -1, 0, 1, 30, 1000, 1e6])
def test_sigmoid_stable(x):
    v = Value(x)
    s = v.sigmoid()
    s.backward()
    if abs(x) <= 30:
        expected = 1 / (1 + math.exp(-x))
        assert s.data == approx(expected, rel=1e-14)
        assert v.grad == approx(expected * (1 - expected), rel=1e-12)
    else:
        assert s.data == (1.0 if x > 0 else approx(0.0, abs=1e-300))
        assert v.grad == approx(0.0, abs=1e-13)


def test_nan_and_inf_rejected():
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match=repr(bad).lstrip("-")):
            Value(bad)
        with pytest.raises(ValueError):
            Value(1) * bad
    with pytest.raises(TypeError, match="'str'"):
        Value("1")


@pytest.mark.parametrize(
    "make",
    [
        lambda: Value(1) * "a",
        lambda: "a" * Value(1),
        lambda: Value(1) + "a",
        lambda: "a" - Value(1),
        lambda: Value(1) / "a",
        lambda: Value(1) ** "a",
    ],
)
def test_type_error_names_the_type(make):
    with pytest.raises(TypeError, match="'str'; expected int, float or Value"):
        make()


def test_type_error_message_exact():
    with pytest.raises(TypeError) as info:
        Value(1) * None
    assert str(info.value) == ("unsupported operand type for Value *: 'NoneType'; expected int, float or Value")


def test_bool_is_a_number():
    assert (Value(2) * True).data == 2.0
    assert (False + Value(2)).data == 2.0


def test_reversed_operators():
    v = Value(4)
    cases = [(2 + v, 6.0, 1.0), (2 - v, -2.0, -1.0), (2 * v, 8.0, 2.0), (2 / v, 0.5, -2 / 16), (2**v, 16.0, 16 * math.log(2))]
    for y, data, grad in cases:
        v.grad = 0.0
        y.backward()
        assert y.data == approx(data)
        assert v.grad == approx(grad)


def test_division_by_zero_names_the_divisor():
    d = Value(0, label="denom")
    with pytest.raises(ZeroDivisionError, match=r"Value\(data=0.0000.*'denom'"):
        Value(1) / d
    with pytest.raises(ZeroDivisionError):
        1 / Value(0)


def test_division_gradients():
    a, b = Value(3), Value(-2)
    y = a / b
    y.backward()
    assert y.data == -1.5
    assert a.grad == -0.5  # 1/b
    assert b.grad == approx(-0.75)  # -a/b**2


def test_log_and_its_domain():
    x = Value(math.e)
    y = x.log()
    y.backward()
    assert y.data == approx(1.0)
    assert x.grad == approx(1 / math.e)
    for bad in (0, -1.5):
        with pytest.raises(ValueError, match=repr(float(bad))):
            Value(bad).log()


def test_pow_domain_errors():
    with pytest.raises(ValueError, match=r"base -2\.0"):
        Value(-2) ** Value(3)
    with pytest.raises(ValueError, match=r"base 0\.0"):
        Value(0) ** Value(2)
    with pytest.raises(ValueError, match="complex"):
        Value(-8) ** (1 / 3)
    with pytest.raises(ZeroDivisionError):
        Value(0) ** -1
    with pytest.raises(OverflowError, match="overflows"):
        Value(10) ** 400


def test_pow_edge_gradients():
    x = Value(-2)
    y = x**2
    y.backward()
    assert (y.data, x.grad) == (4.0, -4.0)
    z = Value(0)
    y = z**0
    y.backward()
    assert (y.data, z.grad) == (1.0, 0.0)
    root = Value(0) ** 0.5  # d sqrt(x)/dx is infinite at 0
    with pytest.raises(OverflowError, match="not finite"):
        root.backward()


def test_relu_gradient():
    for x, data, grad in [(-1, 0.0, 0.0), (0, 0.0, 0.0), (2, 2.0, 1.0)]:
        v = Value(x)
        y = v.relu()
        y.backward()
        assert (y.data, v.grad) == (data, grad)


def test_overflow_is_an_error_not_inf():
    with pytest.raises(OverflowError, match="overflowed"):
        Value(1e308) * 10
    with pytest.raises(OverflowError):
        Value(1e308) + 1e308
    y = Value(5e-324).log()  # finite value, gradient 1/x = inf
    with pytest.raises(OverflowError, match="not finite"):
        y.backward()


def test_repr():
    y = Value(math.sqrt(0.5))
    y.backward()
    assert repr(y) == "Value(data=0.7071, grad=1.0000)"
    assert repr(Value(-2)) == "Value(data=-2.0000, grad=0.0000)"


def test_leaf_root_backward_sets_one():
    x = Value(3)
    x.backward()
    x.backward()
    assert x.grad == 1.0


def test_topological_order_children_first():
    a, b = Value(1), Value(2)
    c = a * b
    d = c + a
    e = d * c
    order = topological_order(e)
    position = {id(node): i for i, node in enumerate(order)}
    assert len(order) == 5 and order[-1] is e
    for node in order:
        for child in node._prev:
            assert position[id(child)] < position[id(node)]
    with pytest.raises(TypeError, match="'int'"):
        topological_order(5)


class TinyValue:
    """A learner-style Value with only micrograd's fields and the three ops the
    neuron needs, to show build_neuron is duck-typed."""

    def __init__(self, data, _children=(), _op=""):
        self.data, self.grad, self._prev, self._op = data, 0.0, set(_children), _op

    def __add__(self, other):
        return TinyValue(self.data + other.data, (self, other), "+")

    def __mul__(self, other):
        return TinyValue(self.data * other.data, (self, other), "*")

    def tanh(self):
        return TinyValue(math.tanh(self.data), (self,), "tanh")


def test_build_neuron_with_a_learner_class():
    nn = build_neuron(TinyValue)
    assert isinstance(nn.o, TinyValue)
    assert nn.o.data == approx(math.sqrt(0.5))
    assert nn.o.label == "o" and nn.x1w1._op == "*"


# --- gradient checks -----------------------------------------------------------


def test_numerical_gradient_of_a_product():
    grads = numerical_gradient(lambda a, b: a * b + a, [2.0, -3.0])
    assert grads == [approx(-2.0, abs=1e-8), approx(2.0, abs=1e-8)]  # (b + 1, a)
    with pytest.raises(ValueError, match="0"):
        numerical_gradient(lambda a: a, [1.0], h=0)
    with pytest.raises(ValueError, match="nan"):
        numerical_gradient(lambda a: a, [1.0], h=math.nan)


def _build(tree, xs):
    """Evaluate an expression tree over leaf Values xs, keeping |value| <= ~100
    by construction: returns (Value, bound on its magnitude)."""
    kind = tree[0]
    if kind == "x":
        return xs[tree[1]], 2.0
    if kind == "c":
        return Value(tree[1]), 2.0
    if kind in ("tanh", "exp", "neg"):
        child, bound = _build(tree[1], xs)
        if kind == "tanh":
            return child.tanh(), 1.0
        if kind == "neg":
            return -child, bound
        if bound > 4:
            child, bound = child.tanh(), 1.0
        return child.exp(), math.exp(bound)
    (left, bl), (right, br) = _build(tree[1], xs), _build(tree[2], xs)
    if kind == "/":  # a denominator in [0.5, 2.5], so the quotient stays tame
        out, bound = left / (1.5 + right.tanh()), 2 * bl
    elif kind == "*":
        out, bound = left * right, bl * br
    else:
        out, bound = (left + right, bl + br) if kind == "+" else (left - right, bl + br)
    if bound > 100:
        out, bound = out * (1.0 / bound), 1.0
    return out, bound


_leaves = st.one_of(st.tuples(st.just("x"), st.integers(0, 2)), st.tuples(st.just("c"), st.floats(-2, 2)))
_trees = st.recursive(
    _leaves,
    lambda sub: st.one_of(
        st.tuples(st.sampled_from(["tanh", "exp", "neg"]), sub), st.tuples(st.sampled_from(["+", "-", "*", "/"]), sub, sub)
    ),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None, database=None)
@given(_trees, st.lists(st.floats(-2, 2), min_size=3, max_size=3))
def test_backward_matches_central_differences(tree, point):
    xs = [Value(x) for x in point]
    out, _ = _build(tree, xs)
    out.backward()
    numeric = numerical_gradient(lambda *vs: _build(tree, vs)[0], point)
    scale = 1.0 + abs(out.data)
    for x, g in zip(xs, numeric):
        assert x.grad == approx(g, rel=1e-5, abs=1e-6 * scale)


@settings(max_examples=100, deadline=None, database=None)
@given(st.floats(0.1, 5), st.floats(-3, 3), st.floats(-3, 3))
def test_pow_log_sigmoid_match_central_differences(a, b, c):
    def f(x, y, z):
        return (x**y).log() + (x**2.5) * z.sigmoid() + (2**z) / x

    xs = [Value(a), Value(b), Value(c)]
    f(*xs).backward()
    numeric = numerical_gradient(f, [a, b, c])
    for x, g in zip(xs, numeric):
        assert x.grad == approx(g, rel=1e-5, abs=1e-5)


@settings(max_examples=200, database=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_tanh_and_sigmoid_finite_for_every_float(x):
    v = Value(x)
    t, s = v.tanh(), v.sigmoid()
    (t + s).backward()
    assert -1.0 <= t.data <= 1.0 and 0.0 <= s.data <= 1.0
    assert 0.0 <= v.grad <= 1.25  # tanh' <= 1, sigmoid' <= 1/4


# --- the fast paths keep the semantics -------------------------------------------


def test_backward_callable_by_hand_as_in_the_lecture():
    x, w = Value(2.0), Value(-3.0)
    n = x * w
    n.grad = 1.0
    n._backward()  # d(xw)/dx = w, d(xw)/dw = x
    assert (x.grad, w.grad) == (-3.0, 2.0)
    o = n.tanh()
    o.grad = 2.0
    o._backward()  # n.grad += (1 - tanh(-6)**2) * 2
    assert n.grad == approx(1.0 + 2 * (1 - math.tanh(-6.0) ** 2), rel=1e-15)


def test_results_are_floats_even_from_int_data_set_by_hand():
    v = Value(1.0)
    v.data = 3  # an int assigned directly, bypassing the constructor
    for y, expected in [(v * v, 9.0), (v + v, 6.0), (v - 1, 2.0), (-v, -3.0), (v.relu(), 3.0)]:
        assert type(y.data) is float and y.data == expected


def test_overflow_message_names_the_operands():
    with pytest.raises(OverflowError, match=r"\*\(1e\+308, 10\.0\) = inf"):
        Value(1e308) * 10
    with pytest.raises(OverflowError, match=r"-\(-1e\+308, 1e\+308\) = -inf"):
        Value(-1e308) - 1e308


def test_finite_gradients_whose_sum_overflows_do_not_raise():
    a, b = Value(1.0), Value(-1.0)
    y = a * 1.5e308 + b * 1.5e308  # 0.0; the gradients add up past 1.8e308
    y.backward()
    assert y.data == 0.0
    assert (a.grad, b.grad) == (1.5e308, 1.5e308)  # d/da = d/db = 1.5e308


def test_chain_with_constants_like_the_benchmark():
    x = Value(1.0)
    y = x
    for _ in range(2000):
        y = y * 1.0001 + 0.5  # each step: dy_new/dy = 1.0001
    y.backward()
    assert len(topological_order(y)) == 4 * 2000 + 1  # two constants, two results a step
    assert x.grad == approx(1.0001**2000, rel=1e-12)


class DataEqual:
    """A learner-style node that compares and hashes by data: two of them with
    the same data are still two nodes."""

    def __init__(self, data, children=()):
        self.data, self.grad, self._prev, self._op = data, 0.0, tuple(children), ""
        self._backward = lambda: None

    def __eq__(self, other):
        return isinstance(other, DataEqual) and self.data == other.data

    def __hash__(self):
        return hash(self.data)


def test_topological_order_tells_nodes_apart_by_identity():
    x = Value(2.0)
    p, q = DataEqual(3.0, (x,)), DataEqual(3.0)  # equal, distinct
    root = Value(1.0)
    root._prev = (p, q)
    order = topological_order(root)
    assert [id(n) for n in order] == [id(x), id(p), id(q), id(root)]
    root.backward()  # a graph of mixed classes: reset, seed, finiteness check
    assert root.grad == 1.0

    class SameToAll(Value):
        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

    s, t = SameToAll(1.0), SameToAll(2.0)
    z = s * t + s
    assert [n.data for n in topological_order(z)] == [1.0, 2.0, 2.0, 3.0]
    z.backward()
    assert (s.grad, t.grad) == (3.0, 1.0)  # d/ds = t + 1, d/dt = s


@pytest.mark.parametrize("bad", [None, 0])
def test_child_without_children_field_is_a_type_error(bad):
    a = Value(1.0)
    b = a * 2
    a._prev = bad
    with pytest.raises(TypeError, match="'Value'|not iterable"):
        topological_order(b)
    del a._prev
    with pytest.raises(TypeError, match="got 'Value'"):
        b.backward()


def _reference_order(root):
    """Depth-first post-order by recursion (test graphs are small), children in _prev order."""
    order, seen = [], set()

    def visit(node):
        if id(node) not in seen:
            seen.add(id(node))
            for child in node._prev:
                visit(child)
            order.append(node)

    visit(root)
    return order


@settings(max_examples=100, deadline=None, database=None)
@given(st.lists(st.tuples(st.sampled_from("+-*n"), st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1, max_size=40))
def test_topological_order_matches_recursive_dfs(ops):
    nodes = [Value(0.5), Value(-1.5), Value(2.0)]
    for op, i, j in ops:
        a, b = nodes[i % len(nodes)], nodes[j % len(nodes)]
        nodes.append({"+": lambda: a + b, "-": lambda: a - b, "*": lambda: (a * b).tanh(), "n": lambda: -a}[op]())  # noqa: B023 (called here)
    root = nodes[-1]
    order = topological_order(root)
    assert [id(n) for n in order] == [id(n) for n in _reference_order(root)]
    root.backward()
    first = [n.grad for n in order]
    root.backward()  # leaves accumulate, non-leaves hold this pass only
    assert [n.grad for n in order] == [approx(2 * g) if not n._prev else g for n, g in zip(order, first)]
    root.zero_grad()
    assert all(n.grad == 0.0 for n in order)


# Found by the float64 oracles (issue 17): the power rule's gradient must not be lost to an
# overflow or underflow in between when the true gradient is an ordinary float.
@pytest.mark.parametrize(
    ("base", "exponent", "gradient"),
    [
        (1e154, 2, 2e154),  # k * a**k / a overflowed in k * a**k: backward raised OverflowError
        (1e-200, 2, 2e-200),  # a**k underflowed to 0: the gradient came out 0.0
        (1e-200, 3, 0.0),  # 3e-400 is below float64: 0.0 is right
        (-1e154, 2, -2e154),
    ],
)
def test_power_gradients_survive_intermediate_overflow_and_underflow(base, exponent, gradient):
    for k in (exponent, Value(float(exponent))):
        if isinstance(k, Value) and base < 0:
            continue  # a Value exponent needs a base > 0
        x = Value(base)
        out = x**k
        out.grad = 1.0
        out._backward()
        assert x.grad == pytest.approx(gradient, rel=1e-15, abs=0.0), (base, k)


def test_the_exact_power_gradients_stay_exact():
    x, e = Value(5e-324), Value(5e-324)
    (x**e).backward()
    assert x.grad == 1.0
    y = Value(2.0)
    (y**3).backward()
    assert y.grad == 12.0


# --- issue 36: the reference reads as the page's template ---------------------

OPERATIONS = {
    "+": lambda a, b: a + b,
    "*": lambda a, b: a * b,
    "-": lambda a, b: a - b,
    "/": lambda a, b: a / b,
    "**k": lambda a, b: a**3,
    "**v": lambda a, b: a**b,
    "neg": lambda a, b: -a,
    "tanh": lambda a, b: a.tanh(),
    "exp": lambda a, b: a.exp(),
    "log": lambda a, b: a.log(),
    "relu": lambda a, b: a.relu(),
    "sigmoid": lambda a, b: a.sigmoid(),
}


@pytest.mark.parametrize("op", list(OPERATIONS))
def test_each_operation_attaches_its_own_backward_closure(op):
    """micrograd's template: out = Value(...), a nested def _backward() that reads out, out._backward = it."""
    a, b = Value(1.5), Value(2.0)
    out = OPERATIONS[op](a, b)
    fn = out._backward
    assert type(fn).__name__ == "function" and fn.__name__ == "_backward", fn
    assert out in [cell.cell_contents for cell in fn.__closure__]
    before = a.grad
    out.grad = 1.0
    fn()
    assert a.grad != before or op == "relu" and a.data <= 0


def test_the_module_has_no_speed_tricks_left():
    import inspect

    import labs.autograd

    source = inspect.getsource(labs.autograd)
    for trick in ("functools", "partial(", "object.__new__", "_binary", "_unary"):
        assert trick not in source, trick


def test_a_non_finite_result_of_an_op_is_an_overflow_a_leafs_is_a_value_error():
    a = Value(2.0, label="a")
    with pytest.raises(OverflowError, match=r"Value \* overflowed: \*\(2\.0, 2\.0\) = inf"):
        Value(math.inf, (a, a), "*")
    with pytest.raises(ValueError, match="finite, got inf"):
        Value(math.inf)
    with pytest.raises(OverflowError, match=r"op\(1\) = nan"):
        Value(math.nan, (1,), "op")  # a child that is no Value is still named


def test_prev_is_distinct_children_in_operand_order_from_any_iterable():
    a, b = Value(1.0), Value(2.0)
    assert (a * b)._prev == (a, b) and (b * a)._prev == (b, a) and (a * a)._prev == (a,)
    assert Value(3.0, [b, a, b], "f")._prev == (b, a)
    assert Value(3.0, (a, b, a), "f")._prev == (a, b)
    assert Value(3.0, iter((a, a)), "f")._prev == (a,)


def test_backward_reads_the_data_when_it_runs_as_micrograd_does():
    """The module's docstring: a leaf's data edited before backward() is the data the local derivatives see."""
    a, b = Value(2.0), Value(3.0)
    y = a * b
    a.data = 5.0  # between the forward pass and backward(): micrograd's closures read it too
    y.backward()
    assert (a.grad, b.grad) == (3.0, 5.0)
