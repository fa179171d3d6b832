"""The learner's downloads, as the page's script makes them from the built page.

For each lab, the ``.py`` and ``.ipynb`` made (by ``js/page/download.js``, in Node)
from the reference solution and from the starter:

- the ``.py`` runs its checks with ``python -m doctest`` on a Python with
  nothing installed (``-I -S``: no site-packages, so no ``labs``), passes
  for the reference and fails for the starter on exactly the checks the
  page's console fails; ``python FILE.py`` and ``pytest --doctest-modules``
  agree;
- the ``.ipynb`` is valid nbformat 4 and runs with ``jupyter nbconvert --execute``,
  its last cell reporting the checks.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest

from labs.checks import doctest_blocks, run_blocks, standalone
from pyodide_cells.downloads import checks_labs_modules
from tests.pages import LAB_NAMES, all_exercises, exercise_code, exercise_count, read_page, reference_solution

ROOT = Path(__file__).resolve().parent.parent
PAGES = LAB_NAMES
# Code that ends the program, at the end of a learner's exercise.
EXITS = {"sys.exit(0)": "import sys\nsys.exit(0)\n", "raise SystemExit": "raise SystemExit\n", "exit()": "exit()\n"}
CONFIG = re.compile(r"window\.PYODIDE_CELLS_CONFIG = (\{.*?\});\n", re.S)
ASSEMBLE = """
import { readFileSync } from "node:fs";
import { downloadFile } from "./src/pyodide_cells/js/page/download.js";
const jobs = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(jobs.map((j) => downloadFile(j.download, j.format, j.exercises, j.url))));
"""


def page_config(site_dir: Path, page: str) -> dict:
    html = (site_dir / f"{page}.html").read_text()
    return json.loads(CONFIG.search(html).group(1))


@pytest.fixture(scope="module")
def files(site_dir, tmp_path_factory) -> dict[tuple[str, str, str], Path]:
    """(page, "reference" | "starter", "py" | "ipynb") -> the downloaded file, in a folder of its own."""
    node = shutil.which("node")
    assert node, "Node.js is needed to assemble the downloads as the page does"
    jobs, keys = [], []
    for page in PAGES:
        text = read_page(f"{page}.md")
        download = page_config(site_dir, page)["download"]
        for which, pick in (("reference", reference_solution), ("starter", exercise_code)):
            codes = [pick(text, n) for n in range(exercise_count(text))]  # every exercise, in page order
            for fmt in ("py", "ipynb"):
                jobs.append({"download": download, "format": fmt, "exercises": codes, "url": f"http://127.0.0.1/{page}.html"})
                keys.append((page, which, fmt))
    # Lab 1's script with code that ends the program after the exercises (EXITS), starter and reference.
    download = page_config(site_dir, "micrograd")["download"]
    text = read_page("micrograd.md")
    for which, pick in (("starter", exercise_code), ("reference", reference_solution)):
        for how, ending in EXITS.items():
            codes = [pick(text, n) for n in range(exercise_count(text))]
            codes[-1] = codes[-1].rstrip("\n") + "\n" + ending
            jobs.append({"download": download, "format": "py", "exercises": codes, "url": "http://127.0.0.1/micrograd.html"})
            keys.append(("micrograd", f"{which} then {how}", "py"))
    proc = subprocess.run(
        [node, "--input-type=module", "-e", ASSEMBLE], input=json.dumps(jobs), capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    out = {}
    for key, made in zip(keys, json.loads(proc.stdout)):
        folder = tmp_path_factory.mktemp("-".join(key))
        (folder / made["filename"]).write_text(made["text"])
        out[key] = folder / made["filename"]
    return out


@functools.cache  # several tests ask it of the same code: Lab 1's checks train a network
def failing_checks(page: str, code: str) -> frozenset[str]:
    """The names of the checks the page's console fails for ``code`` (labs.checks, in-process)."""
    namespace: dict = {"__name__": "__solution__"}
    exec(compile(code, f"{page}.py", "exec"), namespace)
    results = run_blocks(doctest_blocks(read_page(f"{page}.md")), namespace)
    return frozenset(r.check.name for r in results if r.check.name and r.status != "passed")


def bare_python(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Python with nothing installed: -I (no PYTHONPATH, no user site), -S (no site-packages)."""
    return subprocess.run([sys.executable, "-I", "-S", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def needs_labs(page: str) -> bool:
    """Whether the page's checks run the labs package itself (Lab 4's run its engine): its download
    then needs labs installed, and says so (downloads.checks_labs_modules)."""
    return bool(checks_labs_modules(doctest_blocks(read_page(f"{page}.md"))))


def python_for(page: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Python as the learner who downloaded the page runs it: nothing installed, or only the guide's
    labs package where the page's checks need it (-S: no site-packages, the package from src)."""
    if not needs_labs(page):
        return bare_python(*args, cwd=cwd)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-S", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def page_code(page: str, which: str) -> str:
    text = read_page(f"{page}.md")
    return all_exercises(text, solved=which == "reference")


def check_names(page: str) -> list[str]:
    return [name for name, _ in standalone(doctest_blocks(read_page(f"{page}.md")))]


@pytest.mark.parametrize("page", PAGES)
def test_the_script_runs_its_checks_with_doctest_and_nothing_installed(files, page):
    for which in ("reference", "starter"):
        path = files[page, which, "py"]
        assert "No module named 'labs'" in bare_python("-c", "import labs", cwd=path.parent).stderr
        if needs_labs(page):  # without the package, the file says what it needs, and fails
            bare = bare_python(path.name, cwd=path.parent)
            assert bare.returncode == 1, bare.stdout + bare.stderr
            assert "ModuleNotFoundError: this lab's checks need the guide's `labs` package" in bare.stderr, bare.stderr
            assert "pip install -e ." in bare.stderr and "NameError" not in bare.stderr, bare.stderr
        proc = python_for(page, "-m", "doctest", "-v", path.name, cwd=path.parent)
        expected = failing_checks(page, page_code(page, which))
        # Each failure names its check, with a line of the file.
        failed = set(re.findall(rf'^File "[^"]+{page}\.py", line \d+, in {page}\.__test__\.(.+)$', proc.stdout, re.M))
        assert failed == expected, proc.stdout[-3000:] + proc.stderr[-2000:]
        if which == "reference":
            assert proc.returncode == 0 and not expected, proc.stdout[-3000:] + proc.stderr[-2000:]
            assert re.search(r"^Test passed\.$", proc.stdout, re.M)
        else:
            assert proc.returncode == 1 and expected, proc.stdout[-2000:]
            assert "***Test Failed***" in proc.stdout


def test_without_labs_the_script_uses_its_copies_and_errors_read_as_in_the_page(files):
    path = files["paged_attention", "reference", "py"]
    proc = bare_python(
        "-c",
        "import sys; sys.path.insert(0, '.'); import paged_attention as m; print(sys.modules['labs.paged_attention'].PageFault, m.PageFault.__module__);"
        "m.translate([7, 1, 3], 48, 16, 48)",
        cwd=path.parent,
    )
    assert "<class 'labs.paged_attention.PageFault'> labs.paged_attention" in proc.stdout, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("labs.paged_attention.PageFault: "), proc.stderr
    # The copies hold no examples of their own: doctest finds the page's checks and nothing else.
    text = path.read_text()
    support = text.split("except ModuleNotFoundError:")[1].split("# %%")[0]
    assert ">>>" not in support and "class PageFault(IndexError):" in support
    # What the file does not copy says so, by name.
    proc = bare_python(
        "-c",
        "import sys; sys.path.insert(0, '.'); import paged_attention; import labs.paged_attention as pa; pa.BlockTable",
        cwd=path.parent,
    )
    assert proc.stderr.strip().splitlines()[-1] == (
        "AttributeError: labs.paged_attention.BlockTable is not in this file, which copies only PageFault, LRUBlockAllocator, "
        "OutOfBlocksError "
        "from the guide's labs package: define it here, or install the guide's labs package"
    )
    # The copied OutOfBlocksError is the one the copied allocator raises: a failed add is undone.
    proc = bare_python(
        "-c",
        "import sys; sys.path.insert(0, '.'); import paged_attention as p;"
        "m = p.CachingBlockManager(2, 4)\ntry: m.add_sequence('a', list(range(9)))\n"
        "except p.OutOfBlocksError: print(m.tables, m.allocator.num_used, m.cached)",
        cwd=path.parent,
    )
    assert proc.stdout.splitlines()[-1] == "{} 0 {}", proc.stdout + proc.stderr


@pytest.mark.parametrize("page", PAGES)
def test_running_the_script_runs_the_code_then_counts_checks_as_the_page_does(files, page):
    total = len(check_names(page))
    ok = python_for(page, files[page, "reference", "py"].name, cwd=files[page, "reference", "py"].parent)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.rstrip().splitlines()[-1] == f"{total} / {total} checks passed"
    bad = python_for(page, files[page, "starter", "py"].name, cwd=files[page, "starter", "py"].parent)
    assert bad.returncode == 1
    expected = failing_checks(page, page_code(page, "starter"))
    in_order = [name for name in check_names(page) if name in expected]
    assert bad.stdout.rstrip().splitlines()[-1] == f"{total - len(expected)} / {total} checks passed; failed: {', '.join(in_order)}"


@pytest.mark.parametrize("page", PAGES)
def test_pytest_doctest_modules_reports_each_check(files, page):
    """The starter's file, whose checks pass and fail (the reference's pass under doctest and Python)."""
    for which in ("starter",):
        path = files[page, which, "py"]
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "--doctest-modules", "-p", "no:cacheprovider", "-q", "-rf", path.name],
            cwd=path.parent,
            capture_output=True,
            text=True,
            timeout=120,
        )
        expected = failing_checks(page, page_code(page, which))
        total = len(check_names(page))
        assert proc.returncode == (1 if expected else 0), proc.stdout[-3000:]
        summary = ", ".join(
            part
            for part in (
                f"{len(expected)} failed" if expected else "",
                f"{total - len(expected)} passed" if total > len(expected) else "",
            )
            if part
        )
        assert re.search(rf"^{summary} in ", proc.stdout, re.M), proc.stdout[-1500:]
        assert set(re.findall(rf"^FAILED {page}\.py::{page}\.__test__\.(.+)$", proc.stdout, re.M)) == expected


@pytest.mark.parametrize("page", PAGES)
def test_the_script_is_in_the_percent_format_with_the_learners_code(files, page):
    text = files[page, "starter", "py"].read_text()
    cells = re.split(r"^# %%.*\n", text, flags=re.M)
    assert cells[0] == "" and text.startswith("# %% [markdown]\n# # Lab ")
    assert exercise_code(read_page(f"{page}.md")).rstrip() in [c.rstrip() for c in cells]
    assert "http://127.0.0.1/" + page + ".html" in cells[1]
    # The header says how many exercises the page has, and the file carries every one, in page order.
    count = exercise_count(read_page(f"{page}.md"))
    assert f"# Your code from the {count} exercises of http://127.0.0.1/" in cells[1]
    stripped = [c.rstrip() for c in cells]
    places = [stripped.index(exercise_code(read_page(f"{page}.md"), n).rstrip()) for n in range(count)]
    assert places == sorted(places)


@pytest.mark.parametrize("page", PAGES)
def test_the_notebook_is_valid_nbformat_4_with_the_checks_last(files, page):
    nb = nbformat.read(files[page, "starter", "ipynb"], as_version=4)
    nbformat.validate(nb)
    sources = [cell.source for cell in nb.cells]
    assert exercise_code(read_page(f"{page}.md")).rstrip() in sources
    assert nb.cells[0].source.startswith("# Lab ") and "python -m doctest" not in nb.cells[0].source
    assert "\n__test__ = {\n" in nb.cells[-2].source and "def run_checks():" in nb.cells[-2].source
    assert nb.cells[-1].source.startswith("failed = run_checks()\nassert not failed")


# A failing check ends the notebook the same way on every page: shown on the cheapest to run.
@pytest.mark.parametrize(("page", "which"), [(p, "reference") for p in PAGES] + [("online_softmax", "starter")])
def test_the_notebook_runs_with_nbconvert_execute_and_fails_when_a_check_does(files, page, which):
    path = files[page, which, "ipynb"]
    proc = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--output", "ran.ipynb", path.name],
        cwd=path.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    total = len(check_names(page))
    if which == "reference":
        assert proc.returncode == 0, proc.stderr[-3000:]
        ran = nbformat.read(path.parent / "ran.ipynb", as_version=4)
        assert "".join(out.get("text", "") for out in ran.cells[-1].outputs) == f"{total} / {total} checks passed\n"
    else:
        expected = failing_checks(page, page_code(page, which))
        assert proc.returncode == 1
        plain = re.sub(r"\x1b\[[0-9;]*m", "", proc.stderr)  # the traceback comes in colour
        assert f"AssertionError: {len(expected)} of {total} checks failed: " in plain, plain[-3000:]


def test_an_exercise_that_imports_labs_another_way_fails_the_build_with_what_to_write():
    from sphinx.errors import ExtensionError

    from pyodide_cells.downloads import support_cell

    with pytest.raises(ExtensionError, match=r"write `from labs.module import Name`"):
        support_cell(["import labs.attention as ref\n"])
    with pytest.raises(ExtensionError, match="imports no_such_name from labs.attention, which does not define it"):
        support_cell(["from labs.attention import no_such_name\n"])
    assert support_cell(["import math\n"]) == ""


def test_a_copied_definition_brings_what_it_uses_from_its_module(tmp_path):
    from pyodide_cells.downloads import support_cell

    (tmp_path / "copy.py").write_text(
        support_cell(["from labs.attention import online_softmax\n"]) + "print(online_softmax([1000.0, 1000.0]).probs)\n"
    )
    proc = bare_python("copy.py", cwd=tmp_path)  # no labs: the copies, with their helpers and imports
    assert proc.stdout == "[0.5, 0.5]\n", proc.stderr


@pytest.mark.parametrize("how", EXITS)
def test_a_script_that_ends_the_program_before_its_checks_never_exits_0(files, how):
    """A file whose code ended in sys.exit(0), raise SystemExit or exit() made `python -m doctest FILE.py`
    and `python FILE.py` exit 0 with 20 of 22 checks wrong: no check had run."""
    for which in ("starter", "reference"):
        path = files["micrograd", f"{which} then {how}", "py"]
        for command in (["-m", "doctest", path.name], [path.name]):
            # -I without -S: `exit()` is the site module's, as on a learner's machine.
            proc = subprocess.run([sys.executable, "-I", *command], cwd=path.parent, capture_output=True, text=True, timeout=60)
            assert proc.returncode == 1, (which, command, proc.stdout[-1000:], proc.stderr[-1000:])
            assert "the program ended before the page's checks ran" in proc.stderr, proc.stderr[-1000:]
            assert "checks passed" not in proc.stdout


def test_the_files_ask_for_the_python_the_project_requires():
    """A learner was told "Python 3.10 or newer" by the file and 3.11 by the README."""
    from pyodide_cells.downloads import MIN_PYTHON

    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == f">={MIN_PYTHON}"
    assert f"Python {MIN_PYTHON} or newer" in (ROOT / "docs" / "runtime.md").read_text()


@pytest.mark.parametrize("page", PAGES)
def test_the_script_carries_the_hints_and_prints_each_failed_checks_first(files, site_dir, page):
    """The downloaded file had none of the page's hints: a learner working from it saw a check fail
    and nothing on where to look. Each check's hints are in its docstring, above its doctest, and
    `python FILE.py` prints a failed check's first hint before the count."""
    hints = {c["name"]: c["hints"] for c in page_config(site_dir, page)["checks"] if c.get("hints")}
    assert hints, f"{page} has hints"
    text = files[page, "starter", "py"].read_text()
    for name, given in hints.items():
        first = " ".join(given[0].split())
        assert first[:40] in " ".join(text.split()), (name, first)
    bad = python_for(page, files[page, "starter", "py"].name, cwd=files[page, "starter", "py"].parent)
    failed = [name for name in check_names(page) if name in failing_checks(page, page_code(page, "starter"))]
    shown = re.findall(r"^Hint for (.+?): ", bad.stdout, re.M)
    assert shown == [name for name in failed if name in hints], bad.stdout[-2000:]
