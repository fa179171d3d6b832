"""How the build shares its Brotli work between processes (pyodide_cells.precompress.shares)."""

from __future__ import annotations

import pytest

from pyodide_cells import precompress
from pyodide_cells.precompress import shares


def test_files_are_dealt_by_bytes_the_largest_first_and_each_share_keeps_their_order(tmp_path):
    sizes = {"a.wasm": 900, "b.bin": 500, "c.zip": 300, "d.js": 200, "e.css": 50}
    files = []
    for name, size in sizes.items():
        (tmp_path / name).write_bytes(b"x" * size)
        files.append(tmp_path / name)
    got = [[p.name for p in share] for share in shares(files, 2)]
    assert got == [["a.wasm", "e.css"], ["b.bin", "c.zip", "d.js"]]  # 950 and 1,000 bytes
    assert [[p.name for p in share] for share in shares(files, 1)] == [list(sizes)]
    assert shares(files[:1], 2) == [files[:1]]  # no empty share: no process with nothing to do
    assert shares([], 2) == []


def test_a_share_that_cannot_start_stops_the_processes_already_started(monkeypatch, tmp_path):
    """A Node process left running would go on writing into a build that had failed."""
    started, stopped = [], []

    class Starting:
        def __init__(self, app, files):
            if started:
                raise OSError("no second process")
            started.append(self)

        def kill(self):
            stopped.append(self)

    monkeypatch.setattr(precompress, "Compressing", Starting)
    files = []
    for name, size in {"a.wasm": 900, "b.bin": 500}.items():
        (tmp_path / name).write_bytes(b"x" * size)
        files.append(tmp_path / name)
    with pytest.raises(OSError, match="no second process"):
        precompress.start(None, files)
    assert len(started) == 1 and stopped == started
