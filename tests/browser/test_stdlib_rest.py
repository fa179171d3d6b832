"""The standard library in two parts: a page's first output waits only for the first.

The worker starts Python with the modules a page imports before its first
output (``python_stdlib-<key>.zip``, bytecode) and fetches the rest
(``python_stdlib_rest-<key>.zip``: doctest, statistics, email, the codecs, ...)
once Python has answered the page's first run (or a few seconds after it is
ready, if none comes). An import from the rest before it has arrived fetches
it there and then (worker_boot.StdlibRest). These tests hold that a learner
never sees the difference, except when the rest cannot be had, which an import
then says.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import pytest

from tests.browser.helpers import READY, TIMEOUT, cell, check, run_and_wait, type_code
from tests.browser.test_startup_snapshot import open_fresh, restored, run, stored_snapshot
from tests.pages import LAB_NAMES

pytestmark = pytest.mark.browser

# Every request for the rest, whatever its key (assets.precompile_bytecode).
REST_URLS = "**/_static/pyodide/python_stdlib_rest-*.zip*"
TYPED = (
    "import statistics, json.tool, email.mime.text\nprint(statistics.mean([1, 2, 3, 4]), 'é'.encode('cp1252'), json.tool.__name__)\n"
)


def is_rest(request) -> bool:
    return "/python_stdlib_rest-" in request.url


def error_of(page, code: str) -> dict | None:
    """The error a run of ``code`` reported (ename, evalue, traceback), or None."""
    return page.evaluate("code => window.pyodideCells.runCode(code)", code)["error"]


@contextmanager
def lab_whose_rest(browser, base_url, answer, **context_options):
    """A cold visit of the micrograd lab, started afresh and with no service worker, on which
    ``answer(route)`` answers every request for the rest; yields the ready page with ``kept`` defined."""
    context = browser.new_context(service_workers="block", **context_options)
    context.route(REST_URLS, answer)
    try:
        page = context.new_page()
        open_fresh(page, base_url)
        run(page, "kept = 'still here'")
        yield page
    finally:
        context.close()


@pytest.mark.long
def test_first_output_waits_for_no_part_of_the_rest_and_an_early_import_fetches_it(browser, base_url):
    """The worker's own fetch of the rest is held back: the page still becomes ready, and a
    learner who types an import from the rest gets it (the import fetches the rest itself)."""
    context = browser.new_context(service_workers="block")
    held, asked = [], []
    context.on("request", lambda r: is_rest(r) and asked.append(r.url))

    def hold_the_first(route):
        if held:
            route.continue_()  # the import's own request
        else:
            held.append(route)  # the worker's, sent once the page is ready

    context.route(REST_URLS, hold_the_first)
    try:
        page = context.new_page()
        with context.expect_event("request", predicate=is_rest, timeout=TIMEOUT):
            open_fresh(page, base_url)
        for _ in range(200):  # Playwright calls the route's handler a moment after the request event
            if held:
                break
            page.evaluate("0")
        assert len(asked) == 1 and len(held) == 1
        # The micrograd page's first cell ran before the rest was asked for.
        assert page.evaluate("document.querySelectorAll('div.cell.pc-live')[0].dataset.state") != "error"

        type_code(page, 0, TYPED)
        out = run_and_wait(page, 0, via="keyboard")
        assert out.strip() == "2.5 b'\\xe9' json.tool", out
        assert len(asked) == 2, "the import fetched the rest itself"

        # A module in neither part is not fetched for: it fails as usual.
        err = error_of(page, "import numpy")
        assert err["ename"] == "ModuleNotFoundError" and "numpy" in err["evalue"]
        assert len(asked) == 2
        held[0].continue_()
        # A check needs doctest and unittest, which are in the rest, as bytecode.
        out = run(page, "import doctest, inspect\nprint(inspect.getsource(doctest.DocTestParser.parse).split('(')[0])")
        assert out["stdout"].strip() == "def parse"
    finally:
        context.close()


def test_the_rest_is_asked_for_once_the_first_run_has_ended_and_serves_only_the_standard_librarys_packages(browser, base_url):
    """Asked for as soon as Python was ready, the rest (1.8 MB) arrived on a fast link while the
    page's first cell ran, was given to Python before it, and counted on the way to first output.
    And a learner's own package of a standard library name does not get the rest's submodules."""
    context = browser.new_context(service_workers="block")
    try:
        page = context.new_page()
        open_fresh(page, base_url)
        with context.expect_event("requestfinished", predicate=is_rest, timeout=TIMEOUT) as asked:
            # When the page sent its first run, on the browser's clock (as the request's).
            sent = page.evaluate("() => { const at = Date.now(); window.pyodideCells.runCode('pass'); return at; }")
        assert asked.value.timing["startTime"] >= sent, "the rest was asked for before the first run"
        # `email` of the learner's own: `email.mime` is looked for there, as CPython does, not in the rest.
        code = (
            "import os, sys\n"
            "os.makedirs('/home/pyodide/mine/email', exist_ok=True)\n"
            "open('/home/pyodide/mine/email/__init__.py', 'w').close()\n"
            "sys.path.insert(0, '/home/pyodide/mine')\n"
            "import email.mime.text"
        )
        err = error_of(page, code)
        assert err["ename"] == "ModuleNotFoundError" and "email.mime" in err["evalue"], err
    finally:
        context.close()


@pytest.mark.parametrize("name", LAB_NAMES)
@pytest.mark.long
def test_every_cell_of_a_lab_page_runs_without_the_rest(browser, base_url, name):
    """What the build put in the start is what the pages import: running every cell of a
    lab with the learner's Run all asks for nothing from the rest (held back here). And Run all
    runs every cell, each to its end without an error."""
    context = browser.new_context(service_workers="block")
    held, asked = [], []
    context.on("request", lambda r: is_rest(r) and asked.append(r.url))
    context.route(REST_URLS, lambda route: held.append(route) if not held else route.continue_())
    try:
        page = context.new_page()
        with context.expect_event("request", predicate=is_rest, timeout=TIMEOUT):
            page.goto(f"{base_url}/{name}.html")
            page.wait_for_function(READY, timeout=TIMEOUT)
        page.locator(".pc-runtime .pc-run-all").click()
        page.wait_for_function(
            "[...document.querySelectorAll('div.cell.pc-live')].every(c => ['done', 'error'].includes(c.dataset.state))",
            timeout=TIMEOUT,
        )
        states = page.evaluate("[...document.querySelectorAll('div.cell.pc-live')].map(c => c.dataset.state)")
        assert states and set(states) == {"done"}, states
        assert "[ ]" not in page.locator("div.cell.pc-live .pc-count").all_inner_texts()  # each one ran
        assert len(asked) == 1, f"a cell of {name} imported from the rest"
    finally:
        context.close()


def test_an_import_from_the_rest_says_so_when_the_rest_cannot_be_fetched(browser, base_url):
    """On a phone: the reason the checks could not run names a long URL, which wraps at 390 px."""
    phone = {"viewport": {"width": 390, "height": 844}}
    with lab_whose_rest(browser, base_url, lambda route: route.fulfill(status=404, body="gone"), **phone) as page:
        err = error_of(page, "import statistics")
        assert err["ename"] == "StdlibRestUnavailable", err
        assert "HTTP 404" in err["evalue"] and "python_stdlib_rest-" in err["evalue"], err
        assert issubclass_of_import_error(page)
        # pkgutil lists the rest's modules all the same (from the start's index), as help("modules") does.
        listed = "import pkgutil\nfound = {m.name: m.ispkg for m in pkgutil.iter_modules()}\nprint(found.get('statistics'), found.get('email'), found.get('json'))"
        assert run(page, listed)["stdout"].strip() == "False True True"
        # Nothing else is lost: the namespace and the start's modules are there.
        assert run(page, "import json\nprint(kept, json.dumps([1]))")["stdout"].strip() == "still here [1]"
        # The checks need doctest, from the rest: Check my code says why they could not run.
        check(page)
        summary = page.locator(".pc-checks-summary").inner_text()
        assert summary.startswith("Could not run the checks: StdlibRestUnavailable: doctest is in the part"), summary
        assert "HTTP 404" in summary
        scroll, client, right, width = page.evaluate(
            "(() => { const s = document.querySelector('.pc-checks-summary');"
            " return [s.scrollWidth, s.clientWidth, s.getBoundingClientRect().right, innerWidth]; })()"
        )
        assert width == 390 and scroll <= client and right <= width, (scroll, client, right, width)


def issubclass_of_import_error(page) -> bool:
    """An import of the rest that fails is an ImportError: `try: import x / except ImportError` works."""
    code = "try:\n    import statistics\nexcept ImportError:\n    print('fallback')"
    return run(page, code)["stdout"].strip() == "fallback"


@pytest.mark.parametrize("start", ["site", "browser"])
def test_a_restored_interpreter_imports_from_the_rest(page, base_url, start):
    """A snapshot holds the interpreter, not its files: after a restore the rest is fetched again,
    and given to Python. It was not: the rest the worker fetched went unused, and the first
    import from it downloaded it a second time."""
    asked = []
    page.context.on("request", lambda r: is_rest(r) and asked.append(r.url))
    open_fresh(page, base_url, "always" if start == "site" else "never")
    if start == "browser":
        stored_snapshot(page)
        page.reload()
        page.wait_for_function(READY, timeout=TIMEOUT)
    assert restored(page) == start
    # The restored interpreter calls its own boot; running worker_boot.py again made a second
    # StdlibRest class, and the snapshot's finder was no instance of it.
    classes = "import gc\nprint(sum(isinstance(o, type) and o.__qualname__ == 'StdlibRest' for o in gc.get_objects()))"
    assert run(page, classes)["stdout"].strip() == "1"
    mounted = "import sys\nprint(any(type(f).__qualname__ == 'StdlibRest' and f.mounted() for f in sys.meta_path))"
    deadline = time.monotonic() + TIMEOUT / 1000
    while run(page, mounted)["stdout"].strip() != "True":  # the worker fetches it after a first run
        assert time.monotonic() < deadline, "the rest the worker fetched was never given to Python"
    type_code(page, 0, TYPED)
    assert run_and_wait(page, 0, via="keyboard").strip() == "2.5 b'\\xe9' json.tool"
    assert cell(page, 0).get_attribute("data-state") == "done"
    if start == "site":
        assert len(asked) == 1, asked  # one download of the rest in the visit, the worker's


# worker_boot.REST_TIMEOUT_MS, as the page's Python has it: the test shortens it (30 s of waiting).
TIMEOUT_OF_THE_REST = (
    "import sys\n"
    "limits = next(type(f) for f in sys.meta_path if type(f).__qualname__ == 'StdlibRest').ensure.__globals__\n"
    "print(limits['REST_TIMEOUT_MS'])\n"
    "limits['REST_TIMEOUT_MS'] = 2_000"
)


def test_what_arrives_for_the_rest_is_checked_and_a_later_import_tries_again(browser, base_url):
    """A host's error page (or a captive portal) answered 200 for the rest: it is not mounted, the
    import says so, codecs say so too. The rest never answers: the import gives up after
    worker_boot.REST_TIMEOUT_MS, says so, and keeps the namespace. Once the real file can be had
    the same imports work."""
    answers = ["portal"]

    def answer(route):
        if answers[-1] == "portal":
            route.fulfill(status=200, body="<html>Sign in to the Wi-Fi</html>")
        elif answers[-1] == "real":
            route.continue_()  # "never": not answered

    with lab_whose_rest(browser, base_url, answer) as page:
        err = error_of(page, "import statistics")
        assert err["ename"] == "StdlibRestUnavailable", err
        assert "is not the file this site was built with" in err["evalue"] and "Check the connection" in err["evalue"]
        assert "<exec>" not in err["traceback"] and "/_static/pyodide/python_stdlib_rest-" in err["evalue"]
        err = error_of(page, "'é'.encode('cp1252')")
        assert err["ename"] == "LookupError" and "could not be fetched" in err["evalue"], err
        answers.append("never")
        assert run(page, TIMEOUT_OF_THE_REST)["stdout"].strip() == "30000"
        err = error_of(page, "import statistics")
        assert err["ename"] == "StdlibRestUnavailable" and "did not arrive within 2 s" in err["evalue"], err
        assert run(page, "print(kept)")["stdout"].strip() == "still here"
        answers.append("real")
        out = run(page, "import statistics\nprint(kept, statistics.mean([1, 2]), 'é'.encode('cp1252'))")
        assert out["stdout"].strip() == "still here 1.5 b'\\xe9'"
