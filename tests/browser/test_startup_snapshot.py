"""The start-up snapshots: a visit restores the interpreter instead of starting it again.

worker.js keeps a Pyodide memory snapshot, made on the first visit right
after the cell runner and the labs modules are imported, in the origin private
file system (OPFS) under the site's snapshot key; later visits (and restarts)
load it. A first visit on a fast link restores the site's snapshot instead,
made at build time in Node (make_snapshot.mjs), and keeps it the same way.
The page's ``?site-snapshot=never`` and ``=always`` fix that choice, which is
otherwise measured (worker/startup/snapshot.js siteSnapshotPays). These tests hold what a
restored interpreter must still do, and that a bad snapshot costs nothing but time.
"""

from __future__ import annotations

import math
import re

import pytest

from tests.browser.helpers import READY, TIMEOUT, assert_stop_keeps_the_namespace, open_lab
from tests.conftest import ROOT

pytestmark = pytest.mark.browser

# The one snapshot file the worker kept at the top of OPFS, as {name, bytes, head: its first 12 bytes}, or null.
STORED = """async () => {
    const files = [];
    for await (const [name, handle] of (await navigator.storage.getDirectory()).entries()) {
        if (name.startsWith("pyodide-cells-snapshot-")) files.push([name, handle]);
    }
    if (files.length !== 1 || !files[0][0].endsWith(".bin")) return null;
    const file = await files[0][1].getFile();
    return { name: files[0][0], bytes: file.size, head: [...new Uint8Array(await file.slice(0, 12).arrayBuffer())] };
}"""
# Overwrites that file (page-side; the worker has closed it) with the bytes BAD evaluates to.
OVERWRITE = """async (name) => {
    const file = await (await navigator.storage.getDirectory()).getFileHandle(name);
    const real = new Uint8Array(await (await file.getFile()).arrayBuffer());
    const bad = await (BAD);
    const out = await file.createWritable();
    await out.write(bad);
    await out.close();
}"""


def stored_snapshot(page) -> dict:
    """Wait until the worker has kept its snapshot; return its folder, name and size."""
    for _ in range(TIMEOUT // 250):
        found = page.evaluate(STORED)
        if found:
            return found
        page.wait_for_timeout(250)
    raise AssertionError("the worker kept no start-up snapshot")


def run(page, code: str) -> dict:
    out = page.evaluate("code => window.pyodideCells.runCode(code)", code)
    assert out["error"] is None, out["error"]
    return out


def reload_ready(page) -> None:
    page.reload()
    page.wait_for_function(READY, timeout=TIMEOUT)


def open_fresh(page, base_url, site_snapshot: str = "never") -> None:
    """Open the micrograd lab with the site's snapshot never (or ``always``) restored."""
    page.goto(f"{base_url}/micrograd.html?site-snapshot={site_snapshot}")
    page.wait_for_function(READY, timeout=TIMEOUT)


def restored(page) -> str:
    return page.evaluate("window.pyodideCells.restored")


# Every request for the site's snapshot, whatever its key (assets.SITE_SNAPSHOT_NAME).
SITE_SNAPSHOT_URLS = "**/_static/pyodide_cells/startup-*.bin*"


def warnings_of(page) -> list[str]:
    """The console warnings the page (and its worker) will log, as they come."""
    found = []
    page.on("console", lambda msg: msg.type == "warning" and found.append(msg.text))
    return found


def fresh_and_site(browser, base_url, code: str, **context_options) -> dict:
    """What ``code`` prints in a fresh interpreter and in one restored from the site's
    snapshot, each a cold visit in a new context made with ``context_options``: {"": ..., "site": ...}."""
    answers = {}
    for site_snapshot in ("never", "always"):
        context = browser.new_context(**context_options)
        try:
            page = context.new_page()
            open_fresh(page, base_url, site_snapshot)
            answers[restored(page)] = run(page, code)["stdout"]
        finally:
            context.close()
    return answers


def test_a_second_visit_restores_the_snapshot_and_python_still_works(page, base_url):
    open_fresh(page, base_url)
    assert restored(page) == ""
    snap = stored_snapshot(page)
    # Named after this copy of the guide (its _static/pyodide_cells/ URL) and the key.
    site, key = re.fullmatch(r"pyodide-cells-snapshot-(.*)-([0-9a-f]{16})\.bin", snap["name"]).groups()
    assert site == re.sub(r"[^A-Za-z0-9.-]", "_", f"{base_url}/_static/pyodide_cells/")
    assert key in page.evaluate("fetch('_static/pyodide_cells/worker.js').then(r => r.text())")
    # Kept packed (worker/startup/packed.js packSparse): "pcs2", the whole length, the interpreter's linear
    # memory (20 MB or more), of which the file leaves the long runs of zeros out, then how
    # much of it is based on the memory as instantiated: none, for a snapshot made here.
    head = bytes(snap["head"])
    assert head[:4] == b"pcs2" and int.from_bytes(head[4:8], "little") >= 20_000_000 > snap["bytes"] > 8_000_000
    assert int.from_bytes(head[8:12], "little") == 0

    reload_ready(page)
    assert restored(page) == "browser"
    assert "from this browser's start-up snapshot" in page.locator(".pc-runtime").inner_text()
    # The labs modules are in the snapshot, and the wheel is unpacked again (the
    # file system is not in the snapshot).
    out = run(page, "from labs.attention import logsumexp\nprint(repr(logsumexp([0.0, 0.0])))")
    assert float(out["stdout"]) == math.log(2)
    # Its source is on disk, so tracebacks through labs code show their lines.
    out = run(page, "import inspect, labs.paged_attention as pa\nprint(inspect.getsource(pa.BlockTable)[:16])")
    assert out["stdout"].strip() == "class BlockTable"
    # The page's own cells run as before.
    out = run(page, "from labs.autograd import Value\nv = Value(3.0) * Value(-2.0)\nv.backward()\nprint(v.data)")
    assert out["stdout"].strip() == "-6.0"


def test_stop_interrupts_a_restored_interpreter_and_keeps_its_namespace(page, base_url):
    """The interrupt buffer is set again after a restore: Stop raises KeyboardInterrupt, no restart."""
    open_fresh(page, base_url)
    stored_snapshot(page)
    reload_ready(page)
    assert restored(page) == "browser"
    assert_stop_keeps_the_namespace(page, "after restore")


def test_restored_visits_do_not_share_one_random_state(page, base_url):
    """Every restore starts from the same memory: random numbers must still differ per visit."""
    open_fresh(page, base_url)
    stored_snapshot(page)
    draws = []
    for _ in range(2):
        reload_ready(page)
        assert restored(page) == "browser"
        draws.append(run(page, "import random, tempfile\nprint(random.getrandbits(64), tempfile.mktemp())")["stdout"].split())
    assert draws[0][0] != draws[1][0]  # random
    assert draws[0][1] != draws[1][1]  # tempfile's names


GARBAGE = "new Uint8Array(4096).fill(7)"
# A real snapshot (kept packed: worker/startup/packed.js packSparse) cut in half: right header, too few bytes.
TRUNCATED = "real.slice(0, real.length >> 1)"


@pytest.mark.parametrize("bad", [GARBAGE, TRUNCATED], ids=["garbage", "truncated"])
def test_a_corrupt_snapshot_falls_back_to_a_fresh_start(page, base_url, bad):
    open_fresh(page, base_url)
    snap = stored_snapshot(page)
    page.evaluate(OVERWRITE.replace("BAD", bad), snap["name"])
    assert stored_snapshot(page)["bytes"] < snap["bytes"]
    reload_ready(page)
    assert restored(page) == ""
    assert run(page, "print(6 * 7)")["stdout"].strip() == "42"
    # The bad entry was dropped and a good one kept in its place: about as big as the first
    # (two starts' heaps need not match to the page: one clean-clone run kept 20 kB more).
    again = stored_snapshot(page)
    assert again["name"] == snap["name"]
    assert again["bytes"] == pytest.approx(snap["bytes"], rel=0.01)


SOURCES = (
    "import json, traceback, inspect, ast\n"
    "try:\n"
    "    json.loads('{')\n"
    "except ValueError:\n"
    "    print(traceback.format_exc())\n"
    "print(inspect.getsource(ast.literal_eval).splitlines()[0])\n"
)


def test_stdlib_modules_held_as_bytecode_still_show_their_source(page, base_url):
    """json and ast start up as bytecode only; tracebacks and inspect still read their source."""
    open_fresh(page, base_url)
    for visit in ("first", "restored"):
        out = run(page, SOURCES)["stdout"]
        assert "return _default_decoder.decode(s)" in out, (visit, out)  # json/__init__.py, line 346
        assert out.rstrip().endswith("def literal_eval(node_or_string):"), (visit, out)
        stored_snapshot(page)
        reload_ready(page)
        assert restored(page) == "browser"


LABS_BYTECODE = (
    "import importlib.util, sys, labs.attention\n"
    "from pathlib import Path\n"
    "pyc = Path(labs.attention.__cached__).read_bytes()\n"
    "source = Path(labs.attention.__file__).read_bytes()\n"
    "print(int.from_bytes(pyc[4:8], 'little'), pyc[8:16] == importlib.util.source_hash(source))\n"
    "print(sys.modules['labs.attention'].online_softmax([1000.0, 1000.0]).probs)\n"
    "try:\n"
    "    labs.attention.softmax(['x'])\n"
    "except TypeError:\n"
    "    import traceback; print(traceback.format_exc())\n"
)


def test_labs_modules_load_from_the_sites_bytecode_and_keep_their_source(page, base_url):
    """labs/__pycache__ comes from the build (unchecked hash-based, PEP 552 flags 1) and
    matches the wheel's source; Python wrote nothing of its own (its .pyc would be
    timestamp-based, flags 0). Tracebacks still show the lab's source lines."""
    open_fresh(page, base_url)
    out = run(page, LABS_BYTECODE)["stdout"]
    lines = out.splitlines()
    assert lines[0] == "1 True", out
    assert lines[1] == "[0.5, 0.5]", out
    assert 'labs/attention.py", line' in out, out
    assert 'raise TypeError(f"{where} = {x!r} is a {type(x).__name__}; expected a float")' in out, out


# Holds an exclusive synchronous access handle on an OPFS file from a worker of
# this page, as another tab's worker does while it reads the snapshot.
HOLD = """async (name) => {
    const src = `onmessage = async (e) => {
        const file = await (await navigator.storage.getDirectory()).getFileHandle(e.data);
        self.held = await file.createSyncAccessHandle();
        postMessage("held");
    };`;
    const worker = new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })));
    window.holder = worker;
    return await new Promise((resolve) => {
        worker.onmessage = (e) => resolve(e.data);
        worker.onerror = (e) => resolve("error: " + e.message);
        worker.postMessage(name);
    });
}"""


def test_a_tab_that_opens_while_another_holds_the_snapshot_still_restores_it(page, base_url):
    open_fresh(page, base_url)
    snap = stored_snapshot(page)
    assert page.evaluate(HOLD, snap["name"]) == "held"
    other = page.context.new_page()
    try:
        open_lab(other, base_url)
        assert restored(other) == "browser"
        assert run(other, "print(6 * 7)")["stdout"].strip() == "42"
    finally:
        other.close()


# The site's snapshot (made at build time, in Node, on this machine's time zone).


def test_a_first_visit_restores_the_sites_snapshot_keeps_it_and_python_still_works(page, base_url, site_dir):
    open_fresh(page, base_url, "always")
    assert restored(page) == "site"
    assert "from the site's start-up snapshot" in page.locator(".pc-runtime").inner_text()
    # A phone shows two lines of the bar: the whole text is its title.
    assert "from the site's start-up snapshot" in page.locator(".pc-runtime-text").get_attribute("title")
    # Every labs module is in it; their sources are on disk (the wheel is unpacked again).
    out = run(
        page,
        "import sys, inspect, labs.paged_attention as pa\n"
        "print(sorted(m for m in sys.modules if m.startswith('labs.')), inspect.getsource(pa.BlockTable)[:16])",
    )
    every = sorted(f"labs.{p.stem}" for p in (ROOT / "src" / "labs").glob("*.py") if p.stem != "__init__")
    assert out["stdout"].strip() == f"{every} class BlockTable"
    # The standard library's sources are fetched from this site, relative to the worker.
    out = run(page, SOURCES)["stdout"]
    assert "return _default_decoder.decode(s)" in out, out
    # The page's cells, the checks and Stop work as on a fresh start.
    out = run(page, "from labs.autograd import Value\nv = Value(3.0) * Value(-2.0)\nv.backward()\nprint(v.data)")
    assert out["stdout"].strip() == "-6.0"
    assert_stop_keeps_the_namespace(page, "after the site's snapshot")
    # This browser keeps the bytes it fetched: the next visit reads them from OPFS. The site's
    # static data travels based on the memory as instantiated (its first 4 MB or more).
    (site,) = (site_dir / "_static" / "pyodide_cells").glob("startup-*.bin")
    snap = stored_snapshot(page)
    assert snap["bytes"] == site.stat().st_size
    assert bytes(snap["head"])[:4] == b"pcs2" and int.from_bytes(bytes(snap["head"])[8:12], "little") > 4_000_000
    reload_ready(page)
    assert restored(page) == "browser"
    assert run(page, "print(6 * 7)")["stdout"].strip() == "42"


# Every member of the standard library's start, read through the importer Python uses, as
# zipfile reads the file this browser got; and uuid, the one module of it not imported yet.
START_READS = (
    "import sys, uuid, zipfile\n"
    "start = next(p for p in sys.path if p.endswith('.zip'))\n"
    "importer, archive = sys.path_importer_cache[start], zipfile.ZipFile(start)\n"
    "names = [n for n in archive.namelist() if not n.endswith('/')]\n"
    "bad = [n for n in names if importer.get_data(f'{start}/{n}') != archive.read(n)]\n"
    "print(len(names) > 100, bad, uuid.UUID(int=7).int)\n"
)


def test_a_restored_interpreter_reads_the_standard_librarys_start_as_this_browser_got_it(page, base_url):
    """The snapshot held zipimport's directory of the start as the build read it, deflated; the
    guide's server sends it stored, so `import uuid` (and IPython.display) failed: "bad local file header"."""
    open_fresh(page, base_url, "always")
    assert restored(page) == "site"
    assert run(page, START_READS)["stdout"].strip() == "True [] 7"
    stored_snapshot(page)
    reload_ready(page)
    assert restored(page) == "browser"
    assert run(page, START_READS)["stdout"].strip() == "True [] 7"
    out = run(page, "from IPython.display import Markdown, display\ndisplay(Markdown('**ok**'))")
    assert out["error"] is None


TIME_ZONE = (
    "import time, datetime\n"
    "january = time.mktime((2026, 1, 15, 12, 0, 0, 0, 0, -1))\n"
    "print(time.tzname, time.timezone, time.altzone, time.daylight, time.strftime('%Z', time.localtime(january)),\n"
    "      time.localtime(january).tm_zone, datetime.datetime.fromtimestamp(january).astimezone().tzname())"
)


@pytest.mark.parametrize(
    ("zone", "expected"),
    [
        ("America/New_York", "('EST', 'EDT') 18000 14400 1 EST EST EST"),
        ("Asia/Kolkata", "('GMT+5:30', 'GMT+5:30') -19800 -19800 0 GMT+5:30 GMT+5:30 GMT+5:30"),
    ],
)
def test_an_interpreter_from_the_sites_snapshot_has_the_learners_time_zone(browser, base_url, zone, expected):
    """The snapshot was made where the site was built (the C library's zone and time.tzname are
    set once per process): a restored interpreter must say what a fresh one in the learner's
    time zone says, in time's attributes, in %Z and in tm_zone."""
    answers = fresh_and_site(browser, base_url, TIME_ZONE, timezone_id=zone)
    assert {source: out.strip() for source, out in answers.items()} == {"": expected, "site": expected}


def test_a_bad_site_snapshot_falls_back_to_a_fresh_start(page, base_url):
    """Served garbage where the site's snapshot should be: a warning and a fresh start."""
    page.route(
        SITE_SNAPSHOT_URLS, lambda route: route.fulfill(status=200, body=b"\x00" * 4096, content_type="application/octet-stream")
    )
    open_fresh(page, base_url, "always")
    assert restored(page) == ""
    assert run(page, "print(6 * 7)")["stdout"].strip() == "42"


def test_a_missing_site_snapshot_is_named_as_missing_and_python_starts_afresh(page, base_url):
    """A host without the site's snapshot answers 404: the warning says so (checked by fetch's own
    Subresource Integrity, the 404's body failed the digest and the warning said "Failed to fetch")."""
    warnings = warnings_of(page)
    page.route(SITE_SNAPSHOT_URLS, lambda route: route.fulfill(status=404, body=b"not here", content_type="text/plain"))
    open_fresh(page, base_url, "always")
    assert restored(page) == ""
    assert run(page, "print(6 * 7)")["stdout"].strip() == "42"
    assert any("site's start-up snapshot did not load" in w and "HTTP 404" in w for w in warnings), warnings


def test_a_site_snapshot_sent_uncompressed_is_judged_again_by_its_size(page, base_url, site_dir):
    """A host that compresses the scripts but not the snapshot sends all 8.8 MB: where
    pyodide.asm.js's rate says the whole file would not arrive within the budget, the worker
    drops the response unread and starts afresh."""
    (packed,) = (site_dir / "_static" / "pyodide_cells").glob("startup-*.bin")
    body = packed.read_bytes()
    asked = []

    def as_it_is(route):
        asked.append(route.request.url)
        route.fulfill(status=200, body=body, content_type="application/octet-stream")  # no Content-Encoding

    page.route(SITE_SNAPSHOT_URLS, as_it_is)
    open_lab(page, base_url)
    if not asked:
        pytest.skip("pyodide.asm.js arrived too slowly here for the site's snapshot to be asked for at all")
    assert restored(page) == ""
    assert run(page, "print(6 * 7)")["stdout"].strip() == "42"


ENVIRONMENT = (
    "import os, sys, locale\n"
    "print(os.environ['_'], sys.executable, sys.orig_argv, os.environ['LANG'], locale.getlocale(), sys.path.count('/home/pyodide'))\n"
    "import js\n"
    "print(js.navigator.userAgent == js.navigator.userAgent, js.location.href.split('?')[0].rsplit('/', 1)[-1],\n"
    "      sys._emscripten_info.runtime == js.navigator.userAgent)"
)


def test_an_interpreter_from_the_sites_snapshot_has_this_browsers_environment_not_the_builds(browser, base_url):
    """Made in Node, the snapshot held the build's script path as the program, LANG=C.UTF-8 and
    its locale, the home folder twice on sys.path, and Node as sys._emscripten_info.runtime; a
    fresh start (which can make a snapshot) gave cells a `js` whose browser getters raised
    "Illegal invocation"."""
    answers = {source: out.splitlines() for source, out in fresh_and_site(browser, base_url, ENVIRONMENT, locale="de-DE").items()}
    expected = ["./this.program /home/pyodide/this.program ['./this.program'] de_DE.UTF-8 ('de_DE', 'UTF-8') 1", "True worker.js True"]
    assert answers == {"": expected, "site": expected}


def test_a_site_snapshot_that_stalls_is_given_up_and_python_starts_afresh(page, base_url):
    held = []
    page.route(SITE_SNAPSHOT_URLS, lambda route: held.append(route))  # never answered
    open_lab(page, base_url)
    if not held:
        pytest.skip("pyodide.asm.js arrived too slowly here for the site's snapshot to be asked for at all")
    assert restored(page) == ""
    assert run(page, "print(6 * 7)")["stdout"].strip() == "42"


def test_a_damaged_site_snapshot_fails_its_digest_and_python_starts_afresh(page, base_url):
    """50 bytes flipped past the header: the right shape, the wrong memory (it restored, then
    failed while booting, or worse, booted). Its SHA-256 (Subresource Integrity) refuses it, and
    the warning says so (fetch's own check said only "Failed to fetch", after two console errors)."""

    def damaged(route):
        body = bytearray(route.fetch().body())
        for k in range(50):
            body[200_000 + 7919 * k] ^= 0xFF
        route.fulfill(status=200, body=bytes(body), content_type="application/octet-stream")

    warnings = warnings_of(page)
    page.route(SITE_SNAPSHOT_URLS, damaged)
    open_fresh(page, base_url, "always")
    assert restored(page) == ""
    assert run(page, "print(6 * 7)")["stdout"].strip() == "42"
    assert any("site's start-up snapshot did not load" in w and "its SHA-256 is sha256-" in w for w in warnings), warnings


def test_an_unknown_site_snapshot_value_is_named_in_a_warning(page, base_url):
    warnings = warnings_of(page)
    page.goto(f"{base_url}/micrograd.html?site-snapshot=yes")
    page.wait_for_function(READY, timeout=TIMEOUT)
    assert any("?site-snapshot=yes is not understood: expected always or never" in w for w in warnings), warnings


def test_two_tabs_that_start_together_keep_one_snapshot_without_a_warning(two_tabs, base_url, site_dir):
    first, second = two_tabs
    warnings = [warnings_of(tab) for tab in two_tabs]
    first.goto(f"{base_url}/micrograd.html?site-snapshot=always", wait_until="commit")
    second.goto(f"{base_url}/online_softmax.html?site-snapshot=always", wait_until="commit")
    for tab in two_tabs:
        tab.wait_for_function(READY, timeout=TIMEOUT)
        assert restored(tab) == "site"
    (site,) = (site_dir / "_static" / "pyodide_cells").glob("startup-*.bin")
    assert stored_snapshot(first)["bytes"] == site.stat().st_size
    assert [w for tab in warnings for w in tab if "start-up snapshot" in w] == []
