"""Offline-first on any host: the guide's service worker (sw.js), driven as a learner uses the site.

The site is served by Python's plain ``http.server`` (no COOP/COEP, no cache
headers), as a static host that cannot send headers would serve it. A visit
keeps the site; a reload is cross-origin isolated (the worker adds the
headers), so Stop keeps the namespace; with the server stopped, pages open
and cells run; a rebuilt site (a changed ``labs`` module) is offered as a
reload and then used, never mixed with the old one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.browser.helpers import (
    READY,
    TIMEOUT,
    assert_stop_keeps_the_namespace,
    editor,
    run_and_wait,
    set_code,
    while_python_starts,
)
from tests.browser.test_edits_and_output import SHOWN_CODE
from tests.browser.test_micrograd_page import EXERCISE
from tests.conftest import ROOT, _new_page
from tests.plain_host import PlainHost

pytestmark = pytest.mark.browser
OFFLINE_READY = "document.documentElement.dataset.offline === 'ready'"


@pytest.fixture
def hosts():
    started: list[PlainHost] = []
    yield lambda root: started.append(PlainHost(root)) or started[-1]
    for host in started:
        host.stop()


@pytest.fixture
def sw_page(browser, recorder):
    """A page whose context lets the site register its service worker."""
    context, page = _new_page(browser, recorder, 1280, 900, service_workers="allow")
    yield page
    context.close()
    assert recorder.page_errors == [], f"uncaught page errors: {recorder.page_errors}"
    assert recorder.console_errors == [], f"errors in the page's console: {recorder.console_errors}"


def status_text(page) -> str:
    return page.locator(".pc-runtime-text").inner_text()


@pytest.mark.long
def test_one_visit_keeps_the_site_for_offline_use_and_isolates_it_on_a_plain_host(sw_page, site_dir, hosts, tmp_path):
    page = sw_page
    site = tmp_path / "site"
    shutil.copytree(site_dir, site)
    host = hosts(site)

    page.goto(f"{host.base}/micrograd.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert page.evaluate("crossOriginIsolated") is False  # the host sends no COOP/COEP
    assert "(Stop restarts Python on this host)" in status_text(page)
    page.wait_for_function(OFFLINE_READY, timeout=TIMEOUT)

    # Second visit: the service worker answers, with the isolation headers.
    page.reload()
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert page.evaluate("crossOriginIsolated") is True
    assert "Stop restarts" not in status_text(page)
    assert_stop_keeps_the_namespace(page, "kept across Stop")

    # The network is gone: the page, and a page never opened, still open and run.
    host.stop()
    page.reload()
    page.wait_for_function(READY, timeout=TIMEOUT)
    set_code(page, 0, "print(6 * 7)")
    assert run_and_wait(page, 0).strip() == "42"
    page.goto(f"{host.base}/paged_attention.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert page.locator("h1").inner_text().startswith("Lab 3")
    # A page that is not one of the guide's is not the worker's to answer (another app may be
    # served at this address later): it goes to the network, which is gone.
    with pytest.raises(PlaywrightError, match="ERR_CONNECTION_REFUSED"):
        page.goto(f"{host.base}/deeper/no-such-page.html")


@pytest.mark.solo  # races the page's 2 s of quiet with the pace of typing: not under the other workers' load
def test_the_offline_copy_waits_while_the_learner_types(sw_page, base_url):
    """Keeping the site downloads every file of the guide again. It began as soon as Python
    had started, while the learner typed their first line: each key took twice as long to show,
    and the run waited behind it. Now it waits until the learner leaves the page alone.

    The learner is typing before Python is ready (its wasm held back until then): were the
    first key to come after Python, a slow machine's 2 s between ready and the click would
    let the copy start before the test had typed anything (seen in CI)."""
    page = sw_page
    held = while_python_starts(page, base_url, "micrograd")
    editor(page, EXERCISE).click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.type("xxxx", delay=80)
    typed = "xxxx"
    for route in held:
        route.continue_()
    page.unroute("**/pyodide.asm.wasm")
    chunks_after_ready = 0
    while chunks_after_ready < 10:  # over 3 s of typing once Python is ready, at a learner's pace
        page.keyboard.type("xxxx", delay=80)
        typed += "xxxx"
        chunks_after_ready += bool(page.evaluate(READY))
    registered = page.evaluate("navigator.serviceWorker.getRegistration().then((r) => r !== undefined)")
    assert registered is False and page.evaluate("document.documentElement.dataset.offline") is None
    assert page.evaluate(SHOWN_CODE, EXERCISE).endswith(typed)  # every key shows

    # Left alone, the page keeps the site.
    page.wait_for_function(OFFLINE_READY, timeout=TIMEOUT)


def copy_project(to: Path) -> Path:
    """The project's sources (not its builds), to build a changed copy of the site."""
    for name in ("src", "docs", "conf"):
        shutil.copytree(ROOT / name, to / name, ignore=shutil.ignore_patterns("__pycache__", "_generated"))
    shutil.copytree(ROOT / "docs" / "_generated", to / "docs" / "_generated")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, to / name)
    (to / "node_modules").symlink_to(ROOT / "node_modules")
    return to


def start_build(project: Path, outdir: Path) -> subprocess.Popen:
    """Build the copy as `nox -s docs` does, in the background, without running the pages' cells and
    without the site's start-up snapshot (what a new version changes for the service worker is the
    same; the snapshot was the longest part of the build: a visit of the new version starts Python
    afresh). `finish_build` waits for it."""
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    options = ["-D", "nb_execution_mode=off", "-D", "pyodide_cells_site_snapshot=0", "-D", "suppress_warnings=myst-nb.lexer"]
    return subprocess.Popen(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", "-c", "conf", *options, "docs", str(outdir)],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish_build(proc: subprocess.Popen) -> None:
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]


@pytest.mark.long
def test_a_rebuilt_site_is_offered_then_used_never_mixed(sw_page, site_dir, hosts, tmp_path):
    page = sw_page
    # The first version is the site the tests use (built from these sources); the second is built
    # from a copy of the sources with a changed `labs`, into a copy of that site, as a host updates.
    project = copy_project(tmp_path / "project")
    site = tmp_path / "site"
    shutil.copytree(site_dir, site)
    host = hosts(site)
    probe = "import labs\nprint(getattr(labs, 'BUILD_NOTE', 'first build'))"
    init = project / "src" / "labs" / "__init__.py"
    init.write_text(init.read_text() + '\nBUILD_NOTE = "rebuilt"\n')
    build = start_build(project, tmp_path / "rebuilt")  # while the learner visits the first version
    try:
        page.goto(f"{host.base}/micrograd.html")
        page.wait_for_function(READY, timeout=TIMEOUT)
        set_code(page, 0, probe)
        assert run_and_wait(page, 0).strip() == "first build"
        page.wait_for_function(OFFLINE_READY, timeout=TIMEOUT)
    finally:
        finish_build(build)
    shutil.rmtree(site)  # the host's folder is replaced by the new build, as a deploy does
    shutil.copytree(tmp_path / "rebuilt", site)

    other = page.context.new_page()  # a second tab on the old version
    for tab in (page, other):
        tab.goto(f"{host.base}/micrograd.html")
        tab.wait_for_function(READY, timeout=TIMEOUT)
    # Until the learner reloads, the page and its Python are the version it opened with.
    set_code(page, 0, probe)
    assert run_and_wait(page, 0).strip() == "first build"
    for tab in (page, other):
        tab.wait_for_function("document.documentElement.dataset.offline === 'update-ready'", timeout=TIMEOUT)
    note = page.locator(".pc-update")
    assert note.inner_text().startswith("A newer version of this guide is ready.")

    with page.expect_navigation():
        note.get_by_role("button", name="Reload").click()
    # The other tab is told, and its Reload works too.
    other.locator(".pc-update", has_text="This guide was updated in another tab").wait_for(timeout=TIMEOUT)
    with other.expect_navigation():
        other.locator(".pc-update").get_by_role("button", name="Reload").click()
    other.wait_for_function(READY, timeout=TIMEOUT)
    assert other.locator(".pc-update").count() == 0
    page.wait_for_function(READY, timeout=TIMEOUT)
    set_code(page, 0, probe)
    assert run_and_wait(page, 0).strip() == "rebuilt"
    page.wait_for_function(OFFLINE_READY, timeout=TIMEOUT)
    assert len(page.evaluate("caches.keys()")) == 1  # the old version's cache is gone
