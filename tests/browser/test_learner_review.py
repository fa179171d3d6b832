"""What a fresh learner's review of the rebuilt runtime found, each driven as they drove it."""

from __future__ import annotations

import pytest

from tests.browser.helpers import (
    READY,
    TIMEOUT,
    cell,
    cell_index,
    check,
    editor,
    exercise_indexes,
    open_lab,
    run_and_wait,
    runs,
    set_code,
    type_code,
    wait_runs,
)
from tests.pages import read_page, reference_solutions

pytestmark = pytest.mark.browser
EXERCISE, LATER = 0, 2


def test_check_my_code_checks_the_code_shown_not_the_last_run(page, base_url):
    page.goto(f"{base_url}/paged_attention.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    exercise = cell_index("paged_attention.md", tag="exercise")
    run_and_wait(page, exercise)  # the starter, as given
    for index, solution in zip(exercise_indexes("paged_attention.md"), reference_solutions(read_page("paged_attention.md"))):
        set_code(page, index, solution)  # fixed, but not run (both exercises of the page)
    assert set(check(page).values()) == {"passed"}  # it said "0 / 10 passed" for the old run
    page.once("dialog", lambda d: d.accept())
    cell(page, exercise).locator(".pc-reset").click()
    page.wait_for_function(f"document.querySelectorAll('div.cell.pc-live')[{exercise}].querySelector('.pc-edited').hidden")
    note = cell(page, exercise).locator(".pc-stale-note").inner_text()
    assert note.startswith("This output is from the code before Reset")
    from tests.test_paged_attention_page import ALL_CHECKS  # exercise 1's, whose cell was reset

    results = check(page)
    assert "passed" not in {results[name] for name in ALL_CHECKS}  # it said "10 / 10 passed" on the unfinished starter


def test_a_failed_download_of_the_interpreter_says_so_and_restart_retries(page, base_url, recorder, outage):
    wasm_offline = outage("**/pyodide.asm.wasm")
    page.goto(f"{base_url}/paged_attention.html")
    page.wait_for_function("document.documentElement.dataset.pyodideState === 'error'", timeout=TIMEOUT)
    text = page.locator(".pc-runtime-text").inner_text()
    assert "could not load the Python runtime" in text and "pyodide.asm.wasm" in text and ".." not in text
    wasm_offline.end()
    page.locator(".pc-runtime .pc-restart").click()
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert set(recorder.console_errors) <= {"Failed to load resource: net::ERR_FAILED"}
    recorder.console_errors.clear()


BUSY = "while True:  # until the learner presses Stop\n    pass\n"


@pytest.mark.parametrize("printing", ["print('step', 0)", "print('step', 0, flush=True)"])
def test_a_printed_line_shows_while_the_cell_goes_on(page, base_url, printing):
    """Each line showed only when the next one was printed, flush=True or not."""
    open_lab(page, base_url)
    set_code(page, LATER, f"{printing}\n{BUSY}")
    cell(page, LATER).locator(".pc-run").click()
    page.wait_for_function(
        "document.querySelectorAll('div.cell.pc-live')[2].querySelector('.cell_output').innerText.includes('step 0\\n')",
        timeout=TIMEOUT,
    )
    assert cell(page, LATER).get_attribute("data-state") == "running"
    page.locator(".pc-runtime .pc-stop").click()
    wait_runs(page, LATER, 1)


def test_shift_enter_brings_the_next_cell_into_view(phone_page, base_url):
    open_lab(phone_page, base_url)
    editor(phone_page, LATER).click()
    before = runs(phone_page, LATER)
    phone_page.keyboard.press("Shift+Enter")
    wait_runs(phone_page, LATER, before + 1)
    phone_page.wait_for_function("document.activeElement.closest('div.cell') === document.querySelectorAll('div.cell.pc-live')[3]")
    caret = phone_page.evaluate(
        "(() => { const r = getSelection().getRangeAt(0).getBoundingClientRect(); return [r.top, r.bottom]; })()"
    )
    bar = phone_page.locator(".pc-runtime").bounding_box()
    assert bar["y"] + bar["height"] <= caret[0] and caret[1] <= 844, (caret, bar)


def test_a_docstring_typed_by_hand_keeps_its_three_quotes(page, base_url):
    open_lab(page, base_url)
    type_code(page, LATER, 'def f():\n"""Doc."""\nreturn 1')
    assert cell(page, LATER).locator(".cm-content").inner_text() == 'def f():\n    """Doc."""\n    return 1'
    page.keyboard.press("Control+Enter")
    wait_runs(page, LATER, 1)
    assert cell(page, LATER).get_attribute("data-state") == "done"


def test_when_the_checks_themselves_fail_the_console_says_why(page, base_url):
    open_lab(page, base_url)
    set_code(page, LATER, "import builtins\nbuiltins.round = None")
    run_and_wait(page, LATER)
    check(page)
    summary = page.locator(".pc-checks-summary").inner_text()
    assert page.locator(".pc-checks").get_attribute("data-state") in {"failed", "error"}
    if page.locator(".pc-checks").get_attribute("data-state") == "error":
        assert "TypeError" in summary, summary
    page.wait_for_function(READY, timeout=TIMEOUT)
