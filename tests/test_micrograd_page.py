"""Lab 1's exercises: each starter fails exactly the checks its TODOs own, the solutions pass all."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest

from labs.autograd import Value as ReferenceValue
from labs.checks import doctest_blocks, run_blocks
from labs.graph import summary
from tests.pages import check_count, checks_by_exercise, exercise_code, micrograd_solution, read_page, reference_solution

GRADIENT_CHECKS = [
    "Output gradient",
    "tanh backward",
    "Bias gradient",
    "Input x1 gradient",
    "Weight w1 gradient",
    "Input x2 gradient",
    "Reused node",
    "Deep chain",
    "tanh inside a graph",
    "tanh reused",
    "Product reused",
    "Inner node reused",
]


def run_cell(code: str) -> tuple[dict, str]:
    namespace: dict = {"__name__": "__main__"}
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(code, "<exercise>", "exec"), namespace)
    return namespace, out.getvalue()


# Exercise 2's checks: the operations a network needs, and the network trained on them.
EXERCISE_2_CHECKS = [
    "Power rule",
    "relu gradient",
    "relu off",
    "exp gradient",
    "Power inside a graph",
    "Power reused",
    "relu inside a graph",
    "relu reused",
    "exp inside a graph",
    "exp reused",
    "Negation",
    "Reversed multiplication",
    "Subtraction",
    "Reversed subtraction",
    "Division",
    "Reversed division",
    "Sum of Values",
    "Subtraction inside a graph",
    "Division inside a graph",
    "Trained network",
]


def page_checks(namespace: dict, exercise: int | None = 1) -> dict[str, str]:
    """Run the page's checks with the page's own engine (labs.checks): {check name: status}.

    ``exercise``: 1 or 2 keeps that exercise's checks, None all of them."""
    results = run_blocks(doctest_blocks(read_page("micrograd.md")), namespace)
    statuses = {r.check.name: r.status for r in results if not r.check.setup}
    if exercise is None:
        return statuses
    return {name: s for name, s in statuses.items() if (name in EXERCISE_2_CHECKS) == (exercise == 2)}


def test_the_starter_holds_the_three_todos_and_runs():
    code = exercise_code(read_page("micrograd.md"))
    assert code.count("# TODO") == 3
    namespace, out = run_cell(code)
    assert "o  data = +0.70710678   grad = +0.00000000" in out
    assert summary(namespace["o"]) == "10 nodes · 9 edges"


def test_the_starter_fails_the_gradient_checks_and_only_those():
    namespace, _ = run_cell(exercise_code(read_page("micrograd.md")))
    results = page_checks(namespace)
    assert len(results) == len(checks_by_exercise(read_page("micrograd.md"))[0])
    assert sorted(name for name, status in results.items() if status == "failed") == sorted(GRADIENT_CHECKS)
    # w2's gradient is 0.0 whether or not backward works, since x2 = 0.
    assert results["Forward activation"] == results["Weight w2 gradient"] == "passed"


def test_the_reference_solution_passes_all_of_exercise_1s():
    namespace, out = run_cell(micrograd_solution())
    assert page_checks(namespace) == dict.fromkeys(["Forward activation", *GRADIENT_CHECKS, "Weight w2 gradient"], "passed")
    assert "x1  data = +2.00000000   grad = -1.50000000" in out


def test_the_reference_engine_passes_both_exercises_checks():
    assert page_checks({"Value": ReferenceValue}, exercise=None) == dict.fromkeys(
        [*page_checks({"Value": ReferenceValue}), *EXERCISE_2_CHECKS], "passed"
    )


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
    removed = [
        d[1:].strip()
        for d in difflib.unified_diff(starter, solution, lineterm="", n=0)
        if d.startswith("-") and not d.startswith("---")
    ]
    assert all(line.startswith(("#", "pass")) for line in removed), removed


# ------------------------------------------------------------- exercise 2


def exercise_2(solved: bool) -> str:
    text = read_page("micrograd.md")
    return reference_solution(text, 1) if solved else exercise_code(text, 1)


def run_both(first: str, second: str) -> tuple[dict, str]:
    """Exercise 1's code, then exercise 2's, in one namespace, as the page runs them."""
    namespace, _ = run_cell(first)
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(second, "<exercise 2>", "exec"), namespace)
    return namespace, out.getvalue()


def test_exercise_2s_starter_holds_its_todos_runs_and_leaves_the_gradient_0():
    code = exercise_2(solved=False)
    assert code.count("# TODO") == 4  # **, relu, exp, and the compositions below them
    namespace, out = run_both(micrograd_solution(), code)
    ref = ReferenceValue(0.2)
    loss = (1 - 3 * ref).relu() + ref**2 / 4 - (-ref).exp()
    assert out == f"loss = {loss.data:.6f}   dloss/dv = 0.000000\n"
    assert issubclass(namespace["Value"], namespace["Engine"]) and namespace["Engine"].__mro__ == (namespace["Engine"], object)


def test_exercise_2s_starter_fails_the_checks_its_todos_own_and_only_those():
    namespace, _ = run_both(micrograd_solution(), exercise_2(solved=False))
    results = page_checks(namespace, exercise=None)
    assert len(results) == check_count("micrograd.md")
    # relu's gradient is 0 where it is off anyway, and sum() needs only the given __radd__.
    passing = {"relu off", "Sum of Values"}
    assert sorted(name for name, status in results.items() if status != "passed") == sorted(set(EXERCISE_2_CHECKS) - passing)


def test_exercise_2s_solution_passes_every_check_and_matches_the_reference_engine():
    namespace, out = run_both(micrograd_solution(), exercise_2(solved=True))
    assert set(page_checks(namespace, exercise=None).values()) == {"passed"}
    ref = ReferenceValue(0.2)
    loss = (1 - 3 * ref).relu() + ref**2 / 4 - (-ref).exp()
    loss.backward()
    assert out == f"loss = {loss.data:.6f}   dloss/dv = {ref.grad:.6f}\n"


def test_running_exercise_2_again_extends_exercise_1s_class_not_its_own_last_run():
    namespace, _ = run_both(micrograd_solution(), exercise_2(solved=True))
    first = namespace["Value"]
    exec(compile(exercise_2(solved=True), "<exercise 2>", "exec"), namespace)
    assert namespace["Value"] is not first and namespace["Value"].__mro__[1] is namespace["Engine"] is first.__mro__[1]


def test_exercise_2s_solution_is_the_starter_with_only_the_todos_changed():
    import difflib

    starter, solution = exercise_2(solved=False).splitlines(), exercise_2(solved=True).splitlines()
    removed = [
        d[1:].strip()
        for d in difflib.unified_diff(starter, solution, lineterm="", n=0)
        if d.startswith("-") and not d.startswith("---")
    ]
    assert all(line.startswith(("#", "pass", "return Value(")) for line in removed), removed


def page_cell(contains: str) -> str:
    from tests.pages import code_cells

    (code,) = [code for _, code in code_cells(read_page("micrograd.md")) if contains in code]
    return code


def test_the_timing_cell_runs_exactly_the_trained_network_checks_code():
    import ast
    import textwrap

    blocks = doctest_blocks(read_page("micrograd.md"))
    (block,) = [b for b in blocks if "Trained network" in b]
    import doctest

    examples = doctest.DocTestParser().get_examples(block)
    check_code = "".join(ex.source for ex in examples if not ex.want)  # the set-up lines
    cell = ast.parse(page_cell("def trained_network_check"))
    function = next(node for node in cell.body if isinstance(node, ast.FunctionDef))
    body = function.body[1:-1]  # without its docstring and `return accuracy`
    assert [ast.dump(s) for s in body] == [ast.dump(s) for s in ast.parse(textwrap.dedent(check_code)).body]


def run_training(namespace: dict) -> str:
    import IPython.display

    shown = []
    out = io.StringIO()
    original = IPython.display.display

    class Handle:
        def update(self, obj):
            shown.append(obj)

    def display(obj, display_id=None):
        shown.append(obj)
        return Handle()

    IPython.display.display = display
    try:
        with redirect_stdout(out):
            exec(compile(page_cell("class Neuron"), "<network>", "exec"), namespace)
            exec(compile(page_cell("hinge_loss(model, X, y)"), "<training>", "exec"), namespace)
    finally:
        IPython.display.display = original
    namespace["shown"] = shown
    return out.getvalue()


def test_the_page_trains_a_network_on_the_learners_value_to_95_percent():
    namespace, _ = run_both(micrograd_solution(), exercise_2(solved=True))
    out = run_training(namespace)
    history = namespace["history"]
    assert len(history) == 41 and history[-1][2] >= 0.95 and history[-1][1] < history[0][1]
    assert out.startswith("MLP(2, [16, 1]): 65 parameters, each a Value of your class\n40 steps in ")
    assert "training accuracy" in out and "Every gradient is 0" not in out
    # The rate training reaches is the schedule's at the last update, step 39, not at step 40.
    assert f"learning rate 2.00 at step 0, {2.0 * (1 - 0.9 * 39 / 40):.3f} at the last update (step 39)" in out
    # Redrawn every 10 steps: a progress line and a report each time.
    assert len(namespace["shown"]) == 10 and namespace["shown"][-1].curve.history[-1][0] == 40
    assert isinstance(namespace["model"].parameters()[0], namespace["Value"])


def test_the_starters_training_says_the_gradients_do_not_reach_the_weights():
    namespace, _ = run_both(micrograd_solution(), exercise_2(solved=False))
    out = run_training(namespace)
    assert "Every gradient is 0: the loss cannot reach the weights yet. Complete exercise 2 (and exercise 1" in out
    assert namespace["history"][-1][1] == namespace["history"][0][1]


def test_stop_keeps_what_was_trained_and_says_at_which_step():
    namespace, _ = run_both(micrograd_solution(), exercise_2(solved=True))
    exec(compile(page_cell("class Neuron"), "<network>", "exec"), namespace)
    real, calls = namespace["hinge_loss"], []

    def interrupted_at_step_13(*args, **kwargs):  # as Stop does: KeyboardInterrupt mid-run
        calls.append(1)
        if len(calls) == 14:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    cell = page_cell("hinge_loss(model, X, y)").replace("\nX, y = make_moons", "\nhinge_loss = interrupted\nX, y = make_moons")
    namespace["interrupted"] = interrupted_at_step_13
    import IPython.display

    original = IPython.display.display
    IPython.display.display = lambda obj, display_id=None: type("H", (), {"update": lambda self, o: None})()
    try:
        out = io.StringIO()
        with redirect_stdout(out):
            exec(compile(cell, "<training>", "exec"), namespace)  # no exception: the loop caught it
    finally:
        IPython.display.display = original
    assert out.getvalue() == (
        "Stopped at step 12 of 40: model and history keep what was trained so far (the picture shows step 10).\n"
    )
    assert [row[0] for row in namespace["history"]] == list(range(13))


def test_exercise_2s_checks_say_when_exercise_1_is_not_complete():
    """With exercise 1 as given (backward() does nothing), exercise 2's solved operations are not
    blamed: the checks name exercise 1."""
    namespace, _ = run_both(exercise_code(read_page("micrograd.md")), exercise_2(solved=True))
    results = run_blocks(doctest_blocks(read_page("micrograd.md")), namespace)
    power = next(r for r in results if r.check.name == "Power rule")
    assert power.status == "error" and "exercise 1 is not complete" in power.got, power


def test_exercise_2_without_exercise_1_says_to_run_exercise_1_first():
    from tests.pages import exercise_code as starter

    namespace: dict = {"__name__": "__main__"}
    with pytest.raises(NameError, match="run exercise 1's cell first"):
        exec(compile(starter(read_page("micrograd.md"), 1), "<exercise 2>", "exec"), namespace)


def test_the_going_further_cell_then_the_network_cells_run_without_a_name_collision():
    """Check my code and reading in order run "Going further" (the reference engine's network) after
    the page's own MLP is defined, then "Your engine trains a network": that cell must still get the
    MLP built on the learner's Value (it was labs.nn's, and MLP(2, [16, 1], seed=3) raised TypeError)."""
    import IPython.display

    namespace, _ = run_both(micrograd_solution(), exercise_2(solved=True))
    going_further = page_cell("TrainingReport(history, model, X, y)\n")
    assert going_further.count("steps=60") == 1 and going_further.endswith("TrainingReport(history, model, X, y)\n")
    # Fewer samples and steps, and no picture: the names are the point, not the training.
    going_further = going_further.replace("steps=60", "steps=1").replace("n_samples=100", "n_samples=10")
    going_further = going_further.removesuffix("TrainingReport(history, model, X, y)\n")
    network, training = page_cell("class Neuron"), page_cell("hinge_loss(model, X, y)")
    assert training.count("steps, redraw_every = 40, 10") == 1
    original = IPython.display.display
    IPython.display.display = lambda obj, display_id=None: type("H", (), {"update": lambda self, o: None})()
    try:
        with redirect_stdout(io.StringIO()):
            namespace["time"] = __import__("time")  # imported by an earlier cell of the page
            for code in (network, going_further, training.replace("steps, redraw_every = 40, 10", "steps, redraw_every = 1, 10")):
                exec(compile(code, "<cell>", "exec"), namespace)
    finally:
        IPython.display.display = original
    assert isinstance(namespace["model"].parameters()[0], namespace["Value"])


def test_at_the_checks_step_rounding_outweighs_truncation_in_the_central_difference():
    """The page's cell: at h = 1e-6 the rounding estimate eps |f| / h is larger than the truncation
    estimate h**2 |f'''| / 6, and the actual error lies between the two: rounding dominates."""
    namespace: dict = {}
    with redirect_stdout(io.StringIO()) as out:
        exec(compile(page_cell("def central_difference_errors"), "<cell>", "exec"), namespace)
    truncation, rounding, actual = namespace["central_difference_errors"](0.5, 1e-6)
    assert truncation < actual < rounding and rounding > 100 * truncation
    assert f"({rounding / truncation:,.0f} times larger)" in out.getvalue()
    # At a large step the truncation term is the larger one, and it is what the error is.
    truncation, rounding, actual = namespace["central_difference_errors"](0.5, 1e-3)
    assert rounding < truncation and abs(actual - truncation) < 0.01 * truncation


def test_the_seed_count_command_runs_the_pages_trained_network_check_with_only_its_seed_changed():
    """benchmarks.trained_network_seeds reproduces the page's "13 of the 20" seeds (a few minutes:
    not run here); this keeps it reading the check's own code, seed 3 giving the check itself."""
    import doctest

    from benchmarks.trained_network_seeds import check_code

    (block,) = [b for b in doctest_blocks(read_page("micrograd.md")) if "# Trained network" in b]
    page_code = "".join(ex.source for ex in doctest.DocTestParser().get_examples(block) if not ex.want)
    assert check_code(3) == page_code
    changed = [(a, b) for a, b in zip(page_code.splitlines(), check_code(11).splitlines()) if a != b]
    assert changed == [("rng = random.Random(3)", "rng = random.Random(11)")]
    with pytest.raises(ValueError, match="one doctest block with the Trained network check, found 0"):
        check_code(3, page="no checks here")
