"""Which of a page's cells "Check my code" runs before the checks: the exercises and what they need.

The checks judge the names the exercises define (the page's ``checks_use``) and
the names their own set-up lines use. A page also holds demonstrations (the
micrograd lab trains a network with the reference engine for seconds) that no
exercise and no check needs; running them before every check made the first
Check on Lab 1 take many seconds. So the build works out, from the cells' code,
the cells the checks need, and the page runs only those that have not run:

- every exercise cell (the learner's code);
- no cell below the last exercise;
- above it, a cell that binds a name an earlier-needed cell or a check reads,
  and then, in turn, the cells binding the names *it* reads (walking up).

The analysis is conservative: a cell it cannot read (not Python, a syntax error)
or that reaches the namespace by other means (``from m import *``,
``globals()`` other than for a named entry, ``exec``...) is needed, and so is every cell above a needed
cell of that kind. A learner who edits an exercise to read a name only a skipped
cell defines gets a NameError from Check, naming it, and runs that cell.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Collection, Sequence

# Reaching the namespace without naming what is read: every cell above is needed.
OPAQUE_CALLS = frozenset({"globals", "locals", "vars", "exec", "eval", "__import__"})
BUILTINS = frozenset(dir(builtins))


def bound_and_read(code: str) -> tuple[set[str], set[str], bool]:
    """The names ``code`` binds at module level, the names it reads anywhere, and whether it is opaque.

    Reads leave out names local to a function, lambda or comprehension (and otherwise
    over-approximate: a read the code never reaches counts); bindings are module-level only (assignments, for/with targets, def, class, import). Opaque:
    unparseable, a star import, or a call of one of :data:`OPAQUE_CALLS`.

    >>> bound, read, opaque = bound_and_read("import math as m\\nx = m.pi\\ndef f(a):\\n    return a + y")
    >>> sorted(bound), sorted(read), opaque
    (['f', 'm', 'x'], ['m', 'y'], False)
    >>> bound_and_read("from labs.nn import *")[2], bound_and_read("print(globals())")[2]
    (True, True)
    >>> bound_and_read("if 'Value' not in globals():\\n    Value = object")[1:]
    ({'Value'}, False)
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set(), set(), True
    bound: set[str] = set()
    read: set[str] = set()
    opaque = False
    named = _globals_by_name(tree, read)
    read |= _global_reads(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            opaque = True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in OPAQUE_CALLS and id(node) not in named:
            opaque = True
    for statement in tree.body:
        for node in _module_level(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return bound, read - BUILTINS, opaque


SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _global_reads(node: ast.AST, local: frozenset[str] = frozenset()) -> set[str]:
    """The names read in ``node`` that are not local to a function, lambda or comprehension around
    the read (its parameters, the names it assigns, its loop targets). A class body is not a scope
    of its own here: over-approximating reads only makes more cells needed."""
    reads: set[str] = set()
    if isinstance(node, SCOPES):
        inner = set(local)
        if not isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            a = node.args
            inner.update(x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, [a.vararg, a.kwarg])])
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                inner.add(sub.id)
            elif isinstance(sub, (ast.Global, ast.Nonlocal)):
                inner.difference_update(sub.names)
        local = frozenset(inner)
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
        reads.add(node.id)
    for child in ast.iter_child_nodes(node):
        reads |= _global_reads(child, local)
    return reads


def _globals_by_name(tree: ast.AST, read: set[str]) -> set[int]:
    """The ``globals()`` calls that name what they read with a string constant (``"Value" in
    globals()``, ``globals()["Value"]``, ``globals().get("Value")``): those names go into ``read``;
    returns the calls' ids, which are then not opaque."""

    def is_globals(node) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "globals" and not node.args

    def constant(node) -> str | None:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    named: set[int] = set()
    for node in ast.walk(tree):
        name, call = None, None
        if (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.In, ast.NotIn))
            and is_globals(node.comparators[0])
        ):
            name, call = constant(node.left), node.comparators[0]
        elif isinstance(node, ast.Subscript) and is_globals(node.value) and isinstance(node.ctx, ast.Load):
            name, call = constant(node.slice), node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and is_globals(node.func.value)
            and node.args
        ):
            name, call = constant(node.args[0]), node.func.value
        if name is not None:
            read.add(name)
            named.add(id(call))
    return named


def _module_level(statement: ast.stmt):
    """The nodes of a top-level statement, not descending into function or class bodies."""
    todo = [statement]
    while todo:
        node = todo.pop()
        yield node
        if node is not statement and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        todo.extend(ast.iter_child_nodes(node))


def cells_the_checks_need(
    cells: Sequence[tuple[bool, str]], blocks: Sequence[str], checks_use: Sequence[str], auto: Collection[int] = ()
) -> list[int]:
    """The indexes of the cells Check my code runs (if they have not run), in page order.

    Args:
        cells: each code cell of the page as (is an exercise, its code), in page order.
        blocks: the page's doctest blocks (``>>>`` lines; ``...`` continuations).
        checks_use: the names the checks take from the learner's code.
        auto: the cells that run again by themselves after other runs (the live pictures): Check
            does not run them, so they need nothing.

    Returns:
        Sorted cell indexes: [] when the page has no exercise (then the checks need every cell:
        the caller runs them all).

    >>> cells = [(False, "import math"), (False, "slow = train()"), (True, "def f(x):\\n    return math.sqrt(x)")]
    >>> cells_the_checks_need(cells, [">>> f(4.0)  # Root: f\\n2.0\\n"], ["f"])
    [0, 2]
    """
    exercises = [i for i, (is_exercise, _) in enumerate(cells) if is_exercise]
    if not exercises:
        return []
    # The blocks run in order in one namespace: what their set-up lines bind is theirs, not the page's.
    source = "\n".join(line[4:] for block in blocks for line in block.splitlines() if line.startswith((">>> ", "... ")))
    bound, read, opaque = bound_and_read(source)
    if opaque:  # checks that reach the namespace wholesale may need anything above the last exercise
        return [i for i in range(exercises[-1] + 1) if i not in auto]
    needed_names = set(checks_use) | (read - bound)
    needed: set[int] = set()
    for i in range(exercises[-1], -1, -1):
        is_exercise, code = cells[i]
        if i in auto:
            continue
        bound, read, opaque = bound_and_read(code)
        if is_exercise or opaque or bound & needed_names:
            needed.add(i)
            needed_names |= read
            if opaque:  # it may read anything bound above it
                needed.update(range(i))
                break
    return sorted(needed)
