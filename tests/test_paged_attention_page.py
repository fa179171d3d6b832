"""Lab 3's page: its checks pass with the reference and the solution, and fail where the starter's TODOs are.

The page's doctest blocks are the assertion suite the learner runs in the
browser with the standard library's ``doctest``. Here they run the same way
(``ELLIPSIS | NORMALIZE_WHITESPACE``, no pytest ``NUMBER``) against:

- the reference CI binds through the page's ``lab.checks_use`` (docs/conftest.py);
- the reference solution in the page's dropdown;
- the exercise cell's starter code, and the starter with one TODO done at a
  time: each TODO must own exactly its checks, and nothing may crash.
"""

from __future__ import annotations

import ast
import contextlib
import doctest
import io
import re
import sys
from pathlib import Path

import pytest

import labs.paged_attention as pa
from labs.checks import doctest_blocks, run_blocks
from tests.pages import reference_solution

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))
from conftest import checks_use  # noqa: E402  (docs/conftest.py)

PAGE = ROOT / "docs" / "paged_attention.md"
TEXT = PAGE.read_text()
EXERCISE = re.compile(r"^```\{code-cell\} python\n:tags: \[exercise\]\n(.*?)^```$", re.S | re.M)
SOLUTION = re.compile(r"^:::\{dropdown\} Reference solution\n(?::\w[^\n]*\n)*```python\n(.*?)^```$", re.S | re.M)

TRANSLATIONS = [  # the checks the translation TODO owns
    "First block",
    "End of the first block",
    "Second block",
    "End of the second block",
    "Third block",
    "Last token",
    "Partly filled block",
    "Another block size",
]
FAULTS = [  # the checks the page-fault TODO owns
    "Page fault past the end",
    "Page fault below zero",
    "Page fault in the last block",
]
ALL_CHECKS = [  # exercise 1's checks (translate)
    "First block",
    "End of the first block",
    "Second block",
    "End of the second block",
    "Third block",
    "Last token",
    "Page fault past the end",
    "Page fault below zero",
    "Partly filled block",
    "Page fault in the last block",
    "Another block size",
]
HASHES = ["Hash of the block's tokens", "Hash chained over the prefix"]  # exercise 2, the prefix hash TODO
COPIES = [  # the copy-on-write TODO
    "Copy on write",
    "New block for the writer",
    "Old block's reference dropped",
    "No copy for the last owner",
    "No copy when not shared",
    "Each sequence reads its own tokens",
    "Slots after copy-on-write",
]
V1_CACHE = [  # vLLM v1: the cache outlives its request (the given free_sequence and allocate, the learner's cache)
    "Prefix outlives its request",
    "Least recently used evicted first",
    "Recently used prefix survives",
]
CACHE = [  # the prefix cache TODO
    "Prefix cache hit",
    "Hit adds a reference",
    "Partly filled block not cached",
    "Same tokens at another position miss",
    "Shared system prompt",
] + V1_CACHE
SHARING_CHECKS = HASHES + COPIES + CACHE


def only(pattern: re.Pattern) -> str:
    found = pattern.findall(TEXT)
    assert len(found) == 1, f"expected exactly one match of {pattern.pattern!r}, found {len(found)}"
    return found[0]


STARTER, STARTER_2 = EXERCISE.findall(TEXT)
SOLUTION_CODE = reference_solution(TEXT, 0)
SOLUTION_2 = reference_solution(TEXT, 1)


def check_name(example: doctest.Example) -> str:
    """The ``Name`` of the ``# Name: description`` comment on the example's ``>>>`` line."""
    first = example.source.splitlines()[0]
    assert "#" in first, f"a check without a name: {first!r}"
    return first.split("#", 1)[1].split(":", 1)[0].strip()


def run_checks(names: dict, checks=tuple(ALL_CHECKS)) -> tuple[list[str], list[str], int]:
    """Run the page's checks with the page's own engine (labs.checks) against ``names``:
    (failed checks, checks that raised unexpectedly, checks run), among ``checks``
    (default: exercise 1's)."""
    results = [r for r in run_blocks(doctest_blocks(TEXT), names) if not r.check.setup and r.check.name in checks]
    failed = [r.check.name for r in results if r.status != "passed"]
    raised = [r.check.name for r in results if r.status == "error"]
    return failed, raised, sum(r.status != "not run" for r in results)


def define(code: str) -> dict:
    """Run a cell's code as the page would (its output captured); return its ``translate``.

    As in the page, a cell whose demo lines raise (a mistake that lets t = 48
    through) still defines ``translate``, and the checks run against it."""
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            exec(compile(code, "<cell>", "exec"), namespace)
        except Exception:  # noqa: BLE001 - the page shows the error; the definition stays
            if "translate" not in namespace:
                raise
    return {"translate": namespace["translate"]}


def translate_body(code: str) -> tuple[ast.Module, ast.FunctionDef]:
    module = ast.parse(code)
    [function] = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "translate"]
    return module, function


def is_fault_check(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and any(isinstance(n, ast.Raise) for n in ast.walk(node))


def test_the_page_has_two_exercises_and_their_solutions():
    assert STARTER.count("# TODO") == 2 and STARTER_2.count("# TODO") == 3
    assert "from labs.paged_attention import LRUBlockAllocator, OutOfBlocksError" in STARTER_2
    assert "TODO" not in SOLUTION_2 and ">>>" not in SOLUTION_2 + STARTER_2
    assert "from labs.paged_attention import PageFault" in STARTER
    assert "from labs.paged_attention import PageFault" in SOLUTION_CODE
    assert ">>>" not in SOLUTION_CODE and ">>>" not in STARTER
    # The exercise cell is the only definition of the checked name on the page.
    assert TEXT.count("def translate(") == 2  # starter and solution


def test_every_check_is_named_once():
    test = doctest.DocTestParser().get_doctest(TEXT, {}, PAGE.name, str(PAGE), 0)
    names = [check_name(ex) for ex in test.examples if ex.want or ex.exc_msg]
    assert names == ALL_CHECKS + SHARING_CHECKS
    assert sorted(TRANSLATIONS + FAULTS) == sorted(ALL_CHECKS)


def test_checks_agree_with_the_reference_block_table():
    """The values are BlockTable's: what the ``translate`` binding must compute."""

    def translate(block_table, num_tokens, block_size, t):
        return pa.BlockTable.from_blocks(block_table, block_size, num_tokens).translate(t)

    assert run_checks({"translate": translate}) == ([], [], len(ALL_CHECKS))


def test_reference_binding_passes_every_check():
    names = checks_use(PAGE)  # labs.paged_attention:translate, as CI binds it
    assert set(names) == {"translate", "CachingBlockManager", "block_hash"}
    assert run_checks(names) == ([], [], len(ALL_CHECKS))
    assert run_checks(names, SHARING_CHECKS) == ([], [], len(SHARING_CHECKS))


def test_reference_solution_passes_every_check():
    assert run_checks(define(SOLUTION_CODE)) == ([], [], len(ALL_CHECKS))


def test_starter_runs_and_fails_every_check_its_todos_own():
    failed, raised, attempted = run_checks(define(STARTER))  # define() raising would fail here
    assert attempted == len(ALL_CHECKS)
    assert failed == ALL_CHECKS  # the two TODOs together own every check
    assert raised == []  # nothing crashes: the starter returns None


def test_translation_todo_alone_leaves_exactly_the_page_faults_failing():
    """The solution without its bounds check: right slots, but no PageFault."""
    module, function = translate_body(SOLUTION_CODE)
    kept = [n for n in function.body if not is_fault_check(n)]
    assert len(kept) == len(function.body) - 1
    function.body = kept
    failed, raised, _ = run_checks(define(ast.unparse(module)))
    assert failed == FAULTS
    assert raised == []  # a wrong exception where one is expected is a plain failure
    translate = define(ast.unparse(module))["translate"]
    with pytest.raises(IndexError) as info:  # t = 48 reads block_table[3]
        translate([7, 1, 3], 48, 16, 48)
    assert not isinstance(info.value, pa.PageFault)
    # t = -1 and t = 40 return real, wrong slots instead of faulting:
    assert translate([7, 1, 3], 48, 16, -1) == 63 and translate([7, 1, 3], 40, 16, 40) == 56


def test_page_fault_todo_alone_leaves_exactly_the_translations_failing():
    """The starter with the solution's bounds check added: faults right, slots still missing."""
    module, function = translate_body(STARTER)
    _, solved = translate_body(SOLUTION_CODE)
    [check] = [n for n in solved.body if is_fault_check(n)]
    function.body.insert(1, check)  # after the docstring
    failed, raised, _ = run_checks(define(ast.unparse(module)))
    assert failed == TRANSLATIONS
    assert raised == []


@pytest.mark.parametrize("t", [48, -1, 100, -17])
def test_solution_faults_with_the_reference_class(t):
    translate = define(SOLUTION_CODE)["translate"]
    with pytest.raises(pa.PageFault, match=str(t)):
        translate([7, 1, 3], 48, 16, t)


# ----------------------------------------------------------------- exercise 2: sharing blocks


def define_sharing(code: str) -> dict:
    """Run exercise 2's cell as the page would; return the two names its checks take."""
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<cell>", "exec"), namespace)
    return {"CachingBlockManager": namespace["CachingBlockManager"], "block_hash": namespace["block_hash"]}


def definitions(code: str) -> tuple[ast.Module, dict[str, ast.FunctionDef]]:
    """The cell's module and its functions, methods as ``Class.method``."""
    module, found = ast.parse(code), {}
    for node in module.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            found.update({f"{node.name}.{f.name}": f for f in node.body if isinstance(f, ast.FunctionDef)})
    return module, found


def with_starter(name: str) -> str:
    """The reference solution with one of the three TODO bodies put back as the starter has it."""
    module, solved = definitions(SOLUTION_2)
    solved[name].body = definitions(STARTER_2)[1][name].body
    return ast.unparse(module)


def test_the_starter_and_the_solution_give_the_same_manager_apart_from_the_todos():
    """Everything outside the three TODO bodies is the same code in both."""
    _, starter = definitions(STARTER_2)
    _, solved = definitions(SOLUTION_2)
    todo = {"block_hash", "CachingBlockManager.add_sequence", "CachingBlockManager.append_token"}
    assert set(starter) == set(solved)
    for name in set(solved) - todo:
        assert ast.dump(starter[name]) == ast.dump(solved[name]), name


def test_reference_solution_2_passes_every_sharing_check():
    assert run_checks(define_sharing(SOLUTION_2), SHARING_CHECKS) == ([], [], len(SHARING_CHECKS))


def test_starter_2_runs_and_fails_every_sharing_check():
    failed, raised, attempted = run_checks(define_sharing(STARTER_2), SHARING_CHECKS)
    assert attempted == len(SHARING_CHECKS)
    assert failed == SHARING_CHECKS and raised == []


@pytest.mark.parametrize(
    "todo, owns",
    [
        ("CachingBlockManager.append_token", COPIES),
        ("CachingBlockManager.add_sequence", CACHE),
        ("block_hash", HASHES + CACHE),  # the cache keys blocks by the learner's hash
    ],
)
def test_each_todo_left_open_fails_exactly_its_checks(todo, owns):
    failed, raised, _ = run_checks(define_sharing(with_starter(todo)), SHARING_CHECKS)
    assert failed == owns and raised == []


def test_the_reference_manager_agrees_with_the_solution_on_a_longer_run():
    """Forks, appends, prompts and frees at random, in a pool small enough to evict: the labs reference
    (prompt blocks cached only, as in the exercise) and the page's solution hold the same state."""
    import random

    import labs.block_sharing as sharing

    rng = random.Random(0)
    ours = define_sharing(SOLUTION_2)["CachingBlockManager"](40, 4)
    ref = sharing.CachingBlockManager(40, 4, cache_decoded=False)
    system = [7, 7, 8, 8, 9]
    for step in range(300):
        live, action = list(ref.tables), rng.random()
        if not live or action < 0.2:
            prompt = system[: rng.randint(0, 5)] + [rng.randint(0, 3) for _ in range(rng.randint(1, 9))]
            call = ("add_sequence", step, prompt)
        elif action < 0.3:
            call = ("fork", rng.choice(live), step)
        elif action < 0.45:
            call = ("free_sequence", rng.choice(live))
        else:
            call = ("append_token", rng.choice(live), step)
        results = []
        for manager in (ours, ref):
            try:
                results.append(getattr(manager, call[0])(*call[1:]))
            except pa.OutOfBlocksError:
                results.append("out of blocks")
        assert results[0] == results[1], (step, call)
        assert ours.tables == ref.tables and ours.pool == ref.pool, step
        assert sorted(ours.cached.values()) == sorted(ref.cached.values()), step  # keys: the learner's hash
        assert ours.allocator.free_queue == ref.allocator.free_queue, step
    assert ref.evicted  # the run reaches eviction


def test_the_solution_2_dropdown_is_the_whole_cell_with_its_demo():
    """Pasted over the cell, the dropdown prints what the cell prints: the demo lines are in it."""
    starter_demo = STARTER_2[STARTER_2.index("\nm2 = ") :]
    assert SOLUTION_2.endswith(starter_demo)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(SOLUTION_2, "<dropdown>", "exec"), {"__name__": "__main__"})
    assert "b reads [1, 2, 3, 4, 5, 6, 70]" in out.getvalue()


@pytest.mark.parametrize("code", ["STARTER_2", "SOLUTION_2"])
def test_a_failed_add_leaves_nothing_behind_as_in_the_reference(code):
    """The cell's given code undoes a prompt that does not fit, as labs.block_sharing does."""
    import labs.block_sharing as sharing

    ours = define_sharing(globals()[code])["CachingBlockManager"](2, 4)
    with pytest.raises(pa.OutOfBlocksError):
        ours.add_sequence("a", list(range(9)))
    assert (ours.tables, ours.allocator.num_used, ours.cached) == ({}, 0, {})
    if code == "STARTER_2":
        return
    ours = define_sharing(SOLUTION_2)["CachingBlockManager"](5, 4)
    ref = sharing.CachingBlockManager(5, 4)
    failures = 0
    for seq, prompt in enumerate(
        ([1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 1], [9] * 13, [1, 2, 3, 4, 7], [1, 2, 3, 4, 5, 6, 7, 8])
    ):
        results = []
        for manager in (ours, ref):  # the pool of 5 runs out on the second and third prompts
            try:
                results.append(manager.add_sequence(seq, prompt))
            except pa.OutOfBlocksError:
                results.append("out of blocks")
        assert results[0] == results[1], seq
        assert ours.tables == ref.tables and ours.pool == ref.pool
        assert sorted(ours.cached.values()) == sorted(ref.cached.values())
        assert ours.allocator.free_queue == ref.allocator.free_queue  # the same blocks come out next
        assert [ours.allocator.ref_count(b) for b in range(5)] == [ref.allocator.ref_count(b) for b in range(5)]
        failures += results[0] == "out of blocks"
    assert failures == 2


def test_the_solution_1_dropdown_is_the_whole_cell_with_its_demo():
    """Pasted over the cell, exercise 1's dropdown prints the five translations the cell prints."""
    demo = STARTER[STARTER.index("\nfor t in (0, 16") :]
    assert SOLUTION_CODE.endswith(demo)
    assert SOLUTION_CODE.startswith(STARTER[: STARTER.index("    # TODO")])  # the starter's docstring too
