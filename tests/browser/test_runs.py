"""Runs as a learner drives them: Stop during the checks, restarts, queued and failed states,
and messages a cell forges (issue 13, defects 2, 3, 4 and 9).

Every wait is on a state the runtime exposes (a cell's ``data-state`` and
``data-runs``, the console's, the status bar's text), never on a sleep.
"""

from __future__ import annotations

import pytest

from tests.browser.helpers import READY, TIMEOUT, cell, check, open_lab, run_and_wait, runs, set_code, wait_cell, wait_runs
from tests.browser.test_micrograd_page import passing
from tests.pages import code_cells, exercise_code, first_exercise_checks, micrograd_solution, read_page
from tests.plain_host import PlainHost

pytestmark = pytest.mark.browser
EXERCISE, GRAPH, LATER = 0, 1, 2  # micrograd's cells: the exercise, the live graph, the engine tour

# A Value whose backward() never ends; the cell itself does not call it, the checks do.
ENDLESS_BACKWARD = """\
import math

class Value:
    def __init__(self, data, label=""):
        self.data, self.grad, self.label = data, 0.0, label
    def __add__(self, other):
        return Value(self.data + other.data)
    def __mul__(self, other):
        return Value(self.data * other.data)
    def tanh(self):
        return Value(math.tanh(self.data))
    def backward(self):
        while True:
            pass
"""


def bar_text(page) -> str:
    return page.locator(".pc-runtime .pc-runtime-text").inner_text()


def test_stop_during_check_my_code_stops_the_checks_and_leaves_every_button_usable(page, base_url):
    open_lab(page, base_url)
    set_code(page, EXERCISE, ENDLESS_BACKWARD)
    console = page.locator(".pc-checks")
    button = console.locator(".pc-run")
    button.click()  # without running the cell first: Check runs the cells, then the checks
    page.wait_for_function("document.querySelector('.pc-runtime-text').textContent.includes('running the checks')", timeout=TIMEOUT)
    assert console.locator(".pc-checks-summary").inner_text() == "Running the checks…"  # not a cell of the learner's
    assert button.inner_text() == "■ Stop"
    button.click()  # the console's own button is Stop while the checks run
    page.wait_for_function("document.querySelector('.pc-checks').dataset.runs === '1'", timeout=TIMEOUT)
    assert console.get_attribute("data-state") == "stopped"
    assert console.locator(".pc-checks-summary").inner_text().startswith("Stopped: the checks did not finish")
    # Every button is usable again, and the focus stayed on the one pressed.
    assert button.inner_text() == "Check my code" and button.is_enabled()
    assert page.evaluate("document.activeElement === document.querySelector('.pc-checks .pc-run')")
    assert page.locator(".pc-runtime .pc-stop").is_disabled()
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert "namespace was reset" not in bar_text(page)  # interrupted, not restarted (isolated page)
    # The learner fixes the code: the same console checks it, exercise 1's checks pass.
    set_code(page, EXERCISE, micrograd_solution())
    run_and_wait(page, EXERCISE)
    results = check(page)  # exercise 2 runs again after exercise 1, which defined Value afresh
    assert [name for name, status in results.items() if status == "passed"] == passing(micrograd_solution())


def test_stop_while_the_cells_run_before_the_checks_cancels_the_checks(page, base_url):
    open_lab(page, base_url)
    set_code(page, EXERCISE, "while True:\n    pass")
    page.locator(".pc-checks .pc-run").click()
    page.wait_for_function(f"document.querySelectorAll('div.cell.pc-live')[{EXERCISE}].dataset.state === 'running'")
    # The console names the cell that does not end, under it and under each later exercise's bar.
    waiting = f"Running cell {EXERCISE + 1}, then the checks…"
    assert page.locator(".pc-checks-summary").inner_text() == waiting
    assert set(page.locator(".pc-checks-bar-summary").all_inner_texts()) == {waiting}
    page.locator(".pc-runtime .pc-stop").click()
    page.wait_for_function("document.querySelector('.pc-checks').dataset.runs === '1'", timeout=TIMEOUT)
    wait_runs(page, EXERCISE, 1)  # the checks were cancelled at once; the cell ends when Python reads the signal
    assert cell(page, EXERCISE).get_attribute("data-state") == "interrupted"
    assert page.locator(".pc-checks").get_attribute("data-state") == "stopped"
    assert "Not run: Stop was pressed before it ran" in page.locator(".pc-checks-summary").inner_text()
    assert page.locator(".pc-check[data-status=running]").count() == 0


@pytest.fixture
def plain_server(site_dir):
    """The site on a static server that sends no COOP/COEP (as GitHub Pages): no interrupt buffer."""
    with PlainHost(site_dir) as host:
        yield host.base


def stop_an_endless_cell(page, code):
    set_code(page, EXERCISE, code)
    before = runs(page, EXERCISE)
    cell(page, EXERCISE).locator(".pc-run").click()
    page.wait_for_function(f"document.querySelectorAll('div.cell.pc-live')[{EXERCISE}].dataset.state === 'running'")
    cell(page, EXERCISE).locator(".pc-run").click()  # the running cell's Run is its Stop
    wait_runs(page, EXERCISE, before + 1)
    assert cell(page, EXERCISE).get_attribute("data-state") == "interrupted"
    page.wait_for_function(READY, timeout=TIMEOUT)
    return before + 1


def assert_a_later_cell_runs_alone(page, stopped_runs):
    """Run a later cell: the stopped cell is not run again first, and no Stop is needed."""
    set_code(page, LATER, "import math\nprint(math.factorial(5))")
    output = run_and_wait(page, LATER)
    assert cell(page, LATER).get_attribute("data-state") == "done", output
    assert output.strip() == "120"
    assert runs(page, EXERCISE) == stopped_runs
    assert cell(page, EXERCISE).get_attribute("data-state") == "interrupted"


def test_without_isolation_a_stopped_cell_is_not_run_again_after_the_restart(page, plain_server):
    page.goto(f"{plain_server}/micrograd.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert page.evaluate("crossOriginIsolated") is False
    stopped = stop_an_endless_cell(page, "while True:\n    pass")
    assert "namespace was reset" in cell(page, EXERCISE).locator(".cell_output").inner_text()
    assert_a_later_cell_runs_alone(page, stopped)


def test_lines_printed_before_a_long_computation_show_during_it_and_survive_stop(page, plain_server):
    """Issue 38: of four lines printed before a sleep only the first showed until it ended, and
    without isolation Stop (which replaces the worker) lost the other three. The long call here is
    a JavaScript loop: like time.sleep it runs no Python bytecode, so no tick of Python's sends
    what is held, and it never ends by itself (the test waits on the cell's state, not a clock)."""
    page.goto(f"{plain_server}/micrograd.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    lines = [f"line {i}" for i in range(4)]
    set_code(page, EXERCISE, "from pyodide.code import run_js\nfor i in range(4):\n    print('line', i)\nrun_js('while (true) {}')")
    before = runs(page, EXERCISE)
    cell(page, EXERCISE).locator(".pc-run").click()
    page.wait_for_function(
        """([i, last]) => {
          const box = document.querySelectorAll('div.cell.pc-live')[i];
          return box.dataset.state === 'running' && box.querySelector('.cell_output').innerText.includes(last);
        }""",
        arg=[EXERCISE, lines[-1]],
        timeout=TIMEOUT,
    )
    assert runs(page, EXERCISE) == before, "all four lines show while the loop runs"
    cell(page, EXERCISE).locator(".pc-run").click()  # the running cell's Run is its Stop
    wait_runs(page, EXERCISE, before + 1)
    output = cell(page, EXERCISE).locator(".cell_output").inner_text()
    assert [line for line in output.splitlines() if line.startswith("line ")] == lines, output
    assert cell(page, EXERCISE).get_attribute("data-state") == "interrupted"


def test_code_that_ignores_stop_is_restarted_and_not_run_again(page, base_url):
    """A JavaScript loop never lets Python read the interrupt (nor does time.sleep): after
    the grace period Python is restarted."""
    open_lab(page, base_url)
    assert page.evaluate("crossOriginIsolated") is True
    stopped = stop_an_endless_cell(page, "from pyodide.code import run_js\nrun_js('while (true) {}')")
    assert "did not respond to Stop" in cell(page, EXERCISE).locator(".pc-cell-status").inner_text()
    assert_a_later_cell_runs_alone(page, stopped)


def test_a_cell_run_while_another_runs_says_what_it_waits_for(page, base_url):
    open_lab(page, base_url)
    set_code(page, EXERCISE, "while True:\n    pass")
    cell(page, EXERCISE).locator(".pc-run").click()
    page.wait_for_function(f"document.querySelectorAll('div.cell.pc-live')[{EXERCISE}].dataset.state === 'running'")
    # A script that follows Python's state from now on asks for it, and is told (protocol/pagestate.js).
    told = page.evaluate("""() => new Promise((told) => {
      document.addEventListener('pyodide-cells:state', (event) => told(event.detail.state), {once: true});
      document.dispatchEvent(new Event('pyodide-cells:state-ask'));
    })""")
    assert told == "running"
    set_code(page, LATER, "print('later')")
    cell(page, LATER).locator(".pc-run").click()
    assert cell(page, LATER).get_attribute("data-state") == "queued"
    status = cell(page, LATER).locator(".pc-cell-status").inner_text()
    # Behind the running cell wait the live pictures (they follow every run: the graphs of exercises
    # 1 and 2), then this one, after the last of them.
    autos = [i for i, (tags, _) in enumerate(code_cells(read_page("micrograd.md"))) if "auto-rerun" in tags]
    assert len(autos) == 2
    assert status == f"Queued: after cell {autos[-1] + 1}", status
    assert f"({len(autos) + 1} more queued)" in bar_text(page)
    page.locator(".pc-runtime .pc-stop").click()
    wait_runs(page, LATER, 1)
    assert cell(page, LATER).get_attribute("data-state") == "cancelled"
    assert cell(page, LATER).locator(".pc-cell-status").inner_text() == "Cancelled: Stop was pressed before it ran"
    assert run_and_wait(page, LATER).strip() == "later"


# Records, in the page, the largest number of cells shown running at once.
WATCH_RUNNING = """() => {
  window.mostRunning = 0;
  new MutationObserver(() => {
    const n = document.querySelectorAll('div.cell.pc-live[data-state=running]').length;
    window.mostRunning = Math.max(window.mostRunning, n);
  }).observe(document.body, {subtree: true, attributes: true, attributeFilter: ['data-state']});
}"""


def test_running_a_later_cell_on_a_fresh_page_runs_one_cell_at_a_time(page, base_url):
    open_lab(page, base_url, wait_ready=False)
    page.evaluate(WATCH_RUNNING)
    cell(page, 4).locator(".pc-run").click()  # cells 1-4 must run, in order, one at a time
    states = page.locator("div.cell.pc-live").evaluate_all("cs => cs.slice(0, 5).map(c => c.dataset.state)")
    assert "running" not in states[:4] or states.count("running") == 1, states
    # Read together: Python may become ready between two reads (the HTTP cache is warm).
    state, status = page.evaluate("""() => [document.documentElement.dataset.pyodideState,
        document.querySelectorAll('div.cell.pc-live')[4].querySelector('.pc-cell-status').innerText]""")
    if state == "loading":
        assert status == "Queued: waiting for Python to load"
    wait_runs(page, 4, 1)
    wait_cell(page, GRAPH)
    assert page.evaluate("window.mostRunning") == 1
    assert [runs(page, i) for i in range(5)] == [1, 1, 1, 1, 1]


def test_a_failed_start_says_so_and_restart_tries_again(page, own_server, recorder):
    broken = {"wheel": True}

    def flaky_wheel(handler):
        class Flaky(handler):
            def do_GET(self):
                if broken["wheel"] and "/_static/wheels/" in self.path and ".whl" in self.path:
                    self.send_response(404)
                    self.send_header("Cache-Control", "no-store")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                super().do_GET()

        return Flaky

    page.goto(f"{own_server(flaky_wheel)}/micrograd.html")
    page.wait_for_function("document.documentElement.dataset.pyodideState === 'error'", timeout=TIMEOUT)
    text = bar_text(page)
    assert "Python failed to start: could not load the labs wheel" in text and "HTTP 404" in text
    assert "press Restart to try again" in text
    # A Run now does not queue forever: it says Python is not available.
    cell(page, LATER).locator(".pc-run").click()
    wait_runs(page, LATER, 1)
    assert cell(page, LATER).get_attribute("data-state") == "error"
    assert cell(page, LATER).locator(".pc-cell-status").inner_text().startswith("Python is not available")
    broken["wheel"] = False
    page.locator(".pc-runtime .pc-restart").click()
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert "dc/db" in run_and_wait(page, LATER)
    # If the browser logged the refused wheel, that is expected here, and only that.
    assert all("404" in e for e in recorder.console_errors), recorder.console_errors
    recorder.console_errors.clear()


# Added to the starter: every Value made (the checks make them) posts replies a
# runtime would send, claiming all eight checks passed, for every id up to 80.
FORGE = """
import json
from pyodide.code import run_js

def _forge():
    passed = [{"name": f"Check {k}", "description": "", "source": "", "expected": "", "got": "",
               "status": "passed", "setup": False} for k in range(8)]
    for n in range(1, 80):
        for msg in ({"type": "checks", "id": n, "results": passed, "warnings": []},
                    {"type": "done", "id": n, "status": "ok", "ms": 0, "execution_count": 1,
                     "results": passed, "warnings": []}):
            run_js(f"self.postMessage({json.dumps(msg)})")  # the worker's own postMessage

_made, _forged = Value.__init__, [0]
def _forging_init(self, *args, **kwargs):
    if _forged[0] < 12:  # the first Values the checks make: enough to answer while they run
        _forged[0] += 1
        _forge()
    _made(self, *args, **kwargs)
Value.__init__ = _forging_init
"""


def test_python_starts_where_the_host_serves_its_webassembly_without_the_wasm_type(page, base_url):
    """A host that sends pyodide.asm.wasm as application/octet-stream: streaming compilation
    refuses it, and the page stayed at "Downloading the Python runtime" for good (from the
    learner review); the worker now compiles the file's bytes instead, with a warning."""
    warnings = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)

    def untyped(route):
        response = route.fetch()
        route.fulfill(status=200, body=response.body(), content_type="application/octet-stream")

    page.route("**/pyodide.asm.wasm", untyped)
    page.goto(f"{base_url}/micrograd.html?site-snapshot=never")
    page.wait_for_function(READY, timeout=TIMEOUT)
    out = page.evaluate("code => window.pyodideCells.runCode(code)", "print(6 * 7)")
    assert out["error"] is None and out["stdout"].strip() == "42"
    assert any("early compile failed, compiling from the file's bytes instead" in w for w in warnings), warnings


def test_replies_a_cell_forges_are_not_taken_for_the_runtimes(page, base_url):
    open_lab(page, base_url)
    set_code(page, EXERCISE, exercise_code(read_page("micrograd.md")) + FORGE)
    run_and_wait(page, EXERCISE)
    assert cell(page, EXERCISE).get_attribute("data-state") == "done"
    # The checks run for real on the unsolved starter: two pass, not all of them.
    results = check(page)
    assert [name for name, status in results.items() if status == "passed"] == ["Forward activation", "Weight w2 gradient"]
    own = len(first_exercise_checks("micrograd.md"))  # both passing checks are exercise 1's
    assert page.locator(".pc-checks-summary").inner_text() == f"2 / {own} passed"
