"""Every output, build-time or live, is readable in Furo's light and dark themes.

WCAG AA asks 4.5:1 between a text and what is behind it. The test makes every
kind of output a learner meets, then, under an OS in light and in dark mode,
sets Furo's theme switch to each of its three positions with its button, as a
learner does, and measures each text in the page: its colour and the colours
painted behind it (backgrounds, translucent tints and dimmed outputs blended
down to the canvas), through the WCAG relative-luminance formula.

In one page: a cell is edited and the page reloaded (its build-time output is
then marked stale and dimmed, under a note); one run of the exercise cell
prints to stdout and stderr, displays a value, prints past the output limit (the
cut note) and ends in a traceback; the six cases are measured; Check my code
then fails its set-up (``Value`` is gone), so the console shows a warning,
set-up errors and failed checks, measured in the six cases again. Build-time
outputs are measured on cells that did not run (Check my code runs them). The
outputs are made under the dark theme and measured after each switch: their
colours come from the stylesheets, which follow the switch; none is chosen by
script when an output is drawn.
"""

from __future__ import annotations

import pytest

from tests.browser.helpers import READY, TIMEOUT

pytestmark = pytest.mark.browser
AA = 4.5
EXERCISE, EDITED = 0, 2  # the micrograd page's live cells: the exercise, and one with a build-time output

# Types into the exercise cell: stdout, stderr, a displayed value, 200,010
# characters (past the runtime's 200,000 per run: the cut note), a traceback.
CODE = "print('to stdout')\nimport sys; print('to stderr', file=sys.stderr)\ndisplay(42)\nprint('x' * 200_010)\n1/0"

# What is measured: every non-blank text under these, by kind.
OUTPUTS = {
    "build-time output": ".cell_output:not(.pc-stale) > .output.stream:not(.pc-stdout, .pc-stderr)",
    "stale build-time output": ".cell_output.pc-stale > .output",
    "stale note": ".pc-stale-note",
    "stdout": ".output.stream.pc-stdout",
    "stderr": ".output.stream.pc-stderr",
    "displayed value": ".output.pc-display.text_plain, .output.pc-result.text_plain",
    "cut note": ".pc-truncated",
    "traceback": ".output.traceback.pc-error",
    "cell toolbar": ".cell.pc-live .pc-toolbar",
}
CONSOLE = {
    "check console": ".pc-checks-head, .pc-checks-list",
    "check warning": ".pc-checks-warnings",
    "check set-up error": ".pc-checks-setup",
}

# ({kind: selector}) => [{kind, element, text, fg, bg, ratio}] for every visible
# text node under the selectors. A colour is painted as the browser composites
# it: the text (or nothing) over each ancestor's background, each opacity group
# scaled by its opacity, all over the white canvas.
CONTRAST_JS = """
(selectors) => {
  const rgba = (css) => {
    let m = css.match(/^rgba?\\(([^)]*)\\)$/), scale = 1;
    if (!m) { m = css.match(/^color\\(srgb ([^)]*)\\)$/); scale = 255; }
    if (!m) throw new Error(`a colour this test cannot read: ${css}`);
    const [r, g, b, a = 1] = m[1].split(/[\\s,/]+/).filter(Boolean).map(Number);
    return [r * scale * a, g * scale * a, b * scale * a, a];  // premultiplied
  };
  const over = (top, under) => top.map((v, i) => v + under[i] * (1 - top[3]));
  const paint = (el, top) => {
    let c = top;
    for (let e = el; e; e = e.parentElement) {
      const style = getComputedStyle(e);
      c = over(c, rgba(style.backgroundColor));
      c = c.map((v) => v * Number(style.opacity));
    }
    return over(c, [255, 255, 255, 1]).slice(0, 3);
  };
  const luminance = (rgb) => {
    const [r, g, b] = rgb.map((v) => (v /= 255) <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const hex = (rgb) => "#" + rgb.map((v) => Math.round(v).toString(16).padStart(2, "0")).join("");
  const name = (el) => el.tagName.toLowerCase() + [...el.classList].map((c) => "." + c).join("");
  const describe = (el) => (el.classList.length || !el.parentElement ? name(el) : `${name(el.parentElement)} > ${name(el)}`);
  const found = [];
  for (const [kind, selector] of Object.entries(selectors)) {
    const seen = new Set();
    for (const root of document.querySelectorAll(selector)) {
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      while (walker.nextNode()) {
        const el = walker.currentNode.parentElement;
        if (!walker.currentNode.data.trim() || seen.has(el)) continue;
        seen.add(el);
        if (!el.getClientRects().length || el.closest(".pc-visually-hidden")) continue;
        const fg = paint(el, rgba(getComputedStyle(el).color));
        const bg = paint(el, [0, 0, 0, 0]);
        const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
        found.push({ kind, element: describe(el), text: walker.currentNode.data.trim().slice(0, 40),
                     fg: hex(fg), bg: hex(bg), ratio: (hi + 0.05) / (lo + 0.05) });
      }
    }
  }
  return found;
}
"""


def cell(page, index):
    return page.locator("div.cell.pc-live").nth(index)


def edit(page, index):
    """Click the cell's code and put the cursor in its editor. The click lands on
    the editor, or on the built code the editor replaces once it is made."""
    box = cell(page, index)
    box.locator(".cell_input").click()
    box.locator(".cm-content").wait_for(timeout=TIMEOUT)
    box.locator(".cm-content").click()


def set_theme(page, theme):
    """Press Furo's theme button until it shows ``theme`` (it cycles auto, light, dark in an order set
    by the OS), then wait for the colour transitions it began to end: what is measured is what stays
    (endless animations, such as the status bar's dot while Python starts, are not waited for)."""
    for _ in range(3):
        if page.evaluate("document.body.dataset.theme") == theme:
            break
        page.locator(".theme-toggle:visible").first.click()
    assert page.evaluate("document.body.dataset.theme") == theme
    page.wait_for_function(
        "document.getAnimations().every((a) => !(a instanceof CSSTransition) || a.playState !== 'running')", timeout=TIMEOUT
    )


def measure(page, selectors):
    return page.evaluate(CONTRAST_JS, selectors)


def low_contrast(found, kinds):
    """The kinds no text was found for, and one line per kind, element and colours below AA."""
    missing = sorted(set(kinds) - {f["kind"] for f in found})
    low = {}
    for f in found:
        if f["ratio"] < AA:
            low.setdefault(f"{f['kind']}: {f['element']} {f['fg']} on {f['bg']} = {f['ratio']:.2f}:1", f["text"])
    return missing, [f"{line}, e.g. {text!r}" for line, text in low.items()]


CASES = [(os_scheme, theme) for os_scheme in ("light", "dark") for theme in ("dark", "light", "auto")]


def measure_every_case(page, selectors, problems):
    """Measure ``selectors`` in each theme under each OS mode; what fails AA goes into ``problems``."""
    for os_scheme, theme in CASES:
        page.emulate_media(color_scheme=os_scheme)
        set_theme(page, theme)
        dark = theme == "dark" or (theme == "auto" and os_scheme == "dark")
        page_bg = measure(page, {"page": "article h1"})[0]["bg"]
        assert (int(page_bg[1:3], 16) < 128) == dark, f"theme {theme} under an OS in {os_scheme}: the page is {page_bg}"
        missing, low = low_contrast(measure(page, selectors), selectors)
        case = f"theme {theme}, OS in {os_scheme}"
        problems += [f"  {case}: no text found for {kind}: the page did not make it" for kind in missing]
        problems += [f"  {case}: {line}" for line in low]


def test_every_output_meets_wcag_aa_in_each_theme_under_a_light_and_a_dark_os(page, base_url):
    page.goto(f"{base_url}/micrograd.html")
    set_theme(page, "dark")  # Furo keeps it (localStorage) for the reload below
    # An edit the learner did not run: after a reload its cell's build-time output is stale.
    edit(page, EDITED)
    page.keyboard.press("Control+End")
    page.keyboard.type("\n# edited, not run")
    page.reload()
    assert page.evaluate("document.body.dataset.theme") == "dark"

    page.wait_for_function(READY, timeout=TIMEOUT)
    edit(page, EXERCISE)
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.type(CODE)
    cell(page, EXERCISE).locator(".pc-run").click()
    page.wait_for_function(
        "i => ['done', 'error'].includes(document.querySelectorAll('div.cell.pc-live')[i].dataset.state)",
        arg=EXERCISE,
        timeout=TIMEOUT,
    )
    assert cell(page, EXERCISE).get_attribute("data-state") == "error"  # ZeroDivisionError
    problems: list[str] = []
    measure_every_case(page, OUTPUTS, problems)  # before Check my code, which runs the cells that have not run

    page.locator(".pc-checks .pc-run").click()
    page.wait_for_function(
        "['passed', 'failed', 'error'].includes(document.querySelector('.pc-checks').dataset.state)", timeout=TIMEOUT
    )
    measure_every_case(page, CONSOLE, problems)
    if problems:
        pytest.fail("text below WCAG AA (4.5:1), or not made:\n" + "\n".join(problems), pytrace=False)
