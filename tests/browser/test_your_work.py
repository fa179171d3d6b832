"""The learner's work leaves the page: Download .py / .ipynb, progress kept in
this browser and shown beside the links to the labs, Reset this page.

Driven as a learner does: typing in the editor, clicking the page's buttons,
answering the page's question, opening the landing page in another tab.
"""

from __future__ import annotations

import re
import subprocess
import sys

import nbformat
import pytest
from playwright.sync_api import expect

from tests.browser.helpers import READY, TIMEOUT, check, editor, set_code
from tests.pages import check_count, first_exercise_checks, read_page, reference_solution, reference_solutions

pytestmark = pytest.mark.browser
LAB = "paged_attention"
CHECKS = check_count(f"{LAB}.md")  # the page's named checks (two exercises)


def exercise_index(page) -> int:
    return page.evaluate("[...document.querySelectorAll('div.cell.pc-live')].findIndex((c) => c.classList.contains('tag_exercise'))")


def paste_every_solution(page):
    """Paste each exercise's reference solution into its cell, as a learner pastes."""
    indexes = page.evaluate(
        "[...document.querySelectorAll('div.cell.pc-live')].flatMap((c, i) => c.classList.contains('tag_exercise') ? [i] : [])"
    )
    solutions = reference_solutions(read_page(f"{LAB}.md"))
    assert len(indexes) == len(solutions)
    for index, solution in zip(indexes, solutions):
        set_code(page, index, solution)


def type_at_end(page, index, text):
    editor(page, index).click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.type(text)


def download(page, label):
    with page.expect_download() as info:
        page.get_by_role("button", name=label).click()
    got = info.value
    return got.suggested_filename, got.path().read_text()


def badge(page, selector):
    """The progress badge's text inside ``selector`` ('' when there is none)."""
    found = page.locator(f"{selector} .pc-progress")
    return found.text_content() if found.count() else ""


def test_downloads_carry_what_the_learner_typed_and_the_checks(page, base_url, tmp_path):
    page.goto(f"{base_url}/{LAB}.html")
    index = exercise_index(page)
    type_at_end(page, index, "# my note on block tables")

    name, text = download(page, "Download .py")
    assert name == f"{LAB}.py"
    assert "    # my note on block tables\n" in text and text.startswith("# %% [markdown]\n# # Lab 3 · PagedAttention block tables\n")
    assert f"{base_url}/{LAB}.html" in text
    (tmp_path / name).write_text(text)
    starter = subprocess.run([sys.executable, "-I", "-S", "-m", "doctest", name], cwd=tmp_path, capture_output=True, text=True)
    assert starter.returncode == 1 and "***Test Failed***" in starter.stdout  # the TODOs are not done

    paste_every_solution(page)
    name, text = download(page, "Download .py")
    (tmp_path / name).write_text(text)
    solved = subprocess.run([sys.executable, "-I", "-S", "-m", "doctest", "-v", name], cwd=tmp_path, capture_output=True, text=True)
    assert solved.returncode == 0, solved.stdout[-2000:]
    assert re.search(r"^Test passed\.$", solved.stdout, re.M)

    name, text = download(page, "Download .ipynb")
    assert name == f"{LAB}.ipynb"
    nb = nbformat.reads(text, as_version=4)
    nbformat.validate(nb)
    assert reference_solution(read_page(f"{LAB}.md")).rstrip() in [c.source for c in nb.cells]


def test_progress_shows_on_the_lab_the_landing_page_and_the_sidebar(page, base_url):
    page.goto(f"{base_url}/{LAB}.html")
    here = ".sidebar-tree a.current.reference"  # Furo links the page itself as "#"
    assert page.locator(here).inner_text().startswith("Lab 3")
    assert badge(page, here) == ""
    paste_every_solution(page)
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert set(check(page).values()) == {"passed"}
    # The sidebar of this page shows it at once.
    page.locator(f"{here} .pc-progress").wait_for()
    assert badge(page, here) == f"checks passed: ✓ {CHECKS} / {CHECKS}"

    page.goto(f"{base_url}/index.html")
    assert badge(page, f'.sidebar-tree a[href="{LAB}.html"]') == f"checks passed: ✓ {CHECKS} / {CHECKS}"
    cards = page.locator(".sd-card")
    lab3 = cards.filter(has=page.locator(f'a.sd-stretched-link[href="{LAB}.html"]'))
    assert lab3.locator(".sd-card-title .pc-progress").text_content() == f"checks passed: ✓ {CHECKS} / {CHECKS}"
    assert page.locator(".sd-card .pc-progress").count() == 1  # the labs not checked yet show nothing
    assert "pc-progress-done" in lab3.locator(".pc-progress").get_attribute("class")

    page.goto(f"{base_url}/{LAB}.html")
    summary = page.locator(".pc-checks-summary")
    summary.scroll_into_view_if_needed()  # where the learner reads it
    expect(summary).to_contain_text(f"(last time: {CHECKS} / {CHECKS} passed)", use_inner_text=True)


def test_reset_this_page_takes_the_badges_back_to_what_is_true(page, base_url):
    # Checked with the solutions, then reset to the starters: "✓ N / N" is no longer the page's code.
    page.goto(f"{base_url}/{LAB}.html")
    here = ".sidebar-tree a.current.reference"
    paste_every_solution(page)
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert set(check(page).values()) == {"passed"}
    page.locator(f"{here} .pc-progress").wait_for()
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Reset this page").click()
    page.wait_for_function("document.querySelectorAll('.pc-edited:not([hidden])').length === 0", timeout=TIMEOUT)
    assert badge(page, here) == ""  # at once, with no Check in between
    page.goto(f"{base_url}/index.html")
    assert page.locator(".pc-progress").count() == 0  # neither the sidebar nor the card


def test_progress_made_in_one_tab_shows_in_another(two_tabs, base_url):
    landing, lab = two_tabs
    landing.goto(f"{base_url}/index.html")
    lab.goto(f"{base_url}/{LAB}.html")
    lab.bring_to_front()
    lab.wait_for_function(READY, timeout=TIMEOUT)
    assert set(check(lab).values()) == {"failed"}  # the starter's translate returns None
    card = landing.locator(".sd-card").filter(has=landing.locator(f'a.sd-stretched-link[href="{LAB}.html"]'))
    card.locator(".pc-progress").wait_for(timeout=TIMEOUT)
    assert card.locator(".pc-progress").text_content() == f"checks passed: 0 / {CHECKS}"
    assert "pc-progress-done" not in card.locator(".pc-progress").get_attribute("class")


def test_reset_this_page_asks_then_restores_every_edited_cell(page, base_url):
    page.goto(f"{base_url}/micrograd.html")
    reset = page.get_by_role("button", name="Reset this page")
    assert reset.is_disabled()
    originals = [page.locator("div.cell.pc-live").nth(i).locator(".cell_input pre").first.text_content() for i in (0, 2)]
    type_at_end(page, 0, "# first edit")
    type_at_end(page, 2, "# second edit")
    assert reset.is_enabled()
    assert page.locator(".pc-edited:not([hidden])").count() == 2

    questions = []

    def answer(dialog, accept):
        questions.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda d: answer(d, False))
    reset.click()
    assert questions and questions[0].startswith("Restore the original code of 2 cells: cell 1 (under “")
    assert "; cell 3 (under “" in questions[0] and "(Download .py first to keep a copy of the exercise.)" in questions[0]
    assert page.locator(".pc-edited:not([hidden])").count() == 2  # "Cancel" keeps them

    page.once("dialog", lambda d: answer(d, True))
    reset.click()
    page.wait_for_function("document.querySelectorAll('.pc-edited:not([hidden])').length === 0", timeout=TIMEOUT)
    lines = "(content) => [...content.querySelectorAll('.cm-line')].map((line) => line.textContent).join('\\n')"
    shown = [page.locator("div.cell.pc-live").nth(i).locator(".cm-content").evaluate(lines) for i in (0, 2)]
    assert [text.rstrip("\n") for text in shown] == [o.rstrip("\n") for o in originals]
    kept = page.evaluate("Object.keys(localStorage).filter((k) => k.startsWith('pyodide-cells:v1:/micrograd'))")
    assert kept == []
    assert reset.is_disabled()
    # The focus is not dropped on the page: it is on the first restored cell, and the page says what it did.
    assert page.evaluate("document.activeElement === document.querySelector('div.cell.pc-live .pc-run')")
    assert page.locator(".pc-page-tools-said").inner_text() == "Restored 2 cells."
    page.reload()
    assert page.locator(".pc-edited:not([hidden])").count() == 0


def test_resetting_only_a_demo_cell_promises_no_copy_and_names_it(page, base_url):
    page.goto(f"{base_url}/micrograd.html")
    type_at_end(page, 2, "# an edit")
    questions = []
    page.once("dialog", lambda d: (questions.append(d.message), d.accept()))
    page.get_by_role("button", name="Reset this page").click()
    page.wait_for_function("document.querySelectorAll('.pc-edited:not([hidden])').length === 0", timeout=TIMEOUT)
    assert questions[0].startswith("Restore the original code of cell 3 (under “") and "Download" not in questions[0]


def test_the_console_says_when_its_results_are_from_before_an_edit(page, base_url):
    page.goto(f"{base_url}/{LAB}.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    check(page)
    summary = page.locator(".pc-checks-summary")
    own = len(first_exercise_checks(f"{LAB}.md"))  # the console's head: the first exercise's checks
    assert summary.inner_text() == f"0 / {own} passed"
    type_at_end(page, exercise_index(page), "# changed")
    assert summary.inner_text() == f"0 / {own} passed · before your last change: press Check my code again"
    assert page.locator(".pc-checks-bar").first.get_attribute("data-stale") == "true"
    assert page.locator(".pc-checks").get_attribute("data-stale") == "true"
    check(page)
    assert summary.inner_text() == f"0 / {own} passed" and page.locator(".pc-checks").get_attribute("data-stale") is None


def test_an_edit_is_the_same_at_every_address_of_the_page_and_older_keys_are_kept(page, base_url):
    # An edit saved before keys were made the same for /micrograd.html and /micrograd.
    page.goto(f"{base_url}/micrograd.html")
    page.evaluate("localStorage.setItem('pyodide-cells:v1:/micrograd.html:cell-0', '# kept from before\\nx = 1')")
    page.reload()
    first = page.locator("div.cell.pc-live").first
    assert first.locator(".pc-edited").is_visible()
    assert page.evaluate("localStorage.getItem('pyodide-cells:v1:/micrograd:cell-0')") == "# kept from before\nx = 1"
    assert page.evaluate("localStorage.getItem('pyodide-cells:v1:/micrograd.html:cell-0')") is None
    page.goto(f"{base_url}/micrograd")  # the address static hosts also answer
    assert page.locator("div.cell.pc-live").first.locator(".cell_input pre").first.text_content().startswith("# kept from before")
