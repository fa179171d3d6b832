"""Extract and draw the expression DAG of a micrograd-style scalar Value.

The picture follows micrograd's ``trace_graph.ipynb`` / ``draw_dot`` (Karpathy,
2020, github.com/karpathy/micrograd): each value is a box "label | data | grad"
and each op is a small ellipse between its operands and its result. Everything
here is duck-typed, so it draws a learner's OWN Value class as long as it has
micrograd's fields ``data``, ``grad``, ``_prev`` (iterable of children) and
``_op``; ``label`` is optional (missing means ''). Walks are iterative (an
explicit stack), since Pyodide's stack is small.

Counting convention: ops are attributes of value nodes, not nodes. A graph of
N values has N nodes and one edge per (child, parent) pair, so the lab's
neuron tanh(x1 w1 + x2 w2 + b) has 10 nodes and 9 edges. Labels come from
learners and are escaped as Graphviz HTML-like text: they always render as
literal text and never break the DOT.
"""

import hashlib
import html
import math
import re
from collections.abc import Set

from labs.autograd import topological_order

__all__ = ["trace", "to_dot", "summary", "find_roots"]

_FIELDS = ("data", "grad", "_prev", "_op")
_RANKDIRS = ("LR", "RL", "TB", "BT")
_SHOW = ("data", "grad", "both")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _is_value_like(obj):
    """True for an instance (not a class) with micrograd's four fields."""
    if isinstance(obj, type):
        return False
    try:
        return all(hasattr(obj, f) for f in _FIELDS) and _iterable(obj._prev)
    except Exception:  # a namespace object whose attribute access misbehaves
        return False


def _iterable(x):
    try:
        iter(x)
    except TypeError:
        return False
    return True


def _require_value_like(obj):
    if not _is_value_like(obj):
        if all(hasattr(obj, f) for f in _FIELDS) and not isinstance(obj, type):
            raise TypeError(f"a {type(obj).__name__}'s _prev must be an iterable of its children, got {type(obj._prev).__name__!r}")
        raise TypeError(f"expected a micrograd-style Value with fields data, grad, _prev, _op; got {type(obj).__name__!r}")


def _label(node):
    """A node's label as shown ('' when it has none)."""
    return str(getattr(node, "label", "") or "")


def _number_of(node, field):
    """float(node.<field>), or a TypeError naming the node and what it held."""
    value = getattr(node, field)
    try:
        return float(value)
    except (TypeError, ValueError) as err:
        label = _label(node)
        name = f"{label!r}" if label else f"an unlabeled {type(node).__name__}"
        raise TypeError(f"{name}: {field} must be a number, got {value!r} ({type(value).__name__})") from err


def _sort_key(child):
    """Where a child stands among a set's: by label, op, then data (numbers by value)."""
    data = getattr(child, "data", None)
    try:
        number = float(data)
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    by_value = (0, number, "") if number == number else (1, 0.0, repr(data))  # NaN, or not a number
    return _label(child), str(getattr(child, "_op", "") or ""), by_value


def _digest(root, digests):
    """A digest of what the subtree under root shows (labels, ops, data), kept in digests by id().

    For children alike by _sort_key (two unlabeled products of 6.0), which
    still differ by what is under them. Leaves first, in one pass.
    """
    if id(root) not in digests:
        for node in topological_order(root):
            if id(node) not in digests:
                below = [digests[id(child)] for child in node._prev]
                if isinstance(node._prev, Set):
                    below.sort()
                content = repr((_label(node), str(getattr(node, "_op", "") or ""), repr(getattr(node, "data", None)), below))
                digests[id(node)] = hashlib.blake2b(content.encode(), digest_size=16).hexdigest()
    return digests[id(root)]


def _children(node, digests):
    """node's children in drawing order (checks that node is Value-like).

    A tuple or list keeps its operand order. A set (micrograd's ``_prev``)
    iterates in the order of its members' memory addresses, so the same code
    drew its branches swapped between the baked page, a fresh start and a
    restored one: its children are sorted instead, by label, op and data,
    and children alike in those by what is under them (_digest).
    """
    _require_value_like(node)
    prev = node._prev
    if not isinstance(prev, Set):
        return prev if isinstance(prev, (tuple, list)) else list(prev)  # an iterator is read once
    keyed = sorted(((_sort_key(child), child) for child in prev), key=lambda pair: pair[0])
    if any(a[0] == b[0] for a, b in zip(keyed, keyed[1:])):
        keyed.sort(key=lambda pair: (pair[0], _digest(pair[1], digests)))
    return [child for _, child in keyed]


def _drawing_order(root):
    """topological_order(root) with children taken in _children's order, and each node's children.

    Iterative depth-first post-order (Pyodide's stack is small); a leaf comes
    right after it is found, each node after its children, root last.
    Returns (order, children): the list of nodes, and id(node) -> its children.
    """
    digests, children_of = {}, {}

    def children(node):
        children_of[id(node)] = found = _children(node, digests)
        return iter(found)

    order, seen = [], {id(root)}
    stack = [(root, children(root))]
    while stack:
        node, pending = stack[-1]
        for child in pending:
            if id(child) not in seen:
                seen.add(id(child))
                stack.append((child, children(child)))
                break
        else:
            stack.pop()
            order.append(node)
    return order, children_of


def trace(root):
    """The DAG under root as plain data: nodes in topological order, and edges.

    Args:
        root: a Value-like object (fields data, grad, _prev, _op; label optional).
    Returns:
        (nodes, edges): nodes is a list of N dicts {"id": "n0".., "label": str,
        "op": str, "data": float, "grad": float}, leaves first and root last,
        ids numbered in that order; edges is a list of E (child_id, parent_id)
        pairs, each pair once, and every edge goes from an earlier node to a
        later one. Children come in operand order where ``_prev`` is a tuple
        or list, and sorted by (label, op, data) where it is a set, so the
        same code gives the same picture on every run.
    Raises:
        TypeError: root or a node under it lacks micrograd's fields (names the
            type), its ``_prev`` is not iterable, or its data or grad is not a
            number (names the node and the value).

    >>> from labs.autograd import Value
    >>> a = Value(2, label='a'); y = a * a + 1
    >>> nodes, edges = trace(y)
    >>> [(n['id'], n['label'], n['op'], n['data']) for n in nodes]
    [('n0', 'a', '', 2.0), ('n1', '', '*', 4.0), ('n2', '', '', 1.0), ('n3', '', '+', 5.0)]
    >>> edges
    [('n0', 'n1'), ('n1', 'n3'), ('n2', 'n3')]
    """
    order, children_of = _drawing_order(root)
    ids = {id(node): f"n{i}" for i, node in enumerate(order)}
    nodes, edges = [], []
    for node in order:
        parent = ids[id(node)]
        nodes.append(
            {
                "id": parent,
                "label": _label(node),
                "op": str(node._op or ""),
                "data": _number_of(node, "data"),
                "grad": _number_of(node, "grad"),
            }
        )
        seen = set()
        for child in children_of[id(node)]:
            if id(child) not in seen:  # a tuple _prev may hold (a, a): one edge
                seen.add(id(child))
                edges.append((ids[id(child)], parent))
    return nodes, edges


def summary(root):
    """A one-line size of the DAG: value nodes and value-to-value edges.

    Ops are not counted as nodes (they label the node they produce).

    Args:
        root: a Value-like object.
    Returns:
        str, e.g. "10 nodes · 9 edges".
    Raises:
        TypeError: root lacks micrograd's fields.

    >>> from labs.autograd import build_neuron
    >>> summary(build_neuron().o)
    '10 nodes · 9 edges'
    """
    nodes, edges = trace(root)
    n, e = len(nodes), len(edges)
    return f"{n} node{'s' * (n != 1)} · {e} edge{'s' * (e != 1)}"


def _text(s):
    """Escape learner text for a Graphviz HTML-like label: literal, never markup."""
    s = str(s).replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    lines = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", s).split("\n")
    return "<br/>".join(html.escape(line, quote=True) for line in lines)


def _number(x):
    return f"{x + 0.0:.4f}"  # + 0.0 turns -0.0 into 0.0


def to_dot(root, show="both", rankdir="LR"):
    """Graphviz DOT source for the DAG under root, in micrograd's style.

    Each value is a box "label | data d | grad g" (numbers to 4 decimals);
    each op is an ellipse node "<id>_op" wired child -> op -> value. All
    labels are HTML-like labels built with html.escape, so '<', '>', '&',
    quotes, braces, pipes and backslashes show literally; newlines become
    line breaks and other control characters visible \\xNN text.

    Args:
        root: a Value-like object.
        show: "data", "grad" or "both": which numbers the boxes show.
        rankdir: Graphviz direction, "LR" (default), "RL", "TB" or "BT".
    Returns:
        str, a ``digraph`` with N value nodes and one node per op.
    Raises:
        TypeError: root lacks micrograd's fields.
        ValueError: show or rankdir is not one of the values above.

    >>> from labs.autograd import Value
    >>> dot = to_dot(Value(2, label='<a>') * 3, show="data").splitlines()
    >>> print(dot[3])
      n0 [shape=plain, label=<<table border="0" cellborder="1" cellspacing="0"
      cellpadding="4"><tr><td>&lt;a&gt;</td><td>data 2.0000</td></tr></table>>];
    >>> print("\\n".join(dot[6:]))
      n2_op [shape=ellipse, width=0.35, height=0.3, margin=0.04, label=<*>];
      n2_op -> n2;
      n0 -> n2_op;
      n1 -> n2_op;
    }
    """
    if show not in _SHOW:
        raise ValueError(f"show must be one of {_SHOW}, got {show!r}")
    if rankdir not in _RANKDIRS:
        raise ValueError(f"rankdir must be one of {_RANKDIRS}, got {rankdir!r}")
    nodes, edges = trace(root)
    lines = ["digraph autograd {", f"  rankdir={rankdir};", '  node [fontname="Helvetica", fontsize=11];']
    for node in nodes:
        cells = [_text(node["label"])]
        if show in ("data", "both"):
            cells.append(f"data {_number(node['data'])}")
        if show in ("grad", "both"):
            cells.append(f"grad {_number(node['grad'])}")
        row = "".join(f"<td>{c}</td>" for c in cells)
        lines.append(
            f'  {node["id"]} [shape=plain, label=<<table border="0" '
            f'cellborder="1" cellspacing="0" cellpadding="4"><tr>{row}'
            f"</tr></table>>];"
        )
    children = {node["id"]: [] for node in nodes}
    for child, parent in edges:
        children[parent].append(child)
    for node in nodes:
        target = node["id"]
        if node["op"]:  # child -> op ellipse -> value; a learner's op-less node: child -> value
            target = f"{node['id']}_op"
            lines.append(f"  {target} [shape=ellipse, width=0.35, height=0.3, margin=0.04, label=<{_text(node['op'])}>];")
            lines.append(f"  {target} -> {node['id']};")
        lines.extend(f"  {child} -> {target};" for child in children[node["id"]])
    lines.append("}")
    return "\n".join(lines)


def find_roots(namespace):
    """The Value-like objects in a namespace that no other one there depends on.

    Used after a run to pick which graph to draw: of a notebook's globals,
    keep the instances (not classes) with data, grad, _prev and _op that are
    not reachable from another such object, biggest graph first (ties keep
    the namespace's order). The same object under two names counts once.

    Args:
        namespace: a mapping name -> object, e.g. ``globals()``.
    Returns:
        list of R Value-like objects, sorted by DAG size (node count), descending.
    Raises:
        TypeError: namespace is not a mapping.

    >>> from labs.autograd import build_neuron
    >>> [v.label for v in find_roots(vars(build_neuron()))]
    ['o']
    """
    if not hasattr(namespace, "values"):
        raise TypeError(f"find_roots needs a mapping such as globals(), got {type(namespace).__name__!r}")
    candidates = {}
    for obj in list(namespace.values()):
        if _is_value_like(obj) and id(obj) not in candidates:
            candidates[id(obj)] = obj
    # One shared walk marks every node below some candidate: O(total nodes).
    below = set()
    stack = [child for obj in candidates.values() for child in obj._prev]
    while stack:
        node = stack.pop()
        if id(node) not in below:
            below.add(id(node))
            stack.extend(getattr(node, "_prev", None) or ())
    sizes = {}
    for key, obj in candidates.items():
        if key not in below:
            try:
                sizes[key] = len(topological_order(obj))
            except TypeError:  # a malformed learner graph: not drawable, skip it
                pass
    roots = [obj for key, obj in candidates.items() if key in sizes]
    return sorted(roots, key=lambda obj: -sizes[id(obj)])
