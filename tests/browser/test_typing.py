"""Typing Python into a cell's editor the way a learner does (issue 13), where only a browser shows it.

The editor's rules for keys (Enter's indentation, one Backspace or Shift+Tab
per level of 4 spaces, one Tab, brackets closed in code and not in text,
`else:` going back a level, the end of a long cell the parse has not reached)
are functions of CodeMirror's state: tests/js/editor.test.mjs types every lab's
reference solutions into a state with them, key by key, under node --test.
Here, in the page: what the learner types into each lab's TODOs, then
Ctrl+Enter and the cell's output; Escape then Tab leaves the editor; the keys
hint; on a phone, the status bar stays short and a long indented line that
wraps continues under its own indentation, not at column 0.

Every key is pressed with Playwright's keyboard; the tests read what the
editor shows (its lines, and the DOM selection it keeps in step with its
cursor), never its internals.
"""

from __future__ import annotations

import difflib

import pytest

from tests.browser.helpers import READY, TIMEOUT, cell, cell_index, editor, runs, wait_runs
from tests.pages import DOCS, DROPDOWN, exercise_code, read_page, reference_solution

pytestmark = pytest.mark.browser
UNIT = 4  # Python's indentation level (PEP 8)
# The labs: the pages with a reference solution (a new lab needs no edit here).
LABS = sorted(p.stem for p in DOCS.glob("*.md") if DROPDOWN.search(p.read_text()))
CLOSERS = set(")]}\"'")  # what the editor may have closed for the learner


def open_page(page, base_url, name):
    page.goto(f"{base_url}/{name}.html")
    page.wait_for_function(READY, timeout=TIMEOUT)


def lines(page, index) -> list[str]:
    """The text of each line the editor shows (all of them, for the short cells here)."""
    return cell(page, index).locator(".cm-line").evaluate_all("ls => ls.map(l => l.textContent)")


CARET = """line => {
    const sel = getSelection();
    const range = document.createRange();
    range.setStart(line, 0);
    range.setEnd(sel.focusNode, sel.focusOffset);
    return [line.textContent, range.toString().length];
}"""


def caret(page, index) -> tuple[str, int]:
    """The line the cursor is on, and the cursor's offset in it (from the DOM selection)."""
    text, offset = cell(page, index).locator(".cm-activeLine").evaluate(CARET)
    return text, offset


def active_line(page, index) -> str:
    return cell(page, index).locator(".cm-activeLine").text_content()


def indent_of(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def empty_editor(page, index):
    """Click into the cell's code, select it all and delete it: an empty editor, focused."""
    editor(page, index).click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    assert lines(page, index) == [""]


def press(page, key, times):
    for _ in range(times):
        page.keyboard.press(key)


def type_as_learner(page, index, code, enter_first=False) -> list[tuple[int, str]]:
    """Type ``code`` into the (empty, focused) editor line by line, relying on auto-indent.

    With ``enter_first`` the cursor is at the end of the line before, and the
    first line too starts with Enter.

    After Enter the learner looks at where the cursor is and, thinking in
    levels of 4 spaces, presses Backspace once per level too deep or Tab once
    per level too shallow, then types the line's code. An indentation that is
    not a whole number of levels away from the line's fails the test: no
    level key mends it. Brackets and quotes the editor closed and the learner
    typed again are deleted as a learner deletes them (Delete when they sit
    after the cursor, Backspace when before). A blank line gets no key but
    Enter. Returns those deletions as (line number, deleted text).
    """
    fixes = []
    for number, want in enumerate(code.rstrip("\n").split("\n"), 1):
        if number > 1 or enter_first:
            page.keyboard.press("Enter")
        if not want.strip():
            continue  # the next Enter clears the indentation the editor put here
        got = active_line(page, index)
        assert not got.strip(), f"line {number}: Enter left {got!r} on the new line"
        need = indent_of(want)
        levels, part = divmod(len(got) - need, UNIT)
        assert part == 0, (
            f"line {number}: Enter indented by {len(got)}, not a whole number of {UNIT}-space levels "
            f"away from the {need} that {want!r} needs"
        )
        press(page, "Backspace" if levels > 0 else "Tab", abs(levels))
        now = active_line(page, index)
        assert now == " " * need, (
            f"line {number}: Enter indented by {len(got)}; {abs(levels)} x {'Backspace' if levels > 0 else 'Tab'} "
            f"left {len(now)} spaces, not {need}, for {want!r}"
        )
        page.keyboard.type(want.lstrip(" "))
        typed, at = caret(page, index)
        if typed != want:
            extra = typed[len(want) :]
            assert typed.startswith(want) and set(extra) <= CLOSERS, f"line {number}: typed {want!r}, the editor shows {typed!r}"
            if at == len(want):
                press(page, "Delete", len(extra))
            else:
                assert at == len(typed), f"line {number}: the cursor is at {at} in {typed!r}"
                press(page, "Backspace", len(extra))
            fixes.append((number, extra))
            assert caret(page, index) == (want, len(want)), f"line {number}"
    return fixes


# ------------------------------------------------- 1. the TODOs, typed and run


def line_number(page, index) -> int:
    """The number of the line the cursor is on, from the editor's gutter (1 for the first)."""
    return int(cell(page, index).locator(".cm-activeLineGutter").inner_text())


def to_line_end(page, index, number, select=False):
    """Move the cursor (with Shift: the selection's end) to the end of line ``number`` (from 1) with
    the arrow keys and End, as the learner does; a line that wraps takes more than one press."""
    shift = "Shift+" if select else ""
    for _ in range(500):
        now = line_number(page, index)
        if now == number:
            break
        page.keyboard.press(f"{shift}ArrowDown" if now < number else f"{shift}ArrowUp")
    for _ in range(10):
        text, at = caret(page, index)
        if at == len(text):
            break
        page.keyboard.press(f"{shift}End")
    assert line_number(page, index) == number and caret(page, index)[1] == len(caret(page, index)[0])


def todo_hunks(starter: str, solution: str) -> list[tuple[int, int, list[str]]]:
    """Where the solution differs from the starter: (first starter line, end, the solution's lines), from 0."""
    a, b = starter.rstrip("\n").split("\n"), solution.rstrip("\n").split("\n")
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    return [(i1, i2, b[j1:j2]) for tag, i1, i2, j1, j2 in ops if tag != "equal"]


TYPED_LINES = 6  # in all, from the last TODO up: enough for the levels of indentation an exercise has


@pytest.mark.parametrize("name", LABS)
@pytest.mark.long
def test_typing_into_the_todos_of_the_first_exercise_then_ctrl_enter_runs_it(page, base_url, name):
    """The learner replaces each TODO of the page's first exercise with its lines, typed with
    auto-indent (from the end of the line above: Enter, then Backspace or Tab per level; TYPED_LINES
    lines in all, the rest pasted), then runs the cell with Ctrl+Enter. The editor then
    holds the reference solution, and it runs."""
    open_page(page, base_url, name)
    text = read_page(f"{name}.md")
    starter, solution = exercise_code(text), reference_solution(text)
    index = cell_index(f"{name}.md", tag="exercise")
    editor(page, index).click()
    budget = TYPED_LINES
    for first, end, new in reversed(todo_hunks(starter, solution)):  # from the bottom: the lines above stay put
        if first == 0:
            page.keyboard.press("Control+Home")
        else:
            to_line_end(page, index, first)  # the end of the line above the TODO
        if end > first:
            to_line_end(page, index, end, select=True)  # the TODO's lines, selected with Shift
            page.keyboard.press("Backspace")
        if new:
            # The indentation rules are node's to test (tests/js/editor.test.mjs): past the budget the
            # learner pastes, which keeps the lines as they are. A TODO at the very top is typed.
            count = len(new) if first == 0 else max(budget, 0)
            typed, pasted = new[:count], new[count:]
            budget -= len(typed)
            if typed:
                type_as_learner(page, index, "\n".join(typed), enter_first=first > 0)
            if pasted:
                page.keyboard.insert_text(("\n" if typed or first > 0 else "") + "\n".join(pasted))

    shown = lines(page, index)
    want = solution.rstrip("\n").split("\n")
    assert [line.rstrip() for line in shown] == want

    before = runs(page, index)
    page.keyboard.press("Control+Enter")  # the cursor is still in the editor
    wait_runs(page, index, before + 1)
    output = cell(page, index).locator(".cell_output").inner_text()
    assert cell(page, index).get_attribute("data-state") == "done", output
    assert "Error" not in output


# ------------------------------------------------- 2. keys that leave the editor, and the hint


def test_the_keys_hint_names_tab_and_escape_and_escape_then_tab_leaves_the_editor(page, base_url):
    open_page(page, base_url, "micrograd")
    hint = page.locator("p.pc-keys")
    assert hint.count() == 1
    assert hint.is_visible()
    text = hint.inner_text()
    assert "Tab" in text and "Shift+Tab" in text and "Esc" in text and "Ctrl+Space completes a name" in text

    empty_editor(page, 0)
    inside = "() => !!document.activeElement && !!document.activeElement.closest('.cm-editor')"
    page.keyboard.type("x = 1")
    page.keyboard.press("Tab")  # without Escape, Tab is the editor's: it indents
    assert page.evaluate(inside)
    assert lines(page, 0) == ["    x = 1"]
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert not page.evaluate(inside), "Escape then Tab should move the focus out of the editor"
    assert lines(page, 0) == ["    x = 1"]  # and not indent


# ------------------------------------------------- 3. phones


def test_the_status_bar_is_short_on_a_phone(phone_page, base_url):
    for name in LABS:
        open_page(phone_page, base_url, name)
        box = phone_page.locator(".pc-runtime").bounding_box()
        assert box and box["height"] <= 80, f"{name}: the status bar is {box and box['height']} px tall"


# Each visual line of a .cm-line, top to bottom: [its top, the left of its leftmost character, the left of
# its leftmost non-space character], measured with a Range over each character.
VISUAL_LINES = """line => {
    const rows = new Map();
    const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
    for (let node; (node = walker.nextNode()); ) {
        for (let i = 0; i < node.length; i++) {
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            const rect = [...range.getClientRects()].find((r) => r.width > 0);
            if (!rect) continue;
            const top = Math.round(rect.top);
            const row = rows.get(top) || { left: Infinity, code: Infinity };
            row.left = Math.min(row.left, rect.left);
            if (node.data[i] !== " ") row.code = Math.min(row.code, rect.left);
            rows.set(top, row);
        }
    }
    return [...rows.entries()].sort((a, b) => a[0] - b[0]).map(([top, r]) => [top, r.left, r.code]);
}"""


def test_a_long_indented_line_wraps_under_its_indentation_on_a_phone(phone_page, base_url, artifacts_dir):
    page = phone_page
    open_page(page, base_url, "micrograd")
    empty_editor(page, 0)
    page.keyboard.type("def f():")
    page.keyboard.press("Enter")
    long = "x = " + " + ".join(str(i) for i in range(1, 40))
    page.keyboard.type(long)
    page.keyboard.press("Enter")
    page.keyboard.type("return x")
    assert lines(page, 0) == ["def f():", "    " + long, "    return x"]

    line = cell(page, 0).locator(".cm-line").nth(1)
    rows = line.evaluate(VISUAL_LINES)
    assert len(rows) >= 3, f"the line should wrap on a phone: {rows}"
    first_code = rows[0][2]  # where "x" is drawn, after the line's 4 spaces
    assert rows[0][1] < first_code - 10, f"the first visual line starts with its indentation: {rows}"
    for top, left, _ in rows[1:]:
        assert left >= first_code - 2, (
            f"a wrapped part of the line (at y={top}) starts at x={left:.1f}, left of its code at x={first_code:.1f}"
        )
    # The cell, scrolled to just under the sticky status bar (which would cover its top).
    cell(page, 0).evaluate(
        """el => window.scrollBy(0, el.getBoundingClientRect().top
            - document.querySelector('.pc-runtime').getBoundingClientRect().bottom - 8)"""
    )
    page.screenshot(path=str(artifacts_dir / "typing-hanging-indent-phone.png"), clip=cell(page, 0).bounding_box())
