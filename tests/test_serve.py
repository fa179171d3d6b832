"""The local server: headers the runtime needs, gzip, caching."""

from __future__ import annotations

import gzip
import threading
import urllib.request

import pytest

from pyodide_cells.serve import make_server


@pytest.fixture
def site(tmp_path):
    (tmp_path / "index.html").write_text("<!doctype html><title>t</title>" + "x" * 5000)
    static = tmp_path / "_static" / "pyodide"
    static.mkdir(parents=True)
    (static / "pyodide.asm.wasm").write_bytes(b"\0asm" + bytes(range(256)) * 400)
    (tmp_path / "_static" / "lib.whl").write_bytes(b"PK" + b"z" * 100)
    server = make_server(tmp_path, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", tmp_path
    server.shutdown()
    server.server_close()


def get(url, **headers):
    return urllib.request.urlopen(urllib.request.Request(url, headers=headers))


def test_cross_origin_isolation_headers_on_every_response(site):
    base, _ = site
    for path in ("/", "/_static/pyodide/pyodide.asm.wasm", "/_static/lib.whl"):
        response = get(base + path)
        assert response.headers["Cross-Origin-Opener-Policy"] == "same-origin"
        assert response.headers["Cross-Origin-Embedder-Policy"] == "require-corp"


def test_wasm_is_served_as_wasm_gzipped_and_cached_long(site):
    base, root = site
    response = get(base + "/_static/pyodide/pyodide.asm.wasm", **{"Accept-Encoding": "gzip, br"})
    body = response.read()
    assert response.headers["Content-Type"] == "application/wasm"
    assert response.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(body) == (root / "_static/pyodide/pyodide.asm.wasm").read_bytes()
    assert len(body) < 0.1 * (root / "_static/pyodide/pyodide.asm.wasm").stat().st_size
    assert response.headers["Cache-Control"] == "public, max-age=86400"


def test_plain_when_gzip_is_not_accepted_and_for_zip_archives(site):
    base, root = site
    response = get(base + "/index.html")
    assert response.headers.get("Content-Encoding") is None
    assert response.read() == (root / "index.html").read_bytes()
    assert response.headers["Cache-Control"] == "no-cache"
    whl = get(base + "/_static/lib.whl", **{"Accept-Encoding": "gzip"})
    assert whl.headers.get("Content-Encoding") is None and whl.read().startswith(b"PK")


def test_revalidation_answers_304(site):
    base, _ = site
    first = get(base + "/index.html", **{"Accept-Encoding": "gzip"})
    modified = first.headers["Last-Modified"]
    with pytest.raises(urllib.error.HTTPError) as err:
        get(base + "/index.html", **{"Accept-Encoding": "gzip", "If-Modified-Since": modified})
    assert err.value.code == 304


def test_refuses_a_folder_with_no_built_site(tmp_path):
    with pytest.raises(FileNotFoundError, match="no built site"):
        make_server(tmp_path, port=0)
