"""Tests for labs.graph: tracing, drawing and picking the roots of micrograd-style
DAGs, for the reference Value and for a learner's own minimal class."""

import html
import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from labs.autograd import Value, build_neuron
from labs.graph import find_roots, summary, to_dot, trace

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "<img src=x onerror=alert(1)>"
# The neuron's edges, derived from its definition o = tanh((x1*w1 + x2*w2) + b).
NEURON_EDGES = {
    ("x1", "x1w1"),
    ("w1", "x1w1"),
    ("x2", "x2w2"),
    ("w2", "x2w2"),
    ("x1w1", "x1w1x2w2"),
    ("x2w2", "x1w1x2w2"),
    ("x1w1x2w2", "n"),
    ("b", "n"),
    ("n", "o"),
}


def labelled_edges(nodes, edges):
    label = {node["id"]: node["label"] for node in nodes}
    return {(label[c], label[p]) for c, p in edges}


def test_neuron_trace_counts_and_order():
    nn = build_neuron()
    nn.o.backward()
    nodes, edges = trace(nn.o)
    assert (len(nodes), len(edges)) == (10, 9)
    assert [node["id"] for node in nodes] == [f"n{i}" for i in range(10)]
    position = {node["id"]: i for i, node in enumerate(nodes)}
    assert all(position[c] < position[p] for c, p in edges)  # topological order
    assert nodes[-1]["label"] == "o" and nodes[-1]["op"] == "tanh"
    assert labelled_edges(nodes, edges) == NEURON_EDGES
    by_label = {node["label"]: node for node in nodes}
    assert by_label["x1"]["grad"] == pytest.approx(-1.5)
    assert by_label["x1"]["op"] == "" and by_label["n"]["op"] == "+"
    assert by_label["w1"]["data"] == -3.0
    assert set(nodes[0]) == {"id", "label", "op", "data", "grad"}


def test_summary():
    assert summary(build_neuron().o) == "10 nodes · 9 edges"
    assert summary(Value(1)) == "1 node · 0 edges"
    a = Value(2)
    assert summary(a + a) == "2 nodes · 1 edge"  # a reused: one edge


def test_to_dot_structure():
    nn = build_neuron()
    nn.o.backward()
    dot = to_dot(nn.o)
    assert dot.startswith("digraph autograd {") and dot.endswith("}")
    assert "rankdir=LR;" in dot
    value_nodes = re.findall(r"^  (n\d+) \[", dot, re.M)
    op_nodes = re.findall(r"^  (n\d+)_op \[shape=ellipse.*label=<(.*)>\];$", dot, re.M)
    assert len(value_nodes) == 10
    assert sorted(op for _, op in op_nodes) == ["*", "*", "+", "+", "tanh"]
    arrows = re.findall(r"^  (\S+) -> (\S+);$", dot, re.M)
    assert len(arrows) == 9 + 5  # each value edge into an op, each op into its value
    # micrograd's box: label | data | grad, 4 decimals
    assert "<td>x1</td><td>data 2.0000</td><td>grad -1.5000</td>" in dot
    assert "<td>o</td><td>data 0.7071</td><td>grad 1.0000</td>" in dot
    assert "<td>w2</td><td>data 1.0000</td><td>grad 0.0000</td>" in dot


def test_to_dot_options():
    o = build_neuron().o
    only_data, only_grad = to_dot(o, show="data"), to_dot(o, show="grad")
    assert "<td>grad " not in only_data and only_data.count("<td>data ") == 10
    assert "<td>data " not in only_grad and only_grad.count("<td>grad ") == 10
    assert "rankdir=TB;" in to_dot(o, rankdir="TB")
    with pytest.raises(ValueError, match="'values'"):
        to_dot(o, show="values")
    with pytest.raises(ValueError, match="'XY'"):
        to_dot(o, rankdir="XY")


NASTY = [HOSTILE, "say \"hi\" & 'bye'", "{a|b}<c>", "back\\slash\\", "]; digraph x {", "two\nlines", "&lt;already escaped&gt;"]


@pytest.mark.parametrize("label", NASTY)
def test_dot_labels_are_literal_text(label):
    x = Value(2, label=label)
    y = x * 3
    y._op = label  # ops come from learners' code too
    dot = to_dot(y)
    assert HOSTILE not in dot and "<img" not in dot
    lines = dot.split("\n")
    assert len(lines) == 3 + 4 + 3 + 1  # header, 3 values + op node, 3 arrows, "}"
    cell = re.search(r"^  n0 \[.*?<tr><td>(.*?)</td>", dot, re.M).group(1)
    assert html.unescape(cell.replace("<br/>", "\n")) == label  # round trip: literal
    op = re.search(r"^  n2_op \[.*label=<(.*)>\];$", dot, re.M).group(1)
    assert html.unescape(op.replace("<br/>", "\n")) == label
    body = dot.split("\n", 3)[3].replace("label=<", "")
    assert not re.search(r"<(?!/?(table|tr|td|br)\b)", body)  # no other tags


def test_dot_control_characters_are_visible():
    dot = to_dot(Value(1, label="a\x00b\x1bc\td\r\ne"))
    assert "a\\x00b\\x1bc d<br/>e" in dot
    assert "\x00" not in dot and "\x1b" not in dot


VIZ = ROOT / "node_modules" / "@viz-js" / "viz" / "dist" / "viz.js"


@pytest.mark.skipif(not (shutil.which("node") and VIZ.exists()), reason="needs node and npm's @viz-js/viz (npm ci)")
def test_dot_renders_in_graphviz_with_literal_labels(tmp_path):
    nn = build_neuron()
    nn.o.backward()
    nn.x1.label, nn.w1.label, nn.b.label = HOSTILE, "q\"uo'te {br}|pipe\\slash", "l1\nl2"
    dot_file = tmp_path / "dot.json"
    dot_file.write_text(json.dumps(to_dot(nn.o)))
    script = tmp_path / "render.mjs"
    script.write_text(
        f"import * as Viz from {json.dumps(VIZ.as_uri())};\n"
        "import fs from 'fs';\n"
        "const viz = await Viz.instance();\n"
        f"const dot = JSON.parse(fs.readFileSync({json.dumps(str(dot_file))}));\n"
        "const r = viz.render(dot, {format: 'svg'});\n"
        "console.log(JSON.stringify({status: r.status, errors: r.errors, svg: r.output}));\n"
    )
    proc = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60)
    result = json.loads(proc.stdout)
    assert result["status"] == "success", result["errors"]
    svg = result["svg"]
    texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    assert HOSTILE in texts and "q\"uo'te {br}|pipe\\slash" in texts
    assert "l1" in texts and "l2" in texts
    assert "<img" not in svg
    assert len(re.findall(r'<g id="node\d+" class="node">', svg)) == 10 + 5


class LearnerValue:
    """What a learner might write: micrograd's fields and nothing else (no label,
    no ops; children passed by hand), with a set for _prev as micrograd has."""

    def __init__(self, data, children=(), op=""):
        self.data = data
        self.grad = 0.0
        self._prev = set(children)
        self._op = op


def learner_neuron():
    """The neuron built by hand with LearnerValue, grads from the chain rule."""
    x1, x2, w1, w2 = LearnerValue(2.0), LearnerValue(0.0), LearnerValue(-3.0), LearnerValue(1.0)
    b = LearnerValue(6.8813735870195432)
    x1w1 = LearnerValue(x1.data * w1.data, (x1, w1), "*")
    x2w2 = LearnerValue(x2.data * w2.data, (x2, w2), "*")
    x1w1x2w2 = LearnerValue(x1w1.data + x2w2.data, (x1w1, x2w2), "+")
    n = LearnerValue(x1w1x2w2.data + b.data, (x1w1x2w2, b), "+")
    o = LearnerValue(math.tanh(n.data), (n,), "tanh")
    names = dict(x1=x1, x2=x2, w1=w1, w2=w2, b=b, x1w1=x1w1, x2w2=x2w2, x1w1x2w2=x1w1x2w2, n=n, o=o)
    for name, node in names.items():
        node.label = name
    return names


def test_learner_class_traces_the_same():
    ours = vars(build_neuron())
    theirs = learner_neuron()
    ref_nodes, ref_edges = trace(ours["o"])
    nodes, edges = trace(theirs["o"])
    assert labelled_edges(nodes, edges) == labelled_edges(ref_nodes, ref_edges) == NEURON_EDGES

    def key(node):
        return node["label"], node["op"], round(node["data"], 12), node["grad"]

    assert sorted(map(key, nodes)) == sorted(map(key, ref_nodes))
    assert summary(theirs["o"]) == "10 nodes · 9 edges"
    assert find_roots(theirs) == [theirs["o"]]


def test_a_set_prev_draws_the_same_picture_wherever_its_nodes_were_allocated():
    # micrograd (and the page's exercise) keeps _prev as a set, which iterates
    # in the order of its members' addresses: the same code drew its branches
    # swapped between the baked page, a fresh start and a restored one.
    pictures = set()
    for spacing in range(40):
        padding = [object() for _ in range(spacing * 7)]  # moves where the next nodes land
        neuron = learner_neuron()
        del padding
        nodes, edges = trace(neuron["o"])
        pictures.add(to_dot(neuron["o"]))
        assert labelled_edges(nodes, edges) == NEURON_EDGES
    assert len(pictures) == 1
    # Children of a set in (label, op, data) order: b before x1*w1 + x2*w2.
    assert [node["label"] for node in nodes] == ["b", "w1", "x1", "x1w1", "w2", "x2", "x2w2", "x1w1x2w2", "n", "o"]


def test_a_set_prev_orders_children_that_look_alike_by_what_is_under_them():
    # Two unlabeled products of 6.0: alike by label, op and data, not below.
    pictures = set()
    for spacing in range(40):
        padding = [object() for _ in range(spacing * 7)]
        a, b, c, d = (LearnerValue(x) for x in (2.0, 3.0, 1.0, 6.0))
        for node, name in ((a, "a"), (b, "b"), (c, "c"), (d, "d")):
            node.label = name
        o = LearnerValue(12.0, (LearnerValue(6.0, (a, b), "*"), LearnerValue(6.0, (c, d), "*")), "+")
        del padding
        pictures.add(to_dot(o))
    assert len(pictures) == 1


def test_learner_class_without_labels_and_tuple_prev():
    a = LearnerValue(3.0)
    y = LearnerValue(9.0, (), "*")
    y._prev = (a, a)  # a tuple that names the child twice: still one edge
    nodes, edges = trace(y)
    assert [node["label"] for node in nodes] == ["", ""]
    assert edges == [("n0", "n1")]
    assert "<td></td><td>data 3.0000</td>" in to_dot(y)


def test_type_errors_name_the_type():
    with pytest.raises(TypeError, match="'int'"):
        trace(3)
    with pytest.raises(TypeError, match="'type'"):
        trace(Value)
    with pytest.raises(TypeError, match="'NoneType'"):
        to_dot(None)
    with pytest.raises(TypeError, match="'str'"):
        summary("x")
    bad = LearnerValue(1.0, (), "+")
    bad._prev = [2.0]  # a learner put a float where a child Value belongs
    with pytest.raises(TypeError, match="'float'"):
        trace(bad)
    with pytest.raises(TypeError, match="'list'"):
        find_roots([Value(1)])


def test_errors_name_the_node_and_what_was_wrong():
    bad = LearnerValue(None)
    bad.label = "o"
    with pytest.raises(TypeError, match=r"'o': data must be a number, got None \(NoneType\)"):
        trace(bad)
    unlabeled = LearnerValue(1.0, (LearnerValue("abc"),), "+")
    with pytest.raises(TypeError, match=r"an unlabeled LearnerValue: data must be a number, got 'abc' \(str\)"):
        trace(unlabeled)
    broken = LearnerValue(1.0)
    broken._prev = 5
    with pytest.raises(TypeError, match=r"a LearnerValue's _prev must be an iterable of its children, got 'int'"):
        trace(broken)


def test_a_generator_prev_is_read_once_and_drawn_whole():
    o = LearnerValue(5.0, (), "+")
    o._prev = (child for child in (LearnerValue(2.0), LearnerValue(3.0)))
    nodes, edges = trace(o)
    assert len(nodes) == 3 and len(edges) == 2


def test_find_roots_picks_o_for_the_neuron():
    ns = vars(build_neuron())
    assert find_roots(ns) == [ns["o"]]
    assert find_roots({"x1": ns["x1"], "n": ns["n"], "b": ns["b"]}) == [ns["n"]]


def test_find_roots_orders_by_size_and_ignores_non_values():
    import math as a_module

    class FakeClass:  # class attributes with micrograd's names must not fool it
        data, grad, _prev, _op = 1.0, 0.0, (), ""

    nn = build_neuron()
    small = Value(1) + 2  # 3 nodes
    leaf = Value(5)
    ns = {
        "__name__": "__main__",
        "Value": Value,
        "LearnerValue": LearnerValue,
        "FakeClass": FakeClass,
        "math": a_module,
        "k": 3,
        "s": "text",
        "leaf": leaf,
        "small": small,
        "o": nn.o,
        "alias": nn.o,
        "n": nn.n,
        "bad": type("Broken", (), {"data": property(lambda self: 1 / 0)})(),
    }
    assert find_roots(ns) == [nn.o, small, leaf]
    assert find_roots({}) == []


def test_find_roots_and_trace_are_iterative():
    x = Value(0.5)
    y = x
    for _ in range(50_000):
        y = y.tanh()
    nodes, edges = trace(y)
    assert (len(nodes), len(edges)) == (50_001, 50_000)
    assert find_roots({"x": x, "y": y}) == [y]
    assert summary(y) == "50001 nodes · 50000 edges"
