"""The Chromium the tests and benchmarks drive (tests/chromium.py)."""

from __future__ import annotations

import re

import pytest

from tests.chromium import CHROMIUM, CHROMIUM_ARGS, NO_OMNIBOX_WEBUI, disabled_features

pytestmark = pytest.mark.browser


def effective_disabled_features(browser) -> set[str]:
    """What this Chromium says it runs with: chrome://version's "Command-line Variations"."""
    page = browser.new_page()
    try:
        page.goto("chrome://version/?show-variations-cmd")
        text = page.inner_text("body")
    finally:
        page.close()
    found = re.search(r'--disable-features="([^"]*)"', text)
    return set(found.group(1).split(",")) if found else set()


def test_the_omnibox_webui_is_off_and_playwrights_own_switches_stay_off(browser):
    # The session's browser (tests.chromium.launch) against a plain launch beside it, from the
    # same Playwright: a second sync_playwright() fails once the session's has started.
    plain = browser.browser_type.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        playwrights = effective_disabled_features(plain)
    finally:
        plain.close()
    effective = effective_disabled_features(browser)
    assert {"HttpsUpgrades", "OptimizationHints"} & playwrights  # Playwright's list, as Chromium read it
    assert playwrights | set(NO_OMNIBOX_WEBUI) <= effective


def test_only_the_last_disable_features_switch_is_read():
    line = "chromium --disable-features=A,B --headless --disable-features=C, --x=1"
    assert disabled_features(line) == ["C"]
    assert disabled_features("chromium --headless") == []


def test_a_request_to_another_host_is_recorded_and_never_answered(browser, base_url):
    """The fixtures' guard (conftest's recorder): a page's and a Web Worker's request to another host
    are both recorded, and fail as the network would, without reaching any host."""
    from tests.conftest import Recorder, _new_page

    recorder = Recorder()
    context, page = _new_page(browser, recorder, 800, 600)
    try:
        page.goto(f"{base_url}/index.html")
        worker = "fetch('http://example.com/from-worker').then(() => postMessage('answered'), () => postMessage('failed'))"
        outcomes = page.evaluate(
            """async (worker) => {
            const page = await fetch('http://example.com/from-page', {mode: 'no-cors'}).then(() => 'answered', () => 'failed');
            const w = new Worker(URL.createObjectURL(new Blob([worker], {type: 'text/javascript'})));
            const fromWorker = await new Promise((resolve) => { w.onmessage = (e) => resolve(e.data); });
            return [page, fromWorker];
        }""",
            worker,
        )
    finally:
        context.close()
    assert outcomes == ["failed", "failed"]
    assert sorted(recorder.foreign) == ["http://example.com/from-page", "http://example.com/from-worker"]
