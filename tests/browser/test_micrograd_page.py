"""The micrograd lab in headless Chromium: Python runs in the page, offline.

The site is served on 127.0.0.1; the ``page`` fixture aborts and records any
request to another host, and fails the test if there was one.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from labs.autograd import build_neuron
from labs.checks import doctest_blocks, run_blocks
from tests.browser.helpers import (
    TIMEOUT,
    cell,
    check,
    editor,
    let_python_start,
    open_lab,
    run_and_wait,
    runs,
    set_code,
    wait_cell,
    wait_runs,
    while_python_starts,
    whole_page,
)
from tests.pages import check_count, exercise_code, first_exercise_checks, micrograd_solution, read_page

pytestmark = pytest.mark.browser
EXERCISE, GRAPH = 0, 1  # the page's cells, in order


def passing(first: str, second: str | None = None) -> list[str]:
    """The checks that pass, in page order, when exercise 1's cell holds ``first`` and exercise 2's
    ``second`` (its starter if None): what CPython's labs.checks finds, for the page to agree with."""
    import contextlib
    import io

    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for code in (first, exercise_code(read_page("micrograd.md"), 1) if second is None else second):
            exec(compile(code, "<exercise>", "exec"), namespace)
    results = run_blocks(doctest_blocks(read_page("micrograd.md")), namespace)
    return [r.check.name for r in results if not r.check.setup and r.status == "passed"]


CHECKS = check_count("micrograd.md")  # the page's named checks, both exercises


def graph_svg_text(page):
    page.locator("figure.lab-graph").first.scroll_into_view_if_needed()
    page.wait_for_selector("div.cell.pc-live >> nth=1 >> .lab-graph-frame[data-state=drawn] svg", timeout=TIMEOUT)
    return cell(page, GRAPH).locator(".lab-graph-frame svg").text_content()


def test_build_time_outputs_show_before_python_runs(page, base_url):
    held = while_python_starts(page, base_url, "micrograd")  # Python waits for the test
    # The reader scrolls to each output and reads it as shown (inner_text: what is rendered).
    for index, baked in ((EXERCISE, "o  data = +0.70710678   grad = +0.00000000"), (GRAPH, "10 nodes · 9 edges")):
        output = cell(page, index).locator(".cell_output, figure.lab-graph figcaption").last
        output.scroll_into_view_if_needed()
        expect(output).to_contain_text(baked, use_inner_text=True)
    assert page.evaluate("document.documentElement.dataset.pyodideState") != "ready"  # all of it baked
    let_python_start(page, held)
    status = page.locator(".pc-runtime").inner_text()
    assert "Pyodide 0.26.2" in status and "ready" in status


@pytest.mark.long
def test_complete_the_exercise_run_it_and_check_it(page, base_url, artifacts_dir):
    open_lab(page, base_url)
    # The starters: the checks are pending, then the gradient checks fail.
    assert page.locator(".pc-check[data-status=pending]").count() == CHECKS
    starter = check(page)
    assert [name for name, status in starter.items() if status == "passed"] == passing(exercise_code(read_page("micrograd.md")))
    assert passing(exercise_code(read_page("micrograd.md"))) == ["Forward activation", "Weight w2 gradient"]
    # The console's head counts exercise 1's checks; the line under it, the whole page's.
    own = first_exercise_checks("micrograd.md")
    assert page.locator(".pc-checks-summary").inner_text() == f"2 / {len(own)} passed"
    assert whole_page(page) == f"2 / {CHECKS}"
    failed = page.locator(".pc-check[data-status=failed]").first.locator(".pc-check-detail").inner_text()
    assert failed == "expected 1.0, got 0.0"

    # The learner completes the TODOs and runs the cell with Ctrl+Enter.
    set_code(page, EXERCISE, micrograd_solution())
    out = run_and_wait(page, EXERCISE, via="keyboard")
    ref = build_neuron()
    ref.o.backward()
    for name in ("o", "n", "b", "x1", "w1", "x2", "w2"):
        node = getattr(ref, name)
        assert f"{name:>2}  data = {node.data:+.8f}   grad = {node.grad:+.8f}" in out
    # Exercise 1's checks pass. Running exercise 1 again defined Value afresh, without what exercise 2
    # (run by the first Check) added to it: the checks run exercise 2 again after it, as the page
    # would top to bottom, so exercise 2's checks test its starter, not a Value without relu.
    results = check(page)
    assert [name for name, status in results.items() if status == "passed"] == passing(micrograd_solution())
    # Exercise 1 is done: its console says so (issue 38: "16 / 34" in red read as a failure).
    assert page.locator(".pc-checks-summary").inner_text() == f"{len(own)} / {len(own)} passed"
    assert page.locator(".pc-checks").get_attribute("data-state") == "passed"
    assert whole_page(page) == f"{len(passing(micrograd_solution()))} / {CHECKS}"
    # Exercise 2's checks are listed under its own bar, not in exercise 1's console.
    assert page.locator(".pc-checks .pc-check").count() == len(own)
    assert page.locator(".pc-checks-bar .pc-check").count() == CHECKS - len(own)
    # The graph cell re-ran by itself and now shows the learner's gradients.
    wait_cell(page, GRAPH)
    text = graph_svg_text(page)
    assert "grad -1.5000" in text and "grad 0.5000" in text
    page.screenshot(path=str(artifacts_dir / "micrograd-solved-desktop.png"), full_page=True)


def test_the_graph_switches_views_and_zooms(page, base_url):
    open_lab(page, base_url)
    text = graph_svg_text(page)
    assert "data 0.7071" in text and "grad 0.0000" in text  # "Both"
    graph = cell(page, GRAPH)
    assert graph.locator(".lab-graph-frame svg g.node").count() == 15  # 10 values + 5 ops
    graph.get_by_label("Backward: gradients").check()
    page.wait_for_function("!document.querySelector('.lab-graph-frame svg').textContent.includes('data ')")
    assert "grad 0.0000" in graph.locator(".lab-graph-frame svg").text_content()
    width = graph.locator(".lab-graph-frame svg").evaluate("s => s.getBoundingClientRect().width")
    graph.get_by_label("Zoom in").click()
    zoomed = graph.locator(".lab-graph-frame svg").evaluate("s => s.getBoundingClientRect().width")
    assert zoomed == pytest.approx(width * 1.25, rel=0.02)


def test_the_graph_opens_whole_with_readable_labels(page, base_url):
    # It opened at 100 %, 1,725 px wide in a 734 px frame, the output node off-frame; "Fit" made its labels 6 px.
    open_lab(page, base_url)
    graph_svg_text(page)
    frame = cell(page, GRAPH).locator(".lab-graph-frame")
    fits = frame.evaluate("f => [f.scrollWidth <= f.clientWidth, f.scrollHeight <= f.clientHeight]")
    assert fits == [True, True]  # nothing to scroll to: the whole graph shows, o and the leaves
    label_px = """f => { const svg = f.querySelector('svg'); const text = svg.querySelector('text');
        return parseFloat(text.getAttribute('font-size')) * 4 / 3 * svg.getBoundingClientRect().width / parseFloat(svg.dataset.naturalWidth); }"""
    assert frame.evaluate(label_px) >= 11
    shown = cell(page, GRAPH).locator(".lab-graph-zoom").inner_text()
    assert shown.endswith(" %") and int(shown[:-2]) <= 100
    cell(page, GRAPH).get_by_role("button", name="Fit the whole graph").click()
    assert frame.evaluate(label_px) >= 11


def test_the_exercise_run_in_the_page_draws_the_graph_it_was_built_with(page, base_url):
    # The exercise's Value keeps _prev as a set, as micrograd does; its order follows
    # memory addresses, and the graph Python drew in the page had its branches swapped
    # from the one baked at build time (and between a fresh and a restored start).
    open_lab(page, base_url)
    baked = cell(page, GRAPH).locator("figure.lab-graph").get_attribute("data-dot-both")
    assert baked and baked.count(" -> ") == 14  # 9 edges, and 5 op ellipses wired to their values
    run_and_wait(page, EXERCISE)  # the exercise as given, as it ran at build time
    wait_runs(page, GRAPH, 1)
    assert cell(page, GRAPH).locator("figure.lab-graph").get_attribute("data-dot-both") == baked


def test_a_rerun_keeps_the_graphs_view_zoom_and_height(page, base_url):
    # The graph's cell runs again after every run: its new figure took the learner
    # back to "Both" at the zoom it opens at, and its frame stood empty until Graphviz drew it, the
    # page below moving up by the graph's height and back.
    open_lab(page, base_url)
    graph_svg_text(page)
    graph = cell(page, GRAPH)
    graph.get_by_label("Backward: gradients").check()
    page.wait_for_function("!document.querySelector('.lab-graph-frame svg').textContent.includes('data ')")
    opened = graph.locator(".lab-graph-zoom").inner_text()
    graph.get_by_label("Zoom in").click()
    expect(graph.locator(".lab-graph-zoom")).not_to_have_text(opened)
    zoomed = graph.locator(".lab-graph-zoom").inner_text()
    output = graph.locator(".cell_output")
    before = output.evaluate("e => e.getBoundingClientRect().height")
    # Every height the output is drawn at while the exercise and the graph run again.
    output.evaluate("""e => { window.graphHeights = [];
        new ResizeObserver(([entry]) => window.graphHeights.push(entry.target.getBoundingClientRect().height)).observe(e); }""")
    set_code(page, EXERCISE, micrograd_solution())
    runs_before = runs(page, GRAPH)
    run_and_wait(page, EXERCISE, via="keyboard")
    wait_runs(page, GRAPH, runs_before + 1)
    graph.locator("figure.lab-graph").scroll_into_view_if_needed()  # the learner goes to look: it is drawn near the screen
    page.wait_for_function(
        "document.querySelector('.lab-graph-frame[data-state=drawn] svg')?.textContent.includes('grad -1.5000')", timeout=TIMEOUT
    )
    after = output.evaluate("e => e.getBoundingClientRect().height")
    heights = page.evaluate("window.graphHeights")
    assert min(heights) >= min(before, after) - 1, (before, after, heights)
    assert graph.get_by_label("Backward: gradients").is_checked()
    expect(graph.locator(".lab-graph-zoom")).to_have_text(zoomed)
    assert "data " not in graph.locator(".lab-graph-frame svg").text_content()


def test_the_graphs_view_and_zoom_come_back_after_a_run_that_could_not_draw_it(page, base_url):
    open_lab(page, base_url)
    graph_svg_text(page)
    graph = cell(page, GRAPH)
    graph.get_by_label("Forward: data").check()
    opened = graph.locator(".lab-graph-zoom").inner_text()
    graph.get_by_label("Zoom out").click()
    expect(graph.locator(".lab-graph-zoom")).not_to_have_text(opened)
    zoomed = graph.locator(".lab-graph-zoom").inner_text()
    starter = exercise_code(read_page("micrograd.md"))
    set_code(page, EXERCISE, starter + '\no = Value(None, label="o"); o._prev = {Value(2.0)}\n')
    runs_before = runs(page, GRAPH)
    run_and_wait(page, EXERCISE)
    wait_runs(page, GRAPH, runs_before + 1)
    expect(graph.locator(".cell_output")).to_contain_text("'o': data must be a number, got None (NoneType)")
    set_code(page, EXERCISE, starter)
    run_and_wait(page, EXERCISE)
    wait_runs(page, GRAPH, runs_before + 2)
    graph.locator("figure.lab-graph").scroll_into_view_if_needed()
    page.wait_for_selector(".lab-graph-frame[data-state=drawn] svg", timeout=TIMEOUT)
    assert graph.get_by_label("Forward: data").is_checked()
    expect(graph.locator(".lab-graph-zoom")).to_have_text(zoomed)
    assert "grad " not in graph.locator(".lab-graph-frame svg").text_content()


def test_the_graph_drawn_above_the_screen_does_not_push_the_page(page, base_url):
    # After a reload far below it, the graph is drawn as the reader scrolls back up to it,
    # above the screen: it grew by 184 px and what the reader was looking at jumped down.
    open_lab(page, base_url)
    page.mouse.move(640, 450)
    goal = page.evaluate("document.documentElement.scrollHeight * 0.35")
    while page.evaluate("scrollY") < goal:
        y = page.evaluate("scrollY")
        page.mouse.wheel(0, 900)
        page.wait_for_function("y => scrollY !== y", arg=y, timeout=TIMEOUT)
    page.reload()
    page.wait_for_function("performance.getEntriesByName('pyodide-cells:place-kept').length > 0", timeout=TIMEOUT)
    assert page.evaluate("document.querySelector('.lab-graph-frame')?.dataset.state") != "drawn"
    below = "Math.round(document.querySelectorAll('div.cell')[2].getBoundingClientRect().top)"
    moves = []
    for _ in range(80):
        y, top = page.evaluate("scrollY"), page.evaluate(below)
        if y == 0:
            break
        page.mouse.wheel(0, -100)
        page.wait_for_function("y => scrollY !== y", arg=y, timeout=TIMEOUT)
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        moves.append(page.evaluate(below) - top)
        if page.evaluate("document.querySelector('.lab-graph-frame')?.dataset.state") == "drawn" and len(moves) > 3:
            break
    assert page.evaluate("document.querySelector('.lab-graph-frame')?.dataset.state") == "drawn"
    # What the reader sees moved by the wheel's 100 px at every step, the one the graph was drawn in too.
    assert [shown for shown in moves if abs(shown - 100) > 2] == [], moves


def test_hostile_labels_are_shown_as_text(page, base_url):
    open_lab(page, base_url)
    page.on("dialog", lambda d: pytest.fail(f"a dialog opened: {d.message}"))
    set_code(
        page,
        EXERCISE,
        (
            "from labs.autograd import Value\n"
            "a = Value(1.0, label='<img src=x onerror=alert(1)>')\n"
            "out = a * 2; out.label = '\"quoted\" & {braces} | pipe'\n"
        ),
    )
    run_and_wait(page, EXERCISE)
    wait_cell(page, GRAPH)
    text = graph_svg_text(page)
    assert "<img src=x onerror=alert(1)>" in text and '"quoted" & {braces} | pipe' in text
    assert cell(page, GRAPH).locator("img").count() == 0
    assert "3 nodes · 2 edges" in cell(page, GRAPH).locator("figcaption").inner_text()


def test_a_run_pressed_before_python_is_ready_is_queued(page, base_url):
    # Python's wasm held back: with the worker's HTTP cache warm, Python could be ready before the click.
    held = while_python_starts(page, base_url, "micrograd")
    cell(page, GRAPH).locator(".pc-run").click()  # runs the exercise first, then the graph
    assert page.evaluate("document.documentElement.dataset.pyodideState") != "ready"
    for route in held:
        route.continue_()
    page.unroute("**/pyodide.asm.wasm")
    wait_runs(page, GRAPH, 1)
    assert cell(page, EXERCISE).get_attribute("data-state") == "done" and runs(page, EXERCISE) == 1
    assert "10 nodes · 9 edges" in cell(page, GRAPH).locator("figcaption").inner_text()


def test_errors_show_tracebacks_and_the_next_run_works(page, base_url):
    open_lab(page, base_url)
    set_code(page, EXERCISE, "from labs.autograd import Value\nx = 1\nValue(2.0) * 'text'")
    out = run_and_wait(page, EXERCISE)
    assert cell(page, EXERCISE).get_attribute("data-state") == "error"
    assert 'File "<cell 1>", line 3' in out and "TypeError" in out and "'str'" in out
    # Run again (Python's second run of it): still the number its toolbar shows, not the run's.
    out = run_and_wait(page, EXERCISE)
    assert 'File "<cell 1>", line 3' in out and cell(page, EXERCISE).locator(".pc-count").inner_text() == "cell 1"
    set_code(page, EXERCISE, "def f(:\n    pass")
    out = run_and_wait(page, EXERCISE)
    assert "SyntaxError" in out and "line 1" in out and "def f(:" in out
    set_code(page, EXERCISE, "")
    assert run_and_wait(page, EXERCISE).strip() == ""
    assert cell(page, EXERCISE).get_attribute("data-state") == "done"
    set_code(page, EXERCISE, "import sys\nprint('to stdout')\nprint('to stderr', file=sys.stderr)\nsys.version_info[:2]")
    out = run_and_wait(page, EXERCISE)
    assert out.split() == ["to", "stdout", "to", "stderr", "(3,", "12)"]


def test_rich_output_is_rendered(page, base_url):
    open_lab(page, base_url)
    set_code(
        page,
        EXERCISE,
        (
            "class Badge:\n"
            "    def _repr_html_(self):\n"
            "        return '<strong class=\"probe-html\">' + str(6 * 7) + '</strong>'\n"
            "class Dot:\n"
            "    def _repr_svg_(self):\n"
            '        return \'<svg class="probe-svg" width="10" height="10"><circle r="4" cx="5" cy="5"/></svg>\'\n'
            "display(Badge())\n"
            "Dot()"
        ),
    )
    run_and_wait(page, EXERCISE)
    assert cell(page, EXERCISE).locator("strong.probe-html").inner_text() == "42"
    assert cell(page, EXERCISE).locator("svg.probe-svg circle").count() == 1


def test_the_lab_reads_on_a_phone(phone_page, base_url, artifacts_dir):
    open_lab(phone_page, base_url)
    run_and_wait(phone_page, EXERCISE)
    width = phone_page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone: {width}px"
    phone_page.screenshot(path=str(artifacts_dir / "micrograd-phone.png"), full_page=True)


def test_ctrl_space_completes_from_the_live_namespace_and_waits_for_a_run(page, base_url):
    open_lab(page, base_url)
    run_and_wait(page, EXERCISE)  # defines Value
    box = editor(page, GRAPH)
    box.click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.type("Val")
    page.keyboard.press("Control+Space")
    # Read as the list appears, and Enter at once: CodeMirror's default 75 ms before a list takes
    # Enter put a new line under "Val" (it failed CI once).
    listed = page.wait_for_function(
        "() => [...document.querySelectorAll('.cm-tooltip-autocomplete li')].map((li) => li.innerText)"
        ".filter(Boolean).join('|') || null",
        timeout=TIMEOUT,
    ).json_value()
    page.keyboard.press("Enter")
    assert listed.split("|") == ["Value", "ValueError"]  # the learner's class, then the built-in
    assert box.locator(".cm-line").last.inner_text() == "Value"
    # An attribute of the learner's object, asked while Python is busy: the toolbar says it waits.
    page.keyboard.press("Enter")
    page.keyboard.type("o.")  # the neuron's output, a Value the exercise cell made
    page.evaluate("void pyodideCells.runCode('import time\\nt = time.time()\\nwhile time.time() - t < 1.5: pass')")
    page.keyboard.press("Control+Space")
    status = cell(page, GRAPH).locator(".pc-cell-status")
    expect(status).to_have_text("Completion waits for code to end…")
    options = cell(page, GRAPH).locator(".cm-tooltip-autocomplete li")
    options.first.wait_for(timeout=TIMEOUT)
    assert {"backward", "data", "grad", "tanh"} <= set(options.all_inner_texts())
    assert status.inner_text() != "Completion waits for code to end…"
