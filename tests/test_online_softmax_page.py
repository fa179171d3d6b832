"""Lab 2's page (docs/online_softmax.md): its checks judge online_softmax correctly.

The page's doctest blocks are run as the browser's assertion console runs
them: the standard library's ``doctest`` (ELLIPSIS | NORMALIZE_WHITESPACE, no
pytest ``NUMBER``), with ``online_softmax`` bound to

(a) the reference, ``labs.attention.online_softmax``: every check passes;
(b) the reference solution in the page's dropdown: every check passes;
(c) the starter code of the exercise cell: exactly the checks its TODOs own
    fail, and none of them crashes;

plus two half-finished versions of the starter, to show that each TODO has
checks of its own.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import sys
from pathlib import Path

import labs.attention as ref
from labs.checks import doctest_blocks, run_blocks

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGE = DOCS / "online_softmax.md"

sys.path.insert(0, str(DOCS))
from conftest import checks_use  # noqa: E402  (docs/conftest.py)

TEXT = PAGE.read_text()
EXERCISE = re.compile(r"^```\{code-cell\} python\n:tags: \[exercise\]\n(.*?)^```$", re.S | re.M)
SOLUTION = re.compile(r"^:::\{dropdown\} Reference solution\n.*?^```python\n(.*?)^```$\n:::$", re.S | re.M)
BACKTICK_FENCE = re.compile(r"^(`{3,})[^\n]*\n.*?^\1[ \t]*$", re.S | re.M)
PYTHON_FENCE = re.compile(r"^```(?:python|pycon)[ \t]*\n(.*?)^```", re.S | re.M)

ALL_CHECKS = [
    "Huge logits", "Huge logsumexp", "Opposite extremes", "Tiny logits", "Tiny logsumexp",
    "Fully masked row", "Masked entry", "Rescaling factor", "Running max", "Mixed row",
]
# With the starter, m stays -inf, so d stays 0: every row comes back as zeros
# with logsumexp -inf. Only the fully masked row, whose right answer that is, passes.
STARTER_FAILS = [name for name in ALL_CHECKS if name != "Fully masked row"]
TODO_1 = "        m_new = m\n"
TODO_2 = "        alpha = 1.0\n"
SOLVED_1 = "        m_new = max(m, x)\n"
SOLVED_2 = "        alpha = 1.0 if m_new == -math.inf else math.exp(m - m_new)\n"


def exercise_code() -> str:
    (code,) = EXERCISE.findall(TEXT)
    return code


def solution_code() -> str:
    (code,) = SOLUTION.findall(TEXT)
    return code


def define(code: str):
    """Run a cell's code as the page does (its prints swallowed); return its online_softmax."""
    namespace: dict = {"__name__": "__lab__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<exercise>", "exec"), namespace)
    return namespace["online_softmax"]


def check_name(example: doctest.Example) -> str:
    return example.source.split("#", 1)[1].split(":", 1)[0].strip()


def run_checks(online_softmax) -> tuple[list[str], list[str], list[str]]:
    """Run the page's checks with the page's own engine (labs.checks):
    (every example's status, failed check names, sources of examples that raised)."""
    results = run_blocks(doctest_blocks(TEXT), {"online_softmax": online_softmax})
    failed = [r.check.name for r in results if not r.check.setup and r.status != "passed"]
    crashed = [r.check.source for r in results if r.status == "error"]
    return [r.status for r in results], failed, crashed


def test_every_check_is_named_and_the_names_are_the_expected_ones():
    test = doctest.DocTestParser().get_doctest(TEXT, {}, PAGE.name, str(PAGE), 0)
    checks = [ex for ex in test.examples if ex.want]
    setup = [ex for ex in test.examples if not ex.want]
    assert [check_name(ex) for ex in checks] == ALL_CHECKS
    assert all(re.search(r"#\s*[^:#]+:\s*\S", ex.source) for ex in checks)
    assert all("#" not in ex.source for ex in setup)  # set-up lines are not checks
    assert len(setup) == 4


def test_no_prompt_outside_fenced_blocks_and_every_block_is_a_doctest_block():
    outside = BACKTICK_FENCE.sub("", TEXT)
    assert ">>>" not in outside
    for block in PYTHON_FENCE.findall(TEXT):
        if ">>>" in block:  # a doctest block: starts with a prompt, ends with a blank line
            assert block.startswith(">>>") and block.endswith("\n\n"), block[:60]
    assert "online_softmax" not in "".join(  # no cell imports the learner's name from labs
        line for line in TEXT.splitlines(keepends=True) if line.startswith(("from labs", "import labs"))
        and "import online_softmax" in line
    )


def test_front_matter_binds_online_softmax_to_the_reference():
    assert checks_use(PAGE) == {"online_softmax": ref.online_softmax}


def test_all_checks_pass_on_the_reference():
    results, failed, crashed = run_checks(checks_use(PAGE)["online_softmax"])
    assert (failed, crashed) == ([], [])
    assert results == ["passed"] * (len(ALL_CHECKS) + 4)


def test_all_checks_pass_on_the_reference_solution():
    solution = solution_code()
    assert "TODO" not in solution
    results, failed, crashed = run_checks(define(solution))
    assert (failed, crashed) == ([], [])
    assert set(results) == {"passed"}


def test_the_starter_runs_and_fails_exactly_the_checks_its_todos_own():
    starter = exercise_code()
    assert starter.count("TODO") == 2 and TODO_1 in starter and TODO_2 in starter
    assert "import online_softmax" not in starter
    online_softmax = define(starter)  # the cell runs at build time: it must not raise
    result = online_softmax([1000.0, 1000.0])
    assert isinstance(result, ref.OnlineSoftmaxResult)
    assert all(isinstance(s, ref.OnlineSoftmaxStep) for s in result.steps)
    results, failed, crashed = run_checks(online_softmax)
    assert crashed == []  # wrong answers, not exceptions
    assert failed == STARTER_FAILS
    assert len(results) == len(ALL_CHECKS) + 4 and "not run" not in results


def code_lines(code: str) -> list[str]:
    return [line for line in code.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_the_solution_is_the_starter_with_the_two_todo_lines_filled_in():
    filled = exercise_code().replace(TODO_1, SOLVED_1).replace(TODO_2, SOLVED_2)
    starter, solution = code_lines(filled), code_lines(solution_code())
    assert starter[: len(solution)] == solution
    try_it = starter[len(solution):]  # the cell's last lines try the function once
    assert len(try_it) == 2 and try_it[0].startswith("r = online_softmax(")


def test_the_running_max_alone_leaves_the_rescaling_checks_failing():
    half = exercise_code().replace(TODO_1, SOLVED_1)
    _, failed, crashed = run_checks(define(half))
    assert crashed == []
    # alpha stuck at 1.0: right wherever the max never grows after the first logit.
    assert failed == ["Rescaling factor", "Mixed row"]


def test_an_unguarded_alpha_fails_the_masked_checks_with_nan():
    unguarded = exercise_code().replace(TODO_1, SOLVED_1).replace(TODO_2, "        alpha = math.exp(m - m_new)\n")
    online_softmax = define(unguarded)
    assert str(online_softmax([float("-inf")] * 2).logsumexp) == "nan"
    _, failed, crashed = run_checks(online_softmax)
    assert crashed == []
    assert failed == ["Fully masked row", "Masked entry"]
