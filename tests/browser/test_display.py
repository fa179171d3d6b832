"""Jupyter's display conventions in the page: IPython.display's classes, Markdown and LaTeX
rendered as at build time, raw HTML in Markdown shown as text; light and dark themes."""

from __future__ import annotations

import pytest

from tests.browser.helpers import READY, TIMEOUT, cell, run_and_wait, runs, type_code, wait_runs

pytestmark = pytest.mark.browser
DEMO = 0  # the runtime page's one cell: Markdown, HTML and Math


def open_runtime(page, base_url):
    page.goto(f"{base_url}/runtime.html")
    page.wait_for_function(READY, timeout=TIMEOUT)


def test_the_live_output_renders_like_the_build_time_output(page, base_url):
    open_runtime(page, base_url)
    baked = cell(page, DEMO).locator(".cell_output")
    assert baked.locator("strong").inner_text() == "Markdown"
    assert baked.locator(".katex").count() == 2  # the inline α, the display equation
    run_and_wait(page, DEMO)
    live = cell(page, DEMO).locator(".cell_output")
    live.locator(".text_markdown .katex").wait_for(timeout=TIMEOUT)  # richtext.js loads on first use
    assert live.locator(".text_markdown strong").inner_text() == "Markdown"
    assert live.locator(".text_html em").inner_text() == "HTML"
    assert live.locator(".text_latex .katex-display").count() == 1
    # The same equation, by KaTeX both times: its MathML annotation is the same LaTeX.
    tex = "annotation[encoding='application/x-tex']"
    assert live.locator(f".text_latex {tex}").text_content() == baked.locator(f".text_latex {tex}").text_content()


def test_markdown_shows_raw_html_as_text_and_every_class_works(page, base_url):
    open_runtime(page, base_url)
    page.on("dialog", lambda d: pytest.fail(f"a dialog opened: {d.message}"))
    type_code(
        page,
        DEMO,
        (
            "from IPython.display import display, JSON, Latex, Markdown, SVG\n"
            "display(Markdown('<img src=x onerror=alert(1)> *kept as text*'))\n"
            'display(SVG(\'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>\'))\n'
            "display(JSON({'block_table': [7, 1, 3]}))\n"
            "Latex(r'the running max $m$ and $\\alpha \\le 1$')"
        ),
    )
    out = run_and_wait(page, DEMO)
    live = cell(page, DEMO).locator(".cell_output")
    live.locator(".text_markdown em").wait_for(timeout=TIMEOUT)
    assert live.locator(".text_markdown img").count() == 0
    assert "<img src=x onerror=alert(1)>" in live.locator(".text_markdown").inner_text()
    assert live.locator(".image_svg svg rect").count() == 1
    assert '"block_table": [\n    7,' in out
    assert live.locator(".text_latex .katex").count() == 2

    type_code(page, DEMO, "from IPython.display import Image")
    assert "ImportError: IPython.display here has display" in run_and_wait(page, DEMO)


def test_rendered_math_follows_the_theme(page, base_url):
    open_runtime(page, base_url)
    run_and_wait(page, DEMO)
    math = cell(page, DEMO).locator(".text_latex .katex-display .katex-html")
    math.wait_for(timeout=TIMEOUT)
    colours = {}
    for theme in ("light", "dark"):
        page.evaluate(f"document.body.dataset.theme = {theme!r}")
        colours[theme] = (
            math.evaluate("e => getComputedStyle(e).color"),
            page.evaluate("getComputedStyle(document.body).backgroundColor"),
        )
    assert colours["light"][0] != colours["dark"][0]  # the text colour follows the page's
    assert all(text != background for text, background in colours.values())


def test_markdown_too_long_to_render_stays_text_and_says_so(page, base_url):
    open_runtime(page, base_url)
    type_code(page, DEMO, "from IPython.display import Markdown\nMarkdown('*x* ' * 20000)")
    run_and_wait(page, DEMO)
    live = cell(page, DEMO).locator(".cell_output .text_markdown")
    assert live.locator("em").count() == 0
    assert live.inner_text().endswith("… shown as text: Markdown over 50,000 characters is not rendered")


def test_a_display_is_redrawn_in_place_while_the_cell_runs_and_clear_output_waits(page, base_url):
    open_runtime(page, base_url)
    # Typed as a learner types it (the editor indents the loop's body); the endless loop at the
    # end proves the updates arrive while Python still runs, and Stop ends it.
    type_code(
        page,
        DEMO,
        (
            "from IPython.display import display, HTML\n"
            "h = display(HTML('<b class=step>step 0</b>'), display_id=True)\n"
            "for i in range(1, 4):\n"
            "h.update(HTML(f'<b class=step>step {i}</b>'))\n"
        ),
    )
    page.keyboard.press("Backspace")  # out of the loop's body: one indent unit
    page.keyboard.type("while True:\npass")
    cell(page, DEMO).locator(".pc-run").click()
    out = cell(page, DEMO).locator(".cell_output")
    page.wait_for_function(
        "i => { const c = document.querySelectorAll('div.cell.pc-live')[i];"
        " return c.dataset.state === 'running' && c.querySelector('.cell_output b.step')?.textContent === 'step 3'; }",
        arg=DEMO,
        timeout=TIMEOUT,
    )
    assert out.locator("b.step").count() == 1  # replaced in place, not appended
    before = runs(page, DEMO)
    cell(page, DEMO).locator(".pc-run").click()  # the running cell's Run is its Stop
    wait_runs(page, DEMO, before + 1)
    assert "KeyboardInterrupt" in out.inner_text() and out.locator("b.step").inner_text() == "step 3"

    # clear_output(wait=True) clears when the next output arrives: only the last line stays.
    type_code(
        page, DEMO, ("from IPython.display import clear_output\nfor i in range(3):\nclear_output(wait=True)\nprint(f'epoch {i}')")
    )
    assert run_and_wait(page, DEMO).strip() == "epoch 2"
