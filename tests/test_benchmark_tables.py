"""The Performance page's tables come from the harness: their arithmetic must be right."""

from __future__ import annotations

import csv
import importlib

bench = importlib.import_module("benchmarks.__main__")


def data():
    page = lambda ms, wire, files, warm=None: {  # noqa: E731
        "ready_ms": ms - 10,
        "first_output_ms": ms,
        "wire_bytes": wire,
        "file_bytes": files,
        "warm_rerun_ms": warm,
    }
    return {
        "date": "2026-11-30",
        "machine": "2 cores",
        "runs": 5,
        "browser": "headless Chromium 156",
        "pages": {
            bench.FLOOR: {"cold": page(2000, 5_000_000, 13_000_000), "second": page(1900, 0, 13_000_000)},
            "micrograd lab": {"cold": page(2500, 5_500_000, 15_000_000, 12.5), "second": page(2100, 10_000, 15_000_000, 11.0)},
        },
        "kernels_cpython": {
            "cases": [
                {"group": "attention", "name": "attention", "n": 16, "unit": "ns/score", "median": 1000.0},
                {"group": "paged", "name": "translate", "n": 2048, "unit": "translations/s", "median": 3e6},
                {"group": "autograd", "name": "mlp", "n": 100, "unit": "ms/step", "median": 10.0},
            ]
        },
        "kernels_page": {
            "cases": [
                {"group": "attention", "name": "attention", "n": 16, "unit": "ns/score", "median": 2500.0},
                {"group": "paged", "name": "translate", "n": 2048, "unit": "translations/s", "median": 1e6},
                {"group": "autograd", "name": "mlp", "n": 100, "unit": "ms/step", "median": 20.0},
            ]
        },
    }


def read(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_page_rows_divide_by_the_floors_cold_first_output(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "GENERATED", tmp_path)
    bench.write_tables(data())
    rows = read(tmp_path / "pages.csv")
    assert rows[0][4] == "× floor"
    assert rows[3] == ["micrograd lab", "cold", "2490", "2500", "1.25", "5.50", "15.00", "12.5", "–"]
    assert rows[4][4] == "1.05" and rows[2][7] == "–"


def test_page_rows_count_the_visits_that_restored_the_snapshot(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "GENERATED", tmp_path)
    d = data()
    d["pages"]["micrograd lab"]["runs"] = {
        "cold": [{"restored": "site"}, {"restored": ""}, {"restored": "site"}],
        "second": [{"restored": "browser"}, {"restored": ""}, {"restored": "browser"}],
    }
    d["pages"][bench.FLOOR]["runs"] = {"cold": [{}] * 3, "second": [{}] * 3}
    bench.write_tables(d)
    rows = read(tmp_path / "pages.csv")
    assert rows[0][8] == "from snapshot"
    assert [row[8] for row in rows[1:]] == ["–", "–", "2 of 3 (site)", "2 of 3 (browser)"]
    # Results from before the site's snapshot said True or False.
    d["pages"]["micrograd lab"]["runs"] = {
        "cold": [{"restored": False}] * 3,
        "second": [{"restored": True}, {"restored": False}, {"restored": True}],
    }
    bench.write_tables(d)
    assert [row[8] for row in read(tmp_path / "pages.csv")[3:]] == ["0 of 3", "2 of 3 (browser)"]


def test_page_to_cpython_ratio_is_slowdown_for_times_and_rates_alike(tmp_path, monkeypatch):
    """ns/score and ms/step are times (page / CPython); translations/s is a rate (CPython / page)."""
    monkeypatch.setattr(bench, "GENERATED", tmp_path)
    bench.write_tables(data())
    ratios = {row[1]: row[6] for row in read(tmp_path / "kernels.csv")[1:]}
    assert ratios == {"attention": "2.50", "translate": "3.00", "mlp": "2.00"}
    assert "5 runs per figure" in (tmp_path / "meta.md").read_text()


def test_targets_table_says_which_targets_each_page_meets(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "GENERATED", tmp_path)
    bench.write_tables(data())
    rows = read(tmp_path / "targets.csv")
    assert rows[0][0] == "page" and len(rows) == 2  # the floor has no row
    # 2500 / 2000 = 1.25 > 1.1; 2100 / 2000 = 1.05 > 0.5; 12.5 ms <= 20; +0.50 MB <= 1.5
    assert rows[1] == ["micrograd lab", "1.25 × ✗ missed", "1.05 × ✗ missed", "12.5 ms ✓ met", "+0.50 MB ✓ met"]


class FakeRequest:
    """What Traffic.finished reads of a Playwright request."""

    def __init__(self, url, status, body, headers, service_worker=None, start=1_000.0, end=50.0):
        self.url, self._status, self._sizes = url, status, {"responseBodySize": body, "responseHeadersSize": headers}
        self.service_worker = service_worker  # the worker that made the request, if a service worker did
        self.timing = {"startTime": start, "responseEnd": end}  # Playwright: ms since the epoch, then ms after it

    def response(self):
        return type("Response", (), {"status": self._status})()

    def sizes(self):
        return self._sizes


def test_traffic_counts_files_only_when_their_body_crossed_the_wire(tmp_path):
    (tmp_path / "a.js").write_bytes(b"x" * 1000)
    (tmp_path / "b.wasm").write_bytes(b"y" * 5000)
    traffic = bench.Traffic(tmp_path)
    traffic.finished(FakeRequest("http://127.0.0.1:1/a.js", 200, 300, 200))  # gzip body over the wire
    traffic.finished(FakeRequest("http://127.0.0.1:1/b.wasm", 200, 0, 180))  # from the HTTP cache
    traffic.finished(FakeRequest("http://127.0.0.1:1/a.js?v=1", 304, 0, 150))  # revalidated
    traffic.finished(FakeRequest("http://127.0.0.1:1/b.wasm", 200, 5000, 100, service_worker=object()))  # kept offline
    assert traffic.files == 1000
    assert traffic.offline == 5100 and traffic.requests == 3  # the service worker's fetches are counted apart
    assert traffic.wire == 300 + 200 + 180 + 150
    assert traffic.requests == 3 and traffic.from_cache == 2
    # The waterfall's log: one entry per response the page got, not the service worker's.
    assert [(e["path"], e["bytes"], e["cached"]) for e in traffic.log] == [
        ("/a.js", 500, False),
        ("/b.wasm", 180, True),
        ("/a.js", 150, True),
    ]
    assert traffic.log[0]["start"] == 1_000.0 and traffic.log[0]["end"] == 1_050.0


def profiles():
    """Two profiles: on 4G the lab is 1.0x the floor cold, 0.25x second, typed 1.2x."""

    def visit(first, wire, typed=None):
        return {"first_output_ms": first, "wire_bytes": wire, **({"typed_ms": typed} if typed else {})}

    def entry(end, size):
        return {"path": "/x", "start_ms": 1.0, "end_ms": end, "bytes": size, "cached": False}

    # The floor's 5.0 MB have all arrived by its first output.
    floor_log = [entry(90.0, 4_000_000), entry(1900.0, 1_000_000)]
    floor = {"cold": visit(4000, 5_000_000), "second": visit(3000, 0), "runs": {"cold": [{"first_output_ms": 4000, "log": floor_log}]}}
    # The lab: 5.4 MB by first output at 127.0.0.1, then 1.8 MB more (the rest of the stdlib),
    # which is part of its wire bytes but not of its bytes before first output.
    lab_log = [entry(700.0, 5_000_000), entry(780.0, 400_000), entry(2500.0, 1_800_000)]
    # On 4G 4.6 MB had arrived by first output, the rest after it.
    lab_4g_log = [entry(3000.0, 4_600_000), entry(4500.0, 1_800_000)]
    return {
        "none": {
            bench.FLOOR: {**floor, "cold": visit(2000, 5_000_000)},
            "micrograd lab": {
                "cold": visit(800, 7_200_000, 1500),
                "second": visit(500, 0),
                "runs": {"cold": [{"first_output_ms": 800, "log": lab_log}]},
            },
        },
        "4G": {
            bench.FLOOR: floor,
            "micrograd lab": {
                "cold": visit(4000, 6_400_000, 4800),
                "second": visit(1000, 0),
                "runs": {"cold": [{"first_output_ms": 4000, "log": lab_4g_log}]},
            },
        },
    }


def test_the_network_targets_are_judged_per_profile_against_that_profiles_floor(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "GENERATED", tmp_path)
    bench.write_profile_targets(profiles())
    rows = read(tmp_path / "profile_targets.csv")
    assert rows[0] == ["profile", "page", "cold first output", "second visit", "your typed code runs", "bytes before first output"]
    # none: 800 / 2000 = 0.40 <= 0.45; 500 / 2000 = 0.25 <= 0.30; 1500 / 2000 = 0.75 <= 0.80;
    # 5.4 - 5.0 = +0.40 MB <= 0.5 (what came after first output does not count)
    assert rows[1] == [
        "none",
        "micrograd lab",
        "0.40 × (≤ 0.45) ✓ met",
        "0.25 × (≤ 0.3) ✓ met",
        "0.75 × (≤ 0.8) ✓ met",
        "floor +0.40 MB (≤ 0.5) ✓ met",
    ]
    # 4G: 4000 / 4000 = 1.00 > 0.95; 1000 / 4000 = 0.25; 4800 / 4000 = 1.20 > 1.1; 4.6 - 5.0 = -0.40 MB, not judged
    assert rows[2] == [
        "4G",
        "micrograd lab",
        "1.00 × (≤ 0.95) ✗ missed",
        "0.25 × (≤ 0.3) ✓ met",
        "1.20 × (≤ 1.1) ✗ missed",
        "floor -0.40 MB",
    ]


def test_a_figure_that_misses_its_target_by_less_than_it_shows_gets_one_more_digit(tmp_path, monkeypatch):
    """0.4529 against 0.45 read "0.45 × (≤ 0.45) ✗ missed" on the Performance page."""
    monkeypatch.setattr(bench, "GENERATED", tmp_path)
    results = profiles()
    results["none"]["micrograd lab"]["cold"]["first_output_ms"] = 905.8  # / 2000 = 0.4529
    results["none"]["micrograd lab"]["second"]["first_output_ms"] = 600.0  # / 2000 = 0.30: met, as shown
    bench.write_profile_targets(results)
    row = read(tmp_path / "profile_targets.csv")[1]
    assert row[2:4] == ["0.453 × (≤ 0.45) ✗ missed", "0.30 × (≤ 0.3) ✓ met"]
    assert bench.judged("{:.1f} ms", 20.04, 20.0) == "20.04 ms ✗ missed"
    assert bench.judged("{:.1f} ms", 20.5, 20.0) == "20.5 ms ✗ missed"


def test_the_site_snapshot_table_weighs_the_pages_choice_against_both_starts_per_profile(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "GENERATED", tmp_path)
    p = profiles()
    p["none"]["micrograd lab"]["runs"]["cold"] = [{"restored": "site"}] * 4 + [{"restored": ""}]
    p["4G"]["micrograd lab"]["runs"]["cold"] = [{"restored": ""}] * 5
    mode = lambda ms, wire: {"first_output_ms": ms, "wire_bytes": wire, "restored": []}  # noqa: E731
    bench.write_site_snapshot(
        p,
        {
            "none": {"never": mode(1000, 5_400_000), "always": mode(700, 8_500_000)},
            "4G": {"never": mode(4000, 5_400_000), "always": mode(7200, 8_500_000)},
        },
    )
    rows = read(tmp_path / "site_snapshot.csv")
    assert rows[0] == [
        "profile",
        "started afresh (ms)",
        "site's snapshot (ms)",
        "the page's choice (ms)",
        "chose the snapshot",
        "MB more when restored",
    ]
    # none: floor 2000 ms; the page's cold visit 800 ms. 4G: floor 4000 ms.
    assert rows[1] == ["none", "1000 (0.50×)", "700 (0.35×)", "800 (0.40×)", "4 of 5", "+3.10"]
    assert rows[2] == ["4G", "4000 (1.00×)", "7200 (1.80×)", "4000 (1.00×)", "0 of 5", "+3.10"]


def test_each_profile_gets_a_waterfall_of_the_floor_and_lab_1_from_the_logged_run(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "GENERATED", tmp_path)
    bench.write_waterfalls(profiles())
    html = (tmp_path / "waterfall_4G.html").read_text()
    assert html.count("<svg") == 2 and "floor (bare Pyodide), cold visit, 4G profile" in html
    assert "micrograd lab, cold visit, 4G profile" in html and "first output 4.00 s" in html
    assert (tmp_path / "waterfall_none.html").is_file()


def test_the_waterfall_draws_files_in_request_order_with_their_sizes():
    from benchmarks import waterfall

    log = [
        {"path": "/_static/pyodide/pyodide.asm.wasm", "start_ms": 400.0, "end_ms": 5000.0, "bytes": 2_268_243, "cached": False},
        {"path": "/micrograd.html", "start_ms": 2.0, "end_ms": 90.0, "bytes": 30_000, "cached": False},
        {"path": "/_static/site.css", "start_ms": 110.0, "end_ms": 111.0, "bytes": 300, "cached": True},
    ]
    svg = waterfall.draw(log, first_output_ms=6000.0, title="t")
    names = [
        line.split(">")[1].split("<")[0] for line in svg.splitlines() if 'text-anchor="end"' in line and "first output" not in line
    ]
    assert names == ["micrograd.html", "site.css", "pyodide/pyodide.asm.wasm"]  # in the order the requests left
    assert "2.27 MB" in svg and "30 kB" in svg and ">cache<" in svg and "first output 6.00 s" in svg
    assert svg.count("<rect") == 3


def test_the_compression_table_weighs_an_archives_brotli_copy_against_the_file_it_replaces(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "GENERATED", tmp_path)
    d = data()
    d["compression"] = [
        {"file": "_static/pyodide/pyodide.asm.wasm", "bytes": 10_000_000, "gzip": 3_000_000, "br": 2_250_000},
        {"file": "_static/pyodide/python_stdlib-abc.zip", "bytes": 1_280_000, "gzip": None, "br": 896_000},
    ]
    bench.write_tables(d)
    rows = read(tmp_path / "compression.csv")
    assert rows[1] == ["pyodide.asm.wasm", "10,000", "3,000.0", "2,250.0", "25% (750 kB)"]
    assert rows[2] == ["python_stdlib-abc.zip", "1,280", "–", "896.0", "30% (384 kB)"]


def test_the_compression_rows_list_the_archives_with_their_brotli_copies(tmp_path):
    site = tmp_path / "site"
    for rel in bench.CRITICAL_FILES:
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(b"x" * 2000)
    stdlib = site / "_static" / "pyodide" / "python_stdlib-abc.zip"
    stdlib.write_bytes(b"z" * 1000)
    stdlib.with_name(stdlib.name + ".br").write_bytes(b"b" * 700)
    (site / "_static" / "pyodide" / "python_stdlib_rest-abc.zip").write_bytes(b"r" * 1000)  # sent as it is: not listed
    rows = bench.compression(site)
    assert rows[-1] == {"file": "_static/pyodide/python_stdlib-abc.zip", "bytes": 1000, "gzip": None, "br": 700}
    assert len(rows) == len(bench.CRITICAL_FILES) + 1


def serving_result(run_ms, tokens_per_s, dense_ms, paged_ms):
    return {
        "interpreter": "cpython 3.12",
        "first_token": {"python_ms": run_ms - 50, "run_to_first_token_ms": run_ms, "load_ms": 20.0, "exact": True},
        "throughput": {"tokens_per_s": tokens_per_s, "tokens": 256, "steps": 32},
        "decode_ratio": {"dense_ms": dense_ms, "paged_ms": paged_ms, "ratio": paged_ms / dense_ms, "new": 64, "block_size": 16},
    }


def test_serving_rows_judge_issue_34s_targets_on_the_page(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "GENERATED", tmp_path)
    cpython = serving_result(300.0, 190.0, 2.0, 2.4)
    cpython["first_token"]["run_to_first_token_ms"] = None  # CPython has no Run: its own time to the first token
    serving = {
        "cpython": cpython,
        "page": serving_result(1200.0, 31.0, 6.0, 9.0),
        "load_average": [1.0, 2.0, 3.0],
        "date": "2026-12-05",
        "browser": "headless Chromium 156",
        "scale": "full",
    }
    d = data()
    d["serving"] = serving
    bench.write_tables(d)
    rows = read(tmp_path / "serving.csv")
    assert rows[0] == ["measure", "CPython", "Pyodide (page)", "target"]
    assert rows[1][1:] == ["250 ms", "1200 ms ✗ missed", "≤ 1000 ms"]
    assert rows[2][1:] == ["190.0 tokens/s", "31.0 tokens/s ✓ met", "≥ 30 tokens/s"]
    assert rows[5][1:] == ["1.20 × ✓ met", "1.50 × ✗ missed", "≤ 1.3 ×"]
    assert "1.0, 2.0, 3.0" in (tmp_path / "serving_meta.md").read_text()


def test_the_serving_bench_runs_the_pages_live_demo():
    """benchmarks/serving.py times the demo of docs/serving.md: its prompts, seeds, temperature and lengths."""
    import ast
    import re
    from pathlib import Path

    from benchmarks import serving

    page = (Path(__file__).resolve().parent.parent / "docs" / "serving.md").read_text()
    prompts = ast.literal_eval(
        re.search(r"PROMPTS = (\[.*?\n\])", page, re.S).group(1).replace("  # edit them; each has its own seed", "")
    )
    assert prompts == serving.DEMO_PROMPTS
    assert f"TEMPERATURE = {serving.DEMO_TEMPERATURE}  #" in page
    assert f"MAX_NEW_TOKENS = {serving.DEMO_NEW_TOKENS}\n" in page
    assert f"block_size={serving.DEMO_BLOCK_SIZE}," in page
    # The demo's requests arrive one per step (its first token after one prompt's prefill): the bench too.
    import inspect

    assert "prompt, params = arriving.pop(0)" in page
    assert "arriving.pop(0)" in inspect.getsource(serving.first_token)
