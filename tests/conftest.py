"""Shared fixtures: the built site, a local server for it, headless Chromium.

Browser tests use the site that ``nox -s tests`` built (``LAB_SITE_DIR``); run
alone, they build it once into a temporary folder. Every request a test's pages
make is recorded: a request to any host but 127.0.0.1 fails the test (and cannot
leave the machine: Chromium resolves no other name, tests/chromium.py).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.background import serve_in_background
from tests.chromium import CHROMIUM, launch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def build_site(outdir: Path, builder: str = "html", *extra: str) -> subprocess.CompletedProcess:
    """Run sphinx-build like the docs session does; return the finished process."""
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-n", "-q", "-b", builder, "-c", "conf", "docs", str(outdir), *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory) -> Path:
    given = os.environ.get("LAB_SITE_DIR")
    if given:
        path = Path(given)
        assert (path / "index.html").is_file(), f"LAB_SITE_DIR={given} holds no built site"
        return path
    out = tmp_path_factory.mktemp("site")
    proc = build_site(out)
    assert proc.returncode == 0, f"docs build failed:\n{proc.stdout}\n{proc.stderr}"
    return out


@pytest.fixture(scope="session")
def base_url(site_dir) -> str:
    from pyodide_cells.serve import make_server

    server = make_server(site_dir, port=0, quiet=True)
    serve_in_background(server)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def own_server(site_dir):
    """Serve the site again, with a request handler of the test's own, on a new
    port (a fresh origin: nothing of it cached). Yields ``start(customize)``:
    ``customize`` takes the guide's handler class and returns a subclass;
    ``start`` returns the new server's base URL."""
    from pyodide_cells.serve import make_server

    servers = []

    def start(customize) -> str:
        server = make_server(site_dir, port=0, quiet=True)
        handler = server.RequestHandlerClass  # functools.partial(SiteHandler, directory=...)
        server.RequestHandlerClass = functools.partial(customize(handler.func), *handler.args, **handler.keywords)
        serve_in_background(server)
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium (see README)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        made = _count_contexts(b)
        yield b
        b.close()
        # Each context starts with an empty HTTP cache: a cold start of Python's WebAssembly. The
        # count per worker goes to the artifacts (nox -s tests prints their sum).
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        artifacts = Path(os.environ.get("LAB_ARTIFACTS", ROOT / "test-artifacts"))
        artifacts.mkdir(parents=True, exist_ok=True)
        (artifacts / f"contexts-{worker}-{os.getpid()}.txt").write_text(f"{made[0]}\n")


def _count_contexts(browser) -> list[int]:
    """Count the contexts ``browser`` makes from now on: [count]."""
    made = [0]
    new_context = browser.new_context

    def counted(*args, **kwargs):
        made[0] += 1
        return new_context(*args, **kwargs)

    browser.new_context = counted
    return made


class Recorder:
    """What a page did that a test may assert on."""

    def __init__(self) -> None:
        self.foreign: list[str] = []
        self.page_errors: list[str] = []
        self.console_errors: list[str] = []


@pytest.fixture
def artifacts_dir() -> Path:
    path = Path(os.environ.get("LAB_ARTIFACTS", ROOT / "test-artifacts"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def is_foreign(url: str) -> bool:
    """Whether a request for ``url`` would leave this machine (data: and blob: URLs do not)."""
    parts = urlsplit(url)
    return parts.scheme not in {"data", "blob"} and parts.hostname not in LOCAL_HOSTS


def _new_page(browser, recorder: Recorder, width: int, height: int, service_workers: str = "block"):
    # The guide's service worker answers from its own cache once installed,
    # which would hide the server from tests that reload; tests of offline use
    # allow it (tests/browser/test_offline.py).
    context = browser.new_context(viewport={"width": width, "height": height}, service_workers=service_workers)
    # Requests are recorded by a listener, not routed: routing turns the HTTP cache off, and every
    # reload would fetch Python's 10 MB of WebAssembly again. Chromium cannot reach another host
    # anyway (tests/chromium.py resolves no name but this machine's); a request for one fails the test.
    context.on("request", lambda request: is_foreign(request.url) and recorder.foreign.append(request.url))
    page = context.new_page()
    page.on("pageerror", lambda err: recorder.page_errors.append(str(err)))
    page.on("console", lambda msg: msg.type == "error" and recorder.console_errors.append(msg.text))
    return context, page


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def _checked_page(browser, recorder, width, height):
    """A page of the given size in a context of its own; after the test, fail on other-origin
    requests or page errors."""
    context, page = _new_page(browser, recorder, width, height)
    yield page
    context.close()
    _assert_clean(recorder)


def _assert_clean(recorder: Recorder) -> None:
    assert recorder.foreign == [], f"requests to other origins: {recorder.foreign}"
    assert recorder.page_errors == [], f"uncaught page errors: {recorder.page_errors}"
    assert recorder.console_errors == [], f"errors in the page's console: {recorder.console_errors}"


class SharedContext:
    """One browser context for the tests of a worker: its HTTP cache (and the WebAssembly compiled
    from it) stays warm from test to test, so only the worker's first page starts Python cold.
    Each test gets a new tab and leaves none behind: its tabs are closed and what the site kept in
    the browser (local and session storage, Cache Storage, IndexedDB) is cleared for every origin
    it visited, so no test sees another's storage."""

    def __init__(self, browser) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
        self.recorder: Recorder | None = None
        self.origins: set[str] = set()
        self.context.on("request", self._request)
        # A blank tab kept open for the context's life: the storage is cleared through it after each
        # test (a tab made for that each time cost each test a page).
        self.blank = self.context.new_page()
        self.cdp = self.context.new_cdp_session(self.blank)

    def _request(self, request) -> None:
        if self.recorder is not None and is_foreign(request.url):
            self.recorder.foreign.append(request.url)
        parts = urlsplit(request.url)
        if parts.scheme in {"http", "https"}:
            self.origins.add(f"{parts.scheme}://{parts.netloc}")

    def page(self, recorder: Recorder, width: int, height: int):
        self.recorder = recorder
        page = self.context.new_page()
        page.set_viewport_size({"width": width, "height": height})
        page.on("pageerror", lambda err: recorder.page_errors.append(str(err)))
        page.on("console", lambda msg: msg.type == "error" and recorder.console_errors.append(msg.text))
        return page

    def end_test(self) -> None:
        """Close the test's tabs (their pagehide handlers may still write to storage), then clear
        the storage of every origin they visited, through the context's blank tab."""
        self.recorder = None
        for page in self.context.pages:
            if page is not self.blank:
                page.close()
        for origin in sorted(self.origins):
            self.cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
        self.origins.clear()


@pytest.fixture(scope="session")
def shared_context(browser):
    shared = SharedContext(browser)
    yield shared
    shared.context.close()


def _shared_page(shared_context: SharedContext, recorder: Recorder, width: int, height: int):
    try:
        yield shared_context.page(recorder, width, height)
    finally:
        shared_context.end_test()
    _assert_clean(recorder)


@pytest.fixture
def page(shared_context, recorder):
    """A 1280 x 900 tab in the worker's shared context (SharedContext)."""
    yield from _shared_page(shared_context, recorder, 1280, 900)


@pytest.fixture
def fresh_page(browser, recorder):
    """A 1280 x 900 page in a context of its own: an empty HTTP cache, as on a first visit."""
    yield from _checked_page(browser, recorder, 1280, 900)


class Outage:
    """Requests of ``page`` matching ``pattern`` fail, as offline, until :meth:`end`.

    Lifting an outage with ``page.unroute`` races a request in flight: Playwright
    may hand the route its removed handler aborted on to the context's handler,
    which then fails with "Route is already handled". A handler that stays, and
    falls back once the outage ends, leaves no such window.
    """

    def __init__(self, page, pattern: str) -> None:
        self.ongoing = True
        page.route(pattern, self._handle)

    def _handle(self, route) -> None:
        if self.ongoing:
            route.abort()
        else:
            route.fallback()

    def end(self) -> None:
        self.ongoing = False


@pytest.fixture
def outage(page):
    """Start an :class:`Outage` of ``page`` for a URL pattern."""
    return lambda pattern: Outage(page, pattern)


@pytest.fixture
def phone_page(shared_context, recorder):
    """A 390 x 844 tab in the worker's shared context."""
    yield from _shared_page(shared_context, recorder, 390, 844)


@pytest.fixture
def two_tabs(browser, recorder):
    """Two tabs of one browser (one context: one localStorage), recorded
    like conftest's ``page``: no other origin, no page error, no
    console error, in either tab."""
    context, first = _new_page(browser, recorder, 1280, 900)
    second = context.new_page()
    second.on("pageerror", lambda err: recorder.page_errors.append(str(err)))
    second.on("console", lambda msg: msg.type == "error" and recorder.console_errors.append(msg.text))
    yield first, second
    context.close()
    assert recorder.foreign == [], f"requests to other origins: {recorder.foreign}"
    assert recorder.page_errors == [], f"uncaught page errors: {recorder.page_errors}"
    assert recorder.console_errors == [], f"errors in the pages' consoles: {recorder.console_errors}"


def pytest_collection_modifyitems(items):
    """Mark `site` the tests that need the built site (the `site_dir` fixture, directly or through
    `base_url`, `page`, ...): `nox -s tests` runs the others while the site builds."""
    for item in items:
        if "site_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.site)


class LongTestsFirst:
    """Orders the tests once -m has deselected (trylast): the shares are of the tests that run."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        items[:] = long_tests_first(items, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


def long_tests_first(items: list, workers: int) -> list:
    """The tests in the order each worker should start them: pytest-xdist's `worksteal` gives each
    of the `workers` a contiguous share of the list, so each share starts with its part of the
    `long` tests (dealt in turn), then its part of the rest, in collection order. The run then
    does not end on one worker's long test while the others are idle."""
    long = [item for item in items if item.get_closest_marker("long")]
    rest = [item for item in items if not item.get_closest_marker("long")]
    workers = max(1, workers)
    ordered = []
    for w in range(workers):
        share = rest[len(rest) * w // workers : len(rest) * (w + 1) // workers]
        ordered += long[w::workers] + share
    return ordered


def pytest_configure(config):
    config.pluginmanager.register(LongTestsFirst(), "lab-long-tests-first")
