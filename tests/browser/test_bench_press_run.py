"""The bench presses a lab page's Run the moment the page has made the button (benchmarks.PRESS_RUN).

A lab page's first output is timed from navigation to its first cell's output, with Run pressed as
soon as it exists. Pressed by Playwright (``dispatch_event``, which polls for the element between
the page's tasks), the click landed after ``DOMContentLoaded``, 140-480 ms after the button
appeared: on a second visit Python was ready by then, and the bench timed the harness.
"""

from __future__ import annotations

import importlib

import pytest

from tests.browser.helpers import TIMEOUT

pytestmark = pytest.mark.browser
bench = importlib.import_module("benchmarks.__main__")

FIRST_LIVE_CELL_DONE = "document.querySelector('div.cell.pc-live')?.dataset.state === 'done'"


def test_run_is_pressed_before_the_page_has_even_finished_loading_and_its_run_is_the_first_output(page, base_url):
    page.add_init_script(bench.PRESS_RUN)
    page.goto(f"{base_url}/paged_attention.html", wait_until="commit")
    page.wait_for_function(FIRST_LIVE_CELL_DONE, timeout=TIMEOUT)
    pressed, main_end, loaded = page.evaluate("""() => [
        performance.getEntriesByName('bench:run-pressed')[0].startTime,
        performance.getEntriesByName('pyodide-cells:main-end')[0].startTime,
        performance.getEntriesByType('navigation')[0].domContentLoadedEventStart,
    ]""")
    # In the microtask after the page's script made the button: before the document's next task.
    assert main_end <= pressed <= loaded, (
        f"pressed at {pressed:.0f} ms; the buttons were made at {main_end:.0f}, DOMContentLoaded at {loaded:.0f}"
    )
    # The press ran the first live cell, and that run is the page's first output.
    first_output = page.evaluate("performance.getEntriesByName('pyodide-cells:first-output')[0].startTime")
    assert first_output > pressed
    assert page.evaluate("window.pyodideCells.finishedRuns") >= 1
