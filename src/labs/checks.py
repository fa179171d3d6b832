"""A lab page's checks: its doctest blocks, read as named checks and run against a namespace.

One engine for every place the checks run: the page's assertion console (the
cell runner calls :func:`run_blocks` inside Pyodide, against the learner's
namespace), pytest in CI (against the reference in ``src/labs``) and the
command line (against a learner's or an instructor's file)::

    python -m labs.checks docs/micrograd.md my_solution.py

A check is a ``>>>`` example with expected output whose first line carries a
``# Name: description`` comment; an example without expected output is
set-up. Examples run with the standard library's :mod:`doctest` (flags
``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``, as in the page), block after block
in one namespace. When a set-up line raises, the rest of its block is not run
(and says why) rather than compared against values an earlier block left
behind.

Standard library only: this module is in the wheel the browser installs.
:mod:`doctest` (which brings pdb, difflib and inspect) is imported on first
use, not with this module: the page imports every labs module while Python
starts, and pays for doctest only when the learner first presses Check.
"""

from __future__ import annotations

import re
import sys
import traceback
from dataclasses import asdict, dataclass
from typing import Any, Literal

__all__ = ["Check", "Result", "doctest_blocks", "parse_block", "run_blocks", "standalone", "main"]

Status = Literal["passed", "failed", "error", "not run"]
# A fenced ```python block of a MyST page whose first line is a prompt.
FENCE = re.compile(r"^```(?:python|pycon)[ \t]*\n(>>>.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Check:
    """One ``>>>`` example of a page.

    ``name`` and ``description`` come from the ``# Name: description``
    comment on its first line ("" for set-up); ``block`` counts the page's
    doctest blocks from 0 and ``line`` the lines of that block from 1.
    """

    name: str
    description: str
    source: str
    expected: str
    setup: bool
    block: int
    line: int


@dataclass(frozen=True)
class Result:
    """What running a :class:`Check` gave.

    ``status``: ``"passed"``; ``"failed"`` (it printed ``got`` instead of
    ``expected``); ``"error"`` (it raised, ``got`` is the exception's last
    line); ``"not run"`` (``reason`` says why: a set-up line above it raised).
    """

    check: Check
    status: Status
    got: str = ""
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The result as plain data (the page receives it as JSON)."""
        return {**asdict(self.check), "status": self.status, "got": self.got, "reason": self.reason}


def check_name(source: str) -> tuple[str, str]:
    """Split a check's ``# Name: description`` comment; ``("", "")`` if none.

    >>> check_name("round(o.data, 8)  # Forward activation: o = tanh(n)\\n")
    ('Forward activation', 'o = tanh(n)')
    """
    first = source.splitlines()[0] if source else ""
    if "#" not in first:
        return "", ""
    name, _, description = first.split("#", 1)[1].strip().partition(":")
    return name.strip(), description.strip()


def doctest_blocks(page: str) -> list[str]:
    """The doctest blocks of a MyST page's text, in page order (each a fenced
    ``python`` block whose first line starts with ``>>>``).

    >>> doctest_blocks("Text\\n```python\\n>>> 1 + 1  # Two\\n2\\n\\n```\\n")
    ['>>> 1 + 1  # Two\\n2\\n\\n']
    """
    return FENCE.findall(page)


def parse_block(text: str, block: int = 0) -> list[Check]:
    """The checks of one doctest block (``block``: its index in the page).

    Raises ValueError when doctest cannot parse the block (naming the problem).

    >>> [c.name or "(set-up)" for c in parse_block(">>> x = 2\\n>>> x * 3  # Triple: x times 3\\n6\\n")]
    ['(set-up)', 'Triple']
    """
    import doctest

    examples = doctest.DocTestParser().get_examples(text, f"block {block + 1}")
    checks = []
    for example in examples:
        name, description = check_name(example.source)
        expected = example.want
        if example.exc_msg is not None:
            expected = example.want or f"Traceback (most recent call last):\n    ...\n{example.exc_msg}"
        checks.append(Check(name, description, example.source.strip(), expected.rstrip("\n"),
                            setup=not expected, block=block, line=example.lineno + 1))
    return checks


def standalone(blocks: list[str]) -> list[tuple[str, str]]:
    """Each check of the page as a doctest of its own, for plain :mod:`doctest`
    (``python -m doctest``, ``pytest --doctest-modules``: no option flags set)
    on a learner's downloaded file: ``[(name, text)]`` in page order.

    A check's text is every set-up line above it in the page, in order, then
    the check: plain doctest gives each test its own copy of the globals, and
    a check uses the names set-up lines made. An example whose expected output
    (or exception) uses ``...`` gets the ``ELLIPSIS`` directive, the one flag of
    the engine's the pages rely on. Names are the checks' (``Check 3`` for one
    without), made unique. The difference that stays: a set-up line that raises
    fails each check after it, where the page marks them "not run".

    >>> [(name, text.splitlines()) for name, text in standalone([">>> x = 2\\n>>> x * 3  # Triple: x times 3\\n6\\n"])]
    [('Triple', ['>>> x = 2', '>>> x * 3  # Triple: x times 3', '6'])]
    """
    import doctest

    setup: list[str] = []
    checks: list[tuple[str, str]] = []
    names: set[str] = set()
    for index, text in enumerate(blocks):
        for example in doctest.DocTestParser().get_examples(text, f"block {index + 1}"):
            lines = example.source.rstrip("\n").split("\n")
            if "..." in example.want and "doctest:" not in lines[0]:
                lines[0] += "  # doctest: +ELLIPSIS"
            source = "\n".join([f">>> {lines[0]}", *(f"... {line}" for line in lines[1:])])
            if not example.want and example.exc_msg is None:
                setup.append(source)
                continue
            name = check_name(example.source)[0] or f"Check {len(checks) + 1}"
            while name in names:
                name += " (again)"
            names.add(name)
            checks.append((name, "\n".join([*setup, source, example.want.rstrip("\n")])))
    return checks


def _runner_class():
    """The doctest runner the checks use (defined on first use, see the module's docstring)."""
    import doctest

    class _Runner(doctest.DocTestRunner):
        """Records each example's outcome; after a set-up line raises, skips the rest of its block."""

        def __init__(self) -> None:
            super().__init__(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            self.outcomes: dict[int, tuple[Status, str]] = {}  # id(example) -> (status, got)
            self.stopped: dict[int, str] = {}  # id(example) -> why it was not run

        def report_start(self, out, test, example) -> None:
            pass

        def report_success(self, out, test, example, got) -> None:
            self.outcomes[id(example)] = ("passed", got)

        def report_failure(self, out, test, example, got) -> None:
            # A set-up line that only printed something still ran: it is not a failure.
            self.outcomes[id(example)] = ("passed" if not example.want and example.exc_msg is None else "failed", got)

        def report_unexpected_exception(self, out, test, example, exc_info) -> None:
            exc = exc_info[1]
            got = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            self.outcomes[id(example)] = ("error", got)
            if not example.want and example.exc_msg is None:
                why = f"the set-up line `{example.source.strip()}` raised `{got}`"
                rest = test.examples[test.examples.index(example) + 1:]
                for later in rest:
                    later.options[doctest.SKIP] = True  # read by DocTestRunner before each example
                    self.stopped[id(later)] = why

    return _Runner


def run_blocks(blocks: list[str], namespace: dict[str, Any]) -> list[Result]:
    """Run doctest ``blocks`` in order against a copy of ``namespace``.

    The blocks share that copy, so names a set-up line defines reach later
    blocks; ``namespace`` itself is not changed. Returns one
    :class:`Result` per example, set-up lines included, in page order.
    Raises ValueError for a block doctest cannot parse, and lets
    KeyboardInterrupt through (the page's Stop); failing code is a result.

    >>> results = run_blocks([">>> y = x * 3\\n", ">>> y  # Triple: x * 3\\n6\\n>>> y  # Wrong\\n7\\n"], {"x": 2})
    >>> [(r.check.name, r.status, r.got) for r in results]
    [('', 'passed', ''), ('Triple', 'passed', '6'), ('Wrong', 'failed', '6')]
    >>> results = run_blocks([">>> z = 1 / 0\\n>>> z  # Uses z\\n1\\n"], {})
    >>> [(r.status, r.reason) for r in results]  # doctest: +NORMALIZE_WHITESPACE
    [('error', ''), ('not run', 'the set-up line `z = 1 / 0` raised `ZeroDivisionError: division by zero`')]
    """
    import doctest

    globs = dict(namespace)
    runner = _runner_class()()
    results: list[Result] = []
    saved_stdin = sys.stdin
    try:
        for index, text in enumerate(blocks):
            test = doctest.DocTestParser().get_doctest(text, globs, f"check block {index + 1}", None, 0)
            test.globs = globs  # DocTest copies its globs; the blocks must share them
            runner.run(test, out=lambda s: None, clear_globs=False)
            for check, example in zip(parse_block(text, index), test.examples):
                if id(example) in runner.stopped:
                    results.append(Result(check, "not run", reason=runner.stopped[id(example)]))
                else:
                    status, got = runner.outcomes[id(example)]
                    results.append(Result(check, status, got.rstrip("\n")))
    finally:
        sys.stdin = saved_stdin
    return results


def _load(path: str) -> dict[str, Any]:
    import runpy

    return runpy.run_path(path, run_name="__solution__")


def main(argv: list[str] | None = None) -> int:
    """``python -m labs.checks PAGE.md SOLUTION.py``: run a page's checks against a file.

    Prints one line per check, ``PASS name`` or ``FAIL name`` (then what was
    expected and what came); returns 0 when all pass, 1 when any fails, 2
    when the page or the file cannot be read or the solution raises while
    loading (its traceback is printed).
    """
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m labs.checks PAGE.md SOLUTION.py", file=sys.stderr)
        return 2
    page, solution = args
    try:
        with open(page, encoding="utf-8") as f:
            blocks = doctest_blocks(f.read())
    except OSError as exc:
        print(f"cannot read the page {page}: {exc}", file=sys.stderr)
        return 2
    if not blocks:
        print(f"{page} has no doctest blocks (fenced python blocks starting with >>>)", file=sys.stderr)
        return 2
    try:
        namespace = _load(solution)
    except OSError as exc:
        print(f"cannot read the solution {solution}: {exc}", file=sys.stderr)
        return 2
    except BaseException:  # noqa: BLE001 - the learner's file raised while loading: show its traceback
        print(f"{solution} raised while loading:", file=sys.stderr)
        traceback.print_exc()
        return 2
    results = [r for r in run_blocks(blocks, namespace) if not r.check.setup or r.status != "passed"]
    failed = 0
    for r in results:
        name = r.check.name or f"set-up line `{r.check.source}`"
        if r.status == "passed":
            print(f"PASS {name}")
            continue
        failed += 1
        print(f"FAIL {name}")
        if r.status == "not run":
            print(f"     not run: {r.reason}")
        else:
            print(f"     {r.check.source}")
            print(f"     expected: {r.check.expected or '(nothing)'}")
            print(f"     got:      {r.got or '(nothing)'}")
    checks = [r for r in results if not r.check.setup]
    print(f"{sum(r.status == 'passed' for r in checks)} / {len(checks)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
