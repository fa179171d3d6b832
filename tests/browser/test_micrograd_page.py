"""The micrograd lab in headless Chromium: Python runs in the page, offline.

The site is served on 127.0.0.1; the ``page`` fixture aborts and records any
request to another host, and fails the test if there was one.
"""

from __future__ import annotations

import math

import pytest

from labs.autograd import Value

pytestmark = pytest.mark.browser
READY = "document.documentElement.dataset.pyodideState === 'ready'"
TIMEOUT = 90_000


def open_lab(page, base_url, wait_ready=True):
    page.goto(f"{base_url}/micrograd.html")
    if wait_ready:
        page.wait_for_function(READY, timeout=TIMEOUT)


def cell(page, index):
    return page.locator("div.cell.pc-live").nth(index)


def set_code(page, index, code):
    """Replace a cell's code the way a learner would: select all, type."""
    page.locator("div.cell.pc-live .cm-content").nth(index).click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)


def run_and_wait(page, index, via="button"):
    target = cell(page, index)
    page.evaluate("i => document.querySelectorAll('div.cell.pc-live')[i].dataset.state = 'stale'", index)
    if via == "button":
        target.locator(".pc-run").click()
    else:
        page.locator("div.cell.pc-live .cm-content").nth(index).click()
        page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "i => ['done', 'error'].includes(document.querySelectorAll('div.cell.pc-live')[i].dataset.state)",
        arg=index, timeout=TIMEOUT,
    )
    return target.locator(".cell_output").inner_text()


def test_build_time_outputs_show_before_python_runs(page, base_url):
    open_lab(page, base_url, wait_ready=False)
    assert "Value(data=0.7071, grad=1.0000)" in cell(page, 0).locator(".cell_output").inner_text()
    page.wait_for_function(READY, timeout=TIMEOUT)
    status = page.locator(".pc-runtime").inner_text()
    assert "Pyodide 0.26.2" in status and "ready" in status


def test_edit_a_cell_and_run_it_in_the_page(page, base_url, artifacts_dir):
    open_lab(page, base_url)
    code = page.evaluate("() => window.pyodideCells.runtime.cells[0].code")
    edited = code.replace('x2 = Value(0.0, label="x2")', 'x2 = Value(1.0, label="x2")')
    assert edited != code
    set_code(page, 0, edited)
    out = run_and_wait(page, 0, via="keyboard")
    # The same computation in CPython, with the same reference code.
    x1, x2, w1, w2, b = Value(2.0), Value(1.0), Value(-3.0), Value(1.0), Value(6.8813735870195432)
    o = (x1 * w1 + x2 * w2 + b).tanh()
    o.backward()
    assert out.strip() == repr(o)
    assert out.strip() == f"Value(data={math.tanh(1.8813735870195432):.4f}, grad=1.0000)"
    # The second cell uses the names the first one defined: one shared namespace.
    out2 = run_and_wait(page, 1)
    assert f"x2  data = +1.00000000   grad = {x2.grad:+.8f}" in out2
    assert cell(page, 0).locator(".pc-count").inner_text() == "[1]"
    page.screenshot(path=str(artifacts_dir / "micrograd-after-run-desktop.png"), full_page=True)


def test_a_run_pressed_before_python_is_ready_is_queued(page, base_url):
    open_lab(page, base_url, wait_ready=False)
    cell(page, 1).locator(".pc-run").click()  # runs cell 1 first, then cell 2
    assert page.evaluate("document.documentElement.dataset.pyodideState") != "ready"
    page.wait_for_function(
        "document.querySelectorAll('div.cell.pc-live')[1].dataset.state === 'done'", timeout=TIMEOUT
    )
    out = cell(page, 1).locator(".cell_output").inner_text()
    assert "x1  data = +2.00000000   grad = -1.50000000" in out
    assert page.evaluate("window.pyodideCells.runtime.cells[0].ranInSession") is True


def test_errors_show_tracebacks_and_the_next_run_works(page, base_url):
    open_lab(page, base_url)
    set_code(page, 0, "from labs.autograd import Value\nx = 1\nValue(2.0) * 'text'")
    out = run_and_wait(page, 0)
    assert cell(page, 0).get_attribute("data-state") == "error"
    assert 'File "<cell 1>", line 3' in out and "TypeError" in out and "'str'" in out
    set_code(page, 0, "def f(:\n    pass")
    out = run_and_wait(page, 0)
    assert "SyntaxError" in out and "line 1" in out and "def f(:" in out
    set_code(page, 0, "")
    assert run_and_wait(page, 0).strip() == ""
    assert cell(page, 0).get_attribute("data-state") == "done"
    set_code(page, 0, "import sys\nprint('to stdout')\nprint('to stderr', file=sys.stderr)\nsys.version_info[:2]")
    out = run_and_wait(page, 0)
    assert out.split() == ["to", "stdout", "to", "stderr", "(3,", "12)"]


def test_rich_output_is_rendered(page, base_url):
    open_lab(page, base_url)
    set_code(page, 0, (
        "class Badge:\n"
        "    def _repr_html_(self):\n"
        "        return '<strong class=\"probe-html\">' + str(6 * 7) + '</strong>'\n"
        "class Dot:\n"
        "    def _repr_svg_(self):\n"
        "        return '<svg class=\"probe-svg\" width=\"10\" height=\"10\"><circle r=\"4\" cx=\"5\" cy=\"5\"/></svg>'\n"
        "display(Badge())\n"
        "Dot()"
    ))
    run_and_wait(page, 0)
    assert cell(page, 0).locator("strong.probe-html").inner_text() == "42"
    assert cell(page, 0).locator("svg.probe-svg circle").count() == 1


def test_the_lab_reads_on_a_phone(phone_page, base_url, artifacts_dir):
    open_lab(phone_page, base_url)
    run_and_wait(phone_page, 0)
    width = phone_page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone: {width}px"
    phone_page.screenshot(path=str(artifacts_dir / "micrograd-phone.png"), full_page=True)
