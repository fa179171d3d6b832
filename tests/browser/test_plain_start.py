"""``?plain-start``: Python started by stock ``loadPyodide``, with none of the start-up speed work.

The switch to turn on first when Pyodide is upgraded or a start-up bug is chased
(docs/runtime.md; js/worker/startup/index.js). These tests hold that a lab still works
with it, on Pyodide's own standard library, and that none of the speed work ran.
"""

from __future__ import annotations

import pytest

from tests.browser.helpers import READY, TIMEOUT, check
from tests.browser.test_startup_snapshot import restored, run

pytestmark = pytest.mark.browser


def test_a_lab_runs_its_cells_and_checks_on_a_plain_start(page, base_url):
    asked = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(f"{base_url}/micrograd.html?plain-start")
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert restored(page) == ""

    # The stock standard library, whole: what the split zip leaves for later imports at once.
    out = run(page, "import statistics, email.mime.text\nprint(statistics.mean([1, 2, 3, 4]))")
    assert out["stdout"] == "2.5\n"
    statuses = check(page)
    assert statuses and "passed" in statuses.values() and "not run" not in statuses.values(), statuses

    files = [url.split("?")[0].rsplit("/", 1)[-1] for url in asked]
    assert "python_stdlib.zip" in files
    speed_work = [f for f in files if f.startswith(("python_stdlib-", "python_stdlib_rest-", "startup-", "labs-bytecode-"))]
    assert speed_work == []
    (worker,) = [url for url in asked if "/pyodide_cells/worker.js" in url]
    assert "plain-start" in worker
