"""Lab 2's page (docs/online_softmax.md): its checks judge online_softmax correctly.

The page's doctest blocks are run as the browser's assertion console runs
them: the standard library's ``doctest`` (ELLIPSIS | NORMALIZE_WHITESPACE, no
pytest ``NUMBER``), with ``online_softmax`` bound to

(a) the reference, ``labs.attention.online_softmax``: every check passes;
(b) the reference solution in the page's dropdown: every check passes;
(c) the starter code of the exercise cell: exactly the checks its TODOs own
    fail, and none of them crashes;

plus two half-finished versions of the starter, to show that each TODO has
checks of its own. The same for exercise 2, ``flash_attention`` (the tile
loop of FlashAttention-2, Algorithm 1), with ``online_softmax`` bound to the
reference meanwhile (and the other way round), and its picture; and for
exercise 3, ``flash_attention_backward`` (FlashAttention-2, Algorithm 2).
"""

from __future__ import annotations

import contextlib
import doctest
import io
import math
import re
import sys
from pathlib import Path

import labs.attention as ref
from labs.checks import doctest_blocks, run_blocks
from tests.pages import code_cells
from tests.pages import exercise_code as nth_exercise
from tests.pages import reference_solution as nth_solution

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGE = DOCS / "online_softmax.md"

sys.path.insert(0, str(DOCS))
from conftest import checks_use  # noqa: E402  (docs/conftest.py)

TEXT = PAGE.read_text()
BACKTICK_FENCE = re.compile(r"^(`{3,})[^\n]*\n.*?^\1[ \t]*$", re.S | re.M)
PYTHON_FENCE = re.compile(r"^```(?:python|pycon)[ \t]*\n(.*?)^```", re.S | re.M)

ALL_CHECKS = [
    "Huge logits",
    "Huge logsumexp",
    "Opposite extremes",
    "Tiny logits",
    "Tiny logsumexp",
    "Fully masked row",
    "Masked entry",
    "Rescaling factor",
    "Running max",
    "Mixed row",
]
EX2_CHECKS = [
    "One tile",
    "Ragged tiles",
    "Logsumexp",
    "Extreme logits",
    "Softmax scale",
    "Causal, more keys",
    "Query that sees no key",
    "Causal, more queries",
]
EX3_CHECKS = [
    "Gradients, one tile",
    "Gradients, softmax scale",
    "Gradients, ragged tiles",
    "Gradients, causal",
    "Autograd, 2 x 3",
]
SETUP_LINES = 4 + 9 + 12
# With the starter, m stays -inf, so d stays 0: every row comes back as zeros
# with logsumexp -inf. Only the fully masked row, whose right answer that is, passes.
STARTER_FAILS = [name for name in ALL_CHECKS if name != "Fully masked row"]
TODO_1 = "        m_new = m\n"
TODO_2 = "        alpha = 1.0\n"
SOLVED_1 = "        m_new = max(m, x)\n"
SOLVED_2 = "        alpha = 1.0 if m_new == -math.inf else math.exp(m - m_new)\n"


def exercise_code(n: int = 0) -> str:
    return nth_exercise(TEXT, n)


def solution_code(n: int = 0) -> str:
    return nth_solution(TEXT, n)


def passing_reference_solution(n: int, name: str):
    """Exercise ``n``'s reference solution, from the page, once every check has passed on it: its ``name``."""
    solution = solution_code(n)
    assert "TODO" not in solution
    defined = define(solution, name)
    results, failed, crashed = run_checks(**{name: defined})
    assert (failed, crashed) == ([], []) and set(results) == {"passed"}
    return defined


def define(code: str, name: str = "online_softmax"):
    """Run a cell's code as the page does (its prints swallowed); return its ``name``.

    Exercise 3's cell tries itself on O and L from exercise 2's ``flash_attention``: the reference's here."""
    namespace: dict = {"__name__": "__lab__", "flash_attention": ref.flash_attention}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<exercise>", "exec"), namespace)
    return namespace[name]


def check_name(example: doctest.Example) -> str:
    return example.source.split("#", 1)[1].split(":", 1)[0].strip()


def run_checks(
    online_softmax=ref.online_softmax, flash_attention=ref.flash_attention, flash_attention_backward=ref.flash_attention_backward
) -> tuple[list[str], list[str], list[str]]:
    """Run the page's checks with the page's own engine (labs.checks):
    (every example's status, failed check names, sources of examples that raised)."""
    names = {
        "online_softmax": online_softmax,
        "flash_attention": flash_attention,
        "flash_attention_backward": flash_attention_backward,
    }
    results = run_blocks(doctest_blocks(TEXT), names)
    failed = [r.check.name for r in results if not r.check.setup and r.status != "passed"]
    crashed = [r.check.source for r in results if r.status == "error"]
    return [r.status for r in results], failed, crashed


def test_every_check_is_named_and_the_names_are_the_expected_ones():
    test = doctest.DocTestParser().get_doctest(TEXT, {}, PAGE.name, str(PAGE), 0)
    checks = [ex for ex in test.examples if ex.want]
    setup = [ex for ex in test.examples if not ex.want]
    assert [check_name(ex) for ex in checks] == ALL_CHECKS + EX2_CHECKS + EX3_CHECKS
    assert all(re.search(r"#\s*[^:#]+:\s*\S", ex.source) for ex in checks)
    assert all("#" not in ex.source for ex in setup)  # set-up lines are not checks
    assert len(setup) == SETUP_LINES


def test_no_prompt_outside_fenced_blocks_and_every_block_is_a_doctest_block():
    outside = BACKTICK_FENCE.sub("", TEXT)
    assert ">>>" not in outside
    for block in PYTHON_FENCE.findall(TEXT):
        if ">>>" in block:  # a doctest block: starts with a prompt, ends with a blank line
            assert block.startswith(">>>") and block.endswith("\n\n"), block[:60]
    assert "online_softmax" not in "".join(  # no cell imports the learner's name from labs
        line
        for line in TEXT.splitlines(keepends=True)
        if line.startswith(("from labs", "import labs")) and "import online_softmax" in line
    )


def test_front_matter_binds_online_softmax_to_the_reference():
    assert checks_use(PAGE) == {
        "online_softmax": ref.online_softmax,
        "flash_attention": ref.flash_attention,
        "flash_attention_backward": ref.flash_attention_backward,
    }


def test_all_checks_pass_on_the_reference():
    results, failed, crashed = run_checks(**checks_use(PAGE))
    assert (failed, crashed) == ([], [])
    assert results == ["passed"] * (len(ALL_CHECKS) + len(EX2_CHECKS) + len(EX3_CHECKS) + SETUP_LINES)


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
    assert len(results) == len(ALL_CHECKS) + len(EX2_CHECKS) + len(EX3_CHECKS) + SETUP_LINES and "not run" not in results


def code_lines(code: str) -> list[str]:
    return [line for line in code.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_the_solution_is_the_starter_with_the_two_todo_lines_filled_in():
    filled = exercise_code().replace(TODO_1, SOLVED_1).replace(TODO_2, SOLVED_2)
    starter, solution = code_lines(filled), code_lines(solution_code())
    assert starter == solution  # the whole cell, its last two lines trying the function once
    assert solution[-2].startswith("r = online_softmax(")


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


# ------------------------------------------------------------------ exercise 2: flash_attention

EX2_TODO_1 = "                alpha = 1.0\n"
EX2_TODO_2 = "                l[t] = l[t] + sum(p)\n                acc[t] = [a + sum(p[u] * v[j][c] for u, j in enumerate(cols))\n"
EX2_TODO_3 = "            out.append(acc[t])\n            lse.append(0.0)\n"
EX2_SOLVED_1 = "                alpha = math.exp(m[t] - m_new)  # <= 1; 0 on the row's first visible tile\n"
EX2_SOLVED_2 = (
    "                l[t] = l[t] * alpha + sum(p)\n"
    "                acc[t] = [a * alpha + sum(p[u] * v[j][c] for u, j in enumerate(cols))\n"
)
EX2_SOLVED_3 = (
    "            if l[t] == 0.0:  # the row saw no key\n"
    "                out.append([0.0] * d_v)\n"
    "                lse.append(-math.inf)\n"
    "            else:\n"
    "                out.append([a / l[t] for a in acc[t]])\n"
    "                lse.append(m[t] + math.log(l[t]))\n"
)


def ex2_with(*solved: int) -> str:
    """Exercise 2's starter with the TODOs numbered in ``solved`` filled in as the reference solution does."""
    code = exercise_code(1)
    for n, (todo, done) in enumerate(((EX2_TODO_1, EX2_SOLVED_1), (EX2_TODO_2, EX2_SOLVED_2), (EX2_TODO_3, EX2_SOLVED_3)), start=1):
        assert code.count(todo) == 1
        if n in solved:
            code = code.replace(todo, done)
    return code


def test_exercise_2_starter_runs_and_fails_exactly_its_own_checks():
    starter = exercise_code(1)
    assert starter.count("TODO") == 3 and "import flash_attention" not in starter
    flash = define(starter, "flash_attention")  # the cell runs at build time: it must not raise
    o, lse = flash([[1.0]], [[0.0], [1.0]], [[1.0], [3.0]], 1, 1)
    assert len(o) == 1 and len(lse) == 1
    results, failed, crashed = run_checks(flash_attention=flash)
    assert crashed == [] and "not run" not in results  # wrong answers, not exceptions
    assert failed == EX2_CHECKS  # exercise 1's checks pass against the reference meanwhile


def test_exercise_2_reference_solution_passes_every_check_and_agrees_with_the_reference():
    flash = passing_reference_solution(1, "flash_attention")
    q, k, v = ([[math.sin(3 * i + c) for c in range(3)] for i in range(n)] for n in (6, 9, 9))
    for causal in (False, True):
        for bq, bk in ((1, 1), (2, 4), (4, 2), (6, 9), (7, 10)):
            mine, theirs = flash(q, k, v, bq, bk, causal=causal), ref.flash_attention(q, k, v, bq, bk, causal=causal)
            assert mine == theirs


def test_exercise_2_solution_is_the_starter_with_the_todos_filled_in():
    filled = [line for line in code_lines(ex2_with(1, 2, 3)) if "TODO" not in line and not line.lstrip().startswith("#")]
    solution = code_lines(solution_code(1))
    assert filled[: len(solution)] == solution
    assert all("_try" in line for line in filled[len(solution) :])  # the cell's last lines try it once


def test_exercise_2_each_todo_has_checks_of_its_own():
    # TODO 3 alone (divide at the end, guard the empty row): right whenever the max never grows after
    # a row's first visible tile, i.e. with one tile, and for the row that sees no key.
    _, failed, crashed = run_checks(flash_attention=define(ex2_with(3), "flash_attention"))
    assert crashed == []
    assert failed == ["Ragged tiles", "Logsumexp", "Extreme logits", "Softmax scale", "Causal, more keys", "Causal, more queries"]
    # alpha computed but not applied changes nothing.
    _, failed_13, _ = run_checks(flash_attention=define(ex2_with(1, 3), "flash_attention"))
    assert failed_13 == failed
    # Rescaling without the final division: the outputs stay unnormalized, L stays 0.
    _, failed, crashed = run_checks(flash_attention=define(ex2_with(1, 2), "flash_attention"))
    assert crashed == [] and failed == EX2_CHECKS


def test_exercise_2_expected_values_are_those_of_attention_and_the_exact_logsumexp():
    """The literals in the checks come from the full-matrix reference, not from flash_attention itself."""
    q = [[1.0, 0.5], [-0.5, 1.5], [0.0, -1.0], [2.0, 1.0], [-1.0, -1.5]]
    k = [[0.5, 1.0], [1.0, -1.0], [-2.0, 0.5], [0.0, 2.0], [1.5, 0.5], [-1.0, -1.0], [2.0, 0.0]]
    v = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 2.0], [0.5, -0.5], [2.0, 1.0], [0.0, -2.0]]
    assert f"# Ragged tiles: 2 x 3 tiles, neither divides 5 or 7\n{rounded(ref.attention(q, k, v))}\n" in TEXT
    scores = [[sum(a * b for a, b in zip(qi, kj)) / math.sqrt(2) for kj in k] for qi in q]
    assert f"# Logsumexp: L = m + log l, each row's exact logsumexp\n{[round(ref.logsumexp(r), 6) for r in scores]}\n" in TEXT
    causal = ref.attention(q[:2], k[:5], v[:5], causal=True)
    assert f"\n({rounded(causal)}, [1.752755, 2.737758])\n" in TEXT
    extreme = ref.attention([[1.0], [-1.0]], [[-1000.0], [1000.0], [999.0], [1000.0]], [[1.0], [2.0], [3.0], [5.0]], scale=1.0)
    assert f"\n({rounded(extreme)}, [{round(ref.logsumexp([-1000.0, 1000.0, 999.0, 1000.0]), 6)}, 1000.0])\n" in TEXT
    scaled = [[2.0 * sum(a * b for a, b in zip(qi, kj)) for kj in k] for qi in q]  # scale=2.0
    assert (
        f"# Softmax scale: scale=2.0, not the default 1 / sqrt(d)\n({rounded(ref.attention(q, k, v, scale=2.0))}, "
        f"{[round(ref.logsumexp(r), 6) for r in scaled]})\n"
    ) in TEXT


def rounded(o):
    return [[round(x, 6) for x in row] for row in o]


def test_the_tile_picture_follows_the_learners_code():
    (code,) = [code for tags, code in code_cells(TEXT) if "auto-rerun" in tags]
    assert "FlashTiles(flash_attention," in code
    for source, wrong in ((solution_code(1), []), (exercise_code(1), [0, 1, 2, 3, 4])):
        namespace: dict = {"flash_attention": define(source, "flash_attention")}
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code.rsplit("\n", 2)[0] + "\npicture = " + code.rstrip().rsplit("\n", 1)[1], "<picture>", "exec"), namespace)
        picture = namespace["picture"]
        assert [i for i, ok in enumerate(picture.rows_ok) if not ok] == wrong
        # 5 x 7 scores in 2 x 3 tiles, causal with N_k - N_q = 2: query blocks 0 and 1 never reach key 6.
        assert picture.ran == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]
        assert picture.skipped == [(0, 2), (1, 2)]
        # The text below the picture names the same dashed tiles, and the one query block that reaches key 6.
        assert "tiles (0, 2) and (1, 2) are dashed. Only query block 2\n(query 4) computes it." in TEXT
        assert [a for a, b in picture.ran if b == 2] == [2]
        svg = picture._repr_svg_()
        assert svg.count("\u2717 wrong") == len(wrong) and svg.count("\u2713 right") == 5 - len(wrong)


def test_a_reversed_alpha_is_named_by_the_first_failing_checks_hints():
    """alpha = exp(m_new - m[t]): every output NaN, and the first failing check's hints say why."""
    reversed_alpha = ex2_with(1, 2, 3).replace(EX2_SOLVED_1, "                alpha = math.exp(m_new - m[t])\n")
    flash = define(reversed_alpha, "flash_attention")
    o, _ = flash([[1.0]], [[0.0], [1.0]], [[1.0], [3.0]], 1, 1)
    assert str(o[0][0]) == "nan"
    _, failed, _ = run_checks(flash_attention=flash)
    assert failed[0] == "One tile"
    hints = re.search(r"```\{check-hints\} One tile\n(.*?)```", TEXT, re.S).group(1)
    assert "m_new - m[t]" in hints and "NaN" in hints and "α > 1" in hints


def test_exercise_2_dropdown_is_the_whole_cell():
    assert code_lines(ex2_with(1, 2, 3)) == [line for line in code_lines(solution_code(1))]


# ------------------------------------------------------------------ exercise 3: flash_attention_backward

EX3_TODOS = 7


def ex3_solved_lines() -> list[str]:
    """The reference solution's lines, less the ones that the starter's TODO lines replace."""
    return code_lines(solution_code(2))


def test_exercise_3_starter_runs_and_fails_exactly_its_own_checks():
    starter = exercise_code(2)
    assert starter.count("TODO") == EX3_TODOS and "import flash_attention_backward" not in starter
    backward = define(starter, "flash_attention_backward")  # the cell runs at build time: it must not raise
    results, failed, crashed = run_checks(flash_attention_backward=backward)
    assert crashed == [] and "not run" not in results  # wrong answers (every gradient 0), not exceptions
    assert failed == EX3_CHECKS  # exercises 1 and 2 pass against the reference meanwhile


def test_exercise_3_reference_solution_passes_every_check_and_agrees_with_the_reference():
    backward = passing_reference_solution(2, "flash_attention_backward")
    q, k, v = ([[math.sin(3 * i + c) for c in range(3)] for i in range(n)] for n in (6, 9, 9))
    d_o = [[math.cos(i + 2 * c) for c in range(3)] for i in range(6)]
    for causal in (False, True):
        for bq, bk in ((1, 1), (2, 4), (4, 2), (6, 9), (7, 10)):
            o, lse = ref.flash_attention(q, k, v, bq, bk, causal=causal, scale=0.6)
            mine = backward(q, k, v, o, lse, d_o, bq, bk, causal=causal, scale=0.6)
            theirs = ref.flash_attention_backward(q, k, v, o, lse, d_o, bq, bk, causal=causal, scale=0.6)
            assert close(mine, theirs)  # sums taken tile by tile, in another order: equal to rounding
    # A query that sees no key (causal, N_q > N_k): L = -inf, and no gradient from it.
    o, lse = ref.flash_attention(q, k[:4], v[:4], 2, 3, causal=True)
    assert lse[:2] == [-math.inf, -math.inf]
    mine = backward(q, k[:4], v[:4], o, lse, d_o, 2, 3, causal=True)
    assert mine[0][:2] == [[0.0] * 3] * 2 and close(
        mine, ref.flash_attention_backward(q, k[:4], v[:4], o, lse, d_o, 2, 3, causal=True)
    )


def close(mine, theirs) -> bool:
    """Same shapes, and every entry within 1e-12 (the gradients here are of order 1)."""
    shapes = [[len(row) for row in x] for x in mine] == [[len(row) for row in x] for x in theirs]
    return shapes and all(abs(a - b) <= 1e-12 for x, y in zip(mine, theirs) for ra, rb in zip(x, y) for a, b in zip(ra, rb))


def test_exercise_3_solution_is_the_starter_with_the_todos_filled_in():
    """Outside its TODOs (a comment and the placeholder line under it), the starter is the solution, line for line."""
    starter = code_lines(exercise_code(2))
    solution = ex3_solved_lines()
    placeholders = [n for n, line in enumerate(starter) if "0.0" in line and line not in solution]
    assert len(placeholders) == EX3_TODOS  # one placeholder line per TODO, in place of one line of the solution
    assert len(starter) == len(solution)
    assert [line for n, line in enumerate(starter) if n not in placeholders] == [
        line for n, line in enumerate(solution) if n not in placeholders
    ]


def test_exercise_3_d_from_p_is_as_right_as_d_from_do_and_o():
    """D_i = sum_j P_ij dP_ij (the softmax's backward, a whole row of P) equals rowsum(dO ∘ O): not a mistake."""
    line = "    big_d = [sum(a * b for a, b in zip(d_o[i], o[i])) for i in range(n_q)]  # (N_q,) D_i = rowsum(dO ∘ O)\n"
    from_p = (
        "    big_d = [sum(math.exp(attention_score(scale, q[i], k[j], i, j) - lse[i]) * sum(a * b for a, b in zip(d_o[i], v[j]))\n"
        "                 for j in range(n_k) if not causal or j <= i + offset) if lse[i] != -math.inf else 0.0\n"
        "             for i in range(n_q)]  # (N_q,) D_i = sum_j P_ij dP_ij\n"
    )
    code = solution_code(2)
    assert code.count(line) == 1
    _, failed, crashed = run_checks(flash_attention_backward=define(code.replace(line, from_p), "flash_attention_backward"))
    assert (failed, crashed) == ([], [])


def test_exercise_3_checks_are_cheap():
    """All of exercise 3's checks in well under a second in CPython (Pyodide runs them several times slower)."""
    import time

    blocks = doctest_blocks(TEXT)
    started = time.perf_counter()
    results = run_blocks(blocks[-1:], {"flash_attention_backward": ref.flash_attention_backward})
    elapsed = time.perf_counter() - started
    assert [r.check.name for r in results if not r.check.setup] == EX3_CHECKS
    assert elapsed < 0.5, elapsed
