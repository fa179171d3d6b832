"""labs.checks: the one engine the page, pytest and the command line run the checks with."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from labs.checks import doctest_blocks, parse_block, run_blocks
from tests.pages import DOCS, LABS, all_exercises, check_count, code_cells, front_matter, read_page, reference_solution

ROOT = Path(__file__).resolve().parent.parent


def cli(page: str, solution: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "labs.checks", str(DOCS / page), str(solution)],
        capture_output=True,
        text=True,
        cwd=ROOT / "src",
        env={"PYTHONPATH": str(ROOT / "src")},
    )


def run_cli(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "labs.checks", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT / "src",
        env={"PYTHONPATH": str(ROOT / "src")},
        timeout=timeout,
    )


def solution_file(tmp_path, page, starter=False) -> Path:
    text = read_page(page)
    code = all_exercises(text, solved=not starter)
    path = tmp_path / "main.py"
    path.write_text(code)
    return path


@pytest.mark.parametrize("page", LABS)
def test_the_command_line_passes_the_reference_solution(tmp_path, page):
    checks = check_count(page)
    out = cli(page, solution_file(tmp_path, page))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert len(lines) == checks and all(line.startswith("PASS ") for line in lines)
    assert out.stdout.rstrip().endswith(f"{checks} / {checks} checks passed")


@pytest.mark.parametrize("page", LABS)
def test_the_command_line_fails_the_starter_and_says_what_was_expected(tmp_path, page):
    out = cli(page, solution_file(tmp_path, page, starter=True))
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAIL " in out.stdout and "expected: " in out.stdout and "got: " in out.stdout


def test_the_command_line_says_when_it_cannot_start(tmp_path):
    missing = cli("micrograd.md", tmp_path / "nowhere.py")
    assert missing.returncode == 2 and "cannot read the solution" in missing.stderr
    broken = tmp_path / "broken.py"
    broken.write_text("x = 1\nraise ValueError('half-written')\n")
    raised = cli("micrograd.md", broken)
    assert raised.returncode == 2
    assert "raised while loading" in raised.stderr and "ValueError: half-written" in raised.stderr
    no_page = subprocess.run(
        [sys.executable, "-m", "labs.checks", str(tmp_path / "none.md"), str(broken)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src")},
    )
    assert no_page.returncode == 2 and "cannot read the page" in no_page.stderr


def test_a_failing_set_up_line_stops_its_block_not_the_next():
    """Lab 2 reported "got [-inf, -inf]" for a 6-logit row after the set-up line overflowed."""
    blocks = [">>> r = [1, 2]\n", ">>> r = 1 / 0\n>>> r  # Uses r\n[3]\n", ">>> r  # Next block\n[1, 2]\n"]
    results = run_blocks(blocks, {})
    assert [(r.check.name, r.status) for r in results] == [
        ("", "passed"),
        ("", "error"),
        ("Uses r", "not run"),
        ("Next block", "passed"),
    ]
    assert results[2].reason == "the set-up line `r = 1 / 0` raised `ZeroDivisionError: division by zero`"


def test_the_page_lists_the_checks_the_engine_reads(site_dir):
    """The console draws the checks pages.py took from labs.checks: no second parser in the page."""
    html = (site_dir / "micrograd.html").read_text()
    config = json.loads(html.split("window.PYODIDE_CELLS_CONFIG = ", 1)[1].split(";\n", 1)[0])
    blocks = doctest_blocks(read_page("micrograd.md"))
    expected = [c for i, text in enumerate(config["blocks"]) for c in parse_block(text, i)]
    assert [c["name"] for c in config["checks"]] == [c.name for c in expected]
    assert [c["name"] for c in config["checks"] if not c["setup"]] == [
        c.name for i, text in enumerate(blocks) for c in parse_block(text, i) if not c.setup
    ]
    assert sum(not c["setup"] for c in config["checks"]) == check_count("micrograd.md")


@pytest.mark.parametrize("page", LABS)
def test_the_checks_pass_with_only_the_cells_the_build_says_they_need(page):
    """Check my code runs only the cells the checks need (pyodide_cells.check_cells, the build's
    list), then the checks: the demonstrations (micrograd's training) are not waited for. So every
    page's checks must pass with only those cells run, the exercises solved, in one namespace,
    as in the page; and the demonstrations must be left out (Lab 1's training cells)."""
    import contextlib
    import io

    from pyodide_cells.check_cells import cells_the_checks_need

    text = read_page(page)
    cells = code_cells(text)
    auto = {i for i, (tags, _) in enumerate(cells) if "auto-rerun" in tags}
    needed = cells_the_checks_need(
        [("exercise" in tags, code) for tags, code in cells], doctest_blocks(text), list(front_matter(page)["lab"]["checks_use"]), auto
    )
    namespace: dict = {"__name__": "__main__", "display": lambda *args, **kwargs: None}
    solved = 0
    with contextlib.redirect_stdout(io.StringIO()):
        for i, (tags, code) in enumerate(cells):
            if "exercise" in tags:
                code, solved = reference_solution(text, solved), solved + 1
            if i in needed:
                exec(compile(code, f"<{page} cell {i}>", "exec"), namespace)
    results = run_blocks(doctest_blocks(text), namespace)
    assert [(r.check.name, r.status) for r in results if r.status != "passed"] == []
    assert sum(not r.check.setup for r in results) == check_count(page)
    if page == "micrograd.md":  # the reference engine's training demo is not run for the checks
        training = [i for i, (_, code) in enumerate(cells) if "ref_nn.train(" in code]
        assert training and not set(training) & set(needed)


def test_a_cell_is_needed_for_what_it_binds_and_an_opaque_one_for_everything_above():
    from pyodide_cells.check_cells import cells_the_checks_need

    cells = [
        (False, "import math"),
        (False, "data = slow()"),
        (False, "scale = 2"),
        (True, "def f(x):\n    return math.sqrt(x) * scale"),
    ]
    assert cells_the_checks_need(cells, [">>> f(4.0)  # F\n4.0\n"], ["f"]) == [0, 2, 3]
    assert cells_the_checks_need(cells, [">>> f(data)  # F\n1\n"], ["f"]) == [0, 1, 2, 3]  # the check reads data
    opaque = [*cells[:3], (True, "exec('def f(x): return x')")]
    assert cells_the_checks_need(opaque, [">>> f(1)  # F\n1\n"], ["f"]) == [0, 1, 2, 3]
    unreadable = [*cells[:3], (True, "def f(x):\n    return x +")]  # a half-typed exercise
    assert cells_the_checks_need(unreadable, [">>> f(1)  # F\n1\n"], ["f"]) == [0, 1, 2, 3]
    assert cells_the_checks_need([(False, "x = 1")], [">>> x  # X\n1\n"], ["x"]) == []  # no exercise: all, by the caller


# A page of two checks and one set-up line, small enough to run in a fraction of a second.
LAB = "---\nlab:\n  checks_use: {}\n---\n"  # front matter that makes a page a lab
TINY_PAGE = (
    LAB
    + """# A tiny lab

```python
>>> y = f()
>>> y  # One: f() is 1
1
>>> g()  # Two: g() is 2
2

```
"""
)
TINY_SOLUTION = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


def tiny(tmp_path, solution: str, page: str = TINY_PAGE) -> tuple[Path, Path]:
    (tmp_path / "page.md").write_bytes(page.encode("utf-8") if isinstance(page, str) else page)
    (tmp_path / "solution.py").write_text(solution)
    return tmp_path / "page.md", tmp_path / "solution.py"


def test_the_tiny_page_passes_and_fails_as_the_lab_pages_do(tmp_path):
    ok = run_cli(*tiny(tmp_path, TINY_SOLUTION))
    assert ok.returncode == 0 and ok.stdout.splitlines() == ["PASS One", "PASS Two", "2 / 2 checks passed"], ok.stderr
    wrong = run_cli(*tiny(tmp_path, TINY_SOLUTION.replace("return 2", "return 3")))
    assert wrong.returncode == 1 and wrong.stdout.splitlines()[-1] == "1 / 2 checks passed"


@pytest.mark.parametrize(
    "where, code",
    [
        ("at load", TINY_SOLUTION.replace("return 2", "return 3") + "import os\nos._exit(0)\n"),
        ("inside a check", TINY_SOLUTION.replace("return 2", "__import__('os')._exit(0)")),
        ("a crash inside a check", TINY_SOLUTION.replace("return 2", "__import__('os').abort()")),
    ],
    ids=["at-load", "in-a-check", "crash"],
)
def test_a_solution_that_ends_its_process_is_not_judged(tmp_path, where, code):
    """os._exit(0) gave exit 0 and no output: nothing was checked, and nothing said so."""
    out = run_cli(*tiny(tmp_path, code))
    assert out.returncode == 2, (where, out.stdout, out.stderr)
    assert "ended (exit status" in out.stderr and "before its checks reported" in out.stderr
    assert "checks passed" not in out.stdout


def test_sys_exit_at_load_or_in_a_check_is_not_a_pass(tmp_path):
    at_load = run_cli(*tiny(tmp_path, TINY_SOLUTION + "import sys\nsys.exit(0)\n"))
    assert at_load.returncode == 2 and "raised while loading" in at_load.stderr and "SystemExit: 0" in at_load.stderr
    in_check = run_cli(*tiny(tmp_path, TINY_SOLUTION.replace("return 2", "raise SystemExit(0)")))
    assert in_check.returncode == 1 and "FAIL Two" in in_check.stdout and "got:      SystemExit: 0" in in_check.stdout


def test_a_solution_that_rebinds_the_checker_in_its_process_does_not_pass(tmp_path):
    """A four-line patch of run_blocks (in __main__ then) printed "22 / 22 checks passed" and exited 0."""
    patch = (
        "import __main__, labs.checks as c\n"
        "fake = lambda blocks, ns: [c.Result(k, 'passed') for i, b in enumerate(blocks) for k in c.parse_block(b, i)]\n"
        "__main__.run_blocks = c.run_blocks = fake\n"
    )
    out = run_cli(*tiny(tmp_path, TINY_SOLUTION.replace("return 2", "return 3") + patch))
    assert out.returncode == 1 and "FAIL Two" in out.stdout, out.stdout + out.stderr


def test_a_solution_that_never_ends_times_out(tmp_path):
    out = run_cli(*tiny(tmp_path, TINY_SOLUTION.replace("return 2", "while True:\n        pass")), "--timeout", "1")
    assert out.returncode == 2 and "did not finish its checks within 1 s (--timeout)" in out.stderr, out.stderr
    looping_load = run_cli(*tiny(tmp_path, "while True:\n    pass\n"), "--timeout", "0.5")
    assert looping_load.returncode == 2 and "within 0.5 s" in looping_load.stderr
    assert run_cli(*tiny(tmp_path, TINY_SOLUTION), "--timeout", "0").returncode == 2


@pytest.mark.parametrize(
    "page, message",
    [
        (TINY_PAGE.encode("latin-1") + "# caf\u00e9\n".encode("latin-1"), "it is not UTF-8"),
        (TINY_PAGE.replace(">>> g()", ">>>g()"), "cannot parse doctest block 1 of"),
        (LAB + "```python\n>>> x = 1\n>>> y = 2\n\n```\n", "has no checks: its doctest blocks hold only set-up lines"),
        (LAB + "# no blocks\n", "has no doctest blocks"),
        (TINY_PAGE.removeprefix(LAB), "is not a lab page: its front matter has no `lab:`"),  # CONTRIBUTING.md passed 1 / 1
    ],
    ids=["not-utf8", "cannot-parse", "only-set-up", "no-blocks", "not-a-lab"],
)
def test_a_page_the_checks_cannot_read_exits_2_and_says_why(tmp_path, page, message):
    """A page not UTF-8 or with a block doctest cannot parse exited 1; one with only set-up lines passed "0 / 0"."""
    out = run_cli(*tiny(tmp_path, TINY_SOLUTION, page))
    assert out.returncode == 2 and message in out.stderr, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and "checks passed" not in out.stdout


def test_an_empty_or_folder_solution_path_exits_2_and_says_why(tmp_path):
    """An empty solution path gave an ImportError traceback."""
    page, _ = tiny(tmp_path, TINY_SOLUTION)
    empty = run_cli(page, "")
    assert empty.returncode == 2 and empty.stderr.strip() == "cannot read the solution: its path is empty"
    folder = run_cli(page, tmp_path)
    assert folder.returncode == 2 and "it is a folder, not a file" in folder.stderr and "Traceback" not in folder.stderr


def test_the_help_says_the_solution_runs_as_code_and_the_checks_are_not_an_anti_cheat():
    out = run_cli("--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert "run as Python code, in a child process, with your user's permissions" in text
    assert "they are not an anti-cheat" in text and "--timeout SECONDS" in text


def test_the_in_page_engine_runs_in_process_and_validates_its_arguments():
    """The page calls run_blocks itself (Pyodide has no processes): no child there."""
    assert [r.status for r in run_blocks([">>> f()  # F\n1\n"], {"f": lambda: 1})] == ["passed"]
    with pytest.raises(TypeError, match="blocks"):
        run_blocks(">>> 1\n1\n", {})
    with pytest.raises(TypeError, match="namespace"):
        run_blocks([">>> 1\n1\n"], None)
    with pytest.raises(TypeError, match="text"):
        parse_block(None)
    with pytest.raises(TypeError, match="page"):
        doctest_blocks(b"```python\n>>> 1\n1\n```\n")
