"""Scalar reverse-mode autograd: a :class:`Value` that records its expression DAG.

After micrograd (Karpathy, 2020, github.com/karpathy/micrograd, ``engine.py``)
and his lecture "The spelled-out intro to neural networks and backpropagation"
(2022). Each Value holds ``data``, ``grad``, its children ``_prev``, the op
``_op`` that made it and a ``_backward`` callable that applies the chain rule
(Rumelhart, Hinton & Williams, 1986): child.grad += d(out)/d(child) * out.grad.
Every operation has micrograd's shape, the one the lab page asks for: compute
the data, make ``out = Value(data, children, op)``, define ``_backward``,
attach it to ``out``, return ``out``. As in micrograd, a ``_backward`` reads
the data of its node and operands when it runs, so change a leaf's data (a
training step) after ``backward``, not between building a graph and its
``backward``. :meth:`Value.backward` runs those callables in reverse
topological order, found with an explicit stack because Pyodide's stack is
small (no recursion anywhere).

Unlike micrograd, no operation silently yields NaN or inf: the constructor
rejects NaN and +-inf (for an op's result, as an OverflowError naming the
operands), ``tanh`` is math.tanh and ``sigmoid`` the stable two-branch form.
``backward`` resets non-leaf gradients first (see its docstring). ``_prev`` is
a tuple of distinct children in operand order (micrograd: a set), so the
topological order and the pictures drawn from it are the same on every run.
"""

import math
import sys
from types import SimpleNamespace

__all__ = ["Value", "topological_order", "build_neuron", "numerical_gradient"]


def _no_backward():
    """A leaf's ``_backward``: it has no children to propagate into."""


def _checked_data(data, children, op):
    """The constructor's checks: data as a float, or TypeError (not an int or
    float), OverflowError (an op's result is inf or NaN: names the operands) or
    ValueError (a leaf's data is inf or NaN)."""
    if isinstance(data, Value) or not isinstance(data, (int, float)):
        raise TypeError(f"Value data must be an int or float, got {type(data).__name__!r}")
    data = float(data)
    if not math.isfinite(data):
        if children:  # finite operands gave inf or NaN: the op overflowed
            args = ", ".join(repr(getattr(c, "data", c)) for c in children)
            raise OverflowError(f"Value {op} overflowed: {op}({args}) = {data!r}, beyond float64's largest finite 1.8e308")
        raise ValueError(f"Value data must be finite, got {data!r}: NaN and inf are rejected so no gradient turns into NaN")
    return data


def _operand(other, symbol):
    """other as a Value: a Value as it is, an int/float as a new leaf; TypeError
    naming the type for anything else."""
    if isinstance(other, Value):
        return other
    if isinstance(other, (int, float)):  # bool is an int: fine as a number
        return Value(other)
    raise TypeError(f"unsupported operand type for Value {symbol}: {type(other).__name__!r}; expected int, float or Value")


def _power(a, b):
    """a ** b as a float, with an OverflowError that names both numbers."""
    try:
        return float(a**b)
    except OverflowError:
        raise OverflowError(f"Value **: {a!r} ** {b!r} overflows float64") from None


def _power_gradient(c, a, p, e):
    """c * a**e as a float: the derivative of a power, with p = a**(e + 1) its
    value (already computed). From p (c * p / a, no second pow) when that is a
    finite float and p did not underflow; else regrouped or from a**e, so that
    a gradient is not lost to an overflow or underflow in between when the
    true value is an ordinary float: Value(1e154) ** 2 has gradient 2e154 (c * p
    overflows), Value(1e-200) ** 2 has 2e-200 (p underflows to 0). inf only
    when the true value is past float64 (backward() then raises).

    >>> _power_gradient(2, 1e154, 1e308, 1), _power_gradient(2, 1e-200, 0.0, 1)
    (2e+154, 2e-200)
    """
    if p != 0 and math.isfinite(p) and abs(p) >= sys.float_info.min:
        for g in (c * p / a, (c / a) * p):
            if math.isfinite(g):
                return g
    try:
        return c * float(a**e)
    except OverflowError:
        return math.inf


class Value:
    """A scalar node of the autograd DAG: data, grad and how it was computed.

    Args:
        data: the scalar (int, float or bool; stored as a float), finite.
        _children: the operand Values it was computed from; () for a leaf.
        _op: the op that produced it, e.g. '+', 'tanh', '**3'; '' for a leaf.
        label: a name for pictures, e.g. 'x1'.

    Fields: ``data`` and ``grad`` (d root / d self after ``backward``) are
    floats; ``_prev`` is a tuple of distinct children; ``_backward`` is the
    callable adding this node's share of the gradient into its children.

    Raises:
        TypeError: data is not an int or float (names the type).
        ValueError: data is NaN or +-inf (names it).
        OverflowError: instead of ValueError when ``_children`` is given: an
            op's result overflowed (names the op and its operands' data).

    >>> a = Value(3, label='a'); y = a * a + 1
    >>> y.backward(); y, a.grad
    (Value(data=10.0000, grad=1.0000), 6.0)
    """

    def __init__(self, data, _children=(), _op="", label=""):
        if type(data) is not float or data - data:  # not a finite float (x - x is NaN for inf and NaN)
            data = _checked_data(data, _children, _op)
        self.data = data
        self.grad = 0.0
        self._backward = _no_backward  # a leaf has nothing to propagate
        if type(_children) is tuple and (len(_children) < 2 or len(_children) == 2 and _children[0] is not _children[1]):
            self._prev = _children  # an op's (self,) or (self, other): already distinct
        else:  # a + a has one child; dict.fromkeys keeps the operand order
            self._prev = tuple(dict.fromkeys(_children))
        self._op = _op
        self.label = label

    def __repr__(self):
        """``Value(data=0.7071, grad=1.0000)``: 4 decimals, like micrograd."""
        return f"Value(data={self.data:.4f}, grad={self.grad:.4f})"

    # --- binary ops. As in micrograd, each _backward reads the data of self,
    # other and out when it runs: a closure over these three only, since each
    # variable it reads is one more object per node for the cyclic GC to track.
    def __add__(self, other):
        """self + other; d/dself = d/dother = 1.

        >>> (Value(1) + 2).data
        3.0
        """
        other = other if isinstance(other, Value) else _operand(other, "+")
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad  # += : in a + a both lines add to a

        out._backward = _backward
        return out

    def __mul__(self, other):
        """self * other; d/dself = other, d/dother = self.

        >>> (Value(2) * 3).data
        6.0
        """
        other = other if isinstance(other, Value) else _operand(other, "*")
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out

    def __sub__(self, other):
        """self - other; d/dself = 1, d/dother = -1.

        >>> (Value(1) - 3).data
        -2.0
        """
        other = other if isinstance(other, Value) else _operand(other, "-")
        out = Value(self.data - other.data, (self, other), "-")

        def _backward():
            self.grad += out.grad
            other.grad -= out.grad

        out._backward = _backward
        return out

    def __truediv__(self, other):
        """self / other; d/dself = 1/other, d/dother = -self/other**2.

        Raises ZeroDivisionError naming the divisor when its data is 0.
        >>> (Value(1) / 4).data
        0.25
        """
        other = other if isinstance(other, Value) else _operand(other, "/")
        b = other.data
        if b == 0.0:
            raise ZeroDivisionError(f"division by {other!r} (label {other.label!r}): the divisor's data must be nonzero")
        q = self.data / b
        out = Value(q, (self, other), "/")

        def _backward():
            self.grad += (1.0 / other.data) * out.grad
            # -a/b**2 written as -(a/b)/b = -out/b: b**2 could overflow where a/b does not
            other.grad += (-out.data / other.data) * out.grad

        out._backward = _backward
        return out

    def __pow__(self, other):
        """self ** k for an int/float k (d/dself = k self**(k-1)) or a Value b
        (d/dself = b a**(b-1), d/db = a**b ln a, so the base a must be > 0).

        Raises ValueError for a base <= 0 with a Value exponent and for a
        negative base with a non-integer k (complex), ZeroDivisionError for
        0 ** negative, OverflowError past 1.8e308 (and in backward() for the
        infinite gradient of 0 ** k, 0 < k < 1).
        >>> (Value(2) ** 3).data, (Value(2) ** Value(3)).data
        (8.0, 8.0)
        """
        if isinstance(other, Value):  # a ** b: gradients to both
            a, b = self.data, other.data
            if a <= 0:
                raise ValueError(
                    f"Value ** Value needs a base > 0, got base {a!r} "
                    f"(label {self.label!r}): the exponent's gradient "
                    f"a**b * ln(a) is undefined for a <= 0"
                )
            p = _power(a, b)
            out = Value(p, (self, other), "**")

            def _backward():
                a, b, p = self.data, other.data, out.data
                self.grad += _power_gradient(b, a, p, b - 1) * out.grad  # = b a**(b-1)
                other.grad += (p * math.log(a)) * out.grad

            out._backward = _backward
            return out
        if not isinstance(other, (int, float)):
            raise TypeError(f"unsupported operand type for Value **: {type(other).__name__!r}; expected int, float or Value")
        a, k = self.data, other
        if not math.isfinite(k):
            raise ValueError(f"exponent must be finite, got {k!r}")
        if a < 0 and not float(k).is_integer():
            raise ValueError(f"{a!r} ** {k!r} is complex: a negative base needs an integer exponent")
        if a == 0 and k < 0:
            raise ZeroDivisionError(f"0.0 ** {k!r}: zero cannot be raised to a negative power")
        p = _power(a, k)
        out = Value(p, (self,), f"**{k:g}")

        def _backward():
            a, p = self.data, out.data
            if k == 0:
                local = 0.0  # d(a**0)/da = 0, even at a == 0 where a**-1 is undefined
            elif a == 0:
                local = math.inf if k < 1 else k * a ** (k - 1)
            else:
                local = _power_gradient(k, a, p, k - 1)  # = k a**(k-1)
            self.grad += local * out.grad

        out._backward = _backward
        return out

    def __neg__(self):
        """-self; d/dself = -1.

        >>> (-Value(2)).data
        -2.0
        """
        out = Value(-self.data, (self,), "neg")

        def _backward():
            self.grad -= out.grad

        out._backward = _backward
        return out

    def __radd__(self, other):
        """other + self, so ``2 + v`` and ``sum(values)`` (0 + v) work."""
        return _operand(other, "+") + self

    def __rmul__(self, other):
        """other * self, e.g. ``2 * v``."""
        return _operand(other, "*") * self

    def __rsub__(self, other):
        """other - self, e.g. ``1 - v``."""
        return _operand(other, "-") - self

    def __rtruediv__(self, other):
        """other / self, e.g. ``1 / v``."""
        return _operand(other, "/") / self

    def __rpow__(self, other):
        """other ** self, e.g. ``2 ** v`` (a Value exponent; base must be > 0)."""
        return _operand(other, "**") ** self

    # --- unary functions
    def tanh(self):
        """tanh(self) via math.tanh (finite for every input); d/dself = 1 - tanh**2.

        >>> Value(400).tanh().data
        1.0
        """
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1.0 - out.data * out.data) * out.grad  # out.data = tanh(self)

        out._backward = _backward
        return out

    def exp(self):
        """e ** self; d/dself = e ** self.

        Raises OverflowError naming data past ln(DBL_MAX) = 709.782712893384.
        >>> round(Value(1).exp().data, 6)
        2.718282
        """
        try:
            e = math.exp(self.data)
        except OverflowError:
            raise OverflowError(f"exp({self.data!r}) overflows float64: the largest input is ln(DBL_MAX) = 709.782712893384") from None
        out = Value(e, (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad  # d/dx e**x = e**x

        out._backward = _backward
        return out

    def log(self):
        """Natural log of self; d/dself = 1/self. Raises ValueError for data <= 0.

        >>> Value(1).log().data
        0.0
        """
        x = self.data
        if x <= 0:
            raise ValueError(f"log({x!r}) is undefined: log needs data > 0")
        out = Value(math.log(x), (self,), "log")

        def _backward():
            self.grad += (1.0 / self.data) * out.grad

        out._backward = _backward
        return out

    def relu(self):
        """max(0, self); d/dself = 1 if self > 0 else 0.

        >>> Value(-2).relu().data
        0.0
        """
        # at exactly 0 the subgradient 0 is used, as micrograd and PyTorch do
        out = Value(self.data if self.data > 0 else 0.0, (self,), "ReLU")

        def _backward():
            # 0.0 * out.grad, not nothing: an inf gradient from above gives NaN, which backward() reports
            self.grad += (1.0 if out.data > 0 else 0.0) * out.grad

        out._backward = _backward
        return out

    def sigmoid(self):
        """1 / (1 + e**-self), stable for large |self|; d/dself = s (1 - s).

        >>> Value(-1000).sigmoid().data, Value(0).sigmoid().data
        (0.0, 0.5)
        """
        x = self.data
        if x >= 0:
            s = 1.0 / (1.0 + math.exp(-x))
        else:  # e**x underflows to 0 instead of e**-x overflowing
            e = math.exp(x)
            s = e / (1.0 + e)
        out = Value(s, (self,), "sigmoid")

        def _backward():
            self.grad += (out.data * (1.0 - out.data)) * out.grad  # out.data = sigmoid(self)

        out._backward = _backward
        return out

    # --- the backward pass
    def backward(self):
        """Set every node's grad to d(self)/d(node), in reverse topological order.

        Seeds ``self.grad = 1.0`` (set, not added), then calls each node's
        ``_backward`` from the root down to the leaves. Repeated calls:
        leaves (no children) ACCUMULATE, as PyTorch's ``.grad`` does, so a
        second call without :meth:`zero_grad` doubles them; every non-leaf is
        reset to 0 first, so intermediate nodes hold this pass's gradient.

        Raises:
            OverflowError: a gradient came out inf or NaN (names the node).

        >>> a = Value(3); y = a + a; y.backward(); a.grad
        2.0
        >>> y.backward(); a.grad
        4.0
        """
        order = _walk(self, reset=True)  # also zeroes every non-leaf's grad
        self.grad = 1.0
        # A node's grad is final once its _backward runs (its parents ran
        # before), and inf/NaN survive any sum, so one running total flags a
        # non-finite gradient; the exact scan below runs only if it is flagged
        # (a finite total that overflows is a false alarm the scan clears).
        total = 0.0
        for node in reversed(order):
            node._backward()
            total += node.grad
        if total - total:
            for node in order:
                if not math.isfinite(node.grad):
                    raise OverflowError(f"gradient is not finite after backward(): {node!r} (op {node._op!r}, label {node.label!r})")

    def zero_grad(self):
        """Set grad = 0.0 on every node reachable from self (iterative).

        >>> a = Value(3); y = a * a; y.backward(); y.zero_grad(); a.grad, y.grad
        (0.0, 0.0)
        """
        for node in _walk(self, reset=False):
            node.grad = 0.0


def _no_prev(node):
    """The TypeError for a node without children ``_prev`` (names its type)."""
    return TypeError(f"expected a micrograd-style Value with a _prev field (its children), got {type(node).__name__!r}")


def _walk(root, reset):
    """topological_order, and with reset=True also grad = 0.0 on each non-leaf.

    Depth-first: the current node and an iterator over its children are
    locals; the pairs of the nodes above it wait on a stack. The set of nodes
    found holds a Value itself (it hashes by identity, ~30 % faster than
    id()) and the id() of any other class, whose __hash__ or __eq__ may not
    be identity. A leaf is appended as soon as it is found.
    """
    try:
        prev = root._prev
    except AttributeError:
        raise _no_prev(root) from None
    if prev is None:
        raise _no_prev(root)
    order, stack = [], []
    seen = {root if type(root) is Value else id(root)}
    push, pop, add, append = stack.append, stack.pop, seen.add, order.append
    node, children = root, iter(prev)
    while True:
        for child in children:  # resumes where this node's iterator stopped
            key = child if type(child) is Value else id(child)
            if key not in seen:
                add(key)
                try:
                    prev = child._prev
                except AttributeError:
                    raise _no_prev(child) from None
                if prev:  # go down into child's children
                    if reset:
                        child.grad = 0.0
                    push((node, children))
                    node, children = child, iter(prev)
                    break
                if type(prev) is not tuple:  # None, or not iterable: no _prev
                    if prev is None:
                        raise _no_prev(child)
                    iter(prev)
                append(child)
        else:  # every child is done
            append(node)
            if not stack:
                return order
            node, children = pop()


def topological_order(root):
    """The nodes reachable from root, each after all of its children (leaves first).

    Iterative depth-first post-order with an explicit stack, so a chain
    100 000 deep works. Duck-typed: only ``_prev`` (an iterable of children)
    is read, and nodes are told apart by identity.

    Args:
        root: a Value-like object with ``_prev``.
    Returns:
        list of the N reachable nodes, root last.
    Raises:
        TypeError: a node has no ``_prev`` (names its type).

    >>> a = Value(2, label='a'); b = a * 3; c = b + a
    >>> [n.data for n in topological_order(c)]
    [2.0, 3.0, 6.0, 8.0]
    """
    return _walk(root, reset=False)


def build_neuron(Value=Value):
    """Build the lab's neuron o = tanh(x1 w1 + x2 w2 + b) (forward pass only).

    Karpathy's lecture example: x1=2, x2=0, w1=-3, w2=1, b=6.8813735870195432,
    so n = 0.8813... and o = tanh(n) = 1/sqrt(2). Ten nodes, nine edges.

    Args:
        Value: the class to build with (default this module's); any class
            with micrograd's ``+``, ``*`` and ``tanh`` works (duck-typed).
    Raises:
        TypeError: ``Value`` is not callable, or its nodes lack ``tanh`` or a
            settable ``label``.
    Returns:
        SimpleNamespace with x1, x2, w1, w2, b, x1w1, x2w2, x1w1x2w2, n, o,
        each node's ``label`` set to its name; ``vars(ns)`` is the dict.

    >>> nn = build_neuron(); nn.o.backward()
    >>> round(nn.o.data, 8), round(nn.x1.grad, 6), round(nn.w1.grad, 6), nn.o.label
    (0.70710678, -1.5, 1.0, 'o')
    """
    if not callable(Value):
        raise TypeError(f"build_neuron: Value must be a class like micrograd's Value, got {Value!r:.60}")
    try:
        x1, x2, w1, w2 = Value(2.0), Value(0.0), Value(-3.0), Value(1.0)
        b = Value(6.8813735870195432)
        x1w1, x2w2 = x1 * w1, x2 * w2
        x1w1x2w2 = x1w1 + x2w2
        n = x1w1x2w2 + b
        o = n.tanh()
        nodes = dict(x1=x1, x2=x2, w1=w1, w2=w2, b=b, x1w1=x1w1, x2w2=x2w2, x1w1x2w2=x1w1x2w2, n=n, o=o)
        for name, node in nodes.items():
            node.label = name
    except AttributeError as exc:  # a class without tanh or a settable label: say which argument
        raise TypeError(
            f"build_neuron: Value = {Value!r:.60} does not make nodes with micrograd's +, *, tanh and label ({exc})"
        ) from exc
    return SimpleNamespace(**nodes)


def numerical_gradient(f, xs, h=1e-6):
    """Central differences (f(x + h e_i) - f(x - h e_i)) / 2h for each input i.

    A gradient checker in the spirit of minitorch's ``derivative_check``; its
    error is the truncation h**2 |f'''| / 6 plus rounding of about eps |f| / h
    (eps = 2**-52, float64's machine epsilon): at the default h, where f and
    f''' are of similar size, the rounding is the larger of the two.

    Args:
        f: called with len(xs) leaf Values, returns a Value (or a number).
        xs: the point, a sequence of N finite floats.
        h: the step, a finite float > 0.
    Returns:
        list of N floats, the estimated partial derivatives df/dx_i.
    Raises:
        ValueError: h is not a finite positive number.

    >>> [round(g, 6) for g in numerical_gradient(lambda a, b: a * b + a, [2.0, 3.0])]
    [4.0, 2.0]
    """
    if not (isinstance(h, (int, float)) and math.isfinite(h) and h > 0):
        raise ValueError(f"step h must be a finite number > 0, got {h!r}")
    point = [float(x) for x in xs]

    def f_at(i, step):  # f with x_i moved by step
        out = f(*[Value(v + step if j == i else v) for j, v in enumerate(point)])
        return float(getattr(out, "data", out))

    return [(f_at(i, h) - f_at(i, -h)) / (2 * h) for i in range(len(point))]
