"""Time to first output in headless Chromium, against the bare-Pyodide floor.

For each page, ``--runs`` cold visits (a new browser context, so an empty HTTP
cache) of the built site served on 127.0.0.1, each measuring:

- navigation -> runtime ready (the page's ``pyodide-cells:ready`` mark);
- navigation -> first cell output (Run is pressed as soon as the button exists,
  so it is queued while Python loads; ``pyodide-cells:first-output``);
- bytes transferred (headers + bodies of every response, workers included).

The floor is a bare page that only boots Pyodide 0.26.2 from the same
``_static/pyodide/`` and prints one line. Results: a table on stdout and
``bench-results/bench.json``.

    python -m benchmarks --site build/html [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from pyodide_cells.serve import make_server  # noqa: E402

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]

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


def visit(browser, url: str, is_lab: bool) -> dict:
    context = browser.new_context()
    total = {"bytes": 0, "requests": 0, "foreign": 0}

    def finished(request):
        sizes = request.sizes()
        total["bytes"] += sizes["responseBodySize"] + sizes["responseHeadersSize"]
        total["requests"] += 1

    context.on("requestfinished", finished)
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("http://127.0.0.1") else (
        total.__setitem__("foreign", total["foreign"] + 1), r.abort()))
    page = context.new_page()
    page.goto(url, wait_until="commit")
    if is_lab:
        page.locator("div.cell.pc-live .pc-run").first.click()
        page.wait_for_function(
            "document.querySelector('div.cell.pc-live').dataset.state === 'done'", timeout=120_000
        )
        # Warm re-run inside the page: the same cell again, Python already loaded.
        warm = page.evaluate(
            "async () => { const r = []; for (let i = 0; i < 5; i++) r.push((await window.pyodideCells.run(0)).ms); return r; }"
        )
    else:
        page.wait_for_selector("body[data-state=done]", timeout=120_000)
        warm = []
    page.wait_for_timeout(300)  # let late responses (source maps are not fetched) finish
    result = {
        "ready_ms": mark(page, "pyodide-cells:ready"),
        "first_output_ms": mark(page, "pyodide-cells:first-output"),
        "bytes": total["bytes"],
        "requests": total["requests"],
        "foreign_requests": total["foreign"],
        "warm_rerun_ms": statistics.median(warm) if warm else None,
    }
    context.close()
    return result


def summarize(runs: list[dict]) -> dict:
    out = {"runs": runs}
    for key in ("ready_ms", "first_output_ms", "bytes", "warm_rerun_ms"):
        values = [r[key] for r in runs if r[key] is not None]
        out[key] = statistics.median(values) if values else None
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="first-output benchmark vs the bare-Pyodide floor")
    parser.add_argument("--site", default=str(ROOT / "build" / "html"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--out", default=str(ROOT / "bench-results" / "bench.json"))
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    site = Path(args.site)
    bare = site / "_bench" / "bare.html"
    bare.parent.mkdir(exist_ok=True)
    bare.write_text(BARE_PAGE)
    server = make_server(site, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"

    from playwright.sync_api import sync_playwright

    pages = {"floor (bare Pyodide)": ("_bench/bare.html", False), "micrograd lab": ("micrograd.html", True)}
    results: dict[str, dict] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        visit(browser, f"{base}/_bench/bare.html", False)  # warm the OS file cache, not the browser's
        for name, (path, is_lab) in pages.items():
            runs = []
            for _ in range(args.runs):
                runs.append(visit(browser, f"{base}/{path}", is_lab))
            results[name] = summarize(runs)
        browser.close()
    server.shutdown()

    floor = results["floor (bare Pyodide)"]
    print(f"\nCold visits, medians of {args.runs} runs (headless Chromium, 127.0.0.1):\n")
    print(f"{'page':24} {'ready ms':>9} {'first output ms':>16} {'x floor':>8} {'MB':>7} {'warm re-run ms':>15}")
    for name, r in results.items():
        ratio = r["first_output_ms"] / floor["first_output_ms"]
        r["first_output_ratio"] = ratio
        warm = f"{r['warm_rerun_ms']:.1f}" if r["warm_rerun_ms"] is not None else "-"
        print(f"{name:24} {r['ready_ms']:9.0f} {r['first_output_ms']:16.0f} {ratio:8.2f} {r['bytes'] / 1e6:7.2f} {warm:>15}")
    if any(r["foreign_requests"] for res in results.values() for r in res["runs"]):
        print("WARNING: requests to other hosts were made (and aborted)")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "runs_per_page": args.runs, "results": results}, indent=2))
    print(f"\nwritten to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
