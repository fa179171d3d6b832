"""The sandbox every lab shares: persistence, Stop, keyboard, accessibility, phones, no JS."""

from __future__ import annotations

import functools
import threading
from pathlib import Path

import pytest

from tests.background import serve_in_background
from tests.browser.helpers import (
    READY,
    TIMEOUT,
    assert_stop_keeps_the_namespace,
    cell,
    cell_index,
    editor,
    let_python_start,
    open_lab,
    run_and_wait,
    runs,
    set_code,
    start_running,
    stop_and_read,
    wait_cell,
    wait_editor,
    wait_runs,
    while_python_starts,
)
from tests.pages import LAB_NAMES, exercise_count, first_exercise_checks, read_page
from tests.plain_host import PlainHost

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
PAGES = ["index", *LAB_NAMES, "runtime"]
LAB_PAGES = LAB_NAMES

# Lab 3's cells the held-keys tests type into, found by their code (the page's order changes as it is
# laid out around its exercises): each is one case of what a learner types before CodeMirror is there.
PA = "paged_attention"
ERRORS = cell_index(f"{PA}.md", contains="for t in (48, -1):")  # "unchecked" and "would read slot" on later lines
SHOW = cell_index(f"{PA}.md", contains="def show(manager):")
DIAGRAM = cell_index(f"{PA}.md", contains="BLOCK_SIZE = 4")
BATCH = cell_index(f"{PA}.md", contains='lengths = {"a": 10, "b": 7}')
ATTENTION = cell_index(f"{PA}.md", contains="HEAD_DIM = 8")
MEMORY = cell_index(f"{PA}.md", contains="NUM_SEQUENCES = 64")
POOL = cell_index(f"{PA}.md", contains="pool = pa.BlockAllocator(num_blocks=2")
EXERCISE = cell_index(f"{PA}.md", tag="exercise")
LONG = cell_index(f"{PA}.md", contains="import copy")  # longer than CodeMirror's first parse
SHARING = cell_index(f"{PA}.md", contains="import labs.block_sharing as sharing")


def goto(page, base_url, name, wait_ready=True):
    page.goto(f"{base_url}/{name}.html")
    if wait_ready and page.locator("div.cell.pc-live").count():
        page.wait_for_function(READY, timeout=TIMEOUT)


def test_stop_interrupts_an_endless_loop_and_the_namespace_survives(page, base_url):
    open_lab(page, base_url)
    assert page.evaluate("crossOriginIsolated") is True  # the serve command sends COOP/COEP
    assert_stop_keeps_the_namespace(page, "still here")


def test_without_isolation_stop_restarts_python(browser, recorder, site_dir):
    """A static host that cannot send COOP/COEP: Stop terminates and restarts the worker."""
    host = PlainHost(site_dir)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.on("pageerror", lambda err: recorder.page_errors.append(str(err)))
        page.goto(f"{host.base}/micrograd.html")
        page.wait_for_function(READY, timeout=TIMEOUT)
        assert page.evaluate("crossOriginIsolated") is False
        set_code(page, 0, "while True:\n    pass")
        cell(page, 0).locator(".pc-run").click()
        page.wait_for_function("document.querySelectorAll('div.cell.pc-live')[0].dataset.state === 'running'")
        cell(page, 0).locator(".pc-run").click()  # the Run button is Stop while running
        wait_cell(page, 0)
        assert "namespace was reset" in cell(page, 0).locator(".cell_output").inner_text()
        page.wait_for_function(READY, timeout=TIMEOUT)
        assert "namespace was reset" in page.locator(".pc-runtime").inner_text()
        set_code(page, 0, "sum(range(10))")
        assert run_and_wait(page, 0).strip() == "45"
    finally:
        context.close()
        host.stop()
    assert recorder.page_errors == []


def test_keyboard_shift_enter_runs_and_moves_on_escape_then_tab_leaves(page, base_url):
    open_lab(page, base_url)
    set_code(page, 0, "from labs.autograd import build_neuron\no = build_neuron().o\no.backward()")
    page.keyboard.press("Shift+Enter")
    wait_cell(page, 0)
    assert page.evaluate("document.activeElement.closest('div.cell') === document.querySelectorAll('div.cell.pc-live')[1]")
    in_editor = "!!document.activeElement.closest('.cm-editor')"
    page.keyboard.press("Tab")  # in the editor, Tab indents: the focus stays
    assert page.evaluate(in_editor)
    page.keyboard.press("Control+Z")
    # Escape, then Shift+Tab twice: out of the editor, past Reset, to the cell's Run button.
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Tab")
    assert not page.evaluate(in_editor)
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.classList.contains('pc-run')")
    before = runs(page, 1)
    page.keyboard.press("Enter")  # the focused Run button
    wait_runs(page, 1, before + 1)
    assert "10 nodes · 9 edges" in cell(page, 1).locator("figcaption").inner_text()


@pytest.mark.parametrize("name", LAB_PAGES)
def test_pages_read_well_without_javascript(browser, base_url, name):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(f"{base_url}/{name}.html")
        assert page.locator(".pc-runtime").count() == 0
        assert page.locator("div.cell .cell_input pre").first.is_visible()  # the code, highlighted
        cells = page.locator("div.cell")
        assert cells.count() >= 2 and page.locator("div.cell .cell_output").count() == cells.count()  # baked outputs
        assert page.locator("div.doctest-block").count() >= 2
    finally:
        context.close()


def test_a_stop_does_not_hit_the_next_run_of_the_same_cell(page, base_url):
    """The grace timer of a Stop that worked must not restart Python under the next run."""
    open_lab(page, base_url)
    set_code(page, 0, "keep = 42")
    run_and_wait(page, 0)
    start_running(page, 0, "while True:\n    pass")
    cell(page, 0).locator(".pc-run").click()  # Stop
    wait_cell(page, 0)
    set_code(page, 0, "import time\ntime.sleep(3)\nkeep")
    assert run_and_wait(page, 0).strip() == "42"
    assert "namespace was reset" not in page.locator(".pc-runtime").inner_text()


def test_the_focus_stays_on_check_my_code(page, base_url):
    """The button disabled itself while the checks ran, which dropped the focus to the page."""
    open_lab(page, base_url)
    page.locator(".pc-checks .pc-run").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('.pc-checks').dataset.runs === '1'", timeout=TIMEOUT)
    assert page.evaluate("document.activeElement === document.querySelector('.pc-checks .pc-run')")
    page.keyboard.press("Enter")  # and the keyboard can check again
    page.wait_for_function("document.querySelector('.pc-checks').dataset.runs === '2'", timeout=TIMEOUT)
    own = len(first_exercise_checks("micrograd.md"))  # the console's head: exercise 1's checks
    assert page.locator(".pc-checks-summary").inner_text() == f"2 / {own} passed"  # micrograd's two starters


def test_stop_cancels_the_runs_queued_behind_the_running_cell(page, base_url):
    """Stop interrupts the running cell and cancels what was queued before it (as Jupyter does),
    so a queued endless loop cannot start after the Stop and force a restart."""
    open_lab(page, base_url)
    start_running(page, 0, "kept = 'still here'\nwhile True:\n    pass")
    # Kept as a promise in the page: awaiting it here would wait for the endless loop.
    page.evaluate("() => { window.queuedRun = window.pyodideCells.runCode('while True:\\n    pass'); }")
    assert "KeyboardInterrupt" in stop_and_read(page, 0)
    out = page.evaluate("window.queuedRun")
    assert out["state"] == "cancelled" and out["reason"] == "Stop was pressed before it ran"
    after = page.evaluate("window.pyodideCells.runCode('print(kept)')")
    assert after["stdout"] == "still here\n"
    assert "namespace was reset" not in page.locator(".pc-runtime").inner_text()


def test_a_click_on_the_code_before_its_editor_exists_puts_the_cursor_there(page, base_url):
    # Python held back: the editors on the screen wait for it, so the code is still the built one
    # (with a warm HTTP cache Python was ready, and the editor made, before the click).
    held = while_python_starts(page, base_url, PA)
    line = line_of(page, ERRORS, "unchecked")  # a later line, not the first
    line.click()
    page.keyboard.type("ZZZ")
    let_python_start(page, held)
    # CodeMirror may still be loading: the keys go in once the editor is there.
    page.wait_for_function("i => window.pyodideCells.cell(i).code.includes('ZZZ')", arg=ERRORS, timeout=TIMEOUT)
    text = code_of(page, ERRORS)
    first, rest = text.split("\n", 1)
    assert "ZZZ" not in first and "ZZZ" in rest


def test_when_codemirror_cannot_load_the_cell_says_so_and_a_later_click_tries_again(page, base_url, recorder, outage):
    editor_offline = outage("**/chunks/editor-*.js")  # offline before it was ever loaded
    page.goto(f"{base_url}/paged_attention.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    code = page.locator("div.cell.pc-live").nth(1).locator(".cell_input pre").first
    code.click()
    status = page.locator("div.cell.pc-live").nth(1).locator(".pc-cell-status")
    # Wait for the failure with no load under way: a click while the editor loads joins that load.
    wait_editor(page, 1, "failed")
    assert "could not load" in status.text_content()
    assert code.is_visible()  # the code still shows
    # The refused chunk was logged by the browser (once per attempt): expected here, and only this.
    assert recorder.console_errors and set(recorder.console_errors) == {"Failed to load resource: net::ERR_FAILED"}
    recorder.console_errors.clear()
    editor_offline.end()
    # Clicks as the learner's after the connection is back (DOM clicks: the cell is in view). The
    # editor all cells load is one chunk: a cell that came on the screen with the first click may
    # have begun a load before the outage ended, which the next click joins and which fails; the
    # cell then says so again, and the click after it loads.
    for _ in range(3):
        code.dispatch_event("click")
        if (state := wait_editor(page, 1, "shown", "failed")) == "shown":
            break
    assert state == "shown"
    assert status.text_content() == ""
    assert page.locator("div.cell.pc-live").nth(1).locator(".cm-content").is_visible()
    # A head start begun before the route was lifted may still have failed: the same error, and only it.
    assert set(recorder.console_errors) <= {"Failed to load resource: net::ERR_FAILED"}
    recorder.console_errors.clear()


def test_keys_in_an_editor_stay_there_and_its_cursor_is_never_under_the_status_bar(page, base_url):
    """Ctrl+Home scrolled the cell's first line under the sticky status bar. And Sphinx's page
    shortcuts (arrows turn pages, "/" searches) listen on the document."""
    open_lab(page, base_url)
    url = page.url
    editor(page, 0).click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Control+Home")
    # Waits for the scroll to bring the first line below the bar (a sleep of 300 ms was too short on
    # a loaded machine); a cursor left under the bar never gets there and times out.
    page.wait_for_function(
        """() => {
        const line = document.querySelector('div.cell.pc-live .cm-line').getBoundingClientRect();
        return line.top >= document.querySelector('.pc-runtime').getBoundingClientRect().bottom;
    }""",
        timeout=10_000,
    )
    set_code(page, 0, "x = 7")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowRight")
    page.keyboard.type(" // 2")
    page.wait_for_function("window.pyodideCells.cell(0).code === 'x = 7 // 2'", timeout=TIMEOUT)
    assert page.url == url
    assert page.evaluate("window.pyodideCells.cell(0).code") == "x = 7 // 2"
    assert page.locator("input.sidebar-search").input_value() == ""


def test_an_interpreter_abort_restarts_python(page, base_url, recorder):
    open_lab(page, base_url)
    set_code(page, 0, "import faulthandler\nfaulthandler._sigsegv()")
    cell(page, 0).locator(".pc-run").click()
    page.wait_for_function("document.querySelector('.pc-runtime').innerText.includes('restarted')", timeout=TIMEOUT)
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert cell(page, 0).get_attribute("data-state") == "interrupted"
    assert "Python crashed" in cell(page, 0).locator(".pc-cell-status").inner_text()
    assert page.evaluate("window.pyodideCells.runCode('print(6 * 7)')")["stdout"] == "42\n"
    # Pyodide itself reports its abort on the worker's console: expected here, and only that.
    assert recorder.console_errors and recorder.console_errors[0] == "Aborted()"
    recorder.console_errors.clear()


# Where the status bar and Furo's "Back to top" pill are after scrolling far
# down and a little back up (which makes Furo show the pill), and whether any
# element of the page sticks out of the content column without a scroll box of
# its own (the column clips on phones: that content could not be reached).
AFTER_SCROLL = """async () => {
    window.scrollTo({ top: 4000, behavior: "instant" });
    await new Promise((r) => setTimeout(r, 300));
    window.scrollTo({ top: 3800, behavior: "instant" });
    await new Promise((r) => setTimeout(r, 300));
    const box = (sel) => { const r = document.querySelector(sel).getBoundingClientRect(); return [r.top, r.bottom]; };
    const content = document.querySelector(".content");
    const right = content.getBoundingClientRect().right + 1;
    const unreachable = [...content.querySelectorAll("*")].filter((e) => {
        if (e.closest(".katex-mathml") || e.getBoundingClientRect().right <= right) return false;
        for (let a = e.parentElement; a && a !== content; a = a.parentElement) {
            if (getComputedStyle(a).overflowX !== "visible") return false;
        }
        return true;
    }).map((e) => e.tagName + "." + e.className);
    const pill = document.querySelector(".back-to-top");
    return { bar: box(".pc-runtime"), pill: getComputedStyle(pill).display === "none" ? null : box(".back-to-top"),
             header: getComputedStyle(document.querySelector(".mobile-header")).display === "none" ? 0
                 : document.querySelector(".mobile-header").getBoundingClientRect().bottom,
             unreachable };
}"""


# One visit of each page at each size: the accessibility check, the screenshot, the width, and on
# a lab page where the status bar is after a scroll (AFTER_SCROLL), were three visits and two more.
@pytest.mark.parametrize("name", PAGES)
@pytest.mark.long
def test_every_page_on_desktop_passes_axe_fits_and_keeps_its_status_bar_in_view(page, base_url, artifacts_dir, name):
    goto(page, base_url, name)
    if page.locator("div.cell.pc-live").count():
        # Code blocks that scroll are made keyboard-reachable once the first runs are done, in
        # idle time: on a loaded machine axe ran before that and found them (scrollable-region-focusable).
        page.wait_for_function("performance.getEntriesByName('pyodide-cells:code-reachable').length > 0", timeout=TIMEOUT)
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".filter(v => ['serious', 'critical'].includes(v.impact))"
        ".map(v => v.id + ': ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', '))"
    )
    assert violations == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    if name in LAB_PAGES:
        assert_exercises_near_the_top_and_their_check_bars(page, name)
    page.screenshot(path=str(artifacts_dir / f"{name}-desktop.png"), full_page=True)
    if name in LAB_PAGES:
        assert_status_bar_in_view(page)


SCREEN = 900  # px: the height of the `page` fixture's 1280 x 900 viewport


def assert_exercises_near_the_top_and_their_check_bars(page, name):
    """A learner meets the first exercise within three screens of reading, and presses Check my code
    without scrolling past more than a screen of other material (issue 38)."""
    page.evaluate("Promise.all([document.fonts.ready, window.pyodideCells.idle()]).then(() => undefined)")
    # Exercise 1's bar is the console's head; each later exercise's is its section's bar, in page order.
    exercises, bars = page.evaluate("""() => {
        const y = (e) => [e.getBoundingClientRect().top + scrollY, e.getBoundingClientRect().bottom + scrollY];
        return [[...document.querySelectorAll('div.cell.tag_exercise')].map(y),
                [document.querySelector('section.pc-checks'), ...document.querySelectorAll('.pc-checks-bar')].map(y)];
    }""")
    assert len(exercises) == len(bars) == exercise_count(read_page(f"{name}.md"))
    first_top = exercises[0][0]
    assert first_top <= 3 * SCREEN, f"{name}: the first exercise starts at y = {first_top:.0f} px"
    gaps = [bar_top - bottom for (_, bottom), (bar_top, _) in zip(exercises, bars)]
    assert all(0 <= gap <= SCREEN for gap in gaps), f"{name}: px from each exercise to its Check bar: {gaps}"


@pytest.mark.parametrize("name", PAGES)
def test_every_page_fits_a_phone_keeps_its_status_bar_in_view_and_is_screenshotted(phone_page, base_url, artifacts_dir, name):
    goto(phone_page, base_url, name)
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
    phone_page.screenshot(path=str(artifacts_dir / f"{name}-phone.png"), full_page=True)
    if name == "micrograd":
        assert_display_equations_use_the_phone_screen(phone_page)
    if name in LAB_PAGES:
        assert_status_bar_in_view(phone_page)


def assert_status_bar_in_view(page):
    """Furo makes its content column a scroll container on phones, which stopped the
    bar sticking (it scrolled away with the page), and its "Back to top" pill sat on the bar."""
    where = page.evaluate(AFTER_SCROLL)
    assert where["bar"][0] == pytest.approx(where["header"], abs=1), where  # under the header, or at the very top
    if where["pill"] is not None:
        assert where["pill"][0] >= where["bar"][1] or where["pill"][1] <= where["bar"][0], where
    assert where["unreachable"] == [], where


def assert_display_equations_use_the_phone_screen(page):
    """No room is kept for equation numbers (the guide shows none); a wider equation scrolls."""
    boxes = page.evaluate(
        """[...document.querySelectorAll('div.math')].map(m => {
            const html = m.querySelector('.katex-html');
            return { pad: getComputedStyle(m).paddingRight, box: m.clientWidth, width: html.clientWidth,
                     scroll: html.scrollWidth, overflow: getComputedStyle(html).overflowX };
        })"""
    )
    assert len(boxes) >= 2
    for b in boxes:
        assert b["pad"] == "0px" and b["width"] >= b["box"] - 8, b
        assert b["scroll"] <= b["width"] or b["overflow"] == "auto", b
    assert any(b["scroll"] <= b["width"] for b in boxes)  # o = tanh(n) fits now (it was cut at 318 px)


def code_of(page, index) -> str:
    return page.evaluate("i => window.pyodideCells.cell(i).code", index)


def original_of(page, index) -> str:
    return page.evaluate("i => window.pyodideCells.cell(i).original", index)


def test_an_edit_is_kept_over_reloads_its_old_output_says_so_and_reset_restores_the_original(page, base_url):
    open_lab(page, base_url)
    original, baked = original_of(page, 0), cell(page, 0).locator(".cell_output").inner_text()
    set_code(page, 0, "# my work in progress\nanswer = 6 * 7\nanswer")
    set_code(page, 1, "print('edited')")
    page.reload()
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert code_of(page, 0) == "# my work in progress\nanswer = 6 * 7\nanswer"
    assert cell(page, 0).locator(".pc-edited").is_visible()
    # The output shown is the original code's, and says so, until the edit runs.
    assert cell(page, 0).locator(".pc-stale-note").count() == 1
    assert "from the original code" in cell(page, 1).locator(".cell_output").inner_text()
    # Reset asks first; dismissing keeps the edit.
    page.once("dialog", lambda d: d.dismiss())
    cell(page, 0).locator(".pc-reset").click()
    assert code_of(page, 0).startswith("# my work in progress")
    page.once("dialog", lambda d: d.accept())
    cell(page, 0).locator(".pc-reset").click()
    page.wait_for_function("document.querySelector('div.cell.pc-live .pc-edited').hidden")
    assert code_of(page, 0) == original
    assert not cell(page, 0).locator(".pc-edited").is_visible()
    # The output is the original code's again: the note went.
    assert cell(page, 0).locator(".pc-stale-note").count() == 0
    assert cell(page, 0).locator(".cell_output").inner_text() == baked
    # The restored edit is what runs. Run after the Reset checks: run before them, cell 0 was
    # marked as run here too, and its note after Reset was "from the code before Reset".
    assert run_and_wait(page, 1).strip() == "edited"
    page.reload()
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert code_of(page, 0) == original


# What the page's output area (output.js, terminal.js) makes of what a run writes, in one visit.
# What Python's side does (runner.py: values cut, rich output over its own limit, doctest and
# unittest in cells, exit codes, a missing module) is tested in CPython (tests/test_cell_runner.py)
# and in Pyodide (tests/test_pyodide_suite.py); terminal.js's rules in node (tests/js/terminal.test.mjs).
OUTPUT_RUNS = [
    # A huge output is cut, and the page stays responsive.
    ("for i in range(100_000):\n    print(i)\nprint('end')", None),
    # The write that crosses the limit shows up to it, and the note counts the rest (a single
    # print longer than the limit showed nothing but the note, which left its characters out).
    ("print('a' * 150_000)\nprint('b' * 150_000)", None),
    # A huge traceback is cut too.
    ("raise ValueError('x' * 300_000)", None),
    # Rich output past the run's budget shows its text form (the first two are shown).
    (
        "\n".join(
            [
                "class Page:",
                "    def _repr_html_(self): return '<i>' + 'y' * 900_000 + '</i>'",
                "    def __repr__(self): return 'Page()'",
                "for _ in range(3): display(Page())",
            ]
        ),
        None,
    ),
    # Progress lines, colour codes and a carriage return, as a terminal shows them.
    (
        "\n".join(
            [
                "import sys, time",
                "for i in range(3):",
                "    print(f'\\r{i * 50}%', end='')",
                "    sys.stdout.flush(); time.sleep(0.06)  # separate writes, as a progress bar makes",
                "print('\\rdone')",
                "print('\\x1b[31mred\\x1b[0m and plain')",
                "print('abc\\rX')",
            ]
        ),
        "done\nred and plain\nXbc\n",
    ),
    # 400,000 characters written, one short line shown, not cut: "done" overwrites the
    # first four characters of "59999", as a terminal shows it.
    ("for i in range(60_000):\n    print(f'\\r{i}', end='')\nprint('\\rdone')", "done9\n"),
]


@pytest.mark.long
def test_the_output_area_cuts_what_is_too_big_and_reads_as_a_terminal(page, base_url):
    open_lab(page, base_url)
    outputs = []
    for code, expected in OUTPUT_RUNS:
        set_code(page, 0, code)
        outputs.append(run_and_wait(page, 0))
        if expected is not None:
            assert outputs[-1] == expected
        if "display(Page())" in code:
            assert cell(page, 0).locator(".cell_output i").count() == 2  # the first two are shown
        if "150_000" in code:
            shown = cell(page, 0).locator(".cell_output pre").all_inner_texts()
            assert "".join(shown) == "a" * 150_000 + "\n" + "b" * 49_999
            # 300,002 characters were printed (two newlines), 200,000 are shown.
            assert cell(page, 0).locator(".pc-truncated").inner_text() == "… output cut: 100,002 more characters not shown"
    huge, _, traceback, rich = outputs[:4]
    assert "output cut" in huge and "more characters not shown" in huge and len(huge) < 300_000
    assert page.evaluate("1 + 1") == 2  # the page answers
    assert "ValueError: xxxx" in traceback and "… traceback cut: " in traceback and len(traceback) < 201_000
    assert "Page()\n… 900,007 characters of rich output not shown: this run's outputs passed 2,000,000" in rich


def test_a_cells_state_follows_how_python_ended_it(page, base_url):
    """unittest.main() ends with sys.exit(0): the cell was an error; a deep recursion under a raised
    limit may overflow the browser's stack: the runtime stays usable."""
    open_lab(page, base_url)
    set_code(
        page,
        0,
        "\n".join(
            [
                "import unittest",
                "class TestSum(unittest.TestCase):",
                "    def test_sum(self):",
                "        self.assertEqual(1 + 1, 2)",
                "unittest.main()",
            ]
        ),
    )
    out = run_and_wait(page, 0)
    assert cell(page, 0).get_attribute("data-state") == "done"
    assert "OK" in out and out.rstrip().endswith("SystemExit: 0 (the cell ends here; Python and your names stay)"), out
    # Another code is an error, told in one line, and the cell says so.
    set_code(page, 0, "kept = 1\nraise SystemExit(3)")
    out = run_and_wait(page, 0)
    assert cell(page, 0).get_attribute("data-state") == "error"
    assert out.strip() == "SystemExit: 3 (the cell ends here; Python and your names stay)", out
    assert cell(page, 0).locator(".pc-cell-status").inner_text() == "Failed: see the error below"
    set_code(page, 0, "import sys\nsys.setrecursionlimit(100_000)\ndef f(n):\n    return f(n + 1)\nf(0)")
    out = run_and_wait(page, 0)
    assert "RecursionError" in out or "namespace was reset" in out
    page.wait_for_function(READY, timeout=TIMEOUT)
    set_code(page, 0, "2 ** 10")
    assert run_and_wait(page, 0).strip() == "1024"


# ------------------------------------------------- keys typed while CodeMirror loads ---
# keyhold.js's rules (what is held, when the hold ends) are tested in node
# (tests/js/keyhold.test.mjs); here, that the held keys go into the editor and
# nowhere else. The editor's chunk is held by the server until the test lets it
# go, so every key is typed while it loads, however loaded the machine.


class HeldEditor:
    """The site on an origin of its own whose answer for CodeMirror's chunk waits while held."""

    def __init__(self, site_dir):
        from pyodide_cells.serve import make_server

        self.free = threading.Event()
        self.free.set()
        free = self.free
        self.server = make_server(site_dir, port=0, quiet=True)
        handler = self.server.RequestHandlerClass  # functools.partial(SiteHandler, directory=...)

        class Held(handler.func):
            def send_head(self):
                if "/chunks/editor-" in self.path:
                    free.wait(TIMEOUT / 1000)
                return super().send_head()

        self.server.RequestHandlerClass = functools.partial(Held, *handler.args, **handler.keywords)
        serve_in_background(self.server)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def hold(self):
        self.free.clear()

    def release(self):
        self.free.set()


@pytest.fixture(scope="module")
def held_editor_server(site_dir):
    server = HeldEditor(site_dir)
    yield server
    server.release()
    server.server.shutdown()
    server.server.server_close()


@pytest.fixture
def held_editor(held_editor_server):
    yield held_editor_server
    held_editor_server.release()  # a request a test left waiting goes on


def shown_code(page, index):
    """The cell's code as the page shows it before its editor is there."""
    return cell(page, index).locator(".cell_input pre").first


def line_of(page, index, text):
    return shown_code(page, index).locator("span").filter(has_text=text).first


def editors_exist(page, indexes):
    return page.evaluate("ix => ix.map(i => window.pyodideCells.cell(i).editor === 'shown')", indexes)


def wait_code(page, index, predicate, arg=None):
    """Wait until ``predicate`` (JS, of the cell's code and ``arg``) holds of cell ``index``'s code."""
    page.wait_for_function(
        f"([i, arg]) => ((code, arg) => {predicate})(window.pyodideCells.cell(i).code, arg)", arg=[index, arg], timeout=TIMEOUT
    )


def test_keys_typed_while_codemirror_loads_go_into_each_cell_as_typed(page, held_editor):
    """Each cell is one case: a click on its code, keys, then a click on the next cell (which ends
    the hold of the one before, its keys kept). Found lost, doubled or misplaced before: characters,
    Backspace and Enter; a double click; Ctrl+A (selected the page), Ctrl+C, Ctrl+X (did nothing,
    or left a double-clicked word), Ctrl+Z (lost); Ctrl+Enter with a bracket; Enter at the end of a
    cell longer than CodeMirror's first parse (indented as inside a call); Ctrl+Home/End (let
    through); a bracket in a string (closed)."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    held_editor.hold()
    page.goto(f"{held_editor.base}/paged_attention.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    url = page.url
    cases = [ERRORS, SHOW, DIAGRAM, BATCH, ATTENTION, MEMORY, POOL, LONG, SHARING]
    original = {i: original_of(page, i) for i in cases}
    clipboard = "navigator.clipboard.readText()"
    search = page.locator("input.sidebar-search")

    # 7: characters, Backspace and Enter go in at the spot clicked (line 3, not the first).
    line_of(page, POOL, "pool.free").click()
    page.keyboard.type("ZZ Y")
    page.keyboard.press("Backspace")
    page.keyboard.press("Enter")
    page.keyboard.type("#")
    # 2: arrows and "/" are the page's shortcuts (they turn pages, search): not while held.
    line_of(page, SHOW, "def show").click()
    for key in ["End", "ArrowLeft", "ArrowRight"]:
        page.keyboard.press(key)
    page.keyboard.type(" // 2")
    # 3: Ctrl+A selects the cell's code, not the page; Ctrl+C copies it; typing replaces it.
    shown_code(page, DIAGRAM).click()
    page.keyboard.press("Control+A")
    assert page.evaluate("getSelection().toString()").strip() == original[DIAGRAM].strip()
    page.keyboard.press("Control+C")
    assert page.evaluate(clipboard).strip() == original[DIAGRAM].strip()
    page.keyboard.type("x = 1")
    # 5: Ctrl+Z undoes what was held.
    shown_code(page, ATTENTION).click()
    page.keyboard.press("Control+A")
    page.keyboard.type("x = 1")
    page.keyboard.press("Control+Z")
    # 1: a double click (two clicks: each key is still typed once), then Ctrl+X takes that word.
    line_of(page, ERRORS, "unchecked").dblclick()
    word = page.evaluate("getSelection().toString()")
    assert word.strip() and word in original[ERRORS]
    page.keyboard.press("Control+X")
    assert page.evaluate(clipboard) == word
    page.keyboard.type("QQ")
    # 4: Ctrl+A, Ctrl+X: all of the code goes to the clipboard (pasted back below).
    shown_code(page, BATCH).click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Control+X")
    assert page.evaluate(clipboard).strip() == original[BATCH].strip()
    # 6: Ctrl+Enter runs the cell, its bracket closed as the editor closes one.
    shown_code(page, MEMORY).click()
    page.keyboard.press("Control+A")
    page.keyboard.type("print(40 + 2")
    page.keyboard.press("Control+Enter")
    # 9, longer than CodeMirror's first parse: Enter after the call that ends it starts a new
    # statement; Ctrl+Home and Ctrl+End go to the code's start and end; "(" and "[" in a string stay open.
    assert len(original[LONG]) > 3000 and original[LONG].rstrip("\n").endswith(")")
    shown_code(page, LONG).locator("span").filter(has_text=")").last.click()  # on the call that ends the cell
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    page.keyboard.type("y = 2")
    page.keyboard.press("Control+Home")
    page.keyboard.type("# top ")
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.type('s = "f(x" + str([1')
    # 11: keys go where the learner went: into the code, then into the search box.
    shown_code(page, SHARING).click()
    page.keyboard.type("a")
    search.click()
    page.keyboard.type("softmax")

    assert not any(editors_exist(page, cases)), "every key above was typed while CodeMirror loaded"
    held_editor.release()
    for index in cases:
        wait_editor(page, index, "shown")

    wait_code(page, POOL, "code.includes('ZZ ')")
    lines, before = code_of(page, POOL).split("\n"), original[POOL].split("\n")
    edited = next(i for i, line in enumerate(lines) if "ZZ " in line)
    assert edited > 0 and "pool.free" in before[edited]  # the line clicked, not the first
    prefix = lines[edited][: lines[edited].index("ZZ ")]
    assert lines[edited] == prefix + "ZZ "  # typed at the spot clicked; Backspace took the Y
    rest = lines[edited + 1].lstrip()
    assert rest.startswith("#") and prefix + rest[1:] == before[edited]  # Enter split the line there
    assert len(lines) == len(before) + 1

    wait_code(page, SHOW, "code.includes(' // 2')")
    assert code_of(page, SHOW) == original[SHOW].replace("def show(manager):", "def show(manager): // 2", 1)
    assert page.url == url

    wait_code(page, DIAGRAM, "code === 'x = 1'")
    wait_code(page, ATTENTION, "code.trim() === arg", original[ATTENTION].strip())
    wait_code(page, ERRORS, "code.includes('QQ')")
    assert code_of(page, ERRORS).count("Q") == original[ERRORS].count("Q") + 2  # each key once
    assert code_of(page, ERRORS).replace("QQ", word, 1) == original[ERRORS]  # where the word was
    wait_code(page, BATCH, "code === ''")

    wait_cell(page, MEMORY)
    assert code_of(page, MEMORY) == "print(40 + 2)"
    assert cell(page, MEMORY).locator(".cell_output").inner_text().strip() == "42"

    wait_code(page, LONG, "code.includes('str([1')")
    lines = code_of(page, LONG).rstrip("\n").split("\n")
    assert lines[0] == "# top " + original[LONG].split("\n")[0]
    assert lines[-1] == 's = "f(x" + str([1])', lines[-3:]
    assert "y = 2" in lines[-3:], lines[-3:]  # at no indentation: a new statement

    wait_code(page, SHARING, "code.length === arg", len(original[SHARING]) + 1)
    assert "softmax" not in code_of(page, SHARING)
    assert search.input_value() == "softmax"
    assert page.evaluate("document.activeElement.classList.contains('sidebar-search')")  # not taken back
    assert page.url == url

    editor(page, BATCH).click()
    page.keyboard.press("Control+V")
    wait_code(page, BATCH, "code.trim() === arg", original[BATCH].strip())


def test_while_codemirror_loads_a_saved_edit_shows_and_the_focus_stays_where_the_learner_went(page, held_editor):
    page.goto(f"{held_editor.base}/paged_attention.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    set_code(page, EXERCISE, "print('my edit')")
    held_editor.hold()
    # The editor's chunk is in the HTTP cache now: a route (any) turns the cache off for this page,
    # so the reload asks the server for it again, and waits while it is held.
    page.route("**/chunks/editor-*", lambda route: route.continue_())
    page.reload()
    page.wait_for_function(READY, timeout=TIMEOUT)
    # The code shown before the editor is there is what Run would run, not the original.
    assert shown_code(page, EXERCISE).inner_text().strip() == "print('my edit')"
    original2 = original_of(page, SHOW)
    search = page.locator("input.sidebar-search")
    # Coming back to the code while it loads holds the keys again.
    shown_code(page, DIAGRAM).click()
    search.click()
    shown_code(page, DIAGRAM).click()
    page.keyboard.type("kkk")
    # A held Shift+Enter runs cell 1 and moves on to cell 2; the learner went elsewhere meanwhile.
    line_of(page, ERRORS, "would read slot").click()
    page.keyboard.press("Shift+Enter")
    search.click()
    page.keyboard.type("sof")
    assert editors_exist(page, [ERRORS, SHOW, DIAGRAM, EXERCISE]) == [False] * 4
    held_editor.release()
    wait_editor(page, SHOW, "shown")
    page.keyboard.type("tmax")
    assert search.input_value() == "softmax"  # the focus stayed there: cell 2 did not take it
    assert code_of(page, SHOW) == original2
    wait_code(page, DIAGRAM, "code.includes('kkk')")
