"""The bench's network profiles (benchmarks.throttle) slow the page's worker too, not only the page.

The labs wheel is fetched by the worker alone: on the 4G profile (9 Mbit/s, 60 ms) it cannot
arrive sooner than its latency plus its bytes at that rate.
"""

from __future__ import annotations

import importlib

import pytest

from tests.browser.test_micrograd_page import READY, TIMEOUT

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
        page.goto(f"{base_url}/micrograd.html")
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
