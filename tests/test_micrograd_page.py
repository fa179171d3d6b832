"""Lab 1's exercise: the starter fails exactly the checks its TODOs own, the solution passes all."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

from labs.autograd import Value as ReferenceValue
from labs.checks import doctest_blocks, run_blocks
from labs.graph import summary
from tests.pages import exercise_code, micrograd_solution, read_page

GRADIENT_CHECKS = [
    "Output gradient", "tanh backward", "Bias gradient", "Input x1 gradient",
    "Weight w1 gradient", "Input x2 gradient", "Reused node", "Deep chain",
]


def run_cell(code: str) -> tuple[dict, str]:
    namespace: dict = {"__name__": "__main__"}
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(code, "<exercise>", "exec"), namespace)
    return namespace, out.getvalue()


def page_checks(namespace: dict) -> dict[str, str]:
    """Run the page's checks with the page's own engine (labs.checks): {check name: status}."""
    results = run_blocks(doctest_blocks(read_page("micrograd.md")), namespace)
    return {r.check.name: r.status for r in results if not r.check.setup}


def test_the_starter_holds_the_three_todos_and_runs():
    code = exercise_code(read_page("micrograd.md"))
    assert code.count("# TODO") == 3
    namespace, out = run_cell(code)
    assert "o  data = +0.70710678   grad = +0.00000000" in out
    assert summary(namespace["o"]) == "10 nodes · 9 edges"


def test_the_starter_fails_the_gradient_checks_and_only_those():
    namespace, _ = run_cell(exercise_code(read_page("micrograd.md")))
    results = page_checks(namespace)
    assert len(results) == 10
    assert sorted(name for name, status in results.items() if status == "failed") == sorted(GRADIENT_CHECKS)
    # w2's gradient is 0.0 whether or not backward works, since x2 = 0.
    assert results["Forward activation"] == results["Weight w2 gradient"] == "passed"


def test_the_reference_solution_passes_all_ten():
    namespace, out = run_cell(micrograd_solution())
    assert page_checks(namespace) == dict.fromkeys(["Forward activation", *GRADIENT_CHECKS, "Weight w2 gradient"], "passed")
    assert "x1  data = +2.00000000   grad = -1.50000000" in out


def test_the_reference_engine_passes_all_ten():
    assert set(page_checks({"Value": ReferenceValue}).values()) == {"passed"}


def test_the_solution_matches_the_reference_engine_node_by_node():
    namespace, _ = run_cell(micrograd_solution())
    ours = {k: (v.data, v.grad) for k, v in namespace.items() if hasattr(v, "_prev") and not isinstance(v, type)}
    from labs.autograd import build_neuron

    ref = build_neuron()
    ref.o.backward()
    assert set(vars(ref)) <= set(ours)
    for name in vars(ref):
        node, (data, grad) = getattr(ref, name), ours[name]
        assert abs(node.data - data) < 1e-12 and abs(node.grad - grad) < 1e-12, name


def test_the_solution_is_the_starter_with_only_the_todo_bodies_changed():
    import difflib

    starter = exercise_code(read_page("micrograd.md")).splitlines()
    solution = micrograd_solution().splitlines()
    removed = [d[1:].strip() for d in difflib.unified_diff(starter, solution, lineterm="", n=0)
               if d.startswith("-") and not d.startswith("---")]
    assert all(line.startswith(("#", "pass")) for line in removed), removed
