"""labs.graph_view: what the page shows for a computation graph."""

from __future__ import annotations

import html
import re

from labs.autograd import Value, build_neuron
from labs.graph_view import MAX_DRAWN_NODES, GraphView, draw_graph

HOSTILE = '<img src=x onerror=alert(1)>" & {x|y}'


def attributes(markup: str) -> dict[str, str]:
    head = re.match(r"<figure ([^>]*)>", markup).group(1)
    return {k: html.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', head)}


def test_the_neuron_view_holds_three_dot_views_and_a_table():
    nn = build_neuron()
    nn.o.backward()
    markup = GraphView(nn.o)._repr_html_()
    attrs = attributes(markup)
    assert attrs["data-summary"] == "10 nodes · 9 edges"
    assert "grad -1.5000" in attrs["data-dot-grad"] and "<td>data " not in attrs["data-dot-grad"]
    assert "data 2.0000" in attrs["data-dot-data"] and "<td>grad " not in attrs["data-dot-data"]
    assert attrs["data-dot-both"].count("->") == 14  # 9 value edges + 5 op -> value
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>", markup)
    assert rows[0] == ("o", "tanh", "0.7071", "1.0000") and len(rows) == 10


def test_hostile_labels_never_become_markup():
    a = Value(1.0, label=HOSTILE)
    out = a * 2
    markup = GraphView(out)._repr_html_()
    assert "<img" not in markup and "onerror=alert(1)>" not in markup.replace("&lt;", "")
    # Unescaped once (as the browser does for the attribute), the DOT still escapes it.
    dot = attributes(markup)["data-dot-both"]
    assert "<img" not in dot and "&lt;img src=x onerror=alert(1)&gt;" in dot


def test_graphs_too_large_to_draw_keep_their_table_and_size():
    y = x = Value(1.0)
    for _ in range(MAX_DRAWN_NODES):
        y = y + 1.0
    view = GraphView(y)
    markup = view._repr_html_()
    assert "data-dot-both" not in markup and "Too large to draw" in markup
    assert view.summary == f"{2 * MAX_DRAWN_NODES + 1} nodes · {2 * MAX_DRAWN_NODES} edges"
    assert x.grad == 0.0  # drawing never runs backward


def test_draw_graph_prefers_the_named_value_then_the_biggest():
    ns = vars(build_neuron())
    assert draw_graph(ns, prefer="o").summary == "10 nodes · 9 edges"
    assert draw_graph(ns, prefer="x1w1").summary == "3 nodes · 2 edges"
    assert draw_graph(ns, prefer="missing").summary == "10 nodes · 9 edges"
    assert draw_graph({"Value": Value}, prefer="Value")._repr_html_().startswith("<p class='lab-graph-empty'>")
