"""How the tests and the benchmarks start Debian's headless Chromium."""

from __future__ import annotations

import os

CHROMIUM = os.environ.get("LAB_CHROMIUM", "/usr/bin/chromium")

# Chromium 156 draws the omnibox's suggestion popup as a WebUI page
# (chrome://omnibox-popup.top-chrome) and loads it, in a renderer of its own,
# whenever it makes a window: Playwright makes one for every page it opens.
# Measured here, that renderer took 0.5 s of CPU per page (0.3 s with only the
# first of these features off, none with all three), on a 2-core machine while
# the page under test loaded. A learner's browser pays it once per window, not
# once per page visited, so the tests and benchmarks switch it off.
NO_OMNIBOX_WEBUI = "--disable-features=WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup"

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    NO_OMNIBOX_WEBUI,
]
