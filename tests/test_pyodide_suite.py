"""The page checks and labs' doctests, run inside Pyodide 0.26.2 (in Node), not only in CPython.

A difference between the two (Pyodide's far smaller stack, float formatting,
a module missing from Pyodide's standard library) fails here with the
check's or the doctest's name. One Node process runs the whole suite.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pages import LABS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs"))
from conftest import front_matter  # noqa: E402  (docs/conftest.py)

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PYODIDE = ROOT / "node_modules" / "pyodide"
CELL_RUNNER = ROOT / "src" / "pyodide_cells" / "python"
# Cells the page's runner (runner.py) runs in Pyodide, in this order and one namespace: what
# depends on Pyodide itself, which CPython (tests/test_cell_runner.py) cannot show.
RUNNER_CELLS = {
    "kept": "kept = 'still here'",
    # Pyodide leaves sqlite3 out of its standard library: the import says why, not only its name.
    "missing_stdlib": "import sqlite3",
    # A learner who raises the limit: Pyodide's stack (far smaller than CPython's) must still
    # end in a RecursionError, not a crash that takes the namespace with it.
    "deep_recursion": "import sys\nsys.setrecursionlimit(100_000)\ndef f(n):\n    return f(n + 1)\nf(0)",
    "after": "sys.setrecursionlimit(1000)\nkept",
}


@pytest.fixture(scope="module")
def report(site_dir, tmp_path_factory) -> dict:
    node = shutil.which("node")
    assert node, "Node.js is needed to run the suite in Pyodide"
    (wheel,) = (site_dir / "_static" / "wheels").glob("*.whl")
    pages = []
    for page in sorted(DOCS.glob("*.md")):
        names = (front_matter(page).get("lab") or {}).get("checks_use")
        if names:
            pages.append({"name": page.name, "text": page.read_text(), "names": names})
    job = tmp_path_factory.mktemp("pyodide") / "job.json"
    runner = {
        "source": (CELL_RUNNER / "runner.py").read_text(),
        "limits": (CELL_RUNNER.parent / "limits.json").read_text(),
        "cells": RUNNER_CELLS,
    }
    job.write_text(json.dumps({"pages": pages, "runner": runner}))
    proc = subprocess.run(
        [node, str(ROOT / "tests" / "pyodide_suite.mjs"), str(PYODIDE), str(wheel), str(job)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def it_runs_in_pyodide(report):
    assert report["platform"] == "emscripten" and report["python"].startswith("3.12")


def every_lab_page_passes_its_checks_in_pyodide(report):
    assert set(report["pages"]) == set(LABS)
    for page, results in report["pages"].items():
        assert len(results) >= 10, page
        failing = [
            f"{r['name']}: expected {r['expected']!r}, got {r['got']!r} {r['reason']}" for r in results if r["status"] != "passed"
        ]
        assert failing == [], f"{page} in Pyodide: {failing}"


def every_labs_doctest_passes_in_pyodide(report):
    modules = report["modules"]
    assert {"labs.autograd", "labs.attention", "labs.paged_attention", "labs.checks"} <= set(modules)
    assert sum(m["attempted"] for m in modules.values()) > 100
    failing = {name: m["failures"] for name, m in modules.items() if m["failures"]}
    assert failing == {}, failing


def error_of(run: dict) -> dict:
    (error,) = [payload for kind, payload in run["events"] if kind == "error"]
    return error


def a_standard_library_module_pyodide_lacks_says_why_in_pyodide(report):
    """Moved from the browser (test_sandbox): the note is added by runner.py to Pyodide's own error."""
    run = report["runner"]["missing_stdlib"]
    assert run["status"] == "error"
    error = error_of(run)
    assert error["ename"] == "ModuleNotFoundError" and "sqlite3" in error["evalue"], error
    assert "sqlite3 is in CPython's standard library, but not in this Python" in error["traceback"], error
    assert "Run this code with Python on your computer." in error["traceback"], error


def a_runaway_recursion_under_a_raised_limit_is_a_recursion_error_in_pyodide(report):
    """Moved from the browser (test_sandbox): the error is short, and the namespace survives it."""
    run = report["runner"]["deep_recursion"]
    error = error_of(run)
    assert run["status"] == "error" and error["ename"] == "RecursionError", error
    assert error["traceback"].count("\n") < 200  # runner.py shortens it
    after = report["runner"]["after"]
    assert after["status"] == "ok" and after["events"][-1][1]["data"]["text/plain"] == "'still here'", after


def test_the_labs_and_the_runner_in_pyodide(report):
    """One test for the suite's one run of Pyodide in Node (with pytest-xdist, each worker that ran one
    of several tests started Pyodide again): each part below fails with its own message."""
    it_runs_in_pyodide(report)
    every_lab_page_passes_its_checks_in_pyodide(report)
    every_labs_doctest_passes_in_pyodide(report)
    a_standard_library_module_pyodide_lacks_says_why_in_pyodide(report)
    a_runaway_recursion_under_a_raised_limit_is_a_recursion_error_in_pyodide(report)
