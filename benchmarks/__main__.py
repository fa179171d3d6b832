"""The lab guide's benchmark harness (``nox -s bench``): pages in Chromium, engines in CPython and Pyodide.

1. **Pages.** The built site is served on 127.0.0.1 by the guide's own server
   (gzip, COOP/COEP, cache headers) and opened in headless Chromium, started
   as the browser tests start it (``tests/chromium.py``). For the
   floor (a bare page that only boots Pyodide 0.26.2 from the same
   ``_static/pyodide/`` and prints one line) and each lab page, ``--runs``
   times each:

   - a **cold visit** (a new browser context: empty HTTP cache): navigation ->
     runtime ready, navigation -> first cell output (Run is pressed from inside
     the page the moment the page's script has made the button, so the run
     waits in the queue while Python loads: ``PRESS_RUN``), bytes
     transferred as served (gzip) and as files on disk;
   - a **second visit** in the same context (HTTP cache warm);
   - the **warm re-run** of the page's first cell, timed inside the page.

   Every figure is a median; ratios are to the floor's cold first output.
   The same pages are measured again from a **plain static host** (Python's
   ``http.server``: no gzip, no COOP/COEP, no cache headers), as a site
   published where the host adds nothing; there the second visit is answered
   by the guide's service worker. What the service worker fetches to keep the
   site offline is counted apart (``offline_bytes``), not in the page's bytes.
2. **Engines in CPython**: ``benchmarks.engines`` (ours vs PyPI's micrograd
   0.1.0) and ``benchmarks.kernels`` (softmax, attention, block tables,
   autograd).
3. **Engines in the page**: ``benchmarks.kernels`` run inside Pyodide in the
   micrograd page, and its ratio to CPython.
4. **Serving (Lab 4, issue 34's targets)**: ``benchmarks.serving`` in CPython and
   inside Pyodide in the serving page, through ``window.pyodideCells.runCode``
   once Python is ready: Run to the live demo's first token, tokens/s of a
   batch of 8, paged ÷ dense decode per token (``serving.csv``). Only this
   part: ``--only serving``.

Writes ``bench-results/bench.json`` and the tables the Performance page
includes (``docs/_generated/*.csv``, ``docs/_generated/meta.md``): figures are
never typed by hand.

    python -m benchmarks --site build/html [--runs 7] [--quick] [--only serving|engines]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from pyodide_cells.precompress import archives  # noqa: E402
from pyodide_cells.serve import make_server  # noqa: E402
from tests.chromium import CHROMIUM, launch  # noqa: E402  (the tests' Chromium, flags and all)
from tests.plain_host import PlainHost  # noqa: E402  (a host that adds nothing, as in the tests)

GENERATED = ROOT / "docs" / "_generated"
LAB_PAGES = {
    "micrograd lab": "micrograd.html",
    "online softmax lab": "online_softmax.html",
    "paged attention lab": "paged_attention.html",
}
FLOOR = "floor (bare Pyodide)"
TIMEOUT = 180_000

BARE_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bare Pyodide floor</title>
<script src="../_static/pyodide/pyodide.js"></script></head>
<body><pre id="out"></pre>
<script>
(async () => {
  const pyodide = await loadPyodide({ indexURL: new URL("../_static/pyodide/", location.href).href });
  performance.mark("pyodide-cells:ready");
  pyodide.setStdout({ batched: (line) => { document.getElementById("out").textContent += line + "\\n"; } });
  pyodide.runPython("print('hello from Python', 6 * 7)");
  performance.mark("pyodide-cells:first-output");
  document.body.dataset.state = "done";
})();
</script></body></html>
"""


def mark(page, name: str) -> float:
    return page.evaluate("n => performance.getEntriesByName(n)[0].startTime", name)


class Traffic:
    """Bytes a context received: as encoded on the wire, and as the files on disk."""

    def __init__(self, site: Path) -> None:
        self.site = site
        self.reset()

    def reset(self) -> None:
        self.wire = 0
        self.files = 0
        self.requests = 0
        self.from_cache = 0
        self.foreign = 0
        self.offline = 0
        self.log: list[dict] = []  # one entry per response, for the waterfall (benchmarks.waterfall)

    def note_host(self, url: str) -> None:
        if urlsplit(url).hostname not in {"127.0.0.1", "localhost", None}:
            self.foreign += 1

    def finished(self, request) -> None:
        """A response arrived: count what crossed the wire, and the files whose body did.

        A response from the HTTP cache reports its headers but no body: it
        counts no file (nor does a 304, whose body is the cached copy). What
        the service worker fetches to keep the site offline is counted apart.
        """
        response = request.response()
        sizes = request.sizes()
        body = max(sizes["responseBodySize"], 0)
        received = body + max(sizes["responseHeadersSize"], 0)
        if request.service_worker is not None:
            self.offline += received
            return
        self.requests += 1
        self.wire += received
        timing = request.timing  # startTime: ms since the epoch; responseEnd: ms after it (-1: unknown)
        self.log.append(
            {
                "path": urlsplit(request.url).path,
                "start": timing["startTime"],
                "end": timing["startTime"] + max(timing["responseEnd"], 0.0),
                "bytes": received,
                "cached": body == 0,
            }
        )
        if body == 0:
            self.from_cache += 1
        elif response is not None and response.status == 200:
            path = self.site / urlsplit(request.url).path.lstrip("/")
            if path.is_file():
                self.files += path.stat().st_size


# Network profiles: (download and upload, bits per second; round-trip latency, ms). "none" is
# 127.0.0.1 as it is. The others go through Chromium's DevTools network emulation, which
# throttles the page's worker too (tests/browser/test_throttle.py holds that).
PROFILES = {"none": None, "cable": (20e6, 20.0), "4G": (9e6, 60.0)}


def throttle(context, page, profile: str) -> None:
    """Apply a network profile (PROFILES) to ``page`` and what it starts, before it navigates.

    Raises KeyError for a profile not in PROFILES.
    """
    conditions = PROFILES[profile]
    if conditions is None:
        return
    bits, latency = conditions
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {
            "offline": False,
            "latency": latency,
            "downloadThroughput": bits / 8,
            "uploadThroughput": bits / 8,
        },
    )


# Presses the first live cell's Run from inside the page, in the microtask after the page's
# script made the button. Playwright's own click first scrolls the cell into view and waits for
# it to keep still for two frames, and even its dispatch_event polls for the element between
# the page's tasks: on a long page, whose main thread lays out for 100-200 ms at a time, that
# landed 140-480 ms after the button appeared, on a second visit after Python was ready, so
# that time was the harness's, not the page's (the floor needs no click).
PRESS_RUN = """
(() => {
  const runs = document.getElementsByClassName("pc-run");  // live: cheap to look at on every mutation
  const observer = new MutationObserver(() => {
    const button = runs.length ? document.querySelector("div.cell.pc-live .pc-run") : null;
    if (!button) return;
    observer.disconnect();
    performance.mark("bench:run-pressed");
    button.click();
  });
  observer.observe(document, { childList: true, subtree: true });
})();
"""


def visit(context, traffic: Traffic, url: str, is_lab: bool, profile: str = "none") -> dict:
    traffic.reset()
    page = context.new_page()
    throttle(context, page, profile)
    if is_lab:
        page.add_init_script(PRESS_RUN)
    page.goto(url, wait_until="commit")
    if is_lab:
        page.wait_for_function("document.querySelector('div.cell.pc-live')?.dataset.state === 'done'", timeout=TIMEOUT)
    else:
        page.wait_for_selector("body[data-state=done]", timeout=TIMEOUT)
    page.wait_for_timeout(500)  # late responses (fonts, the graph's Graphviz) are counted too
    if is_lab:
        # The service worker keeps the site once Python has started: let it finish, so that
        # the second visit is always the one a returning learner gets.
        page.wait_for_function(
            "['ready', 'unsupported', 'failed'].includes(document.documentElement.dataset.offline)", timeout=TIMEOUT
        )
    origin = page.evaluate("performance.timeOrigin")
    result = {
        "ready_ms": mark(page, "pyodide-cells:ready"),
        "first_output_ms": mark(page, "pyodide-cells:first-output"),
        "wire_bytes": traffic.wire,
        "file_bytes": traffic.files,
        "requests": traffic.requests,
        "from_cache": traffic.from_cache,
        "foreign_requests": traffic.foreign,
        "offline_bytes": traffic.offline,
        "log": [
            {
                "path": e["path"],
                "start_ms": round(e["start"] - origin, 1),
                "end_ms": round(e["end"] - origin, 1),
                "bytes": e["bytes"],
                "cached": e["cached"],
            }
            for e in traffic.log
        ],
    }
    if is_lab:
        # Say which start-up snapshot the visit restored: "" none, "browser" (kept by this
        # browser: a second visit), "site" (the build's, chosen on a fast link).
        result["restored"] = page.evaluate("window.pyodideCells.restored")
        result["run_pressed_ms"] = mark(page, "bench:run-pressed")  # when the page had made its Run button
        result["isolated"] = 1.0 if page.evaluate("crossOriginIsolated") else 0.0
        result["warm_rerun_ms"] = page.evaluate(
            """async () => {
                const times = [];
                for (let i = 0; i < 9; i++) {
                    await window.pyodideCells.idle();  // the graph cell re-runs after each run
                    const t0 = performance.now();
                    await window.pyodideCells.run(0);
                    times.push(performance.now() - t0);
                }
                times.sort((a, b) => a - b);
                return times[4];
            }"""
        )
    page.close()
    return result


SITE_SNAPSHOT_PAGE = "micrograd lab"


def bench_site_snapshot(browser, base: str, site: Path, runs: int, profile: str = "none") -> dict:
    """Cold visits of one lab with the site's start-up snapshot never, then always, restored
    (the page's ``?site-snapshot=``), interleaved: what the page's own choice (its cold
    visits in bench_pages) is weighed against, per profile."""
    modes = {"never": [], "always": []}
    for _ in range(runs):
        for mode, results in modes.items():
            context = browser.new_context()
            traffic = Traffic(site)
            context.on("requestfinished", traffic.finished)
            results.append(visit(context, traffic, f"{base}/{LAB_PAGES[SITE_SNAPSHOT_PAGE]}?site-snapshot={mode}", True, profile))
            context.close()
    return {
        mode: {
            "first_output_ms": median_of(results, "first_output_ms"),
            "wire_bytes": median_of(results, "wire_bytes"),
            "restored": [r["restored"] for r in results],
        }
        for mode, results in modes.items()
    }


def median_of(runs: list[dict], key: str):
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(values) if values else None


FIGURES_OF_A_RUN = ("log",)  # per run only: not a figure with a median


def typed_visit(browser, url: str, profile: str) -> float:
    """A learner's first own code, cold: ms from navigation until the output of a line they typed shows.

    In a new context (empty HTTP cache), as soon as the page has its exercise
    cell: click into its code, type a line at the top (key by key), press
    Ctrl+Enter, and wait for that line's output. The editor loads on first use
    and Python may still be starting: both are part of the wait.
    """
    context = browser.new_context()
    page = context.new_page()
    throttle(context, page, profile)
    page.goto(url, wait_until="commit")
    exercise = page.locator("div.cell.pc-live.tag_exercise").first
    exercise.locator(".cell_input").click(timeout=TIMEOUT)
    exercise.locator(".cm-content").wait_for(timeout=TIMEOUT)  # CodeMirror, loaded on the first click
    page.keyboard.press("Control+Home")
    page.keyboard.type('print("typed", 6 * 7)\n')
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "() => document.querySelector('div.cell.pc-live.tag_exercise .cell_output')?.textContent.includes('typed 42')",
        timeout=TIMEOUT,
        polling=10,
    )
    at = page.evaluate("performance.now()")
    context.close()
    return at


def bench_pages(browser, base: str, site: Path, runs: int, profile: str = "none", typed: bool = False) -> dict:
    """Cold and second visits of the floor and each lab page, interleaved run by run.

    Interleaving (floor, lab 1, lab 2, lab 3, floor, ...) spreads the machine's
    drift over all pages alike, so the ratios to the floor stay fair.
    """
    pages = {FLOOR: ("_bench/bare.html", False), **{k: (v, True) for k, v in LAB_PAGES.items()}}
    cold = {name: [] for name in pages}
    second = {name: [] for name in pages}
    for _ in range(runs):
        for name, (path, is_lab) in pages.items():
            context = browser.new_context()
            traffic = Traffic(site)
            context.on("requestfinished", traffic.finished)
            # Count (not route) requests to other hosts: routing would disable
            # the HTTP cache, and the second visit measures exactly that cache.
            context.on("request", lambda r, traffic=traffic: traffic.note_host(r.url))
            cold[name].append(visit(context, traffic, f"{base}/{path}", is_lab, profile))
            second[name].append(visit(context, traffic, f"{base}/{path}", is_lab, profile))
            context.close()
    results = {
        name: {
            "cold": {k: median_of(cold[name], k) for k in cold[name][0] if k not in FIGURES_OF_A_RUN},
            "second": {k: median_of(second[name], k) for k in second[name][0] if k not in FIGURES_OF_A_RUN},
            "runs": {"cold": cold[name], "second": second[name]},
        }
        for name in pages
    }
    if typed:
        typed_runs = {name: [] for name, (_, is_lab) in pages.items() if is_lab}
        for _ in range(runs):
            for name in typed_runs:
                typed_runs[name].append(typed_visit(browser, f"{base}/{pages[name][0]}", profile))
        for name, values in typed_runs.items():
            results[name]["cold"]["typed_ms"] = statistics.median(values)
            results[name]["runs"]["typed"] = values
    return results


def kernels_in_page(browser, base: str, scale: str) -> dict:
    """benchmarks/kernels.py run inside Pyodide, in the micrograd page's worker."""
    source = (ROOT / "benchmarks" / "kernels.py").read_text()
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{base}/micrograd.html")
    page.wait_for_function("document.documentElement.dataset.pyodideState === 'ready'", timeout=TIMEOUT)
    code = (
        "import json\n"
        "_kernels = {'__name__': 'kernels_page'}\n"
        f"exec(compile({source!r}, 'kernels.py', 'exec'), _kernels)\n"
        f"print(json.dumps(_kernels['run']({scale!r})))\n"
    )
    out = page.evaluate("code => window.pyodideCells.runCode(code)", code)
    context.close()
    if out.get("error"):
        raise RuntimeError(f"kernels failed in the page: {out['error'].get('traceback')}")
    return json.loads(out["stdout"])


def serving_in_page(browser, base: str, scale: str) -> dict:
    """benchmarks/serving.py run inside Pyodide in the serving page's worker, once Python is ready.

    Run is ``window.pyodideCells.runCode``; the code is given the wall clock (``Date.now()``) at
    the call, so that Python (whose ``time.time()`` is the same clock) measures Run -> first token.
    """
    source = (ROOT / "benchmarks" / "serving.py").read_text()
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{base}/serving.html")
    page.wait_for_function("document.documentElement.dataset.pyodideState === 'ready'", timeout=TIMEOUT)
    code = (
        "import json\n"
        "_serving = {'__name__': 'serving_page'}\n"
        f"exec(compile({source!r}, 'serving.py', 'exec'), _serving)\n"
        f"print(json.dumps(_serving['run']({scale!r}, start_wall_ms=__RUN_MS__)))\n"
    )
    out = page.evaluate("code => window.pyodideCells.runCode(code.replace('__RUN_MS__', String(Date.now())))", code)
    context.close()
    if out.get("error"):
        raise RuntimeError(f"the serving benchmark failed in the page: {out['error'].get('traceback')}")
    return json.loads(out["stdout"])


def bench_serving(browser, base: str, scale: str) -> dict:
    """Lab 4's serving figures in CPython (a subprocess) and in the page, with the load average around them."""
    print("serving in CPython …", flush=True)
    load = [os.getloadavg()[0]]
    result = {"cpython": python_module("benchmarks.serving", "--scale", scale)}
    print("serving in the page …", flush=True)
    load.append(os.getloadavg()[0])
    result["page"] = serving_in_page(browser, base, scale)
    load.append(os.getloadavg()[0])
    result["load_average"] = load  # 1-minute load averages: before, between, after (2 cores here)
    result["date"] = time.strftime("%Y-%m-%d")
    result["browser"] = f"headless Chromium {browser.version}"
    result["scale"] = scale
    return result


# Issue 34's targets: (row, value(result of benchmarks.serving.run), format, unit, limit, "≤" or "≥", judged on).
SERVING_ROWS = (
    (
        "Run → first generated token (live demo, model load included)",
        lambda r: (
            r["first_token"]["run_to_first_token_ms"]
            if r["first_token"]["run_to_first_token_ms"] is not None
            else r["first_token"]["python_ms"]
        ),
        "{:.0f}",
        "ms",
        1000.0,
        "≤",
        ("page",),
    ),
    (
        "tokens/s, batch of 8 requests (trained model)",
        lambda r: r["throughput"]["tokens_per_s"],
        "{:.1f}",
        "tokens/s",
        30.0,
        "≥",
        ("page",),
    ),
    ("decode per token, dense (one request)", lambda r: r["decode_ratio"]["dense_ms"], "{:.2f}", "ms", None, "", ()),
    ("decode per token, paged and split by block", lambda r: r["decode_ratio"]["paged_ms"], "{:.2f}", "ms", None, "", ()),
    ("paged ÷ dense decode per token", lambda r: r["decode_ratio"]["ratio"], "{:.2f}", "×", 1.3, "≤", ("cpython", "page")),
)


def write_serving_table(serving: dict) -> None:
    """serving.csv and serving_meta.md: issue 34's targets, CPython beside the page, met or missed."""
    GENERATED.mkdir(parents=True, exist_ok=True)
    with open(GENERATED / "serving.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["measure", "CPython", "Pyodide (page)", "target"])
        for name, value, fmt, unit, limit, sense, judged_on in SERVING_ROWS:
            cells = []
            for where in ("cpython", "page"):
                v = value(serving[where])
                text = f"{fmt.format(v)} {unit}"
                if where in judged_on:
                    met = v <= limit if sense == "≤" else v >= limit
                    text += " ✓ met" if met else " ✗ missed"
                cells.append(text)
            w.writerow([name, *cells, f"{sense} {limit:g} {unit}" if limit is not None else ""])
    page = serving["page"]
    load = ", ".join(f"{x:.1f}" for x in serving["load_average"])
    (GENERATED / "serving_meta.md").write_text(
        f"Measured on {serving['date']} by `nox -s bench` ({serving['browser']}; {page['interpreter']} in the page, "
        f"{serving['cpython']['interpreter']} beside it), one run each; the machine's 1-minute load average was "
        f"{load} (before, between, after) on {os.cpu_count()} cores. The batch: {page['throughput']['tokens']} tokens "
        f"in {page['throughput']['steps']} engine steps; the ratio decodes {page['decode_ratio']['new']} tokens in "
        f"blocks of {page['decode_ratio']['block_size']}. The live demo's output equals dense generation with the "
        f"same seeds: {'yes' if page['first_token']['exact'] and serving['cpython']['first_token']['exact'] else 'NO'}.\n"
    )


def python_module(module: str, *args: str) -> dict:
    """Run ``python -m module --out tmp.json`` in CPython; return its JSON."""
    out = ROOT / "bench-results" / f"{module.split('.')[-1]}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", module, *args, "--out", str(out)], cwd=ROOT, check=True)
    return json.loads(out.read_text())


# Issue 7's targets: (column, measure(page result, floor result), limit, format).
TARGETS = (
    ("cold first output ≤ 1.1 × floor", lambda r, fl: r["cold"]["first_output_ms"] / fl["cold"]["first_output_ms"], 1.1, "{:.2f} ×"),
    ("second visit ≤ 0.5 × floor", lambda r, fl: r["second"]["first_output_ms"] / fl["cold"]["first_output_ms"], 0.5, "{:.2f} ×"),
    ("warm re-run ≤ 20 ms", lambda r, fl: r["cold"]["warm_rerun_ms"], 20.0, "{:.1f} ms"),
    (
        "first-visit bytes ≤ floor + 1.5 MB",
        lambda r, fl: (r["cold"]["wire_bytes"] - fl["cold"]["wire_bytes"]) / 1e6,
        1.5,
        "+{:.2f} MB",
    ),
)


def judged(fmt: str, value: float, limit: float, show_limit: bool = False) -> str:
    """``value`` as ``fmt`` writes it (then ``limit``, if ``show_limit``), met or missed; with one
    more digit where it missed by less than ``fmt`` shows (0.4529 against 0.45 read "0.45 × (≤ 0.45)
    ✗ missed")."""
    text = fmt.format(value)
    if value > limit and text == fmt.format(limit):
        text = fmt.replace(".2f", ".3f").replace(".1f", ".2f").format(value)
    if show_limit:
        text += f" (≤ {limit:g})"
    return f"{text} {'✓ met' if value <= limit else '✗ missed'}"


def bytes_before_first_output(result: dict) -> float:
    """Median over a page's cold runs of the bytes of the responses that had arrived by first output.

    Not the visit's whole traffic (``wire_bytes``): what a page fetches after
    its first output (the rest of the standard library, fonts, Graphviz) does
    not delay it.
    """
    return statistics.median(
        sum(e["bytes"] for e in run["log"] if e["end_ms"] <= run["first_output_ms"]) for run in result["runs"]["cold"]
    )


# Issue 15's targets, per network profile: (column, measure(page result, floor result), {profile: limit}, format).
PROFILE_TARGETS = (
    (
        "cold first output",
        lambda r, fl: r["cold"]["first_output_ms"] / fl["cold"]["first_output_ms"],
        {"none": 0.45, "cable": 0.80, "4G": 0.95},
        "{:.2f} ×",
    ),
    (
        "second visit",
        lambda r, fl: r["second"]["first_output_ms"] / fl["cold"]["first_output_ms"],
        {"none": 0.30, "cable": 0.30, "4G": 0.30},
        "{:.2f} ×",
    ),
    (
        "your typed code runs",
        lambda r, fl: r["cold"].get("typed_ms", float("nan")) / fl["cold"]["first_output_ms"],
        {"none": 0.80, "cable": 1.0, "4G": 1.1},
        "{:.2f} ×",
    ),
    (
        "bytes before first output",
        lambda r, fl: (bytes_before_first_output(r) - bytes_before_first_output(fl)) / 1e6,
        {"none": 0.5},
        "floor {:+.2f} MB",
    ),
)


def write_site_snapshot(profiles: dict, choice: dict) -> None:
    """site_snapshot.csv: per profile, one lab's cold first output started afresh, restored from
    the site's start-up snapshot, and as the page chose, with how often it chose the snapshot."""
    with open(GENERATED / "site_snapshot.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "profile",
                "started afresh (ms)",
                "site's snapshot (ms)",
                "the page's choice (ms)",
                "chose the snapshot",
                "MB more when restored",
            ]
        )
        for profile, modes in choice.items():
            page = profiles[profile][SITE_SNAPSHOT_PAGE]
            chose = [restored_from(run["restored"]) for run in page["runs"]["cold"] if "restored" in run]
            floor = profiles[profile][FLOOR]["cold"]["first_output_ms"]
            never, always = modes["never"], modes["always"]

            def ms(value: float, floor: float = floor) -> str:
                return f"{value:.0f} ({value / floor:.2f}×)"

            w.writerow(
                [
                    profile,
                    ms(never["first_output_ms"]),
                    ms(always["first_output_ms"]),
                    ms(page["cold"]["first_output_ms"]),
                    f"{chose.count('site')} of {len(chose)}",
                    f"{(always['wire_bytes'] - never['wire_bytes']) / 1e6:+.2f}",
                ]
            )


def write_profile_targets(profiles: dict) -> None:
    """profile_targets.csv: each lab page against issue 15's targets, per profile, met or missed."""
    with open(GENERATED / "profile_targets.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["profile", "page", *(t[0] for t in PROFILE_TARGETS)])
        for profile, results in profiles.items():
            for name, res in results.items():
                if name == FLOOR:
                    continue
                cells = []
                for _, measure, limits, fmt in PROFILE_TARGETS:
                    value = measure(res, results[FLOOR])
                    limit = limits.get(profile)
                    if value != value:  # NaN: not measured in this run
                        cells.append("not measured")
                    elif limit is None:
                        cells.append(fmt.format(value))
                    else:
                        cells.append(judged(fmt, value, limit, show_limit=True))
                w.writerow([profile, name, *cells])


WATERFALL_PAGE = "micrograd lab"


def write_waterfalls(profiles: dict) -> None:
    """waterfall_<profile>.html: the floor's and Lab 1's cold visits (the run with the median first output)."""
    from benchmarks.waterfall import draw

    for profile, results in profiles.items():
        parts = []
        for name in (FLOOR, WATERFALL_PAGE):
            runs = [r for r in results[name]["runs"]["cold"] if r.get("log")]
            if not runs:
                continue
            run = sorted(runs, key=lambda r: r["first_output_ms"])[len(runs) // 2]
            parts.append(draw(run["log"], run["first_output_ms"], f"{name}, cold visit, {profile} profile"))
        if parts:
            (GENERATED / f"waterfall_{profile}.html").write_text('<div class="bench-waterfalls">\n' + "\n".join(parts) + "\n</div>\n")


# The compressible files on the way to a lab's first output (the archives follow them: compression()).
CRITICAL_FILES = (
    "_static/pyodide/pyodide.asm.wasm",
    "_static/pyodide/pyodide.asm.js",
    "_static/pyodide/pyodide-lock.json",
    "_static/pyodide/pyodide.js",
    "_static/pyodide_cells/worker.js",
    "_static/pyodide_cells/runner.py",
    "_static/pyodide_cells/cells.js",
    "_static/pyodide_cells/cells.css",
    *LAB_PAGES.values(),
)


def compression(site: Path) -> list[dict]:
    """Each critical file's size as a file, gzipped as the guide's server does (-6), and as its Brotli copy;
    then the archives on the way to first output, which the server sends as they are or as their
    Brotli copy (of the same archive stored: precompress.ARCHIVES), with no gzip figure."""
    import gzip

    rows = []
    for rel in CRITICAL_FILES:
        path = site / rel
        br = path.with_name(path.name + ".br")
        rows.append(
            {
                "file": rel,
                "bytes": path.stat().st_size,
                "gzip": len(gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)),
                "br": br.stat().st_size if br.is_file() else None,
            }
        )
    for path in archives(site):
        br = path.with_name(path.name + ".br")
        rows.append(
            {
                "file": path.relative_to(site).as_posix(),
                "bytes": path.stat().st_size,
                "gzip": None,
                "br": br.stat().st_size if br.is_file() else None,
            }
        )
    return rows


def restored_from(value: str | bool) -> str:
    """A visit's start-up snapshot ("", "browser", "site"); results from before the site's snapshot said True or False."""
    return {True: "browser", False: ""}.get(value, value) if isinstance(value, bool) else value


def snapshot_count(sources: list[str]) -> str:
    """How many visits restored a snapshot, and whose: "5 of 5 (site)", "0 of 5", "–" for none measured."""
    if not sources:
        return "–"
    kinds = sorted({s for s in sources if s})
    return f"{sum(1 for s in sources if s)} of {len(sources)}" + (f" ({', '.join(kinds)})" if kinds else "")


def write_tables(data: dict) -> None:
    """The CSV tables and the meta line that docs/performance.md includes."""
    GENERATED.mkdir(parents=True, exist_ok=True)
    if data.get("compression"):
        with open(GENERATED / "compression.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["file", "file (kB)", "gzip (kB)", "Brotli (kB)", "Brotli saves"])
            for row in data["compression"]:
                br, gz = row["br"], row.get("gzip")
                sent = row["bytes"] if gz is None else gz  # an archive is sent as it is where not as Brotli
                w.writerow(
                    [
                        row["file"].rsplit("/", 1)[-1],
                        f"{row['bytes'] / 1e3:,.0f}",
                        "–" if gz is None else f"{gz / 1e3:,.1f}",
                        "–" if br is None else f"{br / 1e3:,.1f}",
                        "–" if br is None else f"{(1 - br / sent):.0%} ({(sent - br) / 1e3:,.0f} kB)",
                    ]
                )
    pages = data["pages"]
    floor = pages[FLOOR]["cold"]["first_output_ms"]
    with open(GENERATED / "pages.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "page",
                "visit",
                "ready (ms)",
                "first output (ms)",
                "× floor",
                "MB (gzip)",
                "MB (files)",
                "warm re-run (ms)",
                "from snapshot",
            ]
        )
        for name, res in pages.items():
            for visit_name in ("cold", "second"):
                r = res[visit_name]
                warm = r.get("warm_rerun_ms")
                runs = [restored_from(run["restored"]) for run in res.get("runs", {}).get(visit_name, []) if "restored" in run]
                w.writerow(
                    [
                        name,
                        visit_name,
                        f"{r['ready_ms']:.0f}",
                        f"{r['first_output_ms']:.0f}",
                        f"{r['first_output_ms'] / floor:.2f}",
                        f"{r['wire_bytes'] / 1e6:.2f}",
                        f"{r['file_bytes'] / 1e6:.2f}",
                        f"{warm:.1f}" if warm is not None else "–",
                        snapshot_count(runs),
                    ]
                )
    plain = data.get("pages_plain")
    if plain:
        plain_floor = plain[FLOOR]["cold"]["first_output_ms"]
        with open(GENERATED / "pages_plain.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(
                [
                    "page",
                    "visit",
                    "first output (ms)",
                    "× floor (same host)",
                    "× floor (guide's server)",
                    "MB sent",
                    "MB kept offline",
                    "cross-origin isolated",
                ]
            )
            for name, res in plain.items():
                for visit_name in ("cold", "second"):
                    r = res[visit_name]
                    isolated = r.get("isolated")
                    w.writerow(
                        [
                            name,
                            visit_name,
                            f"{r['first_output_ms']:.0f}",
                            f"{r['first_output_ms'] / plain_floor:.2f}",
                            f"{r['first_output_ms'] / floor:.2f}",
                            f"{r['wire_bytes'] / 1e6:.2f}",
                            f"{r.get('offline_bytes', 0) / 1e6:.2f}" if name != FLOOR else "–",
                            "–" if isolated is None else ("yes" if isolated >= 0.5 else "no"),
                        ]
                    )
    profiles = data.get("profiles")
    if profiles:
        with open(GENERATED / "profiles.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(
                [
                    "profile",
                    "page",
                    "cold first output (ms)",
                    "× floor",
                    "second visit (ms)",
                    "× floor (second)",
                    "your typed code runs (ms)",
                    "× floor (typed)",
                ]
            )
            for profile, results in profiles.items():
                profile_floor = results[FLOOR]["cold"]["first_output_ms"]
                for name, res in results.items():
                    typed = res["cold"].get("typed_ms")
                    w.writerow(
                        [
                            profile,
                            name,
                            f"{res['cold']['first_output_ms']:.0f}",
                            f"{res['cold']['first_output_ms'] / profile_floor:.2f}",
                            f"{res['second']['first_output_ms']:.0f}",
                            f"{res['second']['first_output_ms'] / profile_floor:.2f}",
                            "–" if typed is None else f"{typed:.0f}",
                            "–" if typed is None else f"{typed / profile_floor:.2f}",
                        ]
                    )
        write_profile_targets(profiles)
        write_waterfalls(profiles)
        if data.get("site_snapshot"):
            write_site_snapshot(profiles, data["site_snapshot"])
    with open(GENERATED / "targets.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["page", *(t[0] for t in TARGETS)])
        for name, res in pages.items():
            if name == FLOOR:
                continue
            cells = []
            for _, measure, limit, fmt in TARGETS:
                value = measure(res, pages[FLOOR])
                cells.append(judged(fmt, value, limit))
            w.writerow([name, *cells])
    cpython = {(c["group"], c["name"], c.get("n")): c for c in data["kernels_cpython"]["cases"]}
    with open(GENERATED / "kernels.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["group", "case", "n", "unit", "CPython", "Pyodide (page)", "page ÷ CPython"])
        for c in data["kernels_page"]["cases"]:
            ref = cpython.get((c["group"], c["name"], c.get("n")))
            ratio = ""
            if ref and ref["median"]:
                # For rates (per second) a slower page means a smaller number.
                ratio = ref["median"] / c["median"] if c["unit"].endswith("/s") else c["median"] / ref["median"]
                ratio = f"{ratio:.2f}"
            w.writerow(
                [c["group"], c["name"], c.get("n", ""), c["unit"], f"{ref['median']:.4g}" if ref else "", f"{c['median']:.4g}", ratio]
            )
    engines = data.get("engines_cpython")
    if engines:
        write_engines_table(engines, data["date"], data["machine"])
    if data.get("serving"):
        write_serving_table(data["serving"])
    (GENERATED / "meta.md").write_text(
        f"Measured on {data['date']} by `nox -s bench`: {data['machine']}; {data['runs']} runs per figure, medians; "
        f"{data['browser']}.\n"
    )


def write_engines_table(engines: dict, date: str, machine: str) -> None:
    """engines.csv (``benchmarks.engines``: ours against micrograd 0.1.0) and engines_meta.md, when and where."""
    with open(GENERATED / "engines.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "engine", "forward + backward (ms)", "ours ÷ micrograd", "note"])
        for row in engines.get("results", []):
            if "error" in row:
                w.writerow([row["case"], row["engine"], row["error"], "", row.get("note", "")])
                continue
            ratio = row.get("ratio_vs_micrograd")
            w.writerow(
                [
                    row["case"],
                    row["engine"],
                    f"{1e3 * row['median_s']:.2f}",
                    f"{ratio:.2f}" if ratio is not None else "",
                    row.get("note", ""),
                ]
            )
    (GENERATED / "engines_meta.md").write_text(
        f"Measured on {date} by `python -m benchmarks.engines` (part of `nox -s bench`; alone: "
        f"`python -m benchmarks --only engines`): {machine}; medians of {engines.get('repeats', 7)} repeats.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the lab guide's benchmarks")
    parser.add_argument("--site", default=str(ROOT / "build" / "html"))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="1 run each, small engine sizes: a smoke test")
    parser.add_argument("--chromium", default=CHROMIUM)
    parser.add_argument("--no-publish", action="store_true", help="do not rewrite docs/_generated/")
    parser.add_argument(
        "--profiles",
        default="cable,4G",
        help=f"network profiles measured besides 'none', comma-separated, from {', '.join(PROFILES)}; '' for none",
    )
    parser.add_argument(
        "--tables-only", action="store_true", help="rewrite docs/_generated/ from bench-results/bench.json, measure nothing"
    )
    parser.add_argument(
        "--only",
        choices=["serving", "engines"],
        help="measure only this part and write its tables (serving: Lab 4 in CPython and in its page; engines: "
        "labs.autograd and labs.nn against micrograd 0.1.0, in CPython)",
    )
    args = parser.parse_args(argv)
    if args.tables_only:
        write_tables(json.loads((ROOT / "bench-results" / "bench.json").read_text()))
        print(f"tables written to {GENERATED}")
        return 0
    if args.only == "engines":
        engines = python_module("benchmarks.engines", *(["--repeats", "5", "--warmup", "1"] if args.quick else []))
        print(json.dumps(engines, indent=1))
        if not args.no_publish:
            machine = f"{os.cpu_count()} cores, {platform.machine()}, CPython {platform.python_version()}"
            write_engines_table(engines, time.strftime("%Y-%m-%d"), machine)
            print(f"engines tables written to {GENERATED}")
        return 0
    profiles = [profile for profile in args.profiles.split(",") if profile]
    unknown = [profile for profile in profiles if profile not in PROFILES]
    if unknown:
        parser.error(f"unknown profile {unknown[0]!r}: expected one of {', '.join(PROFILES)}")
    runs = 1 if args.quick else args.runs
    if runs < 1:
        parser.error("--runs must be at least 1")
    scale = "quick" if args.quick else "full"

    site = Path(args.site)
    (site / "_bench").mkdir(exist_ok=True)
    (site / "_bench" / "bare.html").write_text(BARE_PAGE)
    server = make_server(site, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"

    from playwright.sync_api import sync_playwright

    if args.only == "serving":
        with sync_playwright() as p:
            browser = launch(p, args.chromium)
            serving = bench_serving(browser, base, scale)
            browser.close()
        server.shutdown()
        out = ROOT / "bench-results" / "serving-bench.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(serving, indent=1))
        print(json.dumps({k: serving[k] for k in ("cpython", "page", "load_average")}, indent=1))
        if not args.no_publish:
            write_serving_table(serving)
            print(f"serving tables written to {GENERATED}")
        return 0

    print("CPython engines …", flush=True)
    data = {
        "compression": compression(site),
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, CPython {platform.python_version()}",
        "runs": runs,
        "kernels_cpython": python_module("benchmarks.kernels", "--scale", scale),
    }
    try:
        data["engines_cpython"] = python_module("benchmarks.engines", *(["--repeats", "5", "--warmup", "1"] if args.quick else []))
    except subprocess.CalledProcessError as exc:  # micrograd missing: say so, go on
        print(f"engines benchmark failed: {exc}", flush=True)
    with sync_playwright() as p:
        browser = launch(p, args.chromium)
        data["browser"] = f"headless Chromium {browser.version}"
        print("pages …", flush=True)
        warm = browser.new_context()  # fill the server's gzip cache: not a browser cache
        for path in ("_bench/bare.html", *LAB_PAGES.values()):
            warm.new_page().goto(f"{base}/{path}", wait_until="load")
        warm.close()
        data["pages"] = bench_pages(browser, base, site, runs, typed=True)
        data["profiles"] = {"none": data["pages"]}
        data["site_snapshot"] = {"none": bench_site_snapshot(browser, base, site, runs)}
        for profile in profiles:
            print(f"pages on the {profile} profile …", flush=True)
            data["profiles"][profile] = bench_pages(browser, base, site, runs, profile, typed=True)
            data["site_snapshot"][profile] = bench_site_snapshot(browser, base, site, runs, profile)
        print("pages from a plain static host …", flush=True)
        with PlainHost(site) as plain:
            data["pages_plain"] = bench_pages(browser, plain.base, site, runs)
        print("engines in the page …", flush=True)
        data["kernels_page"] = kernels_in_page(browser, base, scale)
        data["serving"] = bench_serving(browser, base, scale)
        browser.close()
    server.shutdown()

    floor = data["pages"][FLOOR]["cold"]
    print(f"\nPages, medians of {runs} runs (headless Chromium, 127.0.0.1, gzip):\n")
    print(f"{'page':22} {'visit':7} {'ready':>7} {'first out':>10} {'×floor':>7} {'MB gz':>7} {'MB files':>9} {'re-run ms':>10}")
    for name, res in data["pages"].items():
        for visit_name in ("cold", "second"):
            r = res[visit_name]
            warm = r.get("warm_rerun_ms")
            print(
                f"{name:22} {visit_name:7} {r['ready_ms']:7.0f} {r['first_output_ms']:10.0f} "
                f"{r['first_output_ms'] / floor['first_output_ms']:7.2f} {r['wire_bytes'] / 1e6:7.2f} "
                f"{r['file_bytes'] / 1e6:9.2f} {warm if warm is None else round(warm, 1)!s:>10}"
            )
    lab = data["pages"]["micrograd lab"]
    data["targets"] = {
        "cold_first_output_vs_floor": lab["cold"]["first_output_ms"] / floor["first_output_ms"],
        "second_first_output_vs_floor": lab["second"]["first_output_ms"] / floor["first_output_ms"],
        "warm_rerun_ms": lab["cold"]["warm_rerun_ms"],
        "extra_wire_bytes_vs_floor": lab["cold"]["wire_bytes"] - floor["wire_bytes"],
        "extra_file_bytes_vs_floor": lab["cold"]["file_bytes"] - floor["file_bytes"],
    }
    print("\nTargets (micrograd lab):", json.dumps(data["targets"], indent=1))
    foreign = sum(r["foreign_requests"] for res in data["pages"].values() for k in ("cold", "second") for r in res["runs"][k])
    if foreign:
        print(f"WARNING: {foreign} requests to other hosts were made (and aborted)")
    out = ROOT / "bench-results" / "bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1))
    print(f"\nwritten to {out}")
    if not args.no_publish:
        write_tables(data)
        print(f"tables for the Performance page written to {GENERATED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
