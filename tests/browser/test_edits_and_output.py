"""Saved edits and long output, the way a learner meets them (issue 13, defects 6 and 7).

- Storage full: several sites share one origin on a user's GitHub Pages, and
  another site may have filled its localStorage. An edit that cannot be saved
  says so on the cell, and leaving the page asks first; once there is room
  again, the next keystroke saves it.
- Two tabs of one page share their edits: a cell not changed in one tab takes
  the other tab's edit; a cell changed in both asks, and neither tab's code is
  saved over the other until the learner chooses.
- Long output: 100,000 printed lines keep the page short; the stream box has
  a limited height, follows the end unless the learner scrolled up in it, can
  be reached with the keyboard, and a note below it says how much was cut.

Other sites' data is put into localStorage with ``page.evaluate``, as another
site on the same origin would; what is saved is read back the same way. The
two-tab tests also note, in each tab, the storage events it receives, to know
when a tab has caught up with the other (see ``settled``).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.browser.helpers import READY, TIMEOUT, cell, editor, open_lab, run_and_wait, runs, set_code, type_code, wait_runs
from tests.pages import LAB_NAMES

pytestmark = pytest.mark.browser
EXERCISE = 0  # micrograd's first cell: the exercise, a long cell
# No cell of the page is queued or running (every run asked for has ended).
NOTHING_WAITS = "![...document.querySelectorAll('div.cell.pc-live')].some(c => ['queued', 'running'].includes(c.dataset.state))"
KEY = "pyodide-cells:v1:/micrograd:cell-0"  # where the runtime keeps cell 0's edit
FILLER = "another-site:filler-"  # keys another site on this origin keeps

# ------------------------------------------------------------------ helpers

# Fill localStorage the way another site on this origin might: big strings
# under its own keys, halving the size whenever setItem throws, until not even
# a one-character key fits; then its last string grows the same way, until not
# one more character fits anywhere. Returns how many characters it stored.
FILL_STORAGE = """prefix => {
  const put = (key, value) => {
    try {
      localStorage.setItem(key, value);
      return true;
    } catch (err) {
      if (err.name !== 'QuotaExceededError') throw err;
      return false;
    }
  };
  let n = 0, stored = 0, last = '';
  for (let size = 1 << 20; size >= 1; ) {
    const value = 'x'.repeat(size);
    if (put(prefix + n, value)) {
      last = value;
      n += 1;
      stored += size;
    } else size = Math.floor(size / 2);
  }
  for (let size = 64; n && size >= 1; ) {
    if (put(prefix + (n - 1), last + 'x'.repeat(size))) {
      last += 'x'.repeat(size);
      stored += size;
    } else size = Math.floor(size / 2);
  }
  return stored;
}"""

# How many characters of another site's filler (FILL_STORAGE's count) this tab's localStorage shows.
FILLER_SEEN = """([prefix, filled]) => Object.keys(localStorage).filter((k) => k.startsWith(prefix))
  .reduce((sum, k) => sum + localStorage.getItem(k).length, 0) === filled"""

FREE_STORAGE = """prefix => {
  for (const key of Object.keys(localStorage)) if (key.startsWith(prefix)) localStorage.removeItem(key);
}"""

# The code a cell shows: its editor's lines (CodeMirror draws the lines near
# the screen, the first ones included), or the highlighted code it was built with.
SHOWN_CODE = """i => {
  const box = document.querySelectorAll('div.cell.pc-live')[i];
  const cm = box.querySelector('.cm-content');
  if (cm) return [...cm.querySelectorAll('.cm-line')].map((line) => line.textContent).join('\\n');
  return box.querySelector('.cell_input pre').textContent;
}"""


def stored(page) -> str | None:
    """Cell 0's saved edit, as the page's localStorage holds it."""
    return page.evaluate("k => localStorage.getItem(k)", KEY)


def first_line(page, index=EXERCISE) -> str:
    return page.evaluate(SHOWN_CODE, index).split("\n", 1)[0]


def type_at_top(page, text, index=EXERCISE):
    """Click into the cell's code, go to its very start, type ``text`` key by key."""
    editor(page, index).click()
    page.keyboard.press("Control+Home")
    page.keyboard.type(text)


def switch_to(page):
    """The learner looks at this tab (its timers and frames run as a shown tab's do)."""
    page.bring_to_front()
    return page


def expect_first_line(page, text, index=EXERCISE, timeout=TIMEOUT):
    """Wait until the cell's code starts with the line ``text`` (the runtime shows it); say what it shows if not."""
    switch_to(page)
    try:
        page.wait_for_function(f"([i, t]) => ({SHOWN_CODE})(i).split('\\n', 1)[0] === t", arg=[index, text], timeout=timeout)
    except PlaywrightTimeout:
        pytest.fail(f"the cell's first line is {first_line(page, index)!r}, not {text!r}; saved: {(stored(page) or '')[:80]!r}")


def open_tabs(tabs, base_url, watching=False):
    """Open micrograd in each tab, in order; once Python is ready in each (the
    tabs are quiet), make cell 0's editor in each (a click on its code).
    ``watching``: each tab also records the storage events it receives (SEEN)."""
    for tab in tabs:
        switch_to(tab)
        open_lab(tab, base_url, wait_ready=False)
    for tab in tabs:
        switch_to(tab)
        tab.wait_for_function(READY, timeout=TIMEOUT)
        editor(tab, EXERCISE)
        if watching:
            tab.evaluate(SEEN)


# ------------------------------------------------------------- storage full


def test_an_edit_that_cannot_be_saved_says_so_and_is_saved_once_there_is_room(page, base_url):
    open_lab(page, base_url, wait_ready=False)
    filled = page.evaluate(FILL_STORAGE, FILLER)
    assert filled > 1_000_000, f"only {filled} characters went into localStorage"
    with pytest.raises(Exception, match="QuotaExceeded|exceeded the quota"):
        page.evaluate("localStorage.setItem('another-site:probe', 'x')")

    type_at_top(page, "# kept only in this page\n")
    note = cell(page, EXERCISE).locator(".pc-not-saved")
    expect(note).to_be_visible(timeout=TIMEOUT)
    assert note.inner_text().startswith("Not saved:") and "full" in note.inner_text()
    assert note.get_attribute("role") == "alert"
    assert stored(page) is None
    assert first_line(page) == "# kept only in this page"

    # Leaving asks first: a beforeunload dialog, which the learner dismisses (stays).
    dialogs = []

    def on_dialog(dialog):
        dialogs.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    with page.expect_event("dialog", timeout=TIMEOUT):
        page.close(run_before_unload=True)
    assert dialogs == ["beforeunload"]
    assert not page.is_closed()
    assert first_line(page) == "# kept only in this page"
    expect(note).to_be_visible()

    # The other site frees its data: the next keystroke saves the edit.
    page.evaluate(FREE_STORAGE, FILLER)
    editor(page, EXERCISE).click()
    page.keyboard.press("Control+Home")
    page.keyboard.press("End")
    page.keyboard.type("!")
    expect(note).to_have_count(0, timeout=TIMEOUT)
    assert stored(page).startswith("# kept only in this page!\n# main.py:")

    # Nothing unsaved is left: a reload does not ask, and shows the edit.
    page.reload()
    assert dialogs == ["beforeunload"]
    expect(cell(page, EXERCISE).locator(".cm-content")).to_contain_text("# kept only in this page!", timeout=TIMEOUT)
    assert first_line(page) == "# kept only in this page!"
    expect(cell(page, EXERCISE).locator(".pc-edited")).to_be_visible()
    assert cell(page, EXERCISE).locator(".pc-note").count() == 0


# ----------------------------------------------------------------- two tabs


# Test bookkeeping in a tab: the storage events it receives, as "key=newValue".
SEEN = "() => { window.seenStorage = []; addEventListener('storage', (e) => seenStorage.push(e.key + '=' + e.newValue), true); }"


def settled(writer, reader):
    """Wait until ``reader`` has had the storage event of ``writer``'s latest
    save of cell 0 (the runtime's listener handles it in the same dispatch),
    and ``writer`` every write ``reader`` made meanwhile: a note another site
    writes from ``reader`` afterwards reaches ``writer`` after them."""
    last = stored(writer)
    switch_to(reader)
    reader.wait_for_function("v => seenStorage.includes(v)", arg=f"{KEY}={last}", timeout=TIMEOUT)
    token = str(reader.evaluate("performance.now() + Math.random()"))
    reader.evaluate("t => localStorage.setItem('another-site:note', t)", token)
    switch_to(writer)
    writer.wait_for_function("t => seenStorage.includes('another-site:note=' + t)", arg=token, timeout=TIMEOUT)


def what_tabs_show(a, b) -> str:
    received = [s[len(KEY) + 1 :][:14] for s in a.evaluate("seenStorage") if s.startswith(KEY)]
    return (
        f"A shows {first_line(a)!r}, B shows {first_line(b)!r}, storage holds {(stored(a) or '')[:30]!r}; "
        f"cell 0 saves A received from B: {received}"
    )


def test_an_edit_in_one_tab_shows_in_the_other(two_tabs, base_url):
    a, b = two_tabs
    open_tabs([a, b], base_url, watching=True)
    switch_to(a)
    type_at_top(a, "# typed in tab A\n")
    settled(a, b)
    # B had not changed the cell: it takes A's code, and A keeps it.
    assert first_line(b) == first_line(a) == "# typed in tab A", what_tabs_show(a, b)
    assert stored(b).startswith("# typed in tab A\n# main.py:")
    assert b.locator(".pc-note").count() == 0 and a.locator(".pc-note").count() == 0  # no conflict
    assert cell(b, EXERCISE).locator(".pc-cell-status").inner_text() == "Updated with the edit made in another tab"
    expect(cell(b, EXERCISE).locator(".pc-edited")).to_be_visible()

    # And back: B goes on typing, A (unchanged since) follows.
    switch_to(b)
    type_at_top(b, "# and in tab B\n")
    settled(b, a)
    assert first_line(a) == first_line(b) == "# and in tab B", what_tabs_show(a, b)
    assert stored(a).startswith("# and in tab B\n# typed in tab A\n# main.py:")
    assert a.locator(".pc-note").count() == 0 and b.locator(".pc-note").count() == 0


def test_one_keystroke_in_an_older_tab_keeps_the_other_tabs_work(two_tabs, base_url):
    """The old bug: B edited and saved; A, opened earlier, took one key; on reload B's work was gone."""
    a, b = two_tabs
    switch_to(a)
    open_lab(a, base_url, wait_ready=False)  # A: opened first, never touched
    a.evaluate(SEEN)
    switch_to(b)
    open_lab(b, base_url, wait_ready=False)
    b.evaluate(SEEN)
    type_at_top(b, "# an hour of work in tab B\n")
    assert stored(b).startswith("# an hour of work in tab B\n# main.py:")
    settled(b, a)
    assert first_line(a) == "# an hour of work in tab B", what_tabs_show(a, b)

    switch_to(a)
    type_at_top(a, "#")  # one key
    settled(a, b)
    assert first_line(b) == "## an hour of work in tab B", what_tabs_show(a, b)
    assert stored(a).startswith("## an hour of work in tab B\n# main.py:")
    for tab in (a, b):
        switch_to(tab)
        tab.reload()
        expect(cell(tab, EXERCISE).locator(".cm-content")).to_contain_text("## an hour of work in tab B", timeout=TIMEOUT)
        assert first_line(tab) == "## an hour of work in tab B"
        assert tab.locator(".pc-note").count() == 0


def make_conflict(a, b, mine, theirs):
    """B changes cell 0 while storage is full (its edit is not saved); the
    other site frees its data; then A changes the same cell and saves.
    B has changed the cell too, since it last matched: it must ask."""
    switch_to(a)
    filled = a.evaluate(FILL_STORAGE, FILLER)
    switch_to(b)
    # Each tab's renderer keeps its own copy of localStorage, updated from the other's writes a
    # moment later (under load, B typed into room A had already taken): B waits until it sees all.
    b.wait_for_function(FILLER_SEEN, arg=[FILLER, filled], timeout=TIMEOUT)
    before = stored(b)
    type_at_top(b, mine)
    expect(cell(b, EXERCISE).locator(".pc-not-saved")).to_be_visible(timeout=TIMEOUT)
    assert stored(b) == before
    switch_to(a)
    a.evaluate(FREE_STORAGE, FILLER)
    type_at_top(a, theirs)
    assert stored(a).startswith(theirs)
    switch_to(b)
    conflict = cell(b, EXERCISE).locator(".pc-conflict")
    expect(conflict).to_be_visible(timeout=TIMEOUT)
    return conflict


@pytest.mark.long
def test_a_cell_changed_in_both_tabs_asks_which_code_to_keep(two_tabs, base_url):
    a, b = two_tabs
    open_tabs([a, b], base_url)

    conflict = make_conflict(a, b, "# B one\n", "# A one\n")
    assert conflict.get_attribute("role") == "alert"
    assert "also edited in another tab" in conflict.inner_text()
    use = conflict.get_by_role("button", name="Use the other tab's code")
    keep = conflict.get_by_role("button", name="Keep this code")
    expect(use).to_be_visible()
    expect(keep).to_be_visible()
    # Neither overwrites the other: B shows its code, storage holds A's ...
    assert first_line(b) == "# B one"
    assert first_line(switch_to(a)) == "# A one"
    assert stored(a).startswith("# A one\n# main.py:")
    # ... while B goes on typing, and while A does.
    type_at_top(switch_to(b), "# B two\n")
    assert first_line(b) == "# B two"
    assert stored(b).startswith("# A one\n# main.py:")
    type_at_top(switch_to(a), "# A two\n")
    assert stored(a).startswith("# A two\n# A one\n# main.py:")
    switch_to(b)
    assert first_line(b) == "# B two"
    expect(conflict).to_be_visible()

    # "Use the other tab's code": B shows A's (latest) code; no note is left.
    use.click()
    expect_first_line(b, "# A two")
    expect(cell(b, EXERCISE).locator(".pc-note")).to_have_count(0)
    assert stored(b).startswith("# A two\n# A one\n# main.py:")
    assert "# B" not in stored(b)

    # A new conflict, and "Keep this code": B's code is saved, and A takes it.
    conflict = make_conflict(a, b, "# B three\n", "# A three\n")
    conflict.get_by_role("button", name="Keep this code").click()
    expect(cell(b, EXERCISE).locator(".pc-note")).to_have_count(0, timeout=TIMEOUT)
    assert stored(b).startswith("# B three\n# A two\n# A one\n# main.py:")
    expect_first_line(a, "# B three")
    b.reload()
    expect(cell(b, EXERCISE).locator(".cm-content")).to_contain_text("# B three", timeout=TIMEOUT)
    assert first_line(b) == "# B three"
    assert b.locator(".pc-note").count() == 0


# A slow tab (a slow machine, a big output being drawn): each storage event
# comes while it is busy with something else for a while.
SLOW_TAB = """ms => addEventListener('storage', () => {
  const end = performance.now() + ms;
  while (performance.now() < end);
}, { capture: true })"""


def test_a_slow_tab_does_not_undo_typing_in_the_other_tab(two_tabs, base_url):
    """A types while B lags behind; once B catches up, A's typing is still there, in both tabs and in storage."""
    a, b = two_tabs
    open_tabs([a, b], base_url, watching=True)
    b.evaluate(SLOW_TAB, 50)
    switch_to(a)
    type_at_top(a, "# typed in A\n")
    assert stored(a).startswith("# typed in A\n# main.py:")
    settled(a, b)
    assert first_line(a) == first_line(b) == "# typed in A", f"A's typing was undone: {what_tabs_show(a, b)}"
    assert stored(a).startswith("# typed in A\n# main.py:")
    assert a.locator(".pc-note").count() == 0 and b.locator(".pc-note").count() == 0


def test_another_site_clearing_the_storage_does_not_wipe_an_open_edit(two_tabs, base_url):
    """Another site on the origin calls localStorage.clear() (its "log out"): the open lab keeps the learner's code."""
    lab, other = two_tabs
    switch_to(lab)
    open_lab(lab, base_url, wait_ready=False)
    lab.evaluate(SEEN)
    type_at_top(lab, "# my work\n")
    assert stored(lab).startswith("# my work\n# main.py:")
    switch_to(other)
    other.goto(f"{base_url}/index.html")  # stands for another site's page on this origin
    other.evaluate("localStorage.clear()")
    switch_to(lab)
    lab.wait_for_function("() => seenStorage.includes('null=null')", timeout=TIMEOUT)
    assert first_line(lab) == "# my work", f"the open edit was wiped: the cell shows {first_line(lab)!r}"
    # Only this page still has the edit: it saves it again (or says it could not).
    saved_again = (stored(lab) or "").startswith("# my work\n")
    assert saved_again or cell(lab, EXERCISE).locator(".pc-not-saved").is_visible()


# -------------------------------------------------------------- long output

LONG = "for i in range(100_000): print(i)\nprint('end')"
# Characters the cell prints: one line per number, then "end".
PRINTED = sum(len(str(i)) + 1 for i in range(100_000)) + len("end\n")
AT_END = "b => b.scrollTop + b.clientHeight >= b.scrollHeight - 30"


@pytest.mark.long
def test_long_output_keeps_the_page_short_and_follows_the_end(page, base_url, artifacts_dir):
    open_lab(page, base_url)
    type_code(page, EXERCISE, "for i in range(100_000): print(i)")
    page.keyboard.press("Enter")
    page.keyboard.press("Shift+Tab")  # the editor may indent after a colon: back to the margin
    page.keyboard.type("print('end')")
    assert page.evaluate(SHOWN_CODE, EXERCISE) == LONG

    before = runs(page, EXERCISE)
    cell(page, EXERCISE).locator(".pc-run").click()
    # While it runs, once the box overflows, it shows the end.
    seen = page.wait_for_function(
        """() => {
          const c = document.querySelectorAll('div.cell.pc-live')[0];
          const b = c.querySelector('.cell_output pre.pc-scroll');
          if (!b || b.scrollHeight <= b.clientHeight + 1) return false;
          return {state: c.dataset.state, atEnd: b.scrollTop + b.clientHeight >= b.scrollHeight - 30,
                  height: document.documentElement.scrollHeight};
        }""",
        timeout=TIMEOUT,
    ).json_value()
    assert seen["atEnd"], seen
    assert seen["height"] < 20000, seen
    wait_runs(page, EXERCISE, before + 1)
    assert cell(page, EXERCISE).get_attribute("data-state") == "done"

    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 20000, f"the page is {height}px tall"
    box = cell(page, EXERCISE).locator(".cell_output pre.pc-scroll")
    assert box.count() == 1
    assert box.evaluate("b => b.clientHeight") < 600 and box.bounding_box()["height"] < 600
    assert box.evaluate("b => b.scrollHeight") > 10 * box.evaluate("b => b.clientHeight")
    assert box.evaluate(AT_END), box.evaluate("b => [b.scrollTop, b.clientHeight, b.scrollHeight]")
    text = box.evaluate("b => b.textContent")
    assert text.startswith("0\n1\n2\n") and "end" not in text

    # The note below the box says how much was cut, and shows with the box.
    note = cell(page, EXERCISE).locator("p.pc-truncated")
    assert note.inner_text() == f"… output cut: {PRINTED - len(text):,} more characters not shown"
    # From the top of the page, as a learner comes to it: Playwright then centres the box. (The
    # box's place before depends on where the run left the page; with the box already on the
    # screen to its last pixel, "if needed" did not scroll and the note sat just below.)
    page.evaluate("window.scrollTo(0, 0)")
    box.scroll_into_view_if_needed()
    assert note.is_visible()
    at = note.bounding_box()
    assert 0 <= at["y"] and at["y"] + at["height"] <= 900, f"the note is out of the window: {at}"
    bar = page.locator(".pc-runtime").bounding_box()
    assert at["y"] >= bar["y"] + bar["height"] or bar["y"] > at["y"] + at["height"], "the bar covers the note"

    # The box is reached with the keyboard (Escape, then Tab, leaves the editor) and scrolls with it.
    assert box.get_attribute("tabindex") == "0"
    editor(page, EXERCISE).click()
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert box.evaluate("b => document.activeElement === b"), page.evaluate("document.activeElement.outerHTML.slice(0, 120)")
    page.keyboard.press("Home")
    page.wait_for_function("b => b.scrollTop === 0", arg=box.element_handle(), timeout=TIMEOUT)
    page.keyboard.press("End")
    page.wait_for_function(AT_END, arg=box.element_handle(), timeout=TIMEOUT)

    box.scroll_into_view_if_needed()
    cell(page, EXERCISE).screenshot(path=str(artifacts_dir / "long-output-desktop.png"))
    # Cut at the limit: the box holds the first 200,000 characters printed.
    assert len(text) == 200_000, f"the box holds {len(text):,} characters, {200_000 - len(text)} short of the limit"


# Prints numbered lines, paced by work (not by the clock), until Stop: far slower
# than the page shows them, and never near the output limit while the test runs.
PACED = "i = 0\nwhile True:\n    print(i, flush=True)\n    for _ in range(100_000):\n        pass\n    i += 1\n"


def test_the_box_stays_where_the_learner_scrolled_while_the_run_goes_on(page, base_url):
    open_lab(page, base_url)
    set_code(page, EXERCISE, PACED)
    before = runs(page, EXERCISE)
    cell(page, EXERCISE).locator(".pc-run").click()
    box = cell(page, EXERCISE).locator(".cell_output .pc-stdout pre.pc-scroll")  # not the traceback Stop adds
    page.wait_for_function(
        """() => {
          const b = document.querySelectorAll('div.cell.pc-live')[0].querySelector('.cell_output .pc-stdout pre.pc-scroll');
          return b && b.scrollHeight > b.clientHeight + 200;
        }""",
        timeout=TIMEOUT,
    )
    box.scroll_into_view_if_needed()
    assert box.evaluate(AT_END)
    # The learner scrolls up in the box with the mouse wheel, to read.
    at = box.bounding_box()
    page.mouse.move(at["x"] + at["width"] / 2, at["y"] + at["height"] / 2)
    page.mouse.wheel(0, -150)
    page.wait_for_function(f"b => !({AT_END})(b)", arg=box.element_handle(), timeout=TIMEOUT)
    assert cell(page, EXERCISE).get_attribute("data-state") == "running"
    grown_from = box.evaluate("b => b.scrollHeight")
    # Output goes on coming (the runtime draws it), then the learner stops the cell.
    page.wait_for_function("([b, h]) => b.scrollHeight > h + 100", arg=[box.element_handle(), grown_from], timeout=TIMEOUT)
    page.locator(".pc-runtime .pc-stop").click()

    wait_runs(page, EXERCISE, before + 1)
    assert cell(page, EXERCISE).get_attribute("data-state") == "interrupted"
    lines = box.evaluate("b => b.textContent").split()
    assert lines == [str(i) for i in range(len(lines))] and len(lines) > 30  # every line, in order
    assert box.evaluate("b => b.scrollHeight") > grown_from
    where = box.evaluate("b => [b.scrollTop, b.clientHeight, b.scrollHeight]")
    assert not box.evaluate(AT_END), f"the box jumped to the end: {where}"
    assert page.evaluate("document.documentElement.scrollHeight") < 20000


def test_taking_the_other_tabs_edit_keeps_this_tabs_cursor(two_tabs, base_url):
    """The cursor jumped to the top of the cell, so the next keys went into the wrong line."""
    a, b = two_tabs
    open_tabs([a, b], base_url, watching=True)
    switch_to(b)
    lines = cell(b, EXERCISE).locator(".cm-line")
    editor(b, EXERCISE)
    lines.nth(4).click()
    b.keyboard.press("End")
    line_five = b.evaluate(SHOWN_CODE, EXERCISE).split("\n")[4]
    switch_to(a)
    type_at_top(a, "# from tab A\n")
    settled(a, b)
    assert first_line(b) == "# from tab A"
    switch_to(b)
    b.keyboard.type("  # B was here")
    code = b.evaluate(SHOWN_CODE, EXERCISE).split("\n")
    assert code[0] == "# from tab A" and code[5] == line_five + "  # B was here", code[:7]


# A run that goes on until Stop, then prints the same line each time.
UNTIL_STOP = "try:\n    while True:\n        pass\nexcept KeyboardInterrupt:\n    print('the same line')"


def run_until_stop(page, while_running=lambda: None) -> str:
    """Run the exercise (UNTIL_STOP), call ``while_running`` once the page shows it running,
    press the bar's Stop; return the output once the run ended."""
    before = runs(page, EXERCISE)
    cell(page, EXERCISE).locator(".pc-run").click()
    page.wait_for_function(f"document.querySelectorAll('div.cell.pc-live')[{EXERCISE}].dataset.state === 'running'")
    while_running()
    page.locator(".pc-runtime .pc-stop").click()
    wait_runs(page, EXERCISE, before + 1)
    return cell(page, EXERCISE).locator(".cell_output").inner_text()


def test_a_re_run_that_shows_the_same_keeps_the_page_still(page, base_url):
    """The old output stays until the run's first output replaces it. Clearing it as the run
    started made everything below the cell move up, then back down, on every re-run."""
    open_lab(page, base_url)
    set_code(page, EXERCISE, UNTIL_STOP)
    assert run_until_stop(page).strip() == "the same line"
    output = cell(page, EXERCISE).locator(".cell_output")
    # Every height the output has while the run goes on, as the browser lays it out.
    output.evaluate(
        "o => { window.heights = []; new ResizeObserver((e) => window.heights.push(e[0].contentRect.height)).observe(o); }"
    )

    def still_shows_the_old_output():
        assert output.inner_text().strip() == "the same line"

    assert run_until_stop(page, still_shows_the_old_output).strip() == "the same line"
    heights = page.evaluate("window.heights")
    assert len(set(heights)) == 1 and heights[0] > 0, heights

    # What a run showed stays when it ends, even after its clear_output(wait=True), as in Jupyter.
    set_code(
        page,
        EXERCISE,
        "from IPython.display import clear_output\nfor i in range(3):\n    print('progress', i)\n    clear_output(wait=True)",
    )
    assert run_and_wait(page, EXERCISE).strip() == "progress 2"

    # A run that shows nothing leaves no output: the old one goes when it ends.
    set_code(page, EXERCISE, "x = 1")
    assert run_and_wait(page, EXERCISE) == ""
    assert output.locator(".output").count() == 0


# The second exercise of each: the first of Lab 2 now opens the page, with no cell above it.
@pytest.mark.parametrize(("lab", "nth"), [("online_softmax", 1), ("micrograd", 1)])
def test_the_first_run_of_the_cells_above_an_exercise_moves_nothing_on_the_page(page, base_url, lab, nth):
    """Running an exercise runs the cells above it first, each replacing its build-time output
    with the same text. Each used to move the page below it: a live text output had a frame
    the build-time one has not (2 px taller), a cell's printed lines arrived in two pieces and
    were drawn twice (one line, then all), a cell that printed a line and showed its result a
    quarter of a second later (micrograd's training) shrank to that line meanwhile, and the
    status bar lost a line when its message at ready gave way to "Python ready". The browser
    then laid out and repainted the page below, for every cell."""
    page.goto(f"{base_url}/{lab}.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    exercise = page.locator("div.cell.pc-live.tag_exercise").nth(nth)
    above = exercise.evaluate("e => [...document.querySelectorAll('div.cell.pc-live')].indexOf(e)")
    assert above >= 6
    # Every height the bar and each cell above has, as the browser lays them out, from now on
    # (an exercise above shows its own error, not the build-time output: not watched).
    page.evaluate(
        """n => {
      window.heights = new Map();
      const cells = [...document.querySelectorAll('div.cell.pc-live')].slice(0, n);
      const watched = [document.querySelector('.pc-runtime'), ...cells.filter(c => !c.classList.contains('tag_exercise'))];
      const ro = new ResizeObserver((entries) => { for (const e of entries) {
        const name = e.target.classList.contains('pc-runtime') ? 'bar' : `cell ${cells.indexOf(e.target)}`;
        window.heights.set(name, [...(window.heights.get(name) || []), Math.round(e.borderBoxSize[0].blockSize)]);
      } });
      for (const w of watched) ro.observe(w);
    }""",
        above,
    )
    exercise.locator(".pc-run").click()
    page.wait_for_function("e => Number(e.dataset.runs) >= 1", arg=exercise.element_handle(), timeout=TIMEOUT)
    # The live pictures (micrograd's graph, above the exercise) run again after it: wait for them too.
    page.wait_for_function(NOTHING_WAITS, timeout=TIMEOUT)
    states = page.evaluate("n => [...document.querySelectorAll('div.cell.pc-live')].slice(0, n).map(c => c.dataset.state)", above)
    assert set(states) <= {"done", "error"} and states.count("done") >= above - nth, states
    heights = dict(page.evaluate("[...window.heights.entries()]"))
    assert len(heights) == above + 1 - nth
    moved = {name: seen for name, seen in heights.items() if len(set(seen)) != 1}
    assert moved == {}, moved


def test_an_update_to_a_display_leaves_the_old_output_a_re_run_replaces(page, base_url):
    """A re-run's update_display changed this cell's previous output, which is still shown
    (dimmed) until the run's own first output, and then went with it: Jupyter has cleared that
    output when the run started. Another cell's display of the same id is updated."""
    open_lab(page, base_url)
    show = "from IPython.display import display\nhandle = display('shown a', display_id='x')"
    set_code(page, 1, show)
    assert run_and_wait(page, 1).strip() == "'shown a'"
    set_code(page, EXERCISE, show)
    assert run_and_wait(page, EXERCISE).strip() == "'shown a'"
    set_code(page, EXERCISE, "from IPython.display import update_display\nupdate_display('updated b', display_id='x')\n" + UNTIL_STOP)

    def the_other_cell_is_updated_and_this_ones_old_output_is_not():
        page.wait_for_function(
            "document.querySelectorAll('div.cell.pc-live')[1].querySelector('.cell_output').innerText.includes('updated b')",
            timeout=TIMEOUT,
        )
        assert cell(page, EXERCISE).locator(".cell_output").inner_text().strip() == "'shown a'"

    assert run_until_stop(page, the_other_cell_is_updated_and_this_ones_old_output_is_not).strip() == "the same line"


# Every height the status bar has, as the browser lays it out, from the moment it is made.
WATCH_THE_BAR = """
window.barHeights = [];
new MutationObserver((changes, observer) => {
  const bar = document.querySelector('.pc-runtime');
  if (!bar) return;
  observer.disconnect();
  new ResizeObserver((entries) => window.barHeights.push(Math.round(entries[0].borderBoxSize[0].blockSize))).observe(bar);
}).observe(document, { childList: true, subtree: true });
"""


@pytest.mark.parametrize("which", ["page", "phone_page"])
def test_the_status_bar_keeps_one_height_from_loading_to_a_restart(request, base_url, which):
    """Its messages differ in length, and it moved the page below whenever its height changed:
    at the first run at 1280 px (the message at ready took two lines, "Python ready" one), and
    at ready on a phone (the progress bar had pushed the buttons onto a second row)."""
    page = request.getfixturevalue(which)
    page.add_init_script(WATCH_THE_BAR)
    open_lab(page, base_url)
    assert run_and_wait(page, 1) != ""
    page.locator(".pc-runtime .pc-restart").click()  # here it empties the namespace: cell 1 runs cell 0 again
    assert run_and_wait(page, 1) != ""
    heights = page.evaluate("window.barHeights")
    assert len(set(heights)) == 1 and heights[0] > 0, heights


def test_a_cells_editor_takes_the_place_of_its_code_without_moving_the_page(page, base_url):
    """The editor had its own font size (13.6 px against the code's 13), line height and padding:
    each cell's code grew or shrank by 12-36 px where its editor took its place, and the page below
    moved."""
    open_lab(page, base_url)
    code = cell(page, 1).locator(".cell_input")
    before = code.evaluate("e => e.getBoundingClientRect().height")
    editor(page, 1)
    after = code.evaluate("e => e.getBoundingClientRect().height")
    assert round(after, 1) == round(before, 1) and before > 60


# Resolves after the browser has drawn two more frames (CodeMirror measures its lines in the first).
TWO_FRAMES = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
# Every cell whose code box is on the screen has its editor.
EDITORS_ON_SCREEN = """() => [...document.querySelectorAll('div.cell.pc-live .cell_input')].every((input) => {
  const r = input.getBoundingClientRect();
  return r.bottom <= 0 || r.top >= innerHeight || input.querySelector('.cm-editor');
})"""


@pytest.mark.parametrize("lab", LAB_NAMES)
@pytest.mark.parametrize("which", ["page", "phone_page"])
def test_every_cells_editor_is_as_tall_as_its_code_was(request, base_url, which, lab):
    """The code the page was built with scrolled sideways where its editor wraps a long line (under
    its indentation), and had no line numbers: a cell grew when its editor was made as the learner
    scrolled near it (on a phone nearly every cell, micrograd's second exercise by 740 px; at
    1280 px a cell in three), and everything below it moved. Editors made off the screen were
    laid out with CodeMirror's estimates (every line over 30 characters taken as wrapped) and were
    up to half as tall again, until they came into view. The learner scrolls down the page; every
    editor, once drawn, is as tall as the code it replaced."""
    page = request.getfixturevalue(which)
    page.goto(f"{base_url}/{lab}.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    inputs = page.locator("div.cell.pc-live .cell_input")
    built = inputs.evaluate_all("es => es.map((e) => e.getBoundingClientRect().height)")
    # The wheel, in the margin left of the text (over an output box or the graph it scrolls those).
    page.mouse.move(page.evaluate("document.querySelector('article').getBoundingClientRect().left - 6"), 400)
    while True:
        page.wait_for_function(EDITORS_ON_SCREEN, timeout=TIMEOUT)
        page.evaluate(TWO_FRAMES)
        if page.evaluate("innerHeight + scrollY >= document.documentElement.scrollHeight - 1"):
            break
        page.evaluate("() => { window.scrolled = new Promise((r) => addEventListener('scrollend', r, { once: true })); }")
        page.mouse.wheel(0, page.viewport_size["height"] - 100)  # a screen at a time, a line of it kept
        page.evaluate("() => window.scrolled")
    assert page.locator("div.cell.pc-live .cm-editor").count() == len(built)
    drawn = inputs.evaluate_all("es => es.map((e) => e.getBoundingClientRect().height)")
    grew = {i: (round(b, 1), round(d, 1)) for i, (b, d) in enumerate(zip(built, drawn, strict=True)) if abs(b - d) > 0.5}
    assert grew == {}, grew


def test_an_exercise_taller_than_the_phone_is_as_tall_in_its_editor_the_moment_it_is_made(phone_page, base_url):
    """CodeMirror lays out only the lines within about a screen of the window and estimates the
    rest (a long line as wrapped once more per line length, not under its indentation): the online
    softmax lab's second exercise, 2,300 px on a phone, came out 137-306 px shorter where its
    editor was made with only its top on the screen, and the text below moved up (a #link's
    scroll, under way as the editor was made, then stopped that far past its heading)."""
    page = phone_page
    page.goto(f"{base_url}/online_softmax.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    page.evaluate("window.pyodideCells.idle()")
    inputs = page.locator("div.cell.pc-live .cell_input")
    heights = inputs.evaluate_all("es => es.map((e) => e.getBoundingClientRect().height)")
    tallest = max(range(len(heights)), key=heights.__getitem__)
    assert heights[tallest] > 2 * page.viewport_size["height"]
    code = inputs.nth(tallest)
    assert code.locator(".cm-editor").count() == 0
    below = page.locator("div.cell.pc-live").nth(tallest).locator("xpath=following::h2[1]")
    # The learner scrolls until the top of the exercise's code shows at the foot of the screen.
    code.evaluate("e => window.scrollTo({top: e.getBoundingClientRect().top + scrollY - innerHeight + 200, behavior: 'instant'})")
    under = below.evaluate("h => h.getBoundingClientRect().top")
    code.locator(".cm-editor").wait_for(timeout=TIMEOUT)
    page.evaluate(TWO_FRAMES)
    made = code.evaluate("e => e.getBoundingClientRect().height")
    assert abs(made - heights[tallest]) < 0.5, (heights[tallest], made)
    assert abs(below.evaluate("h => h.getBoundingClientRect().top") - under) < 0.5


def test_editors_made_on_a_phone_take_their_new_height_when_the_window_widens(page, base_url):
    """CodeMirror measures again, at a new width, only the lines near the screen: with every
    editor made at 390 px and the window then widened (a phone turned to landscape), the online
    softmax lab's cells kept their phone heights (its second exercise 2,300 px for 1,250), and a
    #link's scroll stopped thousands of pixels past its heading (found by the learner review)."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{base_url}/online_softmax.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    page.evaluate("window.pyodideCells.idle()")
    inputs = page.locator("div.cell.pc-live .cell_input")
    wide = inputs.evaluate_all("es => es.map((e) => e.getBoundingClientRect().height)")
    page.set_viewport_size({"width": 390, "height": 844})
    for i in range(inputs.count()):  # the learner reads down the page: every editor is made
        inputs.nth(i).scroll_into_view_if_needed()
        inputs.nth(i).locator(".cm-editor").wait_for(timeout=TIMEOUT)
    page.evaluate(TWO_FRAMES)
    narrow = inputs.evaluate_all("es => es.map((e) => e.getBoundingClientRect().height)")
    assert max(n - w for n, w in zip(narrow, wide, strict=True)) > 500  # wrapped at 390 px
    page.set_viewport_size({"width": 1280, "height": 800})
    page.evaluate(TWO_FRAMES)
    page.evaluate(TWO_FRAMES)
    again = inputs.evaluate_all("es => es.map((e) => e.getBoundingClientRect().height)")
    off = {i: (round(w, 1), round(a, 1)) for i, (w, a) in enumerate(zip(wide, again, strict=True)) if abs(w - a) > 0.5}
    assert off == {}, off


# Resolves once the page has been idle (its editors are made in idle time).
IDLE = "() => new Promise((r) => requestIdleCallback(() => requestIdleCallback(r)))"


@pytest.mark.parametrize("which", ["page", "phone_page"])
def test_a_saved_edit_with_tabs_is_as_tall_before_its_editor_as_in_it(request, base_url, which):
    """A saved edit is shown as lines before its editor is made; the browser's tab is 8 columns
    where the editor's is 4, so a line indented with tabs wrapped a row more (found by the
    learner review: 139 px, then 119.5 when the editor came)."""
    page = request.getfixturevalue(which)
    long = "total = " + " + ".join(f"value_{i}" for i in range(12))
    pasted = f"def f():\n\tif True:\n\t\t{long}\n\t\treturn total\n\t# {long}"
    page.add_init_script(f"localStorage.setItem('pyodide-cells:v1:/micrograd.html:cell-2', {pasted!r})")
    page.goto(f"{base_url}/micrograd.html")
    code = cell(page, 2).locator(".cell_input")
    assert code.locator("pre").text_content() == pasted + "\n"
    before = code.evaluate("e => e.getBoundingClientRect().height")
    editor(page, 2)
    page.evaluate(TWO_FRAMES)
    assert cell(page, 2).locator(".cm-content").text_content().replace("\u200b", "") == pasted.replace("\n", "")
    after = code.evaluate("e => e.getBoundingClientRect().height")
    assert abs(after - before) < 0.5 and before > 150, (before, after)


def test_tabbing_onto_run_makes_no_editor_for_code_off_the_screen(page, base_url):
    """Tab onto a cell's Run button made its editor at once, though the code below the button
    was off the screen: CodeMirror laid it out with its estimates, and the tall cell grew by
    310 px (found by the learner review). It is made when the code comes onto the screen."""
    page.goto(f"{base_url}/micrograd.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    tall = cell(page, 9)
    code = tall.locator(".cell_input")
    before = code.evaluate("e => e.getBoundingClientRect().height")
    # The Run button just above the window's bottom edge, its code below it.
    tall.locator(".pc-run").evaluate(
        "b => window.scrollBy({ top: b.getBoundingClientRect().bottom - innerHeight + 2, behavior: 'instant' })"
    )
    assert code.evaluate("e => e.getBoundingClientRect().top") >= page.evaluate("innerHeight")
    tall.locator(".pc-run").focus()
    page.evaluate(IDLE)
    assert tall.locator(".cm-editor").count() == 0
    code.evaluate("e => e.scrollIntoView({ block: 'start', behavior: 'instant' })")
    page.wait_for_function("e => e.querySelector('.cm-editor')", arg=code.element_handle(), timeout=TIMEOUT)
    page.evaluate(TWO_FRAMES)
    assert abs(code.evaluate("e => e.getBoundingClientRect().height") - before) < 0.5
