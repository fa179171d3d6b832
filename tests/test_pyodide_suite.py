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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs"))
from conftest import front_matter  # noqa: E402  (docs/conftest.py)

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PYODIDE = ROOT / "node_modules" / "pyodide"


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
    job.write_text(json.dumps({"pages": pages}))
    proc = subprocess.run([node, str(ROOT / "tests" / "pyodide_suite.mjs"), str(PYODIDE), str(wheel), str(job)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_it_runs_in_pyodide(report):
    assert report["platform"] == "emscripten" and report["python"].startswith("3.12")


def test_every_lab_page_passes_its_checks_in_pyodide(report):
    assert set(report["pages"]) == {"micrograd.md", "online_softmax.md", "paged_attention.md"}
    for page, results in report["pages"].items():
        assert len(results) >= 10, page
        failing = [f"{r['name']}: expected {r['expected']!r}, got {r['got']!r} {r['reason']}"
                   for r in results if r["status"] != "passed"]
        assert failing == [], f"{page} in Pyodide: {failing}"


def test_every_labs_doctest_passes_in_pyodide(report):
    modules = report["modules"]
    assert {"labs.autograd", "labs.attention", "labs.paged_attention", "labs.checks"} <= set(modules)
    assert sum(m["attempted"] for m in modules.values()) > 100
    failing = {name: m["failures"] for name, m in modules.items() if m["failures"]}
    assert failing == {}, failing
