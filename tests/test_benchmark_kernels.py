"""benchmarks/kernels.py: the quick run's shape, its units and arithmetic, and
that its source runs as a browser page runs it (exec'd, no I/O, no argparse)."""

from __future__ import annotations

import ast
import json
import math
import sys
import types
from pathlib import Path

import pytest

from benchmarks import kernels
from labs.paged_attention import sample_workload

SOURCE_PATH = Path(kernels.__file__)
SOURCE = SOURCE_PATH.read_text(encoding="utf-8")
GROUPS = {"softmax", "attention", "paged", "autograd"}
DOCUMENTED_UNITS = {  # the units the brief and the module docstring promise
    "softmax": {"ns/element"},
    "attention": {"ns/score"},
    "paged": {"translations/s", "slots/s"},
    "autograd": {"ms/step", "ms"},
}


@pytest.fixture(scope="module")
def quick():
    return kernels.run("quick")


def test_quick_run_has_every_case_with_positive_finite_medians(quick):
    cases = quick["cases"]
    assert {c["group"] for c in cases} == GROUPS
    assert {(c["group"], c["name"]) for c in cases} == set(kernels.UNITS)
    for c in cases:
        assert c["unit"] == kernels.UNITS[(c["group"], c["name"])], c
        assert c["unit"] in DOCUMENTED_UNITS[c["group"]], c
        for key in ("median", "min", "max"):
            assert math.isfinite(c[key]) and c[key] > 0, c
        assert c["min"] <= c["median"] <= c["max"], c
        assert c["runs"] == kernels.SCALES["quick"]["repeats"] >= 5
        assert c["inner"] >= 1


def test_quick_run_sizes_and_work(quick):
    by = {}
    for c in quick["cases"]:
        by.setdefault((c["group"], c["name"]), []).append(c)
    for name in ("softmax_naive", "softmax", "online_softmax", "SoftmaxState.update"):
        [c] = by[("softmax", name)]
        assert c["n"] == c["work"] == 1024
    for name in ("attention", "flash_attention"):
        assert [(c["n"], c["work"]) for c in by[("attention", name)]] == [(16, 256), (64, 4096)]
    for name in ("BlockTable.translate", "translate"):
        [c] = by[("paged", name)]
        assert c["n"] == c["work"] == 2048
    [c] = by[("paged", "BlockManager.slot_mapping")]
    assert (c["n"], c["work"]) == (32, sum(sample_workload(32, 2048, seed=0)))
    [c] = by[("autograd", "chain_2001")]
    assert c["n"] == 2001  # 500 steps of 4 Values, plus the input
    # a fresh table per call costs far more than a lookup in a built one
    assert by[("paged", "translate")][0]["median"] < by[("paged", "BlockTable.translate")][0]["median"]


def test_results_are_json_serializable(quick):
    text = json.dumps(quick, allow_nan=False)
    assert json.loads(text) == quick
    assert isinstance(quick["python"], str) and quick["python"]
    assert quick["scale"] == "quick" and quick["timer"] == "time.perf_counter"


def test_format_table_lists_every_case(quick):
    lines = kernels.format_table(quick).splitlines()
    assert len(lines) == 2 + len(quick["cases"])  # title, header, one line per case
    assert quick["python"] in lines[0]
    for line, c in zip(lines[2:], quick["cases"]):
        cells = line.split()
        assert cells[:3] == [c["group"], c["name"], str(c["n"])], line
        assert c["unit"] in cells, line
        assert float(cells[3].replace(",", "")) == pytest.approx(c["median"], rel=1e-3), line
    # aligned: every row's median and unit start under the header's
    for column in ("median", "unit"):
        at = lines[1].index(column)
        assert all(line[at - 1] == " " and line[at] != " " for line in lines[2:]), column


class FakeClock:
    """perf_counter that advances only when the timed function says so."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


@pytest.mark.parametrize(
    "unit_case, work, expected",
    [
        (("softmax", "softmax"), 1000, 1e9 * 0.002 / 1000),  # ns per element: 2000 ns
        (("paged", "translate"), 2048, 2048 / 0.002),  # translations per second
        (("autograd", "chain_2001"), 1, 2.0),  # ms per call
    ],
)
def test_unit_conversion_with_a_fake_clock(monkeypatch, unit_case, work, expected):
    clock = FakeClock()
    monkeypatch.setattr(kernels, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))

    def fn():  # every call "takes" exactly 2 ms
        clock.now += 0.002

    cfg = {"repeats": 5, "warmup": 1, "min_sample_s": 0.004}
    case = kernels._case(*unit_case, 7, work, fn, cfg)
    # one call is 2 ms < 4 ms, so a sample makes ceil(1.2 * 4 / 2) = 3 calls
    assert case["inner"] == 3 and case["runs"] == 5
    assert case["median"] == pytest.approx(expected) == case["min"] == pytest.approx(case["max"])


def test_unknown_scale_is_a_value_error():
    with pytest.raises(ValueError, match="'medium'"):
        kernels.run("medium")


def _functions(tree):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_source_is_browser_safe():
    tree = ast.parse(SOURCE)
    imported = set()
    for node in tree.body:  # module level: what runs when the page execs the source
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module.split(".")[0])
    assert imported <= {"__future__", "gc", "math", "os", "platform", "random", "statistics", "sys", "time", "labs"}, imported
    assert "import numpy" not in SOURCE and "from numpy" not in SOURCE
    assert "open(" not in SOURCE
    for node in ast.walk(tree):  # threads, subprocesses, sockets: nowhere
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            assert not {"threading", "concurrent", "multiprocessing", "subprocess", "socket", "urllib", "asyncio", "numpy"} & {
                n.split(".")[0] for n in names
            }, names
    # clocks: time.perf_counter only
    clocks = {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "time"
    }
    assert clocks <= {"perf_counter", "get_clock_info"}, clocks
    # no function calls itself (Pyodide's stack is small)
    for fn in _functions(tree):
        calls = {c.func.id for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
        assert fn.name not in calls, fn.name
    # file writes and argparse live in main() only, which only __main__ calls
    for fn in _functions(tree):
        if fn.name == "main":
            continue
        for c in ast.walk(fn):
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute):
                assert c.func.attr not in {"write_text", "write_bytes", "mkdir", "makedirs"}, fn.name
            if isinstance(c, (ast.Import, ast.ImportFrom)):
                assert "argparse" not in [a.name for a in c.names], fn.name
    main_calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "main"]
    assert len(main_calls) == 1


def test_exec_in_a_fresh_namespace_as_the_page_does(monkeypatch):
    # argv the argparse block would reject: if it ran, exec would raise SystemExit
    monkeypatch.setattr(sys, "argv", ["kernels.py", "--scale", "not-a-scale"])
    ns = {"__name__": "kernels_page"}
    exec(compile(SOURCE, "kernels.py", "exec"), ns)
    assert "__file__" not in ns and "argparse" not in ns
    seen = []
    # The smallest run that reaches every case: the quick run's timings are the fixture's to check.
    ns["SCALES"]["quick"] = {
        **ns["SCALES"]["quick"],
        "repeats": 1,
        "warmup": 1,
        "min_sample_s": 0.0001,
        "attention_n": (8,),
        "batch": 4,
    }
    results = ns["run"]("quick", on_case=seen.append)
    assert [(c["group"], c["name"]) for c in results["cases"]] == [(c["group"], c["name"]) for c in seen]
    assert {c["group"] for c in results["cases"]} == GROUPS
    assert ns["format_table"](results).count("\n") == len(results["cases"]) + 1
