"""Show a scalar-autograd DAG in a page: a node table now, a Graphviz drawing in the browser.

:class:`GraphView` is what a cell displays. Its ``_repr_html_`` holds two
things, so that the page reads well with or without Python and JavaScript:

- a plain HTML table of the nodes in topological order (label, op, data,
  grad) and the size, e.g. "10 nodes · 9 edges", which any HTML builder and
  myst-nb's build-time output show as is;
- the Graphviz DOT source for three views (forward data, backward gradients,
  both) in ``data-dot-*`` attributes, which the page's runtime draws as SVG
  with Graphviz compiled to WebAssembly (@viz-js/viz), with a switch between
  the views and zoom.

Everything is duck-typed through :mod:`labs.graph`, so it draws a learner's
own micrograd-style class (fields ``data``, ``grad``, ``_prev``, ``_op``,
optional ``label``). All text is escaped with :func:`html.escape`.
"""

from __future__ import annotations

import html

from labs.graph import find_roots, summary, to_dot, trace

__all__ = ["GraphView", "draw_graph", "MAX_DRAWN_NODES"]

#: Beyond this many value nodes the page shows the table head and the size only:
#: Graphviz layout time grows quickly and a 10^5-node chain is unreadable anyway.
MAX_DRAWN_NODES = 300
_TABLE_ROWS = 40


class GraphView:
    """A displayable view of the DAG under ``root`` (a Value-like object).

    Args:
        root: the output node; its graph has N value nodes and E edges.
        title: a caption (default: "Computation graph of <root label>").
    Raises:
        TypeError: root lacks micrograd's fields (names its type).

    >>> from labs.autograd import build_neuron
    >>> view = GraphView(build_neuron().o)
    >>> view.summary
    '10 nodes · 9 edges'
    >>> 'data-dot-grad=' in view._repr_html_()
    True
    """

    def __init__(self, root, title=None):
        self.nodes, self.edges = trace(root)
        self.summary = summary(root)
        label = self.nodes[-1]["label"] or "the output"
        self.title = title or f"Computation graph of {label}"
        self._dots = {}
        if len(self.nodes) <= MAX_DRAWN_NODES:
            self._dots = {show: _page_layout(to_dot(root, show=show, rankdir="TB")) for show in ("data", "grad", "both")}

    def __repr__(self):
        return f"<GraphView: {self.title} · {self.summary}>"

    def _repr_html_(self):
        esc = lambda s: html.escape(str(s), quote=True)  # noqa: E731
        attrs = "".join(f' data-dot-{show}="{esc(dot)}"' for show, dot in self._dots.items())
        rows = []
        for node in self.nodes[-_TABLE_ROWS:][::-1]:  # the root first
            rows.append(
                f"<tr><td>{esc(node['label'])}</td><td>{esc(node['op'])}</td>"
                f"<td>{node['data'] + 0.0:.4f}</td><td>{node['grad'] + 0.0:.4f}</td></tr>"
            )
        more = len(self.nodes) - _TABLE_ROWS
        note = f"<p class='lab-graph-note'>… and {more} more nodes.</p>" if more > 0 else ""
        too_big = (
            ""
            if self._dots
            else f"<p class='lab-graph-note'>Too large to draw ({len(self.nodes)} nodes; the limit is {MAX_DRAWN_NODES}).</p>"
        )
        return (
            f'<figure class="lab-graph" data-summary="{esc(self.summary)}"{attrs}>'
            f"<figcaption>{esc(self.title)} · <span class='lab-graph-summary'>{esc(self.summary)}</span>"
            f"</figcaption>{too_big}"
            "<div class='lab-graph-table'><table><thead><tr><th>label</th><th>op</th><th>data</th>"
            f"<th>grad</th></tr></thead><tbody>{''.join(rows)}</tbody></table>{note}</div></figure>"
        )


def _page_layout(dot):
    """The DOT drawn in a page: top to bottom, with Graphviz's gaps between nodes and ranks tightened.

    A page's frame is wide but not very tall, and a value's box ("label | data | grad") is wide: left
    to right, micrograd's neuron drew 1,677 × 208 px, so the whole graph showed only at 44 % (6 px
    labels); top to bottom with these gaps it draws 919 × 500 px, whole at about 80 % in a 734 px
    frame (measured with @viz-js/viz 3.31). ``nodesep`` and ``ranksep`` are in inches (defaults 0.25
    and 0.5).

    >>> _page_layout("digraph autograd {\\n}").splitlines()[1]
    '  graph [nodesep=0.15, ranksep=0.25];'
    """
    head, rest = dot.split("{", 1)
    return f"{head}{{\n  graph [nodesep=0.15, ranksep=0.25];{rest}"


class _Nothing:
    """Shown when a namespace holds no Value-like object yet."""

    def __repr__(self):
        return "No Value in the namespace yet: run a cell that builds one."

    def _repr_html_(self):
        return f"<p class='lab-graph-empty'>{html.escape(repr(self))}</p>"


def draw_graph(source, prefer=None, title=None):
    """A :class:`GraphView` of a Value, or of a graph found in a namespace.

    Args:
        source: a Value-like object, or a mapping such as ``globals()`` whose
            Value-like objects are searched with :func:`labs.graph.find_roots`.
        prefer: with a mapping, the name to draw if it holds a Value-like
            object (e.g. ``"o"``); otherwise the biggest graph is drawn.
        title: optional caption.
    Returns:
        GraphView, or a placeholder object saying there is nothing to draw.
    Raises:
        TypeError: source is neither Value-like nor a mapping.

    >>> from labs.autograd import build_neuron
    >>> draw_graph(vars(build_neuron())).summary
    '10 nodes · 9 edges'
    >>> draw_graph({})
    No Value in the namespace yet: run a cell that builds one.
    >>> ns = vars(build_neuron()); draw_graph(ns, prefer="n").summary
    '9 nodes · 8 edges'
    """
    if hasattr(source, "_prev"):
        return GraphView(source, title)
    if prefer is not None and hasattr(source, "get"):
        chosen = source.get(prefer)
        if chosen is not None and hasattr(chosen, "_prev") and not isinstance(chosen, type):
            return GraphView(chosen, title)
    roots = find_roots(source)
    return GraphView(roots[0], title) if roots else _Nothing()
