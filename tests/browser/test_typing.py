"""Typing Python into a cell's editor the way a learner does (issue 13).

The learner types line by line and trusts the editor: Enter indents after a
colon, one Backspace (or Shift+Tab) takes one level of indentation away, one
Tab adds one. Python's level is 4 spaces: an editor whose unit is 2 leaves
the learner's code at levels that do not match (IndentationError) or not as
written. On a phone, the status bar stays short and a long indented line
that wraps continues under its own indentation, not at column 0.

Every key is pressed with Playwright's keyboard; the tests read what the
editor shows (its lines, and the DOM selection it keeps in step with its
cursor), never its internals.
"""

from __future__ import annotations

import pytest

from tests.browser.helpers import READY, TIMEOUT, cell, cell_index, check, editor, runs, wait_runs
from tests.pages import read_page, reference_solutions

pytestmark = pytest.mark.browser
UNIT = 4  # Python's indentation level (PEP 8)
LABS = ["micrograd", "online_softmax", "paged_attention"]
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


def type_as_learner(page, index, code) -> list[tuple[int, str]]:
    """Type ``code`` into the (empty, focused) editor line by line, relying on auto-indent.

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
        if number > 1:
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


# ------------------------------------------------- 1. the three exercises, typed


@pytest.mark.parametrize("name", LABS)
def test_typing_the_reference_solution_with_auto_indent_passes_every_check(page, base_url, name):
    open_page(page, base_url, name)
    # Every exercise of the page, typed; micrograd's first solution is the whole cell.
    for n, solution in enumerate(reference_solutions(read_page(f"{name}.md"))):
        index = cell_index(f"{name}.md", tag="exercise", n=n)
        empty_editor(page, index)
        type_as_learner(page, index, solution)

        # What the editor holds is the solution, as written (blank lines may keep spaces).
        shown = lines(page, index)
        want = solution.rstrip("\n").split("\n")
        assert [line.rstrip() for line in shown[: len(want)]] == want
        assert all(not line.strip() for line in shown[len(want) :])

        before = runs(page, index)
        page.keyboard.press("Control+Enter")  # the cursor is still in the editor
        wait_runs(page, index, before + 1)
        output = cell(page, index).locator(".cell_output").inner_text()
        assert cell(page, index).get_attribute("data-state") == "done", output
        assert "Error" not in output
    results = check(page)
    assert results and set(results.values()) == {"passed"}, results


# ------------------------------------------------- 2. keys in the editor


def test_enter_after_a_colon_indents_by_four(page, base_url):
    open_page(page, base_url, "micrograd")
    empty_editor(page, 0)
    page.keyboard.type("def f(x):")
    page.keyboard.press("Enter")
    assert active_line(page, 0) == " " * 4
    page.keyboard.type("if x:")
    page.keyboard.press("Enter")
    assert active_line(page, 0) == " " * 8
    page.keyboard.press("Backspace")  # in the indentation, Backspace takes a whole level away
    assert active_line(page, 0) == " " * 4


@pytest.mark.parametrize("statement", ["pass", "return x", "return max(x,\n1)", "raise ValueError(\n'x')"])
def test_enter_after_a_statement_that_ends_the_block_dedents(page, base_url, statement):
    """Also after a statement that spans lines (the learner closes its bracket: the
    editor steps over the one it closed); that one stayed in the block."""
    open_page(page, base_url, "micrograd")
    empty_editor(page, 0)
    for line in ("def f(x):", "if x:", "if x:"):
        page.keyboard.type(line)
        page.keyboard.press("Enter")
    assert active_line(page, 0) == " " * 12
    for n, line in enumerate(statement.split("\n")):
        if n:
            page.keyboard.press("Enter")
        page.keyboard.type(line)
    assert caret(page, 0)[1] == len(caret(page, 0)[0]), "the cursor is at the end of the statement"
    page.keyboard.press("Enter")
    assert active_line(page, 0) == " " * 8, "the block ended: the next line belongs to the enclosing one"


def test_enter_before_the_bracket_the_editor_closed_lines_up_with_the_contents(page, base_url):
    """Typing `max(1,` leaves the bracket the editor closed after the cursor; Enter took it
    down and lined the new line up with the `(` (CodeMirror's rule for a line that starts
    with a closing bracket), so the learner's next argument sat a column short of the
    first. Found by a learner review."""
    open_page(page, base_url, "micrograd")
    empty_editor(page, 0)
    page.keyboard.type("total = max(1,")
    assert caret(page, 0) == ("total = max(1,)", len("total = max(1,")), "the editor closed the bracket"
    page.keyboard.press("Enter")
    column = len("total = max(")
    assert caret(page, 0) == (" " * column + ")", column), "under the 1, with the bracket still after the cursor"
    page.keyboard.type("2)")  # the learner closes the call: the editor steps over its own bracket
    page.keyboard.press("Enter")
    page.keyboard.type("print(total * 10)")
    assert lines(page, 0) == ["total = max(1,", " " * column + "2)", "print(total * 10)"]
    before = runs(page, 0)
    page.keyboard.press("Control+Enter")
    wait_runs(page, 0, before + 1)
    assert cell(page, 0).locator(".cell_output").inner_text().strip() == "20"

    # Not in a call: a list's next item goes one level in, not under the `[`'s line.
    empty_editor(page, 0)
    page.keyboard.type("xs = [")
    page.keyboard.press("Enter")  # right after the opening bracket: the `]` goes below
    page.keyboard.type("1,")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Home")
    page.keyboard.press("Backspace")  # the learner joins the `]` to the line above
    assert caret(page, 0) == (" " * UNIT + "1,]", UNIT + 2)
    page.keyboard.press("Enter")
    assert caret(page, 0) == (" " * UNIT + "]", UNIT)


def test_a_bracket_typed_in_a_string_or_a_comment_is_not_closed(page, base_url):
    """`s = "f(x"` came out `s = "f(x")`: the bracket the editor closed stayed after the quote,
    a SyntaxError (found by the learner review; an f-string's format spec, `{s:(^7}`, by the
    next). In code, and in an f-string's braces before a spec, brackets still close themselves
    (the learner's own closing bracket steps over them)."""
    open_page(page, base_url, "micrograd")
    empty_editor(page, 0)
    want = ['s = "f(x"', "# see g(y", 'u = "q\\"(" + s', 'v = f"{s:(^7}"', 'print(s, u, v, f"{len(s)}", [1])']
    for n, line in enumerate(want):
        if n:
            page.keyboard.press("Enter")
        page.keyboard.type(line)
    assert lines(page, 0) == want
    before = runs(page, 0)
    page.keyboard.press("Control+Enter")
    wait_runs(page, 0, before + 1)
    assert cell(page, 0).locator(".cell_output").inner_text().strip() == 'f(x q"(f(x ((f(x(( 3 [1]'
    page.keyboard.press("Enter")
    page.keyboard.type("print(")
    assert caret(page, 0) == ("print()", len("print(")), "in code the bracket closes itself"


def test_tab_and_shift_tab_indent_by_four_one_line_or_a_selection(page, base_url):
    open_page(page, base_url, "micrograd")
    empty_editor(page, 0)
    page.keyboard.type("def f(x):")
    page.keyboard.press("Enter")
    page.keyboard.type("a = 1")
    page.keyboard.press("Tab")
    assert caret(page, 0) == (" " * 8 + "a = 1", 13), "Tab indents the line (the cursor stays after the code)"
    page.keyboard.press("Shift+Tab")
    assert caret(page, 0) == (" " * 4 + "a = 1", 9)
    page.keyboard.press("Enter")
    page.keyboard.type("b = 2")
    page.keyboard.press("Enter")
    page.keyboard.type("c = 3")
    assert lines(page, 0) == ["def f(x):", "    a = 1", "    b = 2", "    c = 3"]

    # Select the three body lines (from the end of the first, Shift+ArrowDown twice).
    press(page, "ArrowUp", 2)
    page.keyboard.press("End")
    press(page, "Shift+ArrowDown", 2)
    page.keyboard.press("Tab")
    assert lines(page, 0) == ["def f(x):", "        a = 1", "        b = 2", "        c = 3"]
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    assert lines(page, 0) == ["def f(x):", "a = 1", "b = 2", "c = 3"]
    page.keyboard.press("Tab")
    assert lines(page, 0) == ["def f(x):", "    a = 1", "    b = 2", "    c = 3"]


def test_escape_then_tab_leaves_the_editor(page, base_url):
    open_page(page, base_url, "micrograd")
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


def test_the_keys_hint_is_shown_once_and_names_tab_and_escape(page, base_url):
    open_page(page, base_url, "micrograd")
    hint = page.locator("p.pc-keys")
    assert hint.count() == 1
    assert hint.is_visible()
    text = hint.inner_text()
    assert "Tab" in text and "Shift+Tab" in text and "Esc" in text


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


def at_the_end_of_a_long_cell_on_a_slow_phone(page, base_url) -> int:
    """Put the cursor at the end of paged attention's second exercise (over 2,000 characters)
    with the CPU 6x slower (Chrome DevTools' "low-end mobile"); return the cell's index."""
    open_page(page, base_url, "paged_attention")
    index = cell_index("paged_attention.md", tag="exercise", n=1)
    editor(page, index).click()
    assert len("\n".join(lines(page, index))) > 2000, "a long cell"
    page.context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": 6})
    page.keyboard.press("Control+End")
    return index


def test_enter_indents_from_the_code_above_at_the_end_of_a_long_cell_on_a_slow_phone(phone_page, base_url):
    """Enter's indentation comes from the syntax tree, which the editor parses
    in the background; on a slow CPU the tree had not reached the end of a long
    cell, and Enter copied the line's own indentation (column 0 inside an open
    bracket). CI, on a loaded machine, caught it at line 90 of a typed solution."""
    page = phone_page
    index = at_the_end_of_a_long_cell_on_a_slow_phone(page, base_url)
    page.keyboard.press("Enter")
    page.keyboard.type("print(1, 2,")
    page.keyboard.press("Delete")  # the bracket the editor closed
    page.keyboard.press("Enter")
    assert active_line(page, index) == " " * len("print("), "the next line of the call lines up inside its bracket"
    page.keyboard.type("3)")
    page.keyboard.press("Delete")
    page.keyboard.press("Enter")
    assert active_line(page, index) == ""
    page.keyboard.type("def f():")
    page.keyboard.press("Enter")
    assert active_line(page, index) == " " * 4
    page.keyboard.type("return 1")
    page.keyboard.press("Enter")
    assert active_line(page, index) == "", "the block ended: the next line is the module's"


@pytest.mark.parametrize("block", [
    [("try:", 0), ("n = int('7')", 4), ("except ValueError:", 0), ("n = 0", 4), ("finally:", 0), ("print('n is', n)", 4)],
    [("if len('ab') > 1:", 0), ("print('long')", 4), ("elif len('ab'):", 0), ("print('short')", 4), ("else:", 0), ("pass", 4)],
])
def test_else_and_except_go_back_a_level_as_typed_at_the_end_of_a_long_cell_on_a_slow_phone(phone_page, base_url, block):
    """`else:`, `elif `, `except `, `finally:` move their line back a level as they are typed
    (CodeMirror's indentOnInput), from the syntax tree, which at the end of a long cell on a
    slow CPU had not been parsed that far: the line stayed in the block above (a
    SyntaxError). Found by a learner review, as for Enter above."""
    page = phone_page
    index = at_the_end_of_a_long_cell_on_a_slow_phone(page, base_url)
    for text, indent in block:
        page.keyboard.press("Enter")
        if indent < len(active_line(page, index)):
            # Where a learner types a block's next clause: Enter leaves the line in the block.
            assert text.startswith(("except", "elif", "else", "finally")), (text, active_line(page, index))
        page.keyboard.type(text)
        assert active_line(page, index) == " " * indent + text, f"{text!r} moved to column {indent}"
