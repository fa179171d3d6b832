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
from collections.abc import Mapping
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


def _expect_str(value: Any, name: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")


def _expect_blocks(blocks: Any) -> None:
    if not isinstance(blocks, (list, tuple)) or not all(isinstance(b, str) for b in blocks):
        raise TypeError(f"blocks must be a list of str (the page's doctest blocks), not {blocks!r:.80}")


def check_name(source: str) -> tuple[str, str]:
    """Split a check's ``# Name: description`` comment; ``("", "")`` if none.

    >>> check_name("round(o.data, 8)  # Forward activation: o = tanh(n)\\n")
    ('Forward activation', 'o = tanh(n)')
    """
    _expect_str(source, "source")
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
    _expect_str(page, "page")
    return FENCE.findall(page)


def parse_block(text: str, block: int = 0) -> list[Check]:
    """The checks of one doctest block (``block``: its index in the page).

    Raises ValueError when doctest cannot parse the block (naming the problem),
    TypeError when ``text`` is not a str or ``block`` not an int, ValueError
    when ``block`` is negative.

    >>> [c.name or "(set-up)" for c in parse_block(">>> x = 2\\n>>> x * 3  # Triple: x times 3\\n6\\n")]
    ['(set-up)', 'Triple']
    """
    _expect_str(text, "text")
    if not isinstance(block, int) or isinstance(block, bool):
        raise TypeError(f"block must be the block's index in the page (an int), not {type(block).__name__}")
    if block < 0:
        raise ValueError(f"block must be the block's index in the page, >= 0, not {block}")
    import doctest

    examples = doctest.DocTestParser().get_examples(text, f"block {block + 1}")
    checks = []
    for example in examples:
        name, description = check_name(example.source)
        expected = example.want
        if example.exc_msg is not None:
            expected = example.want or f"Traceback (most recent call last):\n    ...\n{example.exc_msg}"
        checks.append(
            Check(
                name,
                description,
                example.source.strip(),
                expected.rstrip("\n"),
                setup=not expected,
                block=block,
                line=example.lineno + 1,
            )
        )
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
    _expect_blocks(blocks)
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
                rest = test.examples[test.examples.index(example) + 1 :]
                for later in rest:
                    later.options[doctest.SKIP] = True  # read by DocTestRunner before each example
                    self.stopped[id(later)] = why

    return _Runner


def run_blocks(blocks: list[str], namespace: dict[str, Any]) -> list[Result]:
    """Run doctest ``blocks`` in order against a copy of ``namespace``.

    The blocks share that copy, so names a set-up line defines reach later
    blocks; ``namespace`` itself is not changed. Returns one
    :class:`Result` per example, set-up lines included, in page order.
    Raises ValueError for a block doctest cannot parse, TypeError when
    ``blocks`` is not a list of str or ``namespace`` not a mapping, and lets
    KeyboardInterrupt through (the page's Stop); failing code is a result.

    >>> results = run_blocks([">>> y = x * 3\\n", ">>> y  # Triple: x * 3\\n6\\n>>> y  # Wrong\\n7\\n"], {"x": 2})
    >>> [(r.check.name, r.status, r.got) for r in results]
    [('', 'passed', ''), ('Triple', 'passed', '6'), ('Wrong', 'failed', '6')]
    >>> results = run_blocks([">>> z = 1 / 0\\n>>> z  # Uses z\\n1\\n"], {})
    >>> [(r.status, r.reason) for r in results]  # doctest: +NORMALIZE_WHITESPACE
    [('error', ''), ('not run', 'the set-up line `z = 1 / 0` raised `ZeroDivisionError: division by zero`')]
    """
    _expect_blocks(blocks)
    if not isinstance(namespace, Mapping):
        raise TypeError(f"namespace must be a mapping of names to values (a dict), not {type(namespace).__name__}")
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


# The command line runs the solution in a child process of its own: a solution is
# code, and code can end its process (``os._exit``), loop, or rewrite the
# checker's names in its process. The parent counts only the report the child
# writes once every check ran, so an exit, a crash or a hang is "cannot judge",
# never a pass. This layer is the command line's only: Pyodide has no processes,
# and the page calls :func:`run_blocks` itself.
DEFAULT_TIMEOUT = 60.0  # seconds a solution has to load and run every check of a page
CLI_HELP = """\
Run a lab page's checks (its doctest blocks) against a solution file.

The solution is run as Python code, in a child process, with your user's
permissions: run only files you would run yourself. The checks guide
learners; they are not an anti-cheat (a solution that sets out to patch the
checker can).

Exit status: 0 every check passed, 1 some check failed, 2 the checks could not
judge (the page cannot be read or parsed or has no checks, the solution
cannot be read, raises while loading, exits or crashes before the checks
finished, or runs past --timeout).
"""


class CannotJudge(Exception):
    """The command line cannot judge the solution (exit 2); the message says why."""


def _load(path: str) -> dict[str, Any]:
    import runpy

    return runpy.run_path(path, run_name="__solution__")


def _page_blocks(page: str) -> tuple[list[str], int]:
    """The page's doctest blocks and how many checks they hold; raises CannotJudge."""
    try:
        with open(page, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise CannotJudge(f"cannot read the page {page}: {exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CannotJudge(f"cannot read the page {page}: it is not UTF-8 ({exc})") from None
    front = text[4 : text.find("\n---\n", 4)] if text.startswith("---\n") and "\n---\n" in text[3:] else ""
    if not any(line.startswith("lab:") for line in front.splitlines()):
        # CONTRIBUTING.md's example block once "passed 1 / 1": only a lab page's blocks are checks.
        raise CannotJudge(f'{page} is not a lab page: its front matter has no `lab:` (see CONTRIBUTING.md, "A lab page")')
    blocks = doctest_blocks(text)
    if not blocks:
        raise CannotJudge(f"{page} has no doctest blocks (fenced python blocks starting with >>>)")
    count = 0
    for index, block in enumerate(blocks):
        try:
            count += sum(not check.setup for check in parse_block(block, index))
        except ValueError as exc:
            raise CannotJudge(f"cannot parse doctest block {index + 1} of {page}: {exc}") from None
    if not count:
        raise CannotJudge(f"{page} has no checks: its doctest blocks hold only set-up lines (no expected output)")
    return blocks, count


def _child(blocks_path: str, solution: str, report_path: str) -> int:
    """The child process's side: load ``solution``, run the blocks, write the report.

    The report (JSON) is written, then renamed into place, only after every
    check ran: a process that ends before has none.
    """
    import json
    import os

    # Bound before the solution loads: a solution that rebinds these names in
    # labs.checks does not change what runs here (a deliberate patch of doctest still can).
    run, dumps, replace = run_blocks, json.dumps, os.replace
    with open(blocks_path, encoding="utf-8") as f:
        blocks = json.load(f)
    try:
        namespace = _load(solution)
    except BaseException:  # noqa: BLE001 - the learner's file raised (or exited) while loading: show it
        print(f"{solution} raised while loading:", file=sys.stderr)
        traceback.print_exc()
        report: dict[str, Any] = {"loaded": False}
    else:
        report = {"loaded": True, "results": [r.as_dict() for r in run(blocks, namespace)]}
    with open(report_path + ".part", "w", encoding="utf-8") as f:
        f.write(dumps(report))
    replace(report_path + ".part", report_path)
    return 0


def _run_child(blocks: list[str], solution: str, timeout: float) -> dict[str, Any]:
    """Run ``solution`` against ``blocks`` in a child Python; its report, or CannotJudge."""
    import json
    import os
    import subprocess
    import tempfile

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the labs this process runs
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([here, *filter(None, [env.get("PYTHONPATH")])])
    with tempfile.TemporaryDirectory(prefix="labs-checks-") as folder:
        blocks_path, report_path = os.path.join(folder, "blocks.json"), os.path.join(folder, "report.json")
        with open(blocks_path, "w", encoding="utf-8") as f:
            json.dump(blocks, f)
        code = "import sys\nfrom labs.checks import _child\nsys.exit(_child(*sys.argv[1:]))\n"
        try:
            proc = subprocess.run(
                [sys.executable, "-c", code, blocks_path, solution, report_path], env=env, stdin=subprocess.DEVNULL, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            raise CannotJudge(
                f"{solution} did not finish its checks within {timeout:g} s (--timeout): "
                "a loop that never ends, or a solution too slow to judge"
            ) from None
        try:
            with open(report_path, encoding="utf-8") as f:
                report = json.load(f)
        except (OSError, ValueError):
            report = None
    if not isinstance(report, dict) or not isinstance(report.get("loaded"), bool):
        report = None
    if report is None:
        raise CannotJudge(
            f"{solution} ended (exit status {proc.returncode}) before its checks reported: a solution "
            "that exits (sys.exit, os._exit) or crashes while loading or inside a check is not judged"
        )
    return report


def _arguments(argv: list[str]):
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m labs.checks", description=CLI_HELP, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("page", metavar="PAGE.md", help="a lab page (MyST Markdown, UTF-8)")
    parser.add_argument("solution", metavar="SOLUTION.py", help="the Python file whose names the checks use")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"how long the solution may take to load and run every check (default {DEFAULT_TIMEOUT:g})",
    )
    args = parser.parse_args(argv)
    if not args.timeout > 0 or args.timeout == float("inf"):
        parser.error(f"--timeout must be a positive number of seconds, not {args.timeout}")
    return args


def main(argv: list[str] | None = None) -> int:
    """``python -m labs.checks PAGE.md SOLUTION.py [--timeout SECONDS]``: run a page's checks against a file.

    The solution runs in a child Python process (see ``--help``). Prints one
    line per check, ``PASS name`` or ``FAIL name`` (then what was expected
    and what came); returns 0 when all pass, 1 when any fails, 2 when the
    checks cannot judge: the page cannot be read (or is not UTF-8), a block
    cannot be parsed, the page has no checks, the solution cannot be read,
    raises while loading (its traceback is printed), ends before the checks
    reported, or runs past the timeout. Argument errors exit 2 (argparse).
    """
    import os

    args = _arguments(sys.argv[1:] if argv is None else argv)
    try:
        blocks, count = _page_blocks(args.page)
        if not args.solution.strip():
            raise CannotJudge("cannot read the solution: its path is empty")
        if not os.path.isfile(args.solution):
            raise CannotJudge(
                f"cannot read the solution {args.solution}: "
                + ("it is a folder, not a file" if os.path.isdir(args.solution) else "no such file")
            )
        report = _run_child(blocks, args.solution, args.timeout)
    except CannotJudge as exc:
        print(exc, file=sys.stderr)
        return 2
    if not report["loaded"]:
        return 2  # the child printed the traceback
    expected = [c for i, block in enumerate(blocks) for c in parse_block(block, i)]
    results = report.get("results")
    # A complete report: one result per example of the page, in page order, each with a known status.
    if (
        not isinstance(results, list)
        or len(results) != len(expected)
        or any(
            not isinstance(r, dict) or r.get("source") != c.source or r.get("status") not in ("passed", "failed", "error", "not run")
            for r, c in zip(results, expected)
        )
    ):
        print(f"{args.solution}: the child's report does not hold one result per check of {args.page}; not judged", file=sys.stderr)
        return 2
    failed = 0
    for check, r in zip(expected, results):
        if check.setup and r["status"] == "passed":
            continue
        name = check.name or f"set-up line `{check.source}`"
        if r["status"] == "passed":
            print(f"PASS {name}")
            continue
        failed += 1
        print(f"FAIL {name}")
        if r["status"] == "not run":
            print(f"     not run: {r.get('reason', '')}")
        else:
            print(f"     {check.source}")
            print(f"     expected: {check.expected or '(nothing)'}")
            print(f"     got:      {r.get('got') or '(nothing)'}")
    passed = sum(r["status"] == "passed" for c, r in zip(expected, results) if not c.setup)
    print(f"{passed} / {count} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
