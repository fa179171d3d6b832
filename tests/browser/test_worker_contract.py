"""The worker's side of the protocol (src/pyodide_cells/js/protocol.js), driven with scripted messages.

The built worker is started on a page with no cells (nothing else talks to it),
by the site's boot.js, and sent requests; the test reads
exactly what comes back on the port.
"""

from __future__ import annotations

import pytest

from tests.browser.helpers import TIMEOUT

pytestmark = pytest.mark.browser

# Start the site's worker with boot.js as the site built it (the one place a worker, its init message
# and Stop's buffer are made: protocol.js); keep every reply, and what arrives on the Worker itself.
START = """async () => {
  const { worker, port, interrupt, early } = window.PYODIDE_CELLS_BOOT.first;
  window.contract = { worker, port, interrupt, replies: early.splice(0), onWorker: [] };
  port.onmessage = (e) => window.contract.replies.push(e.data);
  worker.onmessage = (e) => window.contract.onWorker.push(e.data);
}"""

# Send a request and resolve with every reply to it, up to and including its done (or fatal).
ASK = """async (request) => {
  const c = window.contract;
  const from = c.replies.length;
  c.port.postMessage(request);
  const ended = () => c.replies.slice(from).some((m) => m.id === request.id && (m.type === 'done' || m.type === 'fatal'));
  while (!ended()) await new Promise((r) => setTimeout(r, 10));
  return c.replies.slice(from).filter((m) => m.id === request.id);
}"""


@pytest.fixture
def worker_page(page, base_url):
    page.goto(f"{base_url}/index.html")  # no cells: no runtime of its own
    assert page.evaluate("crossOriginIsolated") is True
    page.add_script_tag(url=f"{base_url}/_static/pyodide_cells/boot.js")
    page.evaluate(START)
    page.wait_for_function("window.contract.replies.some((m) => m.type === 'status' && m.state !== 'loading')", timeout=TIMEOUT)
    return page


def test_boot_reports_each_step_then_ready(worker_page):
    statuses = worker_page.evaluate("window.contract.replies.filter((m) => m.type === 'status')")
    assert [(m["state"], m["step"]) for m in statuses] == [("loading", 1), ("loading", 2), ("loading", 3), ("ready", 4)]
    assert all(m["steps"] == 4 and isinstance(m["at"], (int, float)) for m in statuses)
    assert statuses[0]["message"] == "Downloading the Python runtime (Pyodide 0.26.2)"


def test_a_run_streams_its_output_then_one_done(worker_page):
    replies = worker_page.evaluate(ASK, {"type": "run", "id": 7, "code": "print('a')\nimport sys; print('b', file=sys.stderr)\n6 * 7"})
    streams = [m for m in replies if m["type"] == "stream"]
    assert all(m["id"] == 7 for m in replies)
    # Streams may come in several batches (a line's start shows at once); in order, whole.
    assert "".join(m["text"] for m in streams if m["name"] == "stdout") == "a\n"
    assert "".join(m["text"] for m in streams if m["name"] == "stderr") == "b\n"
    assert [m["name"] for m in streams] == sorted((m["name"] for m in streams), key=["stdout", "stderr"].index)
    assert [m["type"] for m in replies][len(streams) :] == ["result", "done"]
    assert replies[-2]["data"] == {"text/plain": "42"}
    done = replies[-1]
    assert done["status"] == "ok" and done["execution_count"] == 1 and done["ms"] >= 0


def test_errors_checks_reset_and_interrupts(worker_page):
    failed = worker_page.evaluate(ASK, {"type": "run", "id": 1, "code": "x = 5\n1 / 0"})
    assert [m["type"] for m in failed] == ["error", "done"]
    assert failed[0]["ename"] == "ZeroDivisionError" and failed[1]["status"] == "error"

    checked = worker_page.evaluate(
        ASK,
        {
            "type": "check",
            "id": 2,
            "names": ["x", "y"],
            "blocks": [">>> x  # Five: the cell set x\n5\n>>> x + 1  # Wrong\n7\n"],
        },
    )
    assert [m["type"] for m in checked] == ["done"]
    results = checked[0]["results"]
    assert [(r["name"], r["status"], r["got"]) for r in results] == [("Five", "passed", "5"), ("Wrong", "failed", "6")]
    assert checked[0]["warnings"] == ["y is not defined: run the exercise cell first."]

    reset = worker_page.evaluate(ASK, {"type": "reset", "id": 3})
    assert [(m["type"], m["status"]) for m in reset] == [("done", "ok")]
    after = worker_page.evaluate(ASK, {"type": "run", "id": 4, "code": "x"})
    assert after[0]["ename"] == "NameError"

    # Stop: SIGINT in byte 0 of the interrupt buffer; the run ends "interrupted". The byte is set once
    # the run has begun (its first line arrived): a run starts by clearing a Stop meant for an earlier
    # request, and a byte set by the clock could come before that on a loaded machine.
    worker_page.evaluate(
        "window.contract.port.postMessage({ type: 'run', id: 5, code: 'print(\"on\", flush=True)\\nwhile True:\\n    pass' })"
    )
    worker_page.wait_for_function("window.contract.replies.some((m) => m.id === 5 && m.type === 'stream')", timeout=TIMEOUT)
    # Sent again whenever Python has read the byte and the run goes on, as the page's Stop does
    # (page/worker_lifecycle.js): now and then Python reads a signal and raises nothing (a fresh-clone
    # run waited 90 s on one signal sent once).
    worker_page.wait_for_function(
        """() => {
          if (window.contract.replies.some((m) => m.id === 5 && m.type === 'done')) return true;
          if (window.contract.interrupt[0] === 0) window.contract.interrupt[0] = 2;
          return false;
        }""",
        polling=100,
        timeout=TIMEOUT,
    )
    stopped = worker_page.evaluate("window.contract.replies.filter((m) => m.id === 5)")
    stopped = [m for m in stopped if m["type"] != "stream"]  # "on" and its newline: one or two messages
    assert [m["type"] for m in stopped] == ["error", "done"]
    assert stopped[0]["ename"] == "KeyboardInterrupt" and stopped[1]["status"] == "interrupted"


def test_malformed_requests_and_messages_on_the_worker_itself_are_ignored(worker_page):
    worker_page.evaluate("""() => {
      const c = window.contract;
      c.port.postMessage({ type: 'run', id: 'one', code: 'print(1)' });
      c.port.postMessage({ type: 'eval', id: 9, code: 'print(1)' });
      c.port.postMessage({ type: 'check', id: 10, blocks: [1, 2] });
      // A second init, forged as a cell could post it, must not take the worker's port.
      const other = new MessageChannel();
      c.worker.postMessage({ type: 'init', port: other.port2, interruptBuffer: null }, [other.port2]);
      other.port1.onmessage = (e) => c.onWorker.push({ stolen: e.data });
    }""")
    replies = worker_page.evaluate(ASK, {"type": "run", "id": 11, "code": "print('still mine')"})
    assert "".join(m["text"] for m in replies if m["type"] == "stream") == "still mine\n"
    ids = worker_page.evaluate("window.contract.replies.filter((m) => m.type !== 'status').map((m) => m.id)")
    assert set(ids) == {11}
    assert worker_page.evaluate("window.contract.onWorker") == []
