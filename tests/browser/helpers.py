"""What the browser tests share: waiting on the runtime's states, cells, editors, runs and checks.

Every helper acts as the learner does (clicks, keys) and waits on a state the
runtime exposes (``data-pyodide-state``, a cell's ``data-runs`` and
``data-state``, the console's ``data-runs``), never on a sleep.
"""

from __future__ import annotations

import re

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.pages import code_cells, read_page

READY = "document.documentElement.dataset.pyodideState === 'ready'"
TIMEOUT = 90_000  # ms: Python's start on a loaded 2-core machine, with room


def open_lab(page, base_url, wait_ready=True):
    page.goto(f"{base_url}/micrograd.html")
    if wait_ready:
        page.wait_for_function(READY, timeout=TIMEOUT)


def while_python_starts(page, base_url, name):
    """Opens the lab with Python's wasm held back, so the reader is on the page before Python is;
    returns the held requests for `let_python_start`."""
    held = []
    page.route("**/pyodide.asm.wasm", lambda route: held.append(route))
    page.goto(f"{base_url}/{name}.html")
    page.wait_for_function("performance.getEntriesByName('pyodide-cells:main-end').length > 0", timeout=TIMEOUT)
    page.evaluate("document.fonts.ready.then(() => undefined)")
    return held


def let_python_start(page, held):
    for route in held:
        route.continue_()
    page.unroute("**/pyodide.asm.wasm")
    page.wait_for_function(READY, timeout=TIMEOUT)
    page.evaluate("window.pyodideCells.idle()")


EDITOR_IN = "([i, states]) => states.includes(window.pyodideCells.cell(i).editor)"


def wait_editor(page, index, *states):
    """Wait until cell ``index``'s editor is in one of ``states`` (the runtime's "none", "loading",
    "failed": no load under way, "shown"); return the state it is in."""
    page.wait_for_function(EDITOR_IN, arg=[index, list(states)], timeout=TIMEOUT)
    return page.evaluate("i => window.pyodideCells.cell(i).editor", index)


def cell(page, index):
    return page.locator("div.cell.pc-live").nth(index)


def editor(page, index):
    """The cell's CodeMirror editor, made the way a learner makes it: a click on the code."""
    box = cell(page, index)
    box.scroll_into_view_if_needed()
    for _ in range(3):  # the editor may replace the code while we click on it
        if box.locator(".cm-content").count():
            break
        try:
            box.locator(".cell_input pre").first.click(timeout=3000)
            break
        except PlaywrightTimeout:
            continue
    box.locator(".cm-content").wait_for(timeout=TIMEOUT)
    return box.locator(".cm-content")


def set_code(page, index, code):
    """Replace a cell's code the way a learner pastes it: select all, paste."""
    editor(page, index).click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)


def type_code(page, index, keys):
    """Replace a cell's code by typing it key by key (the editor indents as it goes)."""
    editor(page, index).click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.type(keys)


def runs(page, index) -> int:
    """How many runs of the cell have ended (the runtime's data-runs)."""
    return int(cell(page, index).get_attribute("data-runs"))


FINAL = ("done", "error", "interrupted", "cancelled")


def wait_runs(page, index, count):
    """Wait until the cell's ``count``-th run has ended."""
    page.wait_for_function(
        "([i, n]) => Number(document.querySelectorAll('div.cell.pc-live')[i].dataset.runs) >= n",
        arg=[index, count],
        timeout=TIMEOUT,
    )


def wait_cell(page, index):
    """Wait until the cell is not queued or running (its latest run, if any, has ended)."""
    page.wait_for_function(
        "i => !['queued', 'running'].includes(document.querySelectorAll('div.cell.pc-live')[i].dataset.state)",
        arg=index,
        timeout=TIMEOUT,
    )


def run_and_wait(page, index, via="button"):
    """Run the cell (its Run button, or Ctrl+Enter in its editor); return its output once the run ended."""
    before = runs(page, index)
    if via == "button":
        cell(page, index).locator(".pc-run").click()
    else:
        editor(page, index).click()
        page.keyboard.press("Control+Enter")
    wait_runs(page, index, before + 1)
    return cell(page, index).locator(".cell_output").inner_text()


def start_running(page, index, code):
    """Set a cell's code, press its Run, and wait until the page shows it running."""
    set_code(page, index, code)
    cell(page, index).locator(".pc-run").click()
    page.wait_for_function(f"document.querySelectorAll('div.cell.pc-live')[{index}].dataset.state === 'running'")


def stop_and_read(page, index):
    """Once the cell runs (the runtime's state), press the runtime bar's Stop; return the cell's output once it ends."""
    before = runs(page, index)
    page.wait_for_function(
        "i => document.querySelectorAll('div.cell.pc-live')[i].dataset.state === 'running'", arg=index, timeout=TIMEOUT
    )
    page.locator(".pc-runtime .pc-stop").click()
    wait_runs(page, index, before + 1)
    return cell(page, index).locator(".cell_output").inner_text()


def assert_stop_keeps_the_namespace(page, kept: str) -> None:
    """Define ``kept`` in cell 0, Stop an endless loop there: KeyboardInterrupt, and ``kept`` survives."""
    set_code(page, 0, f"kept = {kept!r}")
    run_and_wait(page, 0)
    start_running(page, 0, "while True:\n    pass")
    assert "KeyboardInterrupt" in stop_and_read(page, 0)
    set_code(page, 0, "kept")
    assert run_and_wait(page, 0).strip() == repr(kept)


def check(page):
    """Press Check my code; return {check name: status} once the checks' run ended."""
    console = page.locator(".pc-checks")
    before = int(console.get_attribute("data-runs"))
    console.locator(".pc-run").click()
    page.wait_for_function("n => Number(document.querySelector('.pc-checks').dataset.runs) > n", arg=before, timeout=TIMEOUT)
    items = page.locator(".pc-check")
    return {
        items.nth(i).locator(".pc-check-name").inner_text(): items.nth(i).get_attribute("data-status") for i in range(items.count())
    }


def whole_page(page) -> str:
    """The whole page's count, "passed / total", from the console's line under its head (a page
    with later exercises: the head counts the first exercise's checks, each bar its own)."""
    text = page.locator(".pc-checks-parts").inner_text()
    match = re.match(r"The whole page: (\d+ / \d+) passed", text)
    assert match, text
    return match[1]


def open_page(page, base_url, name):
    """Open the page ``name`` (without .html) and wait until its Python is ready."""
    page.goto(f"{base_url}/{name}.html")
    page.wait_for_function(READY, timeout=TIMEOUT)


def cell_index(name, tag=None, contains=None, n=0):
    """The index of the page's ``n``-th code cell (from 0) with ``tag`` or containing ``contains``."""
    found = [
        i for i, (tags, code) in enumerate(code_cells(read_page(name))) if (tag and tag in tags) or (contains and contains in code)
    ]
    if len(found) <= n:
        raise LookupError(tag or contains)
    return found[n]


def exercise_indexes(name):
    """The cell index of each of the page's exercises, in page order."""
    return [i for i, (tags, _) in enumerate(code_cells(read_page(name))) if "exercise" in tags]
