"""How the build shares its Brotli work between processes (pyodide_cells.precompress.shares)."""

from __future__ import annotations

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
