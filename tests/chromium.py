"""How the tests and the benchmarks start Debian's headless Chromium: ``launch(playwright)``."""

from __future__ import annotations

import os
import re

CHROMIUM = os.environ.get("LAB_CHROMIUM", "/usr/bin/chromium")

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    # No name resolves but this machine's: a page that asks another host for anything gets a
    # network error, whatever the test routes or not (the tests also record and fail such requests).
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
]

# Chromium 156 draws the omnibox's suggestion popup as a WebUI page
# (chrome://omnibox-popup.top-chrome) and loads it, in a renderer of its own,
# whenever it makes a window: Playwright makes one for every page it opens.
# Measured here, that renderer took 0.5 s of CPU per page (0.3 s with only the
# first of these features off, none with all three), on a 2-core machine while
# the page under test loaded. A learner's browser pays it once per window, not
# once per page visited, so the tests and benchmarks switch it off.
NO_OMNIBOX_WEBUI = ["WebUIOmniboxPopup", "WebUIOmniboxFullPopup", "WebUIOmniboxAimPopup"]


def disabled_features(command_line: str) -> list[str]:
    """The features a Chromium command line disables. Chromium obeys only the
    last ``--disable-features`` switch, so that is the one read."""
    found = re.findall(r"--disable-features=(\S+)", command_line)
    return [name for name in found[-1].split(",") if name] if found else []


# LAB_HEADED=1 shows the browser (a screen is needed: a desktop, or Xvfb), for watching one test:
# LAB_HEADED=1 pytest tests/browser/test_runs.py::test_NAME. Never in CI.
HEADED = os.environ.get("LAB_HEADED") == "1"


def launch(playwright, executable_path: str = CHROMIUM):
    """Start headless Chromium with CHROMIUM_ARGS and the omnibox's WebUI off.

    Playwright passes its own ``--disable-features`` list (features that would
    reach the network or get in an automated browser's way); a second such
    switch would replace it, not add to it. So a first, short launch reads the
    list Playwright passes from chrome://version, and the browser is started
    with one switch holding both.
    """
    args = [a for a in CHROMIUM_ARGS if not (HEADED and a == "--headless")]
    probe = playwright.chromium.launch(executable_path=executable_path, args=args)
    try:
        page = probe.new_page()
        page.goto("chrome://version")
        theirs = disabled_features(page.inner_text("body"))
    finally:
        probe.close()
    features = theirs + [name for name in NO_OMNIBOX_WEBUI if name not in theirs]
    return playwright.chromium.launch(
        executable_path=executable_path, headless=not HEADED, args=[*args, "--disable-features=" + ",".join(features)]
    )
