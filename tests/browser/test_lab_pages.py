"""Labs 2 and 3 in headless Chromium: the checks run in Pyodide, the pictures redraw."""

from __future__ import annotations

import pytest

from tests.browser.helpers import (
    TIMEOUT,
    cell_index,
    exercise_indexes,
    let_python_start,
    open_page,
    run_and_wait,
    runs,
    set_code,
    wait_runs,
    while_python_starts,
    whole_page,
)
from tests.browser.helpers import check as check_by_name
from tests.pages import (
    LAB_NAMES,
    check_count,
    checks_by_exercise,
    exercise_codes,
    first_exercise_checks,
    read_page,
    reference_solution,
    reference_solutions,
)

pytestmark = pytest.mark.browser


def check(page):
    """Press Check my code; return each check's status and the summary once the checks ended."""
    statuses = list(check_by_name(page).values())
    return statuses, page.locator(".pc-checks-summary").inner_text()


@pytest.mark.parametrize("name", [n for n in LAB_NAMES if n != "micrograd"])  # micrograd's: test_micrograd_page.py
@pytest.mark.long
def test_starter_fails_and_reference_solution_passes_in_the_page(page, base_url, name):
    checks = check_count(f"{name}.md")
    open_page(page, base_url, name)
    statuses, summary = check(page)
    assert len(statuses) == checks and {"failed", "error"} & set(statuses)
    solutions = reference_solutions(read_page(f"{name}.md"))
    exercises = exercise_indexes(f"{name}.md")
    assert len(solutions) == len(exercises)
    for exercise, solution in zip(exercises, solutions):  # every exercise of the page, solved
        set_code(page, exercise, solution)
        run_and_wait(page, exercise)
    statuses, summary = check(page)
    own = len(first_exercise_checks(f"{name}.md"))  # the console's head: the first exercise's checks
    assert statuses == ["passed"] * checks and summary == f"{own} / {own} passed"
    assert whole_page(page) == f"{checks} / {checks}"


def test_exercise_2_starter_fails_its_own_checks_then_the_solution_redraws_the_tiles(page, base_url, artifacts_dir):
    """Lab 2's second exercise: with exercise 1 solved, the starters fail exactly the later exercises'
    checks, in Pyodide; exercise 2's solution passes its own, and the tile picture, an auto-rerun
    cell, turns every row right."""
    text = read_page("online_softmax.md")
    open_page(page, base_url, "online_softmax")
    first, second = (cell_index("online_softmax.md", tag="exercise", n=n) for n in (0, 1))
    set_code(page, first, reference_solution(text, 0))
    run_and_wait(page, first)
    statuses = check_by_name(page)
    by_exercise = checks_by_exercise(text)  # each exercise's checks, as the page groups them
    later = [name for names in by_exercise[1:] for name in names]  # exercise 2's and any after it
    assert [name for name, status in statuses.items() if status != "passed"] == later
    picture = cell_index("online_softmax.md", contains="FlashTiles(flash_attention")
    out = page.locator("div.cell.pc-live").nth(picture).locator(".cell_output svg").first
    assert out.locator("text", has_text="wrong").count() == 5  # the build drew the starter's run
    drawn = runs(page, picture)
    set_code(page, second, reference_solution(text, 1))
    run_and_wait(page, second)
    wait_runs(page, picture, drawn + 1)  # the picture reruns by itself after the exercise cell ran
    out = page.locator("div.cell.pc-live").nth(picture).locator(".cell_output svg").first
    assert out.locator("text", has_text="right").count() == 5
    assert out.locator("text", has_text="wrong").count() == 0
    assert exercise_codes(text)[1].count("TODO") == 3
    statuses = check_by_name(page)
    assert len(statuses) == check_count("online_softmax.md")
    assert [name for name, status in statuses.items() if status != "passed"] == later[len(by_exercise[1]) :]
    out.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "online-softmax-tiles.png"))


def test_the_sharing_exercise_fails_its_own_checks_and_its_picture_follows_the_learners_manager(page, base_url):
    """Exercise 2 of Lab 3: the starter's manager shares nothing; solved, its checks pass and the
    auto-rerun picture shows the system prompt's blocks shared and cached; a hit that adds no
    reference is flagged in the picture and by its check."""
    name = "paged_attention.md"
    from tests.test_paged_attention_page import ALL_CHECKS, SHARING_CHECKS

    open_page(page, base_url, "paged_attention")
    drawn = cell_index(name, contains="BlockTableDiagram(demo)")
    picture = page.locator("div.cell.pc-live").nth(drawn).locator(".cell_output")
    assert "cached" not in picture.locator("svg desc").first.text_content()  # the starter, drawn at build time
    exercise = exercise_indexes(name)[1]
    run_and_wait(page, exercise)  # the starter as given: no exception
    statuses = check_by_name(page)
    assert [n for n in SHARING_CHECKS if statuses[n] == "passed"] == []
    assert {statuses[n] for n in ALL_CHECKS} <= {"failed", "error"}  # exercise 1 is open too

    solution = reference_solution(read_page(name), 1)
    set_code(page, exercise, solution)
    runs = int(page.locator("div.cell.pc-live").nth(drawn).get_attribute("data-runs"))
    run_and_wait(page, exercise)
    # The picture's cell runs again by itself after the exercise: wait for that run.
    page.wait_for_function(
        "([i, n]) => Number(document.querySelectorAll('div.cell.pc-live')[i].dataset.runs) > n"
        " && document.querySelectorAll('div.cell.pc-live')[i].dataset.state === 'done'",
        arg=[drawn, runs],
        timeout=TIMEOUT,
    )
    desc = picture.locator("svg desc").first.text_content()
    assert "In the prefix cache: P0, P1." in desc and "P0 (×3)" in desc and "disagree" not in desc
    assert "×3" in picture.locator("svg").first.text_content()
    statuses = check_by_name(page)
    assert [n for n in SHARING_CHECKS if statuses[n] != "passed"] == []

    runs = int(page.locator("div.cell.pc-live").nth(drawn).get_attribute("data-runs"))
    no_share = "                        self.allocator.share(block)\n"
    assert solution.count(no_share) == 1
    set_code(page, exercise, solution.replace(no_share, ""))
    run_and_wait(page, exercise)
    page.wait_for_function(
        "([i, n]) => Number(document.querySelectorAll('div.cell.pc-live')[i].dataset.runs) > n"
        " && document.querySelectorAll('div.cell.pc-live')[i].dataset.state === 'done'",
        arg=[drawn, runs],
        timeout=TIMEOUT,
    )
    desc = picture.locator("svg desc").first.text_content()
    assert "P0 has reference count 2 but 3 table(s) map it" in desc  # the fork added one, the hit none
    assert "count 2, mapped by 3" in picture.locator("svg").first.text_content()
    statuses = check_by_name(page)
    assert [n for n in SHARING_CHECKS if statuses[n] != "passed"] == ["Hit adds a reference"]


def test_the_softmax_trace_redraws_for_the_learners_row(page, base_url):
    open_page(page, base_url, "online_softmax")
    index = cell_index("online_softmax.md", contains="SoftmaxTrace(logits")
    svg = page.locator("div.cell.pc-live").nth(index).locator(".cell_output svg")
    before = svg.first.locator("desc").text_content()
    code = page.evaluate("i => window.pyodideCells.cell(i).code", index)
    set_code(page, index, code.replace("logits = [3.0, 1000.0, -1000.0, 999.0, 1000.0, -2.0]", "logits = [-5.0, 700.0, 710.0]"))
    run_and_wait(page, index)
    after = svg.first.locator("desc").text_content()
    assert after != before and "710" in after


def test_the_block_table_diagram_redraws_after_a_fork(page, base_url):
    open_page(page, base_url, "paged_attention")
    index = cell_index("paged_attention.md", contains="BlockTableDiagram(forks)")
    out = page.locator("div.cell.pc-live").nth(index).locator(".cell_output")
    assert "×4" in out.locator("svg").first.text_content()  # the prompt block, shared by 4 tables
    code = page.evaluate("i => window.pyodideCells.cell(i).code", index)
    set_code(page, index, code.replace("NEW_TOKENS = (1, 0, 5)", "NEW_TOKENS = (0,)"))
    run_and_wait(page, index)
    text = out.locator("svg").first.text_content()
    assert "×2" in text and "×4" not in text


def test_checking_the_reference_instead_of_your_code_is_flagged(page, base_url):
    open_page(page, base_url, "online_softmax")
    exercise = cell_index("online_softmax.md", tag="exercise")
    set_code(page, exercise, "from labs.attention import online_softmax")
    run_and_wait(page, exercise)
    statuses, _ = check(page)
    assert set(statuses[:10]) == {"passed"}  # exercise 1's checks; exercise 2's still see the starter
    warning = page.locator(".pc-checks-warnings").inner_text()
    assert "online_softmax is the reference implementation from labs.attention" in warning


def test_a_failing_check_offers_its_hints_one_at_a_time(page, base_url, artifacts_dir):
    open_page(page, base_url, "micrograd")
    statuses = check_by_name(page)
    assert statuses["Output gradient"] == "failed"
    item = page.locator(".pc-check").filter(has_text="Output gradient")
    hints = item.locator(".pc-hints li")
    button = item.locator(".pc-hint-button")
    assert hints.count() == 0 and button.inner_text() == "Show a hint"
    # Passing checks offer nothing.
    assert page.locator(".pc-check").filter(has_text="Forward activation").locator(".pc-hint-button").is_hidden()
    button.focus()
    page.keyboard.press("Enter")
    assert hints.count() == 1 and "starts from the output" in hints.nth(0).inner_text()
    assert button.inner_text() == "Another hint"
    button.click()
    assert hints.count() == 2 and "self.grad" in hints.nth(1).inner_text()
    assert button.is_hidden()  # that was the last one
    assert page.evaluate("document.activeElement.closest('.pc-hints') !== null")  # the focus went to it
    item.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "micrograd-hints.png"))
    # Solved: the check passes and its hints go away.
    exercise = cell_index("micrograd.md", tag="exercise")
    set_code(page, exercise, reference_solution(read_page("micrograd.md")))
    run_and_wait(page, exercise)
    assert check_by_name(page)["Output gradient"] == "passed"
    assert item.locator(".pc-hints").is_hidden()


FONT_FILE = """f => f.family + '-' + ({'700 italic': 'BoldItalic', '700 normal': 'Bold', '400 italic': 'Italic'}[f.weight + ' ' + f.style] || 'Regular') + '.woff2'"""


@pytest.mark.parametrize("name", ["index", *LAB_NAMES, "runtime"])
def test_each_page_asks_for_the_katex_fonts_its_equations_use_from_its_head(page, base_url, name):
    """A web font found only as the page is laid out restyles the whole page when it arrives: on
    the online softmax lab (28,000 elements) the late KaTeX_Caligraphic held up the first output.
    Each page preloads, from <head>, exactly the fonts its text uses: none late, none unused
    (which Chromium would report)."""
    page.goto(f"{base_url}/{name}.html")
    page.wait_for_load_state("load")
    page.wait_for_function("document.fonts.status === 'loaded'", timeout=TIMEOUT)
    used = page.evaluate(f"[...document.fonts].filter(f => f.status === 'loaded').map({FONT_FILE})")
    head = page.eval_on_selector_all("head link[rel=preload][as=font]", "ls => ls.map(l => l.href.split('/').pop())")
    assert "KaTeX_Main-Regular.woff2" in used and "KaTeX_Math-Italic.woff2" in used
    assert sorted(head) == sorted(used)
    if name == "online_softmax":
        assert "KaTeX_Caligraphic-Regular.woff2" in head


def test_code_blocks_that_scroll_sideways_on_a_phone_are_reached_with_the_keyboard(phone_page, base_url):
    """WCAG 2.1.1: a code block wider than the phone scrolls sideways, so Tab must reach it. The
    runtime marks them once the page's first runs are done (measuring them lays the page out)."""
    page = phone_page
    open_page(page, base_url, "online_softmax")
    page.evaluate("window.pyodideCells.idle()")
    page.wait_for_function(
        """() => {
            const wide = [...document.querySelectorAll('div.highlight pre')].filter(p => p.scrollWidth > p.clientWidth + 1);
            return wide.length > 0 && wide.every(p => p.getAttribute('tabindex') === '0');
        }""",
        timeout=TIMEOUT,
    )
    narrow = page.evaluate(
        "[...document.querySelectorAll('div.highlight pre')].filter(p => p.scrollWidth <= p.clientWidth + 1 && p.hasAttribute('tabindex')).length"
    )
    assert narrow == 0, "only the blocks that scroll are made focusable"


AT_REST = """() => {
    const seen = window.__restSeen || (window.__restSeen = {y: -1, frames: 0});
    seen.frames = window.scrollY === seen.y ? seen.frames + 1 : 0;
    seen.y = window.scrollY;
    return seen.frames >= 10;
}"""


def test_the_end_key_pressed_while_python_starts_reaches_the_end_of_the_page(page, base_url):
    """A reader who presses End while Python starts sees the end of the page, the first time (a
    page whose far sections were laid out only as they came near stopped 7,000 px short)."""
    page.set_viewport_size({"width": 1280, "height": 800})
    held = while_python_starts(page, base_url, "online_softmax")
    assert page.evaluate("document.documentElement.dataset.pyodideState") != "ready"
    page.keyboard.press("End")
    page.wait_for_function(AT_REST, timeout=TIMEOUT, polling="raf")
    gap = page.evaluate("document.documentElement.scrollHeight - window.innerHeight - window.scrollY")
    assert gap <= 2, f"End stopped {gap:.0f} px above the end of the page"
    let_python_start(page, held)


def test_the_text_the_reader_is_at_holds_still_when_python_starts(page, base_url):
    """Python's start does not move the page under a reader who holds still half-way down (sections
    laid out only as they came near moved it by 100-200 px once laid out whole)."""
    page.set_viewport_size({"width": 1280, "height": 800})
    held = while_python_starts(page, base_url, "paged_attention")
    page.evaluate("window.scrollTo({top: document.documentElement.scrollHeight * 0.6, behavior: 'instant'})")
    page.wait_for_function(AT_REST, timeout=TIMEOUT, polling="raf")
    # The heading nearest the top of the window, and where it is.
    where = """() => {
        const hs = [...document.querySelectorAll('article h2, article h3')];
        const h = hs.reduce((a, b) => Math.abs(b.getBoundingClientRect().top) < Math.abs(a.getBoundingClientRect().top) ? b : a);
        return [h.textContent, h.getBoundingClientRect().top];
    }"""
    title, before = page.evaluate(where)
    let_python_start(page, held)
    page.evaluate("delete window.__restSeen")
    page.wait_for_function(AT_REST, timeout=TIMEOUT, polling="raf")
    after = page.evaluate(
        f"[...document.querySelectorAll('article h2, article h3')].find(h => h.textContent === {title!r}).getBoundingClientRect().top"
    )
    assert abs(after - before) <= 2, f"{title!r} moved from {before:.0f} px to {after:.0f} px when Python started"
