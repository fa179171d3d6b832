"""The sandbox every lab shares: persistence, Stop, keyboard, accessibility, phones, no JS."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.plain_host import PlainHost
from tests.browser.helpers import READY, TIMEOUT, assert_stop_keeps_the_namespace, cell, editor, open_lab, run_and_wait, runs, set_code, start_running, type_code, stop_and_read, wait_cell, wait_runs

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
PAGES = ["index", "micrograd", "online_softmax", "paged_attention", "runtime"]
LAB_PAGES = ["micrograd", "online_softmax", "paged_attention"]


def goto(page, base_url, name, wait_ready=True):
    page.goto(f"{base_url}/{name}.html")
    if wait_ready and page.locator("div.cell.pc-live").count():
        page.wait_for_function(READY, timeout=TIMEOUT)


def test_edits_persist_across_reloads_and_reset_restores(page, base_url):
    open_lab(page, base_url)
    original = page.evaluate("window.pyodideCells.runtime.cells[0].original")
    set_code(page, 0, "# my work in progress\nanswer = 6 * 7\nanswer")
    page.reload()
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert page.evaluate("window.pyodideCells.runtime.cells[0].code") == "# my work in progress\nanswer = 6 * 7\nanswer"
    assert cell(page, 0).locator(".pc-edited").is_visible()
    # Reset asks first; dismissing keeps the edit.
    page.once("dialog", lambda d: d.dismiss())
    cell(page, 0).locator(".pc-reset").click()
    assert page.evaluate("window.pyodideCells.runtime.cells[0].code").startswith("# my work in progress")
    page.once("dialog", lambda d: d.accept())
    cell(page, 0).locator(".pc-reset").click()
    assert page.evaluate("window.pyodideCells.runtime.cells[0].code") == original
    assert not cell(page, 0).locator(".pc-edited").is_visible()
    page.reload()
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert page.evaluate("window.pyodideCells.runtime.cells[0].code") == original


def test_stop_interrupts_an_endless_loop_and_the_namespace_survives(page, base_url):
    open_lab(page, base_url)
    assert page.evaluate("crossOriginIsolated") is True  # the serve command sends COOP/COEP
    assert_stop_keeps_the_namespace(page, "still here", after_ms=500)


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


def test_recursion_errors_leave_the_runtime_usable(page, base_url):
    open_lab(page, base_url)
    set_code(page, 0, "import sys\nsys.setrecursionlimit(100_000)\ndef f(n):\n    return f(n + 1)\nf(0)")
    out = run_and_wait(page, 0)
    assert "RecursionError" in out or "namespace was reset" in out
    page.wait_for_function(READY, timeout=TIMEOUT)
    set_code(page, 0, "2 ** 10")
    assert run_and_wait(page, 0).strip() == "1024"


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


@pytest.mark.parametrize("name", PAGES)
def test_no_serious_accessibility_violations(page, base_url, name):
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


@pytest.mark.parametrize("name", PAGES)
def test_every_page_fits_a_phone_and_is_screenshotted(phone_page, base_url, artifacts_dir, name):
    goto(phone_page, base_url, name)
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
    phone_page.screenshot(path=str(artifacts_dir / f"{name}-phone.png"), full_page=True)


@pytest.mark.parametrize("name", PAGES)
def test_every_page_on_desktop_is_screenshotted(page, base_url, artifacts_dir, name):
    goto(page, base_url, name)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    page.screenshot(path=str(artifacts_dir / f"{name}-desktop.png"), full_page=True)


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


def test_run_all_runs_every_cell_in_order(page, base_url):
    open_lab(page, base_url)
    page.locator(".pc-runtime .pc-run-all").click()
    page.wait_for_function(
        "[...document.querySelectorAll('div.cell.pc-live')].every(c => ['done', 'error'].includes(c.dataset.state))",
        timeout=TIMEOUT,
    )
    counters = page.locator("div.cell.pc-live .pc-count").all_inner_texts()
    assert all(c != "[ ]" for c in counters)
    assert page.evaluate("[...document.querySelectorAll('div.cell.pc-live')].every(c => c.dataset.state === 'done')")


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


def test_a_huge_output_is_cut_and_the_page_stays_responsive(page, base_url):
    open_lab(page, base_url)
    set_code(page, 0, "for i in range(100_000):\n    print(i)\nprint('end')")
    out = run_and_wait(page, 0)
    assert "output cut" in out and "more characters not shown" in out
    assert len(out) < 300_000
    assert page.evaluate("1 + 1") == 2  # the page answers


def test_the_write_that_crosses_the_output_limit_shows_up_to_it_and_the_note_counts_the_rest(page, base_url):
    """A single print longer than the limit showed nothing but the note, and the note
    left out the characters of the write that crossed the limit."""
    open_lab(page, base_url)
    set_code(page, 0, "print('a' * 150_000)\nprint('b' * 150_000)")
    run_and_wait(page, 0)
    shown = cell(page, 0).locator(".cell_output pre").all_inner_texts()
    assert "".join(shown) == "a" * 150_000 + "\n" + "b" * 49_999
    # 300,002 characters were printed (two newlines), 200,000 are shown.
    assert cell(page, 0).locator(".pc-truncated").inner_text() == "… output cut: 100,002 more characters not shown"


def test_a_huge_value_is_cut_like_printed_output(page, base_url):
    """The last expression's repr had no limit: 'b' * 40_000_000 froze the page for 14 s."""
    open_lab(page, base_url)
    set_code(page, 0, "'b' * 1_000_000")
    out = run_and_wait(page, 0)
    assert out.startswith("'" + "b" * 1000)
    assert out.rstrip().endswith("… output cut: 800,002 more characters not shown")
    assert page.evaluate("1 + 1") == 2


def test_a_huge_traceback_and_too_much_rich_output_are_cut_too(page, base_url):
    open_lab(page, base_url)
    set_code(page, 0, "raise ValueError('x' * 300_000)")
    out = run_and_wait(page, 0)
    assert "ValueError: xxxx" in out and "… traceback cut: " in out and len(out) < 201_000
    set_code(page, 0, "\n".join([
        "class Page:",
        "    def _repr_html_(self): return '<i>' + 'y' * 900_000 + '</i>'",
        "    def __repr__(self): return 'Page()'",
        "for _ in range(3): display(Page())",
    ]))
    out = run_and_wait(page, 0)
    assert "Page()\n… 900,007 characters of rich output not shown: this run's outputs passed 2,000,000" in out
    assert cell(page, 0).locator(".cell_output i").count() == 2  # the first two are shown


def test_restored_edits_say_the_output_is_from_the_original_code(page, base_url):
    open_lab(page, base_url)
    set_code(page, 0, "print('edited')")
    page.reload()
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert "from the original code" in cell(page, 0).locator(".cell_output").inner_text()
    assert run_and_wait(page, 0).strip() == "edited"


def test_reset_takes_the_stale_output_note_away(page, base_url):
    """The note said the output was from the original code; after Reset it is again, and the note went."""
    open_lab(page, base_url)
    baked = cell(page, 0).locator(".cell_output").inner_text()
    set_code(page, 0, "print('edited')")
    page.reload()
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert cell(page, 0).locator(".pc-stale-note").count() == 1
    page.once("dialog", lambda d: d.accept())
    cell(page, 0).locator(".pc-reset").click()
    page.wait_for_function("document.querySelector('div.cell.pc-live .pc-edited').hidden")
    assert cell(page, 0).locator(".pc-stale-note").count() == 0
    assert cell(page, 0).locator(".cell_output").inner_text() == baked.replace(
        "This output is from the original code; run the cell to see what your edited code gives.\n", "")


def test_the_focus_stays_on_check_my_code(page, base_url):
    """The button disabled itself while the checks ran, which dropped the focus to the page."""
    open_lab(page, base_url)
    page.locator(".pc-checks .pc-run").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('.pc-checks').dataset.runs === '1'", timeout=TIMEOUT)
    assert page.evaluate("document.activeElement === document.querySelector('.pc-checks .pc-run')")
    page.keyboard.press("Enter")  # and the keyboard can check again
    page.wait_for_function("document.querySelector('.pc-checks').dataset.runs === '2'", timeout=TIMEOUT)
    assert page.locator(".pc-checks-summary").inner_text() == "2 / 33 passed"  # micrograd's two starters


def test_stop_cancels_the_runs_queued_behind_the_running_cell(page, base_url):
    """Stop interrupts the running cell and cancels what was queued before it (as Jupyter does),
    so a queued endless loop cannot start after the Stop and force a restart."""
    open_lab(page, base_url)
    start_running(page, 0, "kept = 'still here'\nwhile True:\n    pass")
    # Kept as a promise in the page: awaiting it here would wait for the endless loop.
    page.evaluate("() => { window.queuedRun = window.pyodideCells.runCode('while True:\\n    pass'); }")
    assert "KeyboardInterrupt" in stop_and_read(page, 0, after_ms=300)
    out = page.evaluate("window.queuedRun")
    assert out["state"] == "cancelled" and out["reason"] == "Stop was pressed before it ran"
    after = page.evaluate("window.pyodideCells.runCode('print(kept)')")
    assert after["stdout"] == "still here\n"
    assert "namespace was reset" not in page.locator(".pc-runtime").inner_text()


def test_a_click_on_the_code_before_its_editor_exists_puts_the_cursor_there(page, base_url):
    page.goto(f"{base_url}/paged_attention.html")  # Python may still be loading: editors wait
    code = page.locator("div.cell.pc-live").nth(1).locator(".cell_input pre").first
    line = code.locator("span").filter(has_text="unchecked").first  # line 7, not the first
    line.click()
    page.keyboard.type("ZZZ")
    # CodeMirror may still be loading: the keys go in once the editor is there.
    page.wait_for_function("window.pyodideCells.runtime.cells[1].code.includes('ZZZ')", timeout=TIMEOUT)
    text = page.evaluate("window.pyodideCells.runtime.cells[1].code")
    first, rest = text.split("\n", 1)
    assert "ZZZ" not in first and "ZZZ" in rest


def slow_editor(handler, seconds=1.5):
    """A handler that answers for CodeMirror's chunk after ``seconds``, like a slow network."""

    class Slow(handler):
        def send_head(self):
            if "/chunks/editor-" in self.path:
                time.sleep(seconds)
            return super().send_head()

    return Slow


def test_keys_typed_while_codemirror_loads_are_not_lost(page, own_server):
    page.goto(f"{own_server(slow_editor)}/paged_attention.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert page.evaluate("window.pyodideCells.runtime.cells[1].editor") is None
    code = page.locator("div.cell.pc-live").nth(1).locator(".cell_input pre").first
    code.locator("span").filter(has_text="unchecked").first.click()  # line 7: CodeMirror is on its way
    page.keyboard.type("ZZ Y")
    page.keyboard.press("Backspace")
    page.keyboard.press("Enter")
    page.keyboard.type("#")
    assert page.evaluate("window.pyodideCells.runtime.cells[1].editor") is None  # still loading
    page.wait_for_function("window.pyodideCells.runtime.cells[1].code.includes('ZZ ')", timeout=TIMEOUT)
    text = page.evaluate("window.pyodideCells.runtime.cells[1].code")
    original = page.evaluate("window.pyodideCells.runtime.cells[1].original")
    lines, before = text.split("\n"), original.split("\n")
    edited = next(i for i, line in enumerate(lines) if "ZZ " in line)
    assert edited > 0 and "unc" in before[edited]  # the line clicked, not the first
    prefix = lines[edited][: lines[edited].index("ZZ ")]
    assert lines[edited] == prefix + "ZZ "  # typed at the spot clicked; Backspace took the Y
    rest = lines[edited + 1].lstrip()
    assert rest.startswith("#") and prefix + rest[1:] == before[edited]  # Enter split the line there
    assert len(lines) == len(before) + 1


def open_with_slow_editor(page, own_server, name="paged_attention"):
    """A lab page whose CodeMirror chunk takes 1.5 s to arrive; Python ready."""
    page.goto(f"{own_server(slow_editor)}/{name}.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    return page.locator("div.cell.pc-live").nth(1).locator(".cell_input pre").first


def test_a_double_click_while_codemirror_loads_types_each_key_once(page, own_server):
    code = open_with_slow_editor(page, own_server)
    code.locator("span").filter(has_text="unchecked").first.dblclick()
    page.keyboard.type("QQ")
    page.wait_for_function("window.pyodideCells.runtime.cells[1].editor !== null", timeout=TIMEOUT)
    page.wait_for_timeout(200)
    original = page.evaluate("window.pyodideCells.runtime.cells[1].original")
    assert page.evaluate("window.pyodideCells.runtime.cells[1].code").count("Q") == original.count("Q") + 2


def test_select_all_while_codemirror_loads_selects_the_cells_code_not_the_page(page, own_server):
    """Ctrl+A selected the whole page, and what came next went in where the learner had clicked:
    a learner who selected all and typed (or pasted) a solution got it mixed into the old code.
    Ctrl+C then copied the page, and Ctrl+Z was lost."""
    code = open_with_slow_editor(page, own_server)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    original = page.evaluate("window.pyodideCells.runtime.cells[1].original").strip()
    code.click()
    page.keyboard.press("Control+A")
    assert page.evaluate("getSelection().toString()").strip() == original  # the cell's code, not the page
    page.keyboard.press("Control+C")
    assert page.evaluate("navigator.clipboard.readText()").strip() == original
    page.keyboard.type("x = 1")
    page.wait_for_function("window.pyodideCells.runtime.cells[1].editor !== null", timeout=TIMEOUT)
    page.wait_for_function("window.pyodideCells.runtime.cells[1].code === 'x = 1'", timeout=TIMEOUT)


def test_cut_while_codemirror_loads_takes_the_cells_code_to_the_clipboard(page, own_server):
    """Ctrl+X after Ctrl+A while the editor loaded did nothing: the code stayed, and the
    clipboard did not have it."""
    code = open_with_slow_editor(page, own_server)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.evaluate("navigator.clipboard.writeText('before')")
    original = page.evaluate("window.pyodideCells.runtime.cells[1].original").strip()
    code.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Control+X")
    assert page.evaluate("navigator.clipboard.readText()").strip() == original
    page.wait_for_function("window.pyodideCells.runtime.cells[1].editor !== null", timeout=TIMEOUT)
    page.wait_for_function("window.pyodideCells.runtime.cells[1].code === ''", timeout=TIMEOUT)
    page.keyboard.press("Control+V")
    page.wait_for_function("c => window.pyodideCells.runtime.cells[1].code.trim() === c", arg=original, timeout=TIMEOUT)


def test_cut_of_a_word_while_codemirror_loads_takes_that_word(page, own_server):
    """The page's selection went to the clipboard, but the editor deleted its own selection
    (none, or all after Ctrl+A): a word double-clicked and cut stayed in the code."""
    code = open_with_slow_editor(page, own_server)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    original = page.evaluate("window.pyodideCells.runtime.cells[1].original")
    code.locator("span").filter(has_text="unchecked").first.dblclick()
    word = page.evaluate("getSelection().toString()")
    assert word.strip() and word in original
    page.keyboard.press("Control+X")
    assert page.evaluate("navigator.clipboard.readText()") == word
    page.wait_for_function("window.pyodideCells.runtime.cells[1].editor !== null", timeout=TIMEOUT)
    at = original.index(word)
    page.wait_for_function("c => window.pyodideCells.runtime.cells[1].code === c", arg=original[:at] + original[at + len(word):], timeout=TIMEOUT)


def test_undo_while_codemirror_loads_undoes_what_was_held(page, own_server):
    """Ctrl+Z while the editor loaded went to the page, and was lost."""
    code = open_with_slow_editor(page, own_server)
    original = page.evaluate("window.pyodideCells.runtime.cells[1].original").strip()
    code.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("x = 1")
    page.keyboard.press("Control+Z")
    page.wait_for_function("window.pyodideCells.runtime.cells[1].editor !== null", timeout=TIMEOUT)
    assert page.evaluate("window.pyodideCells.runtime.cells[1].code").strip() == original


def test_keys_go_where_the_learner_went_while_codemirror_loads(page, own_server):
    code = open_with_slow_editor(page, own_server)
    code.click()
    page.keyboard.type("a")  # meant for the code
    page.locator("input.sidebar-search").click()  # then off to the search box
    page.keyboard.type("softmax")
    page.wait_for_function("window.pyodideCells.runtime.cells[1].editor !== null", timeout=TIMEOUT)
    page.wait_for_timeout(200)
    assert page.locator("input.sidebar-search").input_value() == "softmax"
    assert page.evaluate("document.activeElement.classList.contains('sidebar-search')")  # not taken back
    code_now = page.evaluate("window.pyodideCells.runtime.cells[1].code")
    assert "softmax" not in code_now and len(code_now) == len(page.evaluate("window.pyodideCells.runtime.cells[1].original")) + 1


def test_ctrl_enter_and_a_bracket_typed_while_codemirror_loads(page, own_server):
    code = open_with_slow_editor(page, own_server)
    code.locator("span").filter(has_text="would read slot").first.click()  # the last line
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    page.keyboard.type("print(40 + 2")  # the editor closes the bracket, as when typing in it
    page.keyboard.press("Control+Enter")
    page.wait_for_function("window.pyodideCells.runtime.cells[1].editor !== null", timeout=TIMEOUT)
    wait_cell(page, 1)
    assert "print(40 + 2)" in page.evaluate("window.pyodideCells.runtime.cells[1].code")
    assert "42" in cell(page, 1).locator(".cell_output").inner_text()


def test_a_saved_edit_shows_before_its_editor_exists(page, own_server):
    base = own_server(slow_editor)
    page.goto(f"{base}/paged_attention.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    page.evaluate("window.pyodideCells.runtime.cells[1].ensureEditor()")
    set_code(page, 1, "print('my edit')")
    page.reload()
    code = page.locator("div.cell.pc-live").nth(1).locator(".cell_input pre").first
    assert code.inner_text().strip() == "print('my edit')"  # what Run would run, not the original


def test_when_codemirror_cannot_load_the_cell_says_so_and_a_later_click_tries_again(page, base_url, recorder, outage):
    editor_offline = outage("**/chunks/editor-*.js")  # offline before it was ever loaded
    page.goto(f"{base_url}/paged_attention.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    code = page.locator("div.cell.pc-live").nth(1).locator(".cell_input pre").first
    code.click()
    status = page.locator("div.cell.pc-live").nth(1).locator(".pc-cell-status")
    page.wait_for_function(
        "document.querySelectorAll('div.cell.pc-live')[1].querySelector('.pc-cell-status').textContent.includes('could not load')",
        timeout=TIMEOUT,
    )
    assert code.is_visible()  # the code still shows
    # The refused chunk was logged by the browser (once per attempt): expected here, and only this.
    assert recorder.console_errors and set(recorder.console_errors) == {"Failed to load resource: net::ERR_FAILED"}
    recorder.console_errors.clear()
    editor_offline.end()
    # A DOM click: the cell scrolled into view, so an editor may be on its way already.
    code.dispatch_event("click")
    page.wait_for_function("window.pyodideCells.runtime.cells[1].editor !== null", timeout=TIMEOUT)
    assert status.text_content() == ""
    assert page.locator("div.cell.pc-live").nth(1).locator(".cm-content").is_visible()
    # A head start begun before the route was lifted may still have failed: the same error, and only it.
    assert set(recorder.console_errors) <= {"Failed to load resource: net::ERR_FAILED"}
    recorder.console_errors.clear()


def test_doctest_testmod_and_unittest_main_in_cells_test_what_the_cells_defined(page, base_url):
    """Both tested the worker's own __main__: "TestResults(failed=0, attempted=0)", "Ran 0 tests"."""
    open_lab(page, base_url)
    set_code(page, 0, "\n".join([
        "import doctest, unittest",
        "def double(x):",
        '    """',
        "    >>> double(21)",
        "    42",
        '    """',
        "    return 2 * x",
        "class TestDouble(unittest.TestCase):",
        "    def test_double(self):",
        "        self.assertEqual(double(2), 4)",
        "unittest.main(argv=['cell'], exit=False)",
        "doctest.testmod()",
    ]))
    out = run_and_wait(page, 0)
    assert "Ran 1 test in" in out and out.endswith("TestResults(failed=0, attempted=1)"), out


def test_unittest_main_that_passes_ends_its_cell_as_done_not_as_an_error(page, base_url):
    """unittest.main() ends with sys.exit(0): the cell was an error, with a traceback through unittest."""
    open_lab(page, base_url)
    set_code(page, 0, "\n".join([
        "import unittest",
        "class TestSum(unittest.TestCase):",
        "    def test_sum(self):",
        "        self.assertEqual(1 + 1, 2)",
        "unittest.main()",
    ]))
    out = run_and_wait(page, 0)
    assert cell(page, 0).get_attribute("data-state") == "done"
    assert "OK" in out and out.rstrip().endswith("SystemExit: 0 (the cell ends here; Python and your names stay)"), out
    # Another code is an error, told in one line: no frames of whatever called exit.
    set_code(page, 0, "kept = 1\nraise SystemExit(3)")
    out = run_and_wait(page, 0)
    assert cell(page, 0).get_attribute("data-state") == "error"
    assert out.strip() == "SystemExit: 3 (the cell ends here; Python and your names stay)", out
    assert cell(page, 0).locator(".pc-cell-status").inner_text() == "Failed: see the error below"


def test_output_reads_as_a_terminal_shows_it_progress_lines_and_colour_codes(page, base_url):
    open_lab(page, base_url)
    set_code(page, 0, "\n".join([
        "import sys, time",
        "for i in range(3):",
        "    print(f'\\r{i * 50}%', end='')",
        "    sys.stdout.flush(); time.sleep(0.06)  # separate writes, as a progress bar makes",
        "print('\\rdone')",
        "print('\\x1b[31mred\\x1b[0m and plain')",
        "print('abc\\rX')",
    ]))
    assert run_and_wait(page, 0) == "done\nred and plain\nXbc\n"


def test_keys_in_an_editor_do_not_turn_the_page_or_jump_to_search(page, base_url):
    """Sphinx's page shortcuts (arrows turn pages, "/" searches) listen on the document."""
    open_lab(page, base_url)
    url = page.url
    set_code(page, 0, "x = 7")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowRight")
    page.keyboard.type(" // 2")
    page.wait_for_timeout(300)
    assert page.url == url
    assert page.evaluate("window.pyodideCells.runtime.cells[0].code") == "x = 7 // 2"
    assert page.locator("input.sidebar-search").input_value() == ""


def test_held_keys_do_not_turn_the_page_either(page, own_server):
    code = open_with_slow_editor(page, own_server)
    url = page.url
    code.locator("span").filter(has_text="would read slot").first.click()
    page.keyboard.press("End")
    page.keyboard.press("ArrowRight")
    page.keyboard.type(" // 2")
    page.wait_for_function("window.pyodideCells.runtime.cells[1].code.includes(' // 2')", timeout=TIMEOUT)
    assert page.url == url and page.locator("input.sidebar-search").input_value() == ""


def test_a_learner_who_went_elsewhere_keeps_the_focus_after_a_held_shift_enter(page, own_server):
    code = open_with_slow_editor(page, own_server)
    code.locator("span").filter(has_text="would read slot").first.click()
    page.keyboard.press("Shift+Enter")  # runs cell 1 and would move on to cell 2
    page.locator("input.sidebar-search").click()
    page.keyboard.type("sof")
    page.wait_for_function("window.pyodideCells.runtime.cells[2].editor !== null", timeout=TIMEOUT)
    page.keyboard.type("tmax")
    assert page.locator("input.sidebar-search").input_value() == "softmax"
    assert page.evaluate("window.pyodideCells.runtime.cells[2].code === window.pyodideCells.runtime.cells[2].original")


def test_coming_back_to_the_code_while_it_loads_holds_the_keys_again(page, own_server):
    code = open_with_slow_editor(page, own_server)
    code.locator("span").filter(has_text="would read slot").first.click()
    page.locator("input.sidebar-search").click()
    code.locator("span").filter(has_text="would read slot").first.click()
    page.keyboard.type("kkk")
    page.wait_for_function("window.pyodideCells.runtime.cells[1].code.includes('kkk')", timeout=TIMEOUT)
    assert page.locator("input.sidebar-search").input_value() == ""


def test_a_long_progress_bar_is_one_line_and_not_cut(page, base_url):
    open_lab(page, base_url)
    set_code(page, 0, "for i in range(60_000):\n    print(f'\\r{i}', end='')\nprint('\\rdone')")
    # 400,000 characters written, one short line shown: "done" overwrites the
    # first four characters of "59999", as a terminal shows it.
    assert run_and_wait(page, 0) == "done9\n"


def test_the_cursor_is_never_scrolled_under_the_status_bar(page, base_url):
    open_lab(page, base_url)
    editor(page, 0).click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Control+Home")
    page.wait_for_timeout(300)
    first_line = cell(page, 0).locator(".cm-line").first.bounding_box()
    bar = page.locator(".pc-runtime").bounding_box()
    assert first_line["y"] >= bar["y"] + bar["height"]


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


def test_display_equations_use_the_phone_screen_and_scroll_when_wider(phone_page, base_url):
    """No room is kept for equation numbers (the guide shows none); a wider equation scrolls."""
    phone_page.goto(f"{base_url}/micrograd.html")
    boxes = phone_page.evaluate(
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


@pytest.mark.parametrize("name", LAB_PAGES)
@pytest.mark.parametrize("device", ["phone", "desktop"])
def test_the_status_bar_stays_in_view_and_nothing_covers_it(page, phone_page, base_url, name, device):
    """Furo makes its content column a scroll container on phones, which stopped the
    bar sticking (it scrolled away with the page), and its "Back to top" pill sat on the bar."""
    p = phone_page if device == "phone" else page
    goto(p, base_url, name)
    where = p.evaluate(AFTER_SCROLL)
    assert where["bar"][0] == pytest.approx(where["header"], abs=1), where  # under the header, or at the very top
    if where["pill"] is not None:
        assert where["pill"][0] >= where["bar"][1] or where["pill"][1] <= where["bar"][0], where
    assert where["unreachable"] == [], where


def test_importing_a_standard_library_module_the_page_lacks_says_why(page, base_url):
    """Pyodide leaves sqlite3 out of the browser: "No module named 'sqlite3'" alone reads as a typo."""
    open_lab(page, base_url)
    type_code(page, 0, "import sqlite3")
    out = run_and_wait(page, 0, via="keys")
    assert "ModuleNotFoundError: No module named 'sqlite3'" in out, out
    assert "sqlite3 is in CPython's standard library, but not in this Python" in out, out
    assert "Run this code with Python on your computer." in out, out


def test_enter_typed_while_codemirror_loads_indents_from_the_code_above(page, own_server):
    """Held keys' Enter skipped the parse up to the cursor (editor.js): at the end of a cell longer
    than CodeMirror's first parse, it copied the line's indentation (6, inside a call) for a new
    statement, and the cell failed with IndentationError (found by the learner review)."""
    page.goto(f"{own_server(lambda handler: slow_editor(handler, 4))}/paged_attention.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    index = 9
    original = page.evaluate(f"window.pyodideCells.runtime.cells[{index}].original")
    assert len(original) > 3000 and original.rstrip("\n").endswith('"(block 0 should be shared)")')
    code = page.locator("div.cell.pc-live").nth(index).locator(".cell_input pre").first
    code.locator("span").filter(has_text="(block 0 should be shared)").last.click()
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    page.keyboard.type("y = 2")
    assert page.evaluate(f"window.pyodideCells.runtime.cells[{index}].editor") is None  # still loading
    page.wait_for_function(f"window.pyodideCells.runtime.cells[{index}].code.includes('y = 2')", timeout=TIMEOUT)
    lines = page.evaluate(f"window.pyodideCells.runtime.cells[{index}].code").rstrip("\n").split("\n")
    assert lines[-1] == "y = 2", lines[-3:]


def test_a_bracket_typed_in_a_string_while_codemirror_loads_is_not_closed(page, own_server):
    """The held keys close brackets as the editor does: in code, not in a string. And Ctrl+End,
    pressed while it loads, goes to the end of the code (it was let through to the page, and
    what followed went in where the learner clicked; found by the learner review)."""
    page.goto(f"{own_server(lambda handler: slow_editor(handler, 4))}/paged_attention.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    index = 9
    code = page.locator("div.cell.pc-live").nth(index).locator(".cell_input pre").first
    code.locator("span").first.click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.type('s = "f(x" + str([1')
    assert page.evaluate(f"window.pyodideCells.runtime.cells[{index}].editor") is None  # still loading
    page.wait_for_function(f"window.pyodideCells.runtime.cells[{index}].code.includes('str([1')", timeout=TIMEOUT)
    last = page.evaluate(f"window.pyodideCells.runtime.cells[{index}].code").rstrip("\n").split("\n")[-1]
    assert last == 's = "f(x" + str([1])', last
