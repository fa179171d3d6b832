"""The cell runner (src/pyodide_cells/python/runner.py) in CPython.

The same file runs in Pyodide's worker; here it is loaded by path and driven
through its ``emit`` callback, exactly as worker.js drives it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

RUNNER = Path(__file__).resolve().parent.parent / "src" / "pyodide_cells" / "python" / "runner.py"


@pytest.fixture(scope="module")
def runner_module():
    spec = importlib.util.spec_from_file_location("pyodide_cells_runner", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def run(runner_module):
    """Return run(code) -> (status, [(kind, payload)]) on one shared runner."""
    events: list[tuple[str, dict]] = []
    runner = runner_module.CellRunner(lambda kind, payload: events.append((kind, json.loads(payload))))

    def _run(code: str):
        events.clear()
        status = runner.run(code)
        return status, list(events)

    _run.runner = runner
    return _run


def stdout_of(events) -> str:
    return "".join(p["text"] for k, p in events if k == "stream" and p["name"] == "stdout")


def test_last_expression_is_displayed_and_bound_to_underscore(run):
    status, events = run("a = 6\na * 7")
    assert status == {"status": "ok", "execution_count": 1}
    assert events == [("result", {"data": {"text/plain": "42"}, "execution_count": 1})]
    status, events = run("_ + 1")
    assert events[0][1]["data"]["text/plain"] == "43"


def test_none_and_statements_show_nothing(run):
    assert run("x = 1")[1] == []
    assert run("None")[1] == []
    assert run("print")[1][0][1]["data"]["text/plain"] == "<built-in function print>"


def test_cells_share_one_namespace(run):
    run("def f(n):\n    return n * 2")
    assert run("f(21)")[1][0][1]["data"]["text/plain"] == "42"


def test_stdout_and_stderr_stream_in_order(run):
    _, events = run("import sys\nprint('a')\nprint('b', file=sys.stderr)\nprint('c', end='')")
    assert [(k, p["name"], p["text"]) for k, p in events] == [
        ("stream", "stdout", "a"),
        ("stream", "stdout", "\n"),
        ("stream", "stderr", "b"),
        ("stream", "stderr", "\n"),
        ("stream", "stdout", "c"),
    ]


def test_rich_reprs_are_offered_with_plain_text(run):
    code = (
        "class Box:\n"
        "    def _repr_html_(self): return '<b>box</b>'\n"
        "    def _repr_svg_(self): return '<svg></svg>'\n"
        "    def __repr__(self): return 'Box()'\n"
        "Box()"
    )
    data = run(code)[1][0][1]["data"]
    assert data == {"text/html": "<b>box</b>", "image/svg+xml": "<svg></svg>", "text/plain": "Box()"}
    # Mime order: what the page prefers first.
    assert list(data) == ["text/html", "image/svg+xml", "text/plain"]


def test_a_broken_repr_method_falls_back_to_repr(run):
    data = run("class B:\n    def _repr_html_(self): raise ValueError\nB()")[1][0][1]["data"]
    assert list(data) == ["text/plain"] and data["text/plain"].startswith("<__main__.B object")


def test_a_class_is_not_asked_for_its_rich_repr(run):
    data = run("class C:\n    def _repr_html_(self): return 'x'\nC")[1][0][1]["data"]
    assert data == {"text/plain": "<class '__main__.C'>"}


def test_traceback_names_the_cell_and_line_and_hides_the_runner(run):
    status, events = run("x = 1\ny = 2\n1 / 0")
    assert status["status"] == "error"
    ((kind, err),) = events
    assert kind == "error" and err["ename"] == "ZeroDivisionError"
    assert 'File "<cell 1>", line 3' in err["traceback"]
    assert "1 / 0" in err["traceback"]
    assert "runner.py" not in err["traceback"]


def test_traceback_through_functions_of_earlier_cells(run):
    run("def g():\n    return undefined_name")
    _, events = run("g()")
    tb = events[0][1]["traceback"]
    assert 'File "<cell 2>", line 1' in tb and 'File "<cell 1>", line 2, in g' in tb
    assert "NameError: name 'undefined_name' is not defined" in tb


def test_syntax_error_shows_the_line(run):
    status, events = run("x = 1\nif x\n    pass")
    assert status["status"] == "error"
    err = events[0][1]
    assert err["ename"] == "SyntaxError"
    assert 'File "<cell 1>", line 2' in err["traceback"] and "if x" in err["traceback"]


def test_the_next_run_works_after_an_error(run):
    run("raise RuntimeError('boom')")
    status, events = run("40 + 2")
    assert status["status"] == "ok" and events[0][1]["data"]["text/plain"] == "42"


def test_an_empty_cell_runs_and_shows_nothing(run):
    assert run("") == ({"status": "ok", "execution_count": 1}, [])
    assert run("   \n\n# only a comment\n")[1] == []


def test_input_says_it_is_not_available(run):
    _, events = run("input('name? ')")
    assert events[-1][1]["ename"] == "OSError"
    assert "input() is not available in the page" in events[-1][1]["evalue"]


def test_system_exit_is_reported_not_raised(run):
    status, events = run("raise SystemExit(3)")
    assert status["status"] == "error" and events[0][1]["ename"] == "SystemExit"
    assert events[0][1]["traceback"] == "SystemExit: 3 (the cell ends here; Python and your names stay)\n"


@pytest.mark.parametrize(
    "code", ["import sys\nprint('before')\nsys.exit()\nprint('after')", "print('before')\nexit(0)\nprint('after')"]
)
def test_a_successful_exit_ends_the_cell_without_an_error(run, code):
    """It was an error with a traceback: unittest.main() that passed left its cell red, and the
    checks console then said a cell raised an error."""
    status, events = run(code)
    assert status["status"] == "ok"
    assert [p["text"] for k, p in events if k == "stream"] == [
        "before",
        "\n",
        "SystemExit: 0 (the cell ends here; Python and your names stay)\n",
    ]
    assert run("1 + 1")[1][0][1]["data"]["text/plain"] == "2"


def test_unittest_main_ends_its_cell_as_its_tests_did(run):
    tests = (
        "import unittest\n"
        "class TestArithmetic(unittest.TestCase):\n"
        "    def test_sum(self):\n        self.assertEqual(1 + 1, {})\n"
        "unittest.main(argv=['cell'])\n"
    )
    status, events = run(tests.format(2))
    assert status["status"] == "ok", events
    assert "OK" in "".join(p["text"] for k, p in events if k == "stream")
    status, events = run(tests.format(3))
    # sys.exit(True) before Python 3.12, sys.exit(1) since
    assert status["status"] == "error" and events[-1][1]["traceback"] in {
        f"SystemExit: {code} (the cell ends here; Python and your names stay)\n" for code in ("True", "1")
    }


def test_recursion_error_is_reported_and_the_runner_survives(run):
    status, events = run("def f(n):\n    return f(n + 1)\nf(0)")
    assert status["status"] == "error" and events[0][1]["ename"] == "RecursionError"
    assert events[0][1]["traceback"].count("\n") < 200  # shortened, still readable
    assert run("1 + 1")[1][0][1]["data"]["text/plain"] == "2"


def test_display_shows_each_object(run):
    _, events = run("display(1, 'two')")
    assert [p["data"]["text/plain"] for _, p in events] == ["1", "'two'"]


def test_reset_forgets_names(run):
    run("secret = 1")
    run.runner.reset()
    _, events = run("secret")
    assert events[0][1]["ename"] == "NameError"
    assert run("display")[1][0][1]["data"]["text/plain"].startswith("<bound method CellRunner.display")


def test_doctest_testmod_in_a_cell_tests_the_cells_names(run):
    """It tested the worker's own __main__ (here pytest's): "attempted=0", the learner's examples unseen."""
    run('def double(x):\n    """\n    >>> double(2)\n    4\n    >>> double(3)\n    7\n    """\n    return 2 * x')
    status, events = run("import doctest\ndoctest.testmod()")
    assert events[-1][1]["data"]["text/plain"] == "TestResults(failed=1, attempted=2)"
    assert "Expected:\n    7\nGot:\n    6" in "".join(p["text"] for k, p in events if k == "stream")


def test_unittest_main_in_a_cell_finds_the_cells_tests(run):
    code = (
        "import unittest\n"
        "class TestDouble(unittest.TestCase):\n"
        "    def test_two(self):\n        self.assertEqual(2 * 2, 4)\n"
        "    def test_three(self):\n        self.assertEqual(2 * 3, 6)\n"
        "unittest.main(argv=['cell'], exit=False).result.testsRun"
    )
    status, events = run(code)
    assert status["status"] == "ok" and events[-1][1]["data"]["text/plain"] == "2"


def test_a_class_defined_in_a_cell_pickles(run):
    status, events = run("import pickle\nclass Point:\n    x = 3\ntype(pickle.loads(pickle.dumps(Point()))).__name__")
    assert status["status"] == "ok", events
    assert events[-1][1]["data"]["text/plain"] == "'Point'"


def test_the_cells_are_main_only_while_they_run(run):
    before = sys.modules.get("__main__")
    status, events = run("import sys\nsys.modules['__main__'].__dict__ is globals()")
    assert events[-1][1]["data"]["text/plain"] == "True"
    assert sys.modules.get("__main__") is before
    run.runner.reset()
    assert run("__name__")[1][0][1]["data"]["text/plain"] == "'__main__'"
    # As a script's __main__ has them (python -c): what `import __main__` is asked for.
    _, events = run("import __main__, builtins\n(__main__.__spec__, __main__.__package__, __builtins__ is builtins)")
    assert events[0][1]["data"]["text/plain"] == "(None, None, True)"


def test_stdout_is_restored_after_a_cell(run, capsys):
    run("print('inside')")
    print("outside")
    assert capsys.readouterr().out == "outside\n"


# ------------------------------------------------------------------ checks ---

SETUP = ">>> y = x * 3\n"
CHECKS = ">>> y  # Triple: x * 3\n6\n>>> 1 / 0  # Division\n1.0\n>>> y + 1  # Wrong on purpose: expects 8\n8\n"


def test_checks_share_one_copy_of_the_namespace(run):
    run("x = 2")
    records = json.loads(run.runner.check(json.dumps([SETUP, CHECKS])))["results"]
    assert [(r["name"], r["status"], r["setup"]) for r in records] == [
        ("", "passed", True),
        ("Triple", "passed", False),
        ("Division", "error", False),
        ("Wrong on purpose", "failed", False),
    ]
    assert records[1]["description"] == "x * 3" and records[1]["expected"] == "6"
    assert records[2]["got"] == "ZeroDivisionError: division by zero"
    assert records[3]["expected"] == "8" and records[3]["got"] == "7"
    assert "y" not in run.runner.namespace  # the learner's namespace is untouched


def test_checks_run_against_the_cells_namespace(run):
    run("x = 5")
    answer = json.loads(run.runner.check(json.dumps([SETUP, ">>> y  # Triple\n15\n"]), json.dumps(["x", "z"])))
    assert answer["status"] == "ok"
    assert [r["status"] for r in answer["results"]] == ["passed", "passed"]
    assert answer["warnings"] == ["z is not defined: run the exercise cell first."]
    assert "y" not in run.runner.namespace


def test_stop_during_the_checks_reports_them_interrupted(run):
    """Stop while the checks run (a learner's endless backward()): the answer says so, with no results."""
    run("def endless():\n    raise KeyboardInterrupt  # what Stop makes Python raise, at some bytecode")
    answer = json.loads(run.runner.check(json.dumps([">>> endless()  # Never ends\n1\n"])))
    assert answer == {"status": "interrupted", "results": [], "warnings": []}


def test_checks_that_cannot_import_doctest_say_why_and_record_nothing(run, monkeypatch):
    """In the page, doctest comes with the rest of the standard library (worker_boot.StdlibRest),
    which a host may lack: the check's run is an error that names the import, not a crash."""
    monkeypatch.setitem(sys.modules, "doctest", None)  # `import doctest` raises ImportError
    events = []
    run.runner.emit = lambda kind, payload: events.append((kind, json.loads(payload)))
    answer = json.loads(run.runner.check(json.dumps([">>> 1  # One\n1\n"])))
    assert answer == {"status": "error", "results": [], "warnings": []}
    ((kind, error),) = events
    assert kind == "error" and error["ename"] == "ModuleNotFoundError" and "doctest" in error["evalue"]
    # A learner's own ImportError is a record, not the run's error.
    monkeypatch.delitem(sys.modules, "doctest")
    records = json.loads(run.runner.check(json.dumps([">>> import no_such_module  # Imports\n"])))["results"]
    assert [(r["status"], r["got"].split(":")[0]) for r in records] == [("error", "ModuleNotFoundError")]


def test_a_traceback_stops_at_the_workers_own_python(run):
    """Frames of the worker's boot code ("<exec>": worker_boot's finder, which fetches the rest of
    the standard library) are not the learner's: the traceback ends at their line."""
    run("fetch = eval(compile('lambda: 1 / 0', '<exec>', 'eval'))")
    status, events = run("x = 1\nfetch()")
    assert status["status"] == "error"
    (error,) = [p for k, p in events if k == "error"]
    text = error["traceback"]
    assert '<cell 2>", line 2' in text and "<exec>" not in text
    assert text.rstrip().endswith("ZeroDivisionError: division by zero")


def test_a_stopped_cell_is_interrupted_not_failed(run):
    status, events = run("x = 1\nraise KeyboardInterrupt")
    assert status["status"] == "interrupted"
    assert events[-1][1]["ename"] == "KeyboardInterrupt"
    assert run("x")[0]["status"] == "ok"


def test_the_limits_come_from_the_file_the_page_reads(runner_module):
    from pathlib import Path

    page_limits = json.loads((Path(runner_module.__file__).parent.parent / "limits.json").read_text())
    runner = runner_module.CellRunner(lambda kind, payload: None)
    assert (runner.max_plain_chars, runner.max_rich_chars) == (page_limits["outputChars"], page_limits["richCharsPerOutput"])
    small = runner_module.CellRunner(lambda kind, payload: None, json.dumps({**page_limits, "outputChars": 5}))
    assert small.max_plain_chars == 5


def test_a_failing_setup_line_stops_its_block_and_says_why(run):
    """A later check was compared against a value an earlier block left behind."""
    blocks = [">>> z = 1\n", ">>> z = undefined\n>>> z  # Uses z\n1\n", ">>> 2  # Next block runs\n2\n"]
    records = json.loads(run.runner.check(json.dumps(blocks)))["results"]
    assert [(r["status"], r["setup"]) for r in records] == [("passed", True), ("error", True), ("not run", False), ("passed", False)]
    assert records[1]["got"] == "NameError: name 'undefined' is not defined"
    assert records[2]["reason"] == "the set-up line `z = undefined` raised `NameError: name 'undefined' is not defined`"


def test_the_runner_does_not_import_doctest_until_checks_run():
    """Start-up cost in the page: doctest (and pdb, difflib...) loads on first Check."""
    import subprocess
    import sys

    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('r', {str(RUNNER)!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "import labs, labs.checks\n"
        "r = m.CellRunner(lambda k, p: None); r.run('x = 1')\n"
        "print('doctest' in sys.modules)\n"
        "r.check('[\">>> 1\\\\n1\\\\n\"]')\n"
        "print('doctest' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(RUNNER.parents[2])},
    ).stdout
    assert out.split() == ["False", "True"]


def test_provenance_warns_about_missing_names_and_the_reference(run):
    run("from labs.autograd import Value\ndef online_softmax(logits):\n    return logits")
    warnings = json.loads(run.runner.provenance(["Value", "online_softmax", "translate"]))
    assert warnings == [
        "Value is the reference implementation from labs.autograd, not your code: these checks are checking the reference.",
        "translate is not defined: run the exercise cell first.",
    ]


def test_a_repr_longer_than_the_pages_limit_is_cut_with_a_note(runner_module):
    text = runner_module.mime_bundle("b" * 300_000)["text/plain"]
    shown, note = text.split("\n")
    assert shown == "'" + "b" * 199_999  # the repr's quote, then the first 199,999 b's
    assert note == "… output cut: 100,002 more characters not shown"  # 300,002 with both quotes
    assert runner_module.mime_bundle("b" * 10)["text/plain"] == "'" + "b" * 10 + "'"


def test_rich_output_over_the_pages_limit_shows_its_text_form_with_a_note(runner_module):
    class Huge:
        def _repr_html_(self):
            return "<b>x</b>" * 200_000  # 1.6 M characters of markup

        def __repr__(self):
            return "Huge()"

    bundle = runner_module.mime_bundle(Huge())
    assert list(bundle) == ["text/plain"]
    assert bundle["text/plain"] == ("Huge()\n… text/html output of 1,600,000 characters not shown: over the page's limit of 1,000,000")
    small = type("Small", (), {"_repr_html_": lambda self: "<b>ok</b>"})()
    assert runner_module.mime_bundle(small)["text/html"] == "<b>ok</b>"


def test_print_with_flush_asks_the_page_to_show_it_now(run):
    """print(..., flush=True) did nothing: the page showed the line only with the next write."""
    _, events = run("print('step 0', flush=True)\nprint('no flush')")
    assert [k for k, _ in events] == ["stream", "stream", "flush", "stream", "stream"]


def test_a_standard_library_module_that_is_missing_says_so(run, monkeypatch):
    # Pyodide leaves sqlite3 out of the browser; in CPython, None in sys.modules makes it missing.
    monkeypatch.setitem(sys.modules, "sqlite3", None)
    status, events = run("x = 1\nimport sqlite3")
    assert status["status"] == "error"
    ((kind, err),) = events
    assert err["ename"] == "ModuleNotFoundError"
    assert 'File "<cell 1>", line 2' in err["traceback"]
    assert (
        err["traceback"]
        .rstrip()
        .endswith(
            "sqlite3 is in CPython's standard library, but not in this Python: the Python in the page "
            "(Pyodide) leaves it out. Run this code with Python on your computer."
        )
    )


def test_a_module_that_is_not_in_the_standard_library_gets_no_note(run):
    _, events = run("import numpy_is_not_here")
    assert events[0][1]["traceback"].rstrip().endswith("No module named 'numpy_is_not_here'")


def test_a_huge_last_value_is_cut_like_printed_output(run):
    """Moved from the browser (test_sandbox): the last expression's repr had no limit, and
    'b' * 40_000_000 froze the page for 14 s."""
    status, events = run("'b' * 1_000_000")
    ((kind, result),) = events
    assert status["status"] == "ok" and kind == "result"
    text = result["data"]["text/plain"]
    assert text.startswith("'" + "b" * 1000) and len(text) < 200_100
    assert text.endswith("\n… output cut: 800,002 more characters not shown")


def test_doctest_testmod_and_unittest_main_in_one_cell_test_what_the_cells_defined(run):
    """Moved from the browser (test_sandbox): both tested the worker's own __main__
    ("TestResults(failed=0, attempted=0)", "Ran 0 tests")."""
    code = "\n".join(
        [
            "import doctest, unittest",
            "def double(x):",
            '    """',
            "    >>> double(21)",
            "    42",
            '    """',
            "    return 2 * x",
            "class TestDouble(unittest.TestCase):",
            "    def test_double(self):",
            "        self.assertEqual(double(2), 4)",
            "unittest.main(argv=['cell'], exit=False)",
            "doctest.testmod()",
        ]
    )
    status, events = run(code)
    assert status["status"] == "ok", events
    streams = "".join(p["text"] for k, p in events if k == "stream")
    assert "Ran 1 test in" in streams, streams
    assert events[-1] == ("result", {"data": {"text/plain": "TestResults(failed=0, attempted=1)"}, "execution_count": 1})


def completions(runner, code, cursor=None):
    """The runner's answer to Ctrl+Space at ``cursor`` (the end of ``code`` when None): (from, labels)."""
    answer = json.loads(runner.complete(code, len(code) if cursor is None else cursor))
    return answer["from"], [o["label"] for o in answer["options"]], {o["label"]: o["type"] for o in answer["options"]}


def test_completion_offers_the_names_earlier_runs_defined_and_the_builtins(run):
    run(
        "class Value:\n    def __init__(self, data):\n        self.data = data\n        self.grad = 0.0\n"
        "    def backward(self):\n        pass\nvalues = [1]"
    )
    start, labels, kinds = completions(run.runner, "x = Val")
    assert start == 4 and labels == ["Value", "ValueError"]
    assert kinds == {"Value": "class", "ValueError": "class"}
    assert completions(run.runner, "val")[1] == ["values"]
    assert completions(run.runner, "whi")[2] == {"while": "keyword"}


def test_completion_offers_an_objects_attributes_and_a_modules_contents(run):
    run("import math\nclass V:\n    def __init__(self):\n        self.grad = 0.0\n    def backward(self):\n        pass\nv = V()")
    start, labels, kinds = completions(run.runner, "v.gr")
    assert start == 2 and labels == ["grad"] and kinds["grad"] == "variable"
    assert completions(run.runner, "v.")[1:] == (["backward", "grad"], {"backward": "function", "grad": "variable"})
    # no _private names until "_" is typed
    assert "__init__" in completions(run.runner, "v.__")[1]
    start, labels, kinds = completions(run.runner, "y = math.sq + 1", cursor=len("y = math.sq"))
    assert start == len("y = math.") and labels == ["sqrt"] and kinds["sqrt"] == "function"
    assert completions(run.runner, "ma")[2].get("math") == "namespace"


def test_completion_evaluates_no_expression_and_no_property_and_prints_nothing(run):
    status, events = run(
        "class P:\n    @property\n    def boom(self):\n        print('ran'); raise RuntimeError\n"
        "    def __getattr__(self, name):\n        print('looked up', name)\np = P()"
    )
    assert status["status"] == "ok"
    run.runner.emit = lambda kind, payload: pytest.fail(f"completion emitted {kind}: {payload}")
    assert completions(run.runner, "p.bo")[1:] == (["boom"], {"boom": "variable"})  # named, not read
    assert completions(run.runner, "(p).bo")[1] == []  # an expression: not evaluated
    assert completions(run.runner, "x = 3.1")[1] == [] and completions(run.runner, "'abc'.up")[1] == []
    assert completions(run.runner, "nothing_here.x")[1] == []
    with pytest.raises(ValueError, match="cursor 9 is outside the code"):
        run.runner.complete("abc", 9)
