"""Tests for labs.nn (MLP, make_moons, svm_loss, train) and labs.plots (SVG pictures)."""

import math
import random
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labs.autograd import Value, numerical_gradient
from labs.nn import MLP, PAGE_HIDDEN, PAGE_STEPS, Layer, Neuron, make_moons, svm_loss, train
from labs.plots import DecisionBoundary, LossCurve, TrainingReport

SVG = "{http://www.w3.org/2000/svg}"


# --- model structure --------------------------------------------------------


def test_page_mlp_has_337_parameters():
    # 2*16+16 + 16*16+16 + 16+1, counted by hand in the brief
    assert len(MLP(2, [16, 16, 1]).parameters()) == 337
    assert len(MLP(2, PAGE_HIDDEN + [1]).parameters()) == 337


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.lists(st.integers(1, 6), min_size=1, max_size=4))
def test_parameter_count_is_sum_of_fan_in_plus_bias(nin, nouts):
    sizes = [nin] + nouts
    expected = sum(sizes[i + 1] * (sizes[i] + 1) for i in range(len(nouts)))
    model = MLP(nin, nouts, rng=1)
    assert len(model.parameters()) == expected
    assert len({id(p) for p in model.parameters()}) == expected  # all distinct leaves
    out = model([0.5] * nin)
    assert isinstance(out, Value) if nouts[-1] == 1 else len(out) == nouts[-1]


def test_only_the_last_layer_is_linear():
    model = MLP(2, [4, 3, 1])
    assert [n.nonlin for layer in model.layers for n in layer.neurons] == [True] * 7 + [False]
    assert repr(Neuron(3)) == "ReLUNeuron(3)" and repr(Neuron(3, nonlin=False)) == "LinearNeuron(3)"


def test_same_seed_same_weights_and_no_global_random_state():
    state = random.getstate()
    a, b = MLP(2, [8, 1], rng=7), MLP(2, [8, 1], rng=random.Random(7))
    assert random.getstate() == state  # the global generator was not used
    assert [p.data for p in a.parameters()] == [p.data for p in b.parameters()]
    c = MLP(2, [8, 1], rng=8)
    assert [p.data for p in a.parameters()] != [p.data for p in c.parameters()]
    # one stream per model: neurons of a layer differ, weights are in [-1, 1], biases 0
    layer = Layer(2, 3)
    assert len({tuple(w.data for w in n.w) for n in layer.neurons}) == 3
    assert all(-1 <= w.data <= 1 for n in layer.neurons for w in n.w)
    assert all(n.b.data == 0.0 for n in layer.neurons)


def test_bad_arguments_raise_named_errors():
    with pytest.raises(ValueError, match="nin"):
        Neuron(0)
    with pytest.raises(ValueError, match="layer width"):
        MLP(2, [4, 0])
    with pytest.raises(ValueError, match=r"\[\]"):
        MLP(2, [])
    with pytest.raises(TypeError, match="rng"):
        MLP(2, [1], rng="seed")
    with pytest.raises(ValueError, match="expects 2 inputs, got 3"):
        MLP(2, [1])([1.0, 2.0, 3.0])


def test_overflowing_neuron_raises_instead_of_inf():
    n = Neuron(2, nonlin=False)
    n.w[0].data = 1e308
    with pytest.raises(OverflowError, match="overflow"):
        n([10.0, 0.0])


# --- gradients --------------------------------------------------------------


def unfused_loss(model, X, y, alpha):
    """micrograd's demo loss built op by op with labs.autograd (2 nin + 1 nodes a neuron)."""
    scores = []
    for x in X:
        h = x
        for layer in model.layers:
            h = [
                (sum((w * xi for w, xi in zip(n.w, h)), n.b).relu() if n.nonlin else sum((w * xi for w, xi in zip(n.w, h)), n.b))
                for n in layer.neurons
            ]
        scores.append(h[0])
    losses = [(1 + -yi * s).relu() for yi, s in zip(y, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    return data_loss + alpha * sum(p * p for p in model.parameters())


def test_fused_graph_matches_micrograds_unfused_graph():
    X, y = make_moons(12, seed=3)
    model = MLP(2, [5, 4, 1], rng=2)
    loss, _ = svm_loss(model, X, y, alpha=0.01)
    model.zero_grad()
    loss.backward()
    fused = [p.grad for p in model.parameters()]
    ref = unfused_loss(model, X, y, 0.01)
    model.zero_grad()
    ref.backward()
    assert loss.data == pytest.approx(ref.data, rel=1e-12)
    assert any(g != 0 for g in fused)
    assert fused == pytest.approx([p.grad for p in model.parameters()], rel=1e-9, abs=1e-15)


def test_parameter_gradients_match_central_differences():
    X, y = make_moons(8, seed=1)
    model = MLP(2, [3, 3, 1], rng=3)
    # nonzero biases: with b = 0 a neuron whose inputs are all 0 (ReLUs off) sits exactly
    # on the ReLU kink, where central differences give 1/2 and the subgradient is 0
    rng = random.Random(9)
    for layer in model.layers:
        for n in layer.neurons:
            n.b.data = rng.uniform(-0.5, 0.5)
    params = model.parameters()
    start = [p.data for p in params]

    def loss_at(*values):
        for p, v in zip(params, values):
            p.data = v.data
        return svm_loss(model, X, y, alpha=0.05)[0].data

    numeric = numerical_gradient(loss_at, start, h=1e-6)
    for p, v in zip(params, start):
        p.data = v
    loss, _ = svm_loss(model, X, y, alpha=0.05)
    model.zero_grad()
    loss.backward()
    analytic = [p.grad for p in params]
    assert sum(g != 0 for g in analytic) > len(params) // 2
    for a, n in zip(analytic, numeric):
        assert a == pytest.approx(n, rel=1e-5, abs=1e-7)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=3, max_size=3), st.integers(0, 10**6))
def test_neuron_input_gradient_is_its_weights(xs, seed):
    n = Neuron(3, nonlin=False, rng=seed)
    inputs = [Value(x) for x in xs]
    out = n(inputs)
    out.backward()
    assert out.data == pytest.approx(sum(w.data * x for w, x in zip(n.w, xs)), abs=1e-12)
    assert [x.grad for x in inputs] == [w.data for w in n.w]
    assert [w.grad for w in n.w] == [float(x) for x in xs] and n.b.grad == 1.0


def test_relu_neuron_off_passes_no_gradient():
    n = Neuron(2)
    n.w[0].data, n.w[1].data = -1.0, -1.0
    x = [Value(1.0), Value(2.0)]
    out = n(x)
    out.backward()
    assert out.data == 0.0 and [v.grad for v in x] == [0.0, 0.0] and n.b.grad == 0.0


# --- data -------------------------------------------------------------------


def test_make_moons_shape_labels_balance_and_determinism():
    X, y = make_moons(101, noise=0.1, seed=4)
    assert len(X) == len(y) == 101 and all(len(p) == 2 for p in X)
    assert set(y) == {-1, 1} and y.count(-1) == 50 and y.count(1) == 51
    assert make_moons(101, 0.1, 4) == (X, y)
    assert make_moons(101, 0.1, 5)[0] != X
    assert y[:10] != sorted(y[:10]) or y[10:20] != sorted(y[10:20])  # shuffled


def test_noise_free_moons_lie_on_their_half_circles():
    X, y = make_moons(40, noise=0.0)
    for (a, b), label in zip(X, y):
        if label == -1:  # upper half of the unit circle around (0, 0)
            assert math.hypot(a, b) == pytest.approx(1.0) and b >= -1e-12
        else:  # lower half of the unit circle around (1, 0.5)
            assert math.hypot(a - 1, b - 0.5) == pytest.approx(1.0) and b <= 0.5 + 1e-12
    ends = [(-1.0, 0.0), (1.0, 0.0), (0.0, 0.5), (2.0, 0.5)]  # where each half circle starts/ends
    assert all(any(math.dist(p, e) < 1e-12 for p in X) for e in ends)


@pytest.mark.parametrize(
    ("kw", "error"),
    [
        (dict(n_samples=1), ValueError),
        (dict(n_samples=2.5), TypeError),
        (dict(noise=-0.1), ValueError),
        (dict(noise=float("nan")), ValueError),
        (dict(noise=True), TypeError),
        (dict(n_samples=b"\x10"), TypeError),
        (dict(n_samples=2**62), ValueError),  # refused at once: it hung building 4.6e18 points
    ],
)
def test_make_moons_rejects_bad_arguments(kw, error):
    with pytest.raises(error, match="n_samples|noise"):
        make_moons(**kw)


# Found by fuzzing (issue 17): bad inputs are refused with a named error when they are given.
@pytest.mark.parametrize(
    ("inputs", "error", "message"),
    [
        ([float("nan"), 0.0], ValueError, "input 0 must be a finite number, got nan"),
        (["1.5", 0.0], TypeError, "input 0 must be a number, got '1.5' (str)"),
        ([b"1", 0.0], TypeError, "input 0 must be a number"),
        ([0.0, True], TypeError, "input 1 must be a number, got True (bool)"),
    ],
)
def test_a_network_refuses_inputs_that_are_not_finite_numbers(inputs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        MLP(2, [4, 1])(inputs)


def test_sizes_too_large_to_build_and_sizes_of_the_wrong_type_are_refused_at_once():
    from labs.nn import MAX_SIZE

    with pytest.raises(ValueError, match=f"nin must be an int from 1 to {MAX_SIZE:,}"):
        Neuron(2**62)
    with pytest.raises(TypeError, match="nouts must be a list of layer widths"):
        MLP(2, b"\x04\x01")
    with pytest.raises(ValueError, match="learning rate at step 0 must be a finite number > 0, got True"):
        train(MLP(2, [1]), [[0.0, 0.0], [1.0, 1.0]], [-1, 1], steps=1, lr=True)


# --- loss and training ------------------------------------------------------


def test_svm_loss_by_hand():
    n = Neuron(2, nonlin=False)  # score = 2 x1 - x2 + 0.5, parameters (2, -1, 0.5)
    n.w[0].data, n.w[1].data, n.b.data = 2.0, -1.0, 0.5
    X, y = [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], [1, 1, -1]
    # scores 2.5, -0.5, 0.5 -> hinges 0, 1.5, 1.5; correct: yes, no, no
    loss, acc = svm_loss(n, X, y, alpha=0.1)
    assert loss.data == pytest.approx(3.0 / 3 + 0.1 * (4 + 1 + 0.25))
    assert acc == pytest.approx(1 / 3)


def test_svm_loss_rejects_bad_data():
    model = MLP(2, [1])
    with pytest.raises(ValueError, match="2 samples but y has 1"):
        svm_loss(model, [[0, 0], [1, 1]], [1])
    with pytest.raises(ValueError, match=r"y\[1\] = 0"):
        svm_loss(model, [[0, 0], [1, 1]], [1, 0])
    with pytest.raises(TypeError, match="one Value"):
        svm_loss(MLP(2, [2]), [[0, 0]], [1])


def test_page_setup_trains_to_95_percent_on_100_moons():
    X, y = make_moons(100)
    seen = []
    history = train(MLP(2, PAGE_HIDDEN + [1]), X, y, steps=PAGE_STEPS, on_step=lambda *row: seen.append(row))
    assert len(history) == PAGE_STEPS + 1 and seen == history
    assert [row[0] for row in history] == list(range(PAGE_STEPS + 1))
    assert history[-1][2] >= 0.95
    assert history[-1][1] < history[0][1] / 2


def test_train_constant_and_callable_learning_rates():
    X, y = make_moons(20, seed=2)
    h1 = train(MLP(2, [6, 1], rng=1), X, y, steps=15, lr=0.5)
    h2 = train(MLP(2, [6, 1], rng=1), X, y, steps=15, lr=lambda k: 0.5)
    assert h1 == h2 and h1[-1][1] < h1[0][1]
    with pytest.raises(ValueError, match="step 0"):
        train(MLP(2, [1]), X, y, steps=2, lr=-1.0)
    with pytest.raises(ValueError, match="steps"):
        train(MLP(2, [1]), X, y, steps=0)


# --- pictures ---------------------------------------------------------------


@pytest.fixture(scope="module")
def trained():
    X, y = make_moons(30, seed=1)
    model = MLP(2, [8, 8, 1], rng=1)
    return train(model, X, y, steps=25), model, X, y


def check_svg(svg):
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg" and root.get("role") == "img"
    assert root.get("width") == "100%" and root.get("viewBox").startswith("0 0 ")
    assert "max-width" in root.get("style")
    assert "http" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    return root, root.find(SVG + "title").text, root.find(SVG + "desc").text


def test_loss_curve_svg(trained):
    history = trained[0]
    root, title, desc = check_svg(LossCurve(history)._repr_svg_())
    assert title
    assert f"final loss {history[-1][1]:.4g}" in desc
    assert f"final accuracy {100 * history[-1][2]:.0f} %" in desc
    texts = [t.text for t in root.iter(SVG + "text")]
    assert "step" in texts and "loss" in texts and "100" in texts  # axis labels and ticks


def test_decision_boundary_svg_has_one_marker_per_point(trained):
    _, model, X, y = trained
    d = DecisionBoundary(model, X, y, grid=12)
    root, _, desc = check_svg(d._repr_svg_())
    marks = [e for e in root.iter() if "nn-point" in (e.get("class") or "")]
    assert len(marks) == len(X)
    assert sum(e.tag == SVG + "circle" for e in marks) == y.count(-1)
    assert sum(e.tag == SVG + "rect" for e in marks) == y.count(1)
    correct = sum((model(x).data > 0) == (label > 0) for x, label in zip(X, y))
    assert d.accuracy == correct / len(X)
    assert f"Accuracy {100 * correct / len(X):.0f} % ({correct} of {len(X)} correct)" in desc


def test_decision_regions_follow_the_models_sign():
    X, y = [[0.0, 0.0], [1.0, 1.0]], [-1, 1]
    d = DecisionBoundary(lambda p: p[0] - 0.25, X, y, grid=8)
    # x1 spans [-0.5, 1.5] in 8 cells of 0.25: centres -0.375 .. 1.375, > 0.25 from the 4th
    assert d.positive == [[False] * 3 + [True] * 5] * 8
    svg = d._repr_svg_()
    shade = ET.fromstring(svg).find(SVG + "g")
    assert len(shade) == 16  # one rect per run of equal cells: two per row


def test_text_is_escaped():
    history = [(0, 1.0, 0.5), (1, 0.5, 1.0)]
    evil = '<script>alert("x")</script> & co'
    root, title, _ = check_svg(LossCurve(history, title=evil)._repr_svg_())
    assert title == evil and root.find(".//" + SVG + "script") is None
    _, title, _ = check_svg(DecisionBoundary(lambda p: 1.0, [[0, 0]], [1], title=evil)._repr_svg_())
    assert title == evil


def test_training_report_html(trained):
    history, model, X, y = trained
    report = TrainingReport(history, model, X, y, grid=10)
    html = report._repr_html_()
    root = ET.fromstring(html)  # the whole fragment is well-formed
    assert "flex-wrap:wrap" in html and len(root.findall(".//" + SVG + "svg")) == 2
    assert root.find("p").text == report.summary()
    assert report.summary().startswith(f"Trained {history[-1][0]} steps: loss ")


@pytest.mark.parametrize("bad", [[], [(0, float("nan"), 0.5)], [(0, 1.0, 1.5)], [(0, 1.0)]])
def test_loss_curve_rejects_bad_history(bad):
    with pytest.raises(ValueError, match="history"):
        LossCurve(bad)


def test_decision_boundary_rejects_bad_input():
    with pytest.raises(ValueError, match="grid"):
        DecisionBoundary(lambda p: 0.0, [[0, 0]], [1], grid=1)
    with pytest.raises(ValueError, match="labels"):
        DecisionBoundary(lambda p: 0.0, [[0, 0]], [0])
    with pytest.raises(ValueError, match="X\\[0\\]"):
        DecisionBoundary(lambda p: 0.0, [[0, float("inf")]], [1])
