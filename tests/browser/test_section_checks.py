"""A page with several exercises: each later exercise's checks get their own Check my code and count
beside them, and a cell whose latest run raised never lets the console say everything passed.
(That the first exercise is near the top and each Check bar right below its exercise is checked in
test_sandbox.py's visit of each page at 1280 px.)"""

from __future__ import annotations

import pytest

from tests.browser.helpers import TIMEOUT, cell_index, editor, open_page, run_and_wait, set_code
from tests.pages import check_count, checks_by_exercise, exercise_count, read_page, reference_solution

pytestmark = pytest.mark.browser
PAGE = "online_softmax"


def press_check(page, button):
    """Press a Check my code button (the console's or a section's); wait until the checks' run ended."""
    console = page.locator(".pc-checks")
    before = int(console.get_attribute("data-runs"))
    button.click()
    page.wait_for_function("n => Number(document.querySelector('.pc-checks').dataset.runs) > n", arg=before, timeout=TIMEOUT)


@pytest.mark.long
def test_each_later_exercise_has_its_own_check_button_and_count(page, base_url):
    text = read_page(f"{PAGE}.md")
    open_page(page, base_url, PAGE)
    bars = page.locator(".pc-checks-bar")
    counts = [len(names) for names in checks_by_exercise(text)]
    assert bars.count() == exercise_count(text) - 1 == len(counts) - 1  # one per later section with checks
    headings = []
    for n, count in enumerate(counts[1:], start=2):
        bar = bars.nth(n - 2)
        # The bar sits in exercise n's section, before its first check, below the console.
        headings.append(
            bar.evaluate("""b => {
            let s = b.closest('section');
            while (!s.querySelector(':scope > h2')) s = s.parentElement.closest('section');
            return s.querySelector(':scope > h2').textContent.replace('#', '').trim();
        }""")
        )
        assert headings[-1].startswith(f"Exercise {n}")
        assert bar.evaluate("b => b.getBoundingClientRect().top") > page.locator(".pc-checks").evaluate(
            "c => c.getBoundingClientRect().top"
        )
        assert bar.locator(".pc-checks-bar-summary").inner_text() == f"{count} checks here · not run yet"

    press_check(page, bars.first.locator(".pc-run"))  # every exercise as the page gives it
    for n, count in enumerate(counts[1:]):
        assert bars.nth(n).locator(".pc-checks-bar-summary").inner_text() == f"0 / {count} of these checks passed"
        assert bars.nth(n).get_attribute("data-state") == "failed"

    for n in range(exercise_count(text)):
        exercise = cell_index(f"{PAGE}.md", tag="exercise", n=n)
        set_code(page, exercise, reference_solution(text, n))
        run_and_wait(page, exercise)
    press_check(page, bars.last.locator(".pc-run"))
    for n, count in enumerate(counts[1:]):
        assert bars.nth(n).locator(".pc-checks-bar-summary").inner_text() == f"{count} / {count} of these checks passed"
    total = check_count(f"{PAGE}.md")
    # The console's head counts the first exercise's checks; the line under it, the whole page's.
    assert page.locator(".pc-checks-summary").inner_text() == f"{counts[0]} / {counts[0]} passed"
    later = " · ".join(f"{heading}: {count} / {count}" for heading, count in zip(headings, counts[1:]))
    assert page.locator(".pc-checks-parts").inner_text() == f"The whole page: {total} / {total} passed · {later}"
    # Each exercise's checks, with their hints, are listed under its own bar.
    assert page.locator(".pc-checks .pc-check").count() == counts[0]
    assert [bars.nth(n).locator(".pc-check").count() for n in range(bars.count())] == counts[1:]
    # The link goes up to the console, where the whole page's count is.
    href = bars.first.locator("a.pc-checks-link").get_attribute("href")
    assert href == "#" + page.locator(".pc-checks").get_attribute("id")


@pytest.mark.long
def test_a_cell_that_raised_is_named_and_the_checks_do_not_pass(page, base_url):
    text = read_page(f"{PAGE}.md")
    open_page(page, base_url, PAGE)
    exercises = [cell_index(f"{PAGE}.md", tag="exercise", n=n) for n in range(exercise_count(text))]
    for n, index in enumerate(exercises):
        set_code(page, index, reference_solution(text, n))
        run_and_wait(page, index)
    console = page.locator(".pc-checks")
    press_check(page, console.locator(".pc-checks-head .pc-run"))
    assert console.get_attribute("data-state") == "passed"

    # The learner breaks exercise 2 (a line that does not parse, typed) and checks without running it:
    # the checks run the edited cell first, it raises, and the old definition is what they test.
    editor(page, exercises[1]).click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.type("broken = 1 +")
    press_check(page, console.locator(".pc-checks-head .pc-run"))
    assert console.get_attribute("data-state") == "failed"
    own = len(checks_by_exercise(text)[0])
    assert page.locator(".pc-checks-summary").inner_text() == f"{own} / {own} passed · a cell raised an error: see above"
    assert page.locator(".pc-checks-bar").first.get_attribute("data-state") == "failed"
    warning = console.locator(".pc-checks-warnings").inner_text()
    assert "raised an error when it ran" in warning and "Exercise 2" in warning


@pytest.mark.parametrize("which", ["page", "phone_page"])
def test_the_link_to_the_console_lands_with_its_head_below_the_sticky_bar(request, which, base_url):
    page = request.getfixturevalue(which)  # on a phone the bar sticks under Furo's header
    open_page(page, base_url, PAGE)
    link = page.locator(".pc-checks-bar a.pc-checks-link").first
    link.scroll_into_view_if_needed()
    link.click()
    page.wait_for_function("location.hash === '#' + document.querySelector('.pc-checks').id")
    settled = None  # the page scrolls there smoothly: wait until it has stopped
    while settled != (settled := page.evaluate("new Promise((r) => setTimeout(() => r(scrollY), 150))")):
        pass
    bar = page.locator(".pc-runtime").evaluate("b => b.getBoundingClientRect().bottom")
    head = page.locator("section.pc-checks > .pc-checks-head").evaluate("h => h.getBoundingClientRect().top")
    assert bar <= head < bar + 48, (bar, head)  # below the bar, and not far below it
