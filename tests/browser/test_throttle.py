"""The bench's network profiles (benchmarks.throttle) slow the page's worker too, not only the page.

The labs wheel is fetched by the worker alone: on the 4G profile (9 Mbit/s, 60 ms) it cannot
arrive sooner than its latency plus its bytes at that rate.
"""

from __future__ import annotations

import importlib

import pytest

from tests.browser.helpers import READY, TIMEOUT

pytestmark = pytest.mark.browser
bench = importlib.import_module("benchmarks.__main__")


def wheel_fetch_ms(browser, base_url, profile):
    """Milliseconds from the worker's request for the labs wheel to its last byte, on ``profile``."""
    context = browser.new_context(service_workers="block")
    timings = []
    context.on("requestfinished", lambda r: r.url.split("?")[0].endswith(".whl") and timings.append(r.timing["responseEnd"]))
    try:
        page = context.new_page()
        bench.throttle(context, page, profile)
        page.goto(f"{base_url}/micrograd.html", wait_until="commit")  # then Python ready: not the load event
        page.wait_for_function(READY, timeout=TIMEOUT)
    finally:
        context.close()
    assert len(timings) == 1, "the worker fetches the labs wheel once"
    return timings[0]


def test_the_4g_profile_throttles_the_workers_fetches(browser, base_url, site_dir):
    (wheel,) = (site_dir / "_static" / "wheels").glob("*.whl")
    bits, latency_ms = bench.PROFILES["4G"]
    floor_ms = latency_ms + wheel.stat().st_size * 8 / bits * 1000  # a zip: served as it is, not gzipped
    throttled = wheel_fetch_ms(browser, base_url, "4G")
    assert throttled >= 0.9 * floor_ms, f"the wheel took {throttled:.0f} ms; throttled, it cannot take less than {floor_ms:.0f} ms"
    assert wheel_fetch_ms(browser, base_url, "none") < throttled


def test_the_worker_asks_for_the_standard_library_before_the_interpreters_javascript_arrives(browser, base_url):
    """On the 4G profile the stdlib zip and the lock file leave with the WebAssembly, not after
    pyodide.asm.js has downloaded (loadPyodide would ask for them only then), and only once.
    The site's start-up snapshot (8.8 MB, 2.1 MB compressed) would not pay on this link: it is
    not asked for, and Python starts afresh."""
    context = browser.new_context(service_workers="block")
    log = []
    asked = []
    context.on("requestfinished", lambda r: log.append((r.url.split("?")[0].rsplit("/", 1)[-1], r.timing)))
    context.on("request", lambda r: asked.append(r.url.split("?")[0].rsplit("/", 1)[-1]))
    try:
        page = context.new_page()
        bench.throttle(context, page, "4G")
        page.goto(f"{base_url}/micrograd.html", wait_until="commit")  # then Python ready: not the load event
        page.wait_for_function(READY, timeout=TIMEOUT)
        assert page.evaluate("window.pyodideCells.restored") == ""
    finally:
        context.close()
    assert "pyodide.asm.wasm" in asked
    assert not [name for name in asked if name.startswith("startup-")], "the site's snapshot was fetched on 4G"
    starts = {}
    for name, timing in log:
        starts.setdefault(name, []).append(timing)
    stdlib = [name for name in starts if name.startswith("python_stdlib-")]  # the start (the rest comes after ready)
    assert len(stdlib) == 1 and len(starts[stdlib[0]]) == 1, f"one request for the standard library: {stdlib}"
    assert len(starts["pyodide-lock.json"]) == 1
    (asm,) = starts["pyodide.asm.js"]
    asm_arrived = asm["startTime"] + asm["responseEnd"]
    for name in (stdlib[0], "pyodide-lock.json"):
        (timing,) = starts[name]
        assert timing["startTime"] < asm_arrived, f"{name} was asked for only after pyodide.asm.js arrived"
