"""IPython.display as the browser's cells get it (src/pyodide_cells/python/ipython), run in CPython
the way the worker installs it: the folder as the IPython package, beside the cell runner, on a
Python with no IPython of its own (-I -S: no site-packages)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PYTHON = Path(__file__).resolve().parent.parent / "src" / "pyodide_cells" / "python"
RUN = """
import json, sys
sys.path.insert(0, {home!r})
import pyodide_cells_runner
out = []
runner = pyodide_cells_runner.CellRunner(lambda kind, payload: out.append([kind, json.loads(payload)]))
status = runner.run({code!r})["status"]
print(json.dumps({{"status": status, "out": out}}))
"""


@pytest.fixture
def run_cell(tmp_path):
    """Run one cell's code as the worker does; return (status, [(kind, payload)])."""
    home = tmp_path / "home"
    (home / "IPython").mkdir(parents=True)
    shutil.copy(PYTHON / "ipython" / "__init__.py", home / "IPython" / "__init__.py")
    shutil.copy(PYTHON / "ipython" / "display.py", home / "IPython" / "display.py")
    shutil.copy(PYTHON / "runner.py", home / "pyodide_cells_runner.py")
    shutil.copy(PYTHON.parent / "limits.json", tmp_path / "limits.json")

    def run(code: str):
        proc = subprocess.run(
            [sys.executable, "-I", "-S", "-c", RUN.format(home=str(home), code=code)], capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        result = json.loads(proc.stdout.splitlines()[-1])
        return result["status"], result["out"]

    return run


def test_display_and_the_classes_give_the_mime_types_jupyter_gives(run_cell):
    status, out = run_cell(
        "from IPython.display import display, HTML, Markdown, SVG, Latex, Math, JSON\n"
        "display(Markdown('**b**'), HTML('<em>h</em>'))\n"
        "display(SVG('<svg xmlns=\"http://www.w3.org/2000/svg\"/>'), Latex('$x$'))\n"
        "display(JSON({'a': [1]}))\n"
        "Math(r'\\alpha')"
    )
    assert status == "ok"
    shown = [(kind, {k: v for k, v in payload["data"].items() if k != "text/plain"}) for kind, payload in out]
    assert shown == [
        ("display", {"text/markdown": "**b**"}),
        ("display", {"text/html": "<em>h</em>"}),
        ("display", {"image/svg+xml": '<svg xmlns="http://www.w3.org/2000/svg"/>'}),
        ("display", {"text/latex": "$x$"}),
        ("display", {}),
        ("result", {"text/latex": "$\\displaystyle \\alpha$"}),
    ]
    assert out[4][1]["data"]["text/plain"] == '{\n  "a": [\n    1\n  ]\n}'


def test_what_is_not_here_says_so(run_cell):
    status, out = run_cell("from IPython.display import Image")
    assert status == "error"
    ((kind, error),) = out
    assert error["ename"] == "ImportError"
    assert (
        "IPython.display here has display, update_display, clear_output, DisplayHandle, DisplayObject, HTML" in error["evalue"]
        and "not Image" in error["evalue"]
    )
    status, out = run_cell("from IPython.display import display\ndisplay(1, metadata={})")
    assert status == "error" and "not metadata=" in out[-1][1]["evalue"]
    status, out = run_cell("from IPython.display import HTML\nHTML(3)")
    assert status == "error" and out[-1][1]["evalue"] == "HTML() takes the text to show as a str, not int"
    status, out = run_cell("import IPython\nprint(IPython.get_ipython())")
    assert status == "ok" and out[0][1]["text"] == "None"


def test_ipython_display_is_a_module_as_in_ipython(run_cell):
    status, out = run_cell(
        "import IPython.display\n"
        "from IPython import display as d\n"
        "IPython.display.display(d.Markdown('**m**'))\n"
        "print(type(IPython.display).__name__, d is IPython.display)"
    )
    assert status == "ok", out
    assert out[0][1]["data"]["text/markdown"] == "**m**"
    assert "".join(payload["text"] for kind, payload in out if kind == "stream") == "module True\n"


def test_json_reads_json_text_and_names_what_it_cannot_show(run_cell):
    status, out = run_cell("from IPython.display import JSON\nprint(JSON('{\"a\": 1}'))")
    assert status == "ok" and "".join(p["text"] for k, p in out if k == "stream") == '{\n  "a": 1\n}\n'
    for code, message in (
        ("JSON({(1, 2): 3})", "TypeError: JSON() cannot show this value: keys must be str, int, float, bool or None, not tuple"),
        ("x = []\nx.append(x)\nJSON(x)", "ValueError: JSON() cannot show this value: Circular reference detected"),
        ("JSON('{oops')", "ValueError: JSON() was given text that is not JSON: "),
        ("Markdown(filename='notes.md')", "TypeError: Markdown() here takes the text to show only, not filename="),
    ):
        status, out = run_cell(f"from IPython.display import JSON, Markdown\n{code}")
        assert status == "error", code
        assert f"{out[-1][1]['ename']}: {out[-1][1]['evalue']}".startswith(message), out[-1][1]


def test_a_display_id_output_is_replaced_by_its_handle_and_update_display(run_cell):
    status, out = run_cell(
        "from IPython.display import display, update_display, HTML\n"
        "h = display(HTML('<b>step 0</b>'), display_id=True)\n"
        "h.update(HTML('<b>step 1</b>'))\n"
        "update_display(HTML('<b>step 2</b>'), display_id=h.display_id)\n"
        "named = display('plain', display_id='loss')\n"
        "print(type(h).__name__, named.display_id, display('no id'))"
    )
    assert status == "ok"
    displays = [payload for kind, payload in out if kind == "display"]
    first_id = displays[0]["display_id"]
    assert len(first_id) == 32  # a new id per display_id=True
    assert [(d["data"].get("text/html"), d.get("display_id"), d.get("update")) for d in displays] == [
        ("<b>step 0</b>", first_id, False),
        ("<b>step 1</b>", first_id, True),
        ("<b>step 2</b>", first_id, True),
        (None, "loss", False),
        (None, None, None),  # without display_id: a plain display, nothing to replace
    ]
    assert "DisplayHandle loss None" in "".join(p["text"] for k, p in out if k == "stream")


def test_clear_output_asks_the_page_to_clear_now_or_at_the_next_output(run_cell):
    status, out = run_cell("from IPython.display import clear_output\nclear_output()\nclear_output(wait=True)")
    assert status == "ok"
    assert out == [["clear", {"wait": False}], ["clear", {"wait": True}]]


@pytest.mark.parametrize(
    "code, error",
    [
        ("display(1, display_id=3)", "TypeError: display_id must be True or a str, not int"),
        ("update_display(1, display_id=None)", "TypeError: update_display() needs display_id as a str, not NoneType"),
        ("display(1, raw=True)", "TypeError: display() here takes objects and display_id= only, not raw="),
    ],
)
def test_bad_display_ids_are_named_errors(run_cell, code, error):
    status, out = run_cell(f"from IPython.display import display, update_display\n{code}")
    assert status == "error"
    (payload,) = [p for kind, p in out if kind == "error"]
    assert f"{payload['ename']}: {payload['evalue']}".startswith(error)
