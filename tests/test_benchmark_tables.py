"""The Performance page's tables come from the harness: their arithmetic must be right."""

from __future__ import annotations

import csv
import importlib

bench = importlib.import_module("benchmarks.__main__")


def data():
    page = lambda ms, wire, files, warm=None: {  # noqa: E731
        "ready_ms": ms - 10, "first_output_ms": ms, "wire_bytes": wire, "file_bytes": files, "warm_rerun_ms": warm,
    }
    return {
        "date": "2026-11-30", "machine": "2 cores", "runs": 5, "browser": "headless Chromium 156",
        "pages": {
            bench.FLOOR: {"cold": page(2000, 5_000_000, 13_000_000), "second": page(1900, 0, 13_000_000)},
            "micrograd lab": {"cold": page(2500, 5_500_000, 15_000_000, 12.5), "second": page(2100, 10_000, 15_000_000, 11.0)},
        },
        "kernels_cpython": {"cases": [
            {"group": "attention", "name": "attention", "n": 16, "unit": "ns/score", "median": 1000.0},
            {"group": "paged", "name": "translate", "n": 2048, "unit": "translations/s", "median": 3e6},
            {"group": "autograd", "name": "mlp", "n": 100, "unit": "ms/step", "median": 10.0},
        ]},
        "kernels_page": {"cases": [
            {"group": "attention", "name": "attention", "n": 16, "unit": "ns/score", "median": 2500.0},
            {"group": "paged", "name": "translate", "n": 2048, "unit": "translations/s", "median": 1e6},
            {"group": "autograd", "name": "mlp", "n": 100, "unit": "ms/step", "median": 20.0},
        ]},
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
    d["pages"]["micrograd lab"]["runs"] = {"cold": [{"restored": False}] * 3,
                                           "second": [{"restored": True}, {"restored": False}, {"restored": True}]}
    d["pages"][bench.FLOOR]["runs"] = {"cold": [{}] * 3, "second": [{}] * 3}
    bench.write_tables(d)
    rows = read(tmp_path / "pages.csv")
    assert rows[0][8] == "from snapshot"
    assert [row[8] for row in rows[1:]] == ["–", "–", "0 of 3", "2 of 3"]


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

    def __init__(self, url, status, body, headers, service_worker=None):
        self.url, self._status, self._sizes = url, status, {"responseBodySize": body, "responseHeadersSize": headers}
        self.service_worker = service_worker  # the worker that made the request, if a service worker did

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
