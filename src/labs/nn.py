"""A multilayer perceptron on scalar Values, trained as a max-margin classifier.

After micrograd's ``nn.py`` and ``demo.ipynb`` (Karpathy, 2020,
github.com/karpathy/micrograd): ``Neuron``, ``Layer`` and ``MLP`` built on
:class:`labs.autograd.Value`, the two-moons data set, the SVM loss
(hinge loss, Cortes & Vapnik 1995, plus L2 regularization) and plain SGD with
micrograd's learning-rate schedule lr_k = 1.0 - 0.9 k / steps.

Differences from micrograd, for speed in Pyodide and for reproducibility:

- A neuron is ONE node ``relu(w . x + b)`` with local gradients x_i (d/dw_i),
  w_i (d/dx_i) and 1 (d/db), all 0 where the ReLU is off; micrograd's
  ``sum(wi*xi ...)`` builds 2 nin + 2 nodes (34 for 16 inputs). The loss is
  fused too (a hinge node per sample, one node for the mean, one for sum p**2).
  Same gradients: tests check against the unfused graph and central differences.
- Randomness comes from a ``random.Random`` passed in (or an int seed), never
  the global ``random`` state, so a seed fixes every weight and every point.
- :func:`train` pauses the automatic cyclic GC, frees each step's graph itself.

Measured on this 2-core machine under load (2026-11-30), the page setup
``train(MLP(2, [16, 16, 1]), *make_moons(100))``, 60 steps: CPython 3.11
1.6-1.8 s (median of 5; 100 steps: 2.5 s), Pyodide 0.26.2 under Node 20
3.0 s; both end at loss 0.0277 (from 0.937) and 99 % training accuracy,
and >= 99 % for each of 12 (data seed, model seed) pairs tried.
"""

import gc
import math
import random
from operator import mul

from labs.autograd import Value

__all__ = ["Module", "Neuron", "Layer", "MLP", "make_moons", "svm_loss", "train", "PAGE_HIDDEN", "PAGE_STEPS"]

PAGE_HIDDEN = [16, 16]  # the page's model: MLP(2, PAGE_HIDDEN + [1]), 337 parameters
PAGE_STEPS = 60  # the page's training run: 60 full-batch steps on make_moons(100)


def _as_rng(rng):
    """A random.Random from None (seed 0), an int seed or a Random; else TypeError."""
    if rng is None:
        return random.Random(0)
    if isinstance(rng, random.Random):
        return rng
    if isinstance(rng, int) and not isinstance(rng, bool):
        return random.Random(rng)
    raise TypeError(f"rng must be None, an int seed or a random.Random, got {type(rng).__name__!r}")


# Sizes past this would take many seconds and gigabytes to build (in a browser tab, to fail): refused
# at once. 100,000 weights or points build in about a tenth of a second; the page uses 16 and 100.
MAX_SIZE = 100_000


def _positive_int(value, name, limit=MAX_SIZE):
    """``value`` when it is an int in 1..limit; TypeError for another type, ValueError out of range."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int >= 1, got {value!r} ({type(value).__name__})")
    if not 1 <= value <= limit:
        raise ValueError(f"{name} must be an int from 1 to {limit:,}, got {value!r}")
    return value


def _number(value, name, minimum=None):
    """``value`` as a float when it is a finite real number (not a bool, a string or bytes), >= minimum."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    if not math.isfinite(value) or (minimum is not None and value < minimum):
        raise ValueError(f"{name} must be a finite number{f' >= {minimum}' if minimum is not None else ''}, got {value!r}")
    return float(value)


def _fused(data, children, local_grads, op):
    """One node for a whole expression: out.data = data, d out/d children[i] = local_grads[i].

    An operation of labs.autograd.Value in micrograd's template (make ``out``,
    define ``_backward``, attach, return), but for any number of children.
    ``local_grads`` may be shorter than ``children`` (zip stops): a ReLU that
    is off passes ``()`` and its backward does nothing, which is exact.
    """
    if not math.isfinite(data):
        raise OverflowError(f"{op} overflowed to {data!r}: weights or inputs are too large (beyond float64's 1.8e308)")
    out = Value(data, children, op)

    def _backward():
        g = out.grad
        if g:
            for child, local in zip(children, local_grads):
                child.grad += local * g

    out._backward = _backward
    return out


def _split_inputs(xs):
    """(xdata, x_nodes, x_index) of a list of floats / Values (see Neuron._forward).

    Raises TypeError for an input that is neither (a string, bytes, a bool),
    ValueError for NaN or +-inf (it would train on nothing, silently)."""
    xdata = [v.data if isinstance(v, Value) else _number(v, f"input {i}") for i, v in enumerate(xs)]
    x_index = [i for i, v in enumerate(xs) if isinstance(v, Value)]
    if len(x_index) == len(xs):
        return xdata, xs, None
    return xdata, [xs[i] for i in x_index], x_index


class Module:
    """Base class: something with parameters (leaf Values) that can be trained.

    >>> Module().parameters()
    []
    """

    def zero_grad(self):
        """Set every parameter's grad to 0.0 (leaves accumulate in backward()).

        >>> n = Neuron(2); n(n.w).backward(); n.zero_grad(); [p.grad for p in n.parameters()]
        [0.0, 0.0, 0.0]
        """
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self):
        """The trainable leaf Values, a list of P Values in a fixed order."""
        return []


class Neuron(Module):
    """One unit relu(w . x + b) (or w . x + b with nonlin=False), as ONE Value node.

    Args:
        nin: number of inputs, an int >= 1.
        nonlin: apply ReLU (hidden layers) or not (the output layer).
        rng: random.Random, int seed or None (seed 0) for the weights,
            drawn uniform in [-1, 1] as micrograd does; the bias starts at 0.
    Raises:
        ValueError: nin is not an int >= 1. TypeError: bad rng.

    Calling it with x, a list of nin floats or Values, returns a Value.

    >>> n = Neuron(2, rng=1); out = n([1.0, -2.0])
    >>> len(n.parameters()), out.data == max(0.0, n.w[0].data - 2 * n.w[1].data)
    (3, True)
    """

    def __init__(self, nin, nonlin=True, rng=None):
        _positive_int(nin, "nin")
        rng = _as_rng(rng)
        self.w = [Value(rng.uniform(-1.0, 1.0)) for _ in range(nin)]
        self.b = Value(0.0)
        self.nonlin = bool(nonlin)

    def __call__(self, x):
        xs = list(x)
        if len(xs) != len(self.w):
            raise ValueError(f"{self!r} expects {len(self.w)} inputs, got {len(xs)}")
        return self._forward(*_split_inputs(xs))

    def _forward(self, xdata, x_nodes, x_index):
        """The fused node. xdata: (nin,) floats; x_nodes: the K inputs that are
        Values, at positions x_index (K,), or None when all nin inputs are."""
        w, b = self.w, self.b
        wdata = [wi.data for wi in w]
        act = sum(map(mul, wdata, xdata), b.data)
        children = w + [b] + x_nodes
        if self.nonlin and not act > 0:
            # ReLU off: output 0, every local gradient 0 (at exactly 0 the
            # subgradient 0 is used, as labs.autograd's relu does)
            return _fused(0.0, children, (), "ReLU(w·x+b)")
        # d/dw_i = x_i, d/db = 1, and d/dx_i = w_i for each input that is a Value
        x_local = wdata if x_index is None else [wdata[i] for i in x_index]
        return _fused(act, children, xdata + [1.0] + x_local, "ReLU(w·x+b)" if self.nonlin else "w·x+b")

    def parameters(self):
        """[w_1, ..., w_nin, b]: nin + 1 Values."""
        return self.w + [self.b]

    def __repr__(self):  # as micrograd's, e.g. ReLUNeuron(16)
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):
    """nout Neurons reading the same nin inputs.

    Args:
        nin: inputs per neuron (int >= 1); nout: neurons (int >= 1).
        **kw: ``nonlin`` and ``rng`` for the Neurons; one rng (None means
            seed 0) is shared, so the neurons get different weights.
    Raises:
        ValueError: nin or nout is not an int >= 1.

    Calling it on (nin,) inputs returns nout Values (one Value if nout == 1).

    >>> layer = Layer(3, 4); len(layer([1.0, 2.0, 3.0])), len(layer.parameters())
    (4, 16)
    """

    def __init__(self, nin, nout, **kw):
        _positive_int(nout, "nout")
        rng = _as_rng(kw.pop("rng", None))
        self.neurons = [Neuron(nin, rng=rng, **kw) for _ in range(nout)]

    def __call__(self, x):
        xs = list(x)
        nin = len(self.neurons[0].w)
        if len(xs) != nin:
            raise ValueError(f"{self!r} expects {nin} inputs, got {len(xs)}")
        split = _split_inputs(xs)
        out = [n._forward(*split) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self):
        """All neurons' parameters, neuron by neuron: nout (nin + 1) Values."""
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self):
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """A multilayer perceptron: ReLU layers, then a linear output layer.

    Args:
        nin: input features (int >= 1).
        nouts: list of L layer widths (ints >= 1), e.g. [16, 16, 1].
        rng: random.Random, int seed or None (seed 0); one stream for all layers.
    Raises:
        TypeError: nouts not a list (or tuple) of ints.
        ValueError: an empty nouts or a width out of 1..MAX_SIZE.

    Parameters: sum over layers of n_out (n_in + 1), e.g. 2*16+16 + 16*16+16 +
    16+1 = 337. Called on (nin,) inputs: a Value, or nouts[-1] Values.

    >>> model = MLP(2, [16, 16, 1]); len(model.parameters())
    337
    >>> model([0.5, -0.5]).data == MLP(2, [16, 16, 1], rng=0)([0.5, -0.5]).data
    True
    """

    def __init__(self, nin, nouts, rng=None):
        if not isinstance(nouts, (list, tuple)):
            raise TypeError(f"nouts must be a list of layer widths, e.g. [16, 16, 1], got {nouts!r}")
        nouts = list(nouts)
        if not nouts:
            raise ValueError("nouts must list at least one layer width, got []")
        for width in nouts:
            _positive_int(width, "every layer width in nouts")
        rng = _as_rng(rng)
        sizes = [nin] + nouts
        self.layers = [Layer(sizes[i], sizes[i + 1], nonlin=i != len(nouts) - 1, rng=rng) for i in range(len(nouts))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer([x] if isinstance(x, Value) else x)
        return x

    def parameters(self):
        """All layers' parameters, layer by layer."""
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self):
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"


def make_moons(n_samples=100, noise=0.1, seed=0):
    """Two interleaving half circles, labelled -1 (upper moon) and +1 (lower moon).

    The same construction as scikit-learn's ``make_moons`` (written anew here):
    n_samples // 2 points on the upper half of the unit circle
    (cos t, sin t), t evenly spaced in [0, pi], and the rest on
    (1 - cos t, 1/2 - sin t); then Gaussian noise of standard deviation
    ``noise`` on both coordinates, and a shuffle.

    Args:
        n_samples: N, total points, an int >= 2.
        noise: standard deviation of the noise, in data units, a float >= 0.
        seed: int seed of the random.Random used for noise and shuffle.
    Returns:
        (X, y): X a list of N [x, y] float pairs; y a list of N labels in
        {-1, +1}, N // 2 of them -1.
    Raises:
        TypeError: n_samples not an int, noise not a number (a bool, a string).
        ValueError: n_samples < 2 or past MAX_SIZE, noise negative / not finite.

    >>> X, y = make_moons(4, noise=0.0); sorted(zip(y, map(tuple, X)))[:2]
    [(-1, (-1.0, 1.2246...e-16)), (-1, (1.0, 0.0))]
    """
    _positive_int(n_samples, "n_samples")
    if n_samples < 2:
        raise ValueError(f"n_samples must be an int >= 2 (one point per moon at least), got {n_samples!r}")
    _number(noise, "noise", 0.0)
    rng = _as_rng(seed)
    n_out = n_samples // 2
    n_in = n_samples - n_out

    def angles(n):  # n evenly spaced angles from 0 to pi inclusive
        return [math.pi * i / (n - 1) for i in range(n)] if n > 1 else [0.0]

    points = [([math.cos(t), math.sin(t)], -1) for t in angles(n_out)]
    points += [([1.0 - math.cos(t), 0.5 - math.sin(t)], 1) for t in angles(n_in)]
    if noise:
        for xy, _ in points:
            xy[0] += rng.gauss(0.0, noise)
            xy[1] += rng.gauss(0.0, noise)
    rng.shuffle(points)
    return [xy for xy, _ in points], [label for _, label in points]


def svm_loss(model, X, y, alpha=1e-4):
    """Max-margin (hinge) loss plus L2 regularization, and the accuracy.

    loss = (1/N) sum_i max(0, 1 - y_i s_i) + alpha sum_p p**2, where s_i =
    model(X[i]) is the score; a sample counts as correct when sign(s_i) = y_i
    (micrograd's ``demo.ipynb``; the hinge loss of Cortes & Vapnik, 1995).

    Args:
        model: a callable taking (D,) features and returning one Value (e.g.
            MLP(D, [..., 1])), with ``parameters()``.
        X: N samples, each D floats. y: N labels in {-1, +1}.
        alpha: L2 strength, a float >= 0 (per parameter, no units).
    Returns:
        (loss, accuracy): loss a Value (call ``backward()`` on it), accuracy
        a float in [0, 1].
    Raises:
        ValueError: len(X) != len(y), empty X, a label not -1/+1, bad alpha.
        TypeError: the model returned something other than one Value.

    >>> X, y = make_moons(10); loss, acc = svm_loss(MLP(2, [4, 1]), X, y)
    >>> loss.data > 0, 0.0 <= acc <= 1.0
    (True, True)
    """
    if len(X) != len(y) or not X:
        raise ValueError(f"X has {len(X)} samples but y has {len(y)} labels: need as many labels as samples, at least one")
    for i, label in enumerate(y):
        if label not in (-1, 1):
            raise ValueError(f"y[{i}] = {label!r}: labels must be -1 or +1")
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
    n = len(X)
    hinges, correct = [], 0
    for x, label in zip(X, y):
        score = model(x)
        if not isinstance(score, Value):
            raise TypeError(f"the model must return one Value per sample (last layer width 1), got {type(score).__name__!r}")
        s = score.data
        correct += (s > 0) == (label > 0)
        margin = 1.0 - label * s
        # max(0, 1 - y s): d/ds = -y while the margin is violated, else 0
        hinges.append(_fused(margin, [score], [-float(label)], "hinge") if margin > 0 else _fused(0.0, [score], (), "hinge"))
    data_loss = _fused(sum(h.data for h in hinges) / n, hinges, [1.0 / n] * n, "mean")
    params = model.parameters()
    reg_loss = _fused(alpha * sum(p.data * p.data for p in params), params, [2.0 * alpha * p.data for p in params], "α·Σp²")
    return data_loss + reg_loss, correct / n


def _learning_rate(lr, step, steps):
    # None: micrograd's demo schedule, 1.0 decaying linearly towards 0.1
    rate = 1.0 - 0.9 * step / steps if lr is None else lr(step) if callable(lr) else lr
    if isinstance(rate, bool) or not (isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0):
        raise ValueError(f"learning rate at step {step} must be a finite number > 0, got {rate!r}")
    return rate


def train(model, X, y, steps=PAGE_STEPS, lr=None, alpha=1e-4, on_step=None):
    """Full-batch gradient descent on :func:`svm_loss`; returns the history.

    Each step: loss and accuracy on all N samples, zero_grad, backward, then
    p.data -= lr_k * p.grad for every parameter.

    Args:
        model: e.g. MLP(2, [16, 16, 1]) (changed in place).
        X: N samples of D floats. y: N labels in {-1, +1}.
        steps: number of updates, an int >= 1.
        lr: None for micrograd's schedule lr_k = 1.0 - 0.9 k / steps, a
            number > 0 (constant), or a callable k -> rate.
        alpha: L2 strength for svm_loss.
        on_step: optional callable(step, loss, accuracy), after each entry.
    Returns:
        list of steps + 1 tuples (step, loss float, accuracy float): steps
        0..steps-1 are measured before that step's update, the last one
        (step = steps) on the trained model.
    Raises:
        ValueError: steps < 1, a bad learning rate, or as svm_loss.
        TypeError: model is not a Module (callable, with ``parameters()``).

    >>> X, y = make_moons(20); history = train(MLP(2, [8, 1]), X, y, steps=30)
    >>> len(history), history[-1][1] < history[0][1]
    (31, True)
    """
    _positive_int(steps, "steps")
    if not callable(getattr(model, "parameters", None)) or not callable(model):
        raise TypeError(f"model must be a Module (callable, with parameters()), such as MLP, got {model!r:.60}")
    params = model.parameters()
    history = []
    # Every node is in a reference cycle (node -> _backward closure -> node), so
    # only the cyclic GC frees a step's graph, and its automatic passes over the
    # live graph took half the run (CPython 3.11: 2.2-3.2 s -> 1.2-1.9 s without).
    # So: one young-generation pass per step (all the step's objects are young).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for step in range(steps + 1):
            loss, accuracy = svm_loss(model, X, y, alpha)
            history.append((step, loss.data, accuracy))
            if on_step is not None:
                on_step(step, loss.data, accuracy)
            if step < steps:
                rate = _learning_rate(lr, step, steps)
                model.zero_grad()
                loss.backward()
                for p in params:
                    p.data -= rate * p.grad
            del loss
            gc.collect(0)
    finally:
        if gc_was_enabled:
            gc.enable()
    return history
