"""The local server: headers the runtime needs, gzip, caching."""

from __future__ import annotations

import gzip
import threading
import urllib.request

import pytest

from pyodide_cells.serve import is_versioned, make_server


@pytest.fixture
def site(tmp_path):
    (tmp_path / "index.html").write_text("<!doctype html><title>t</title>" + "x" * 5000)
    static = tmp_path / "_static" / "pyodide"
    static.mkdir(parents=True)
    (static / "pyodide.asm.wasm").write_bytes(b"\0asm" + bytes(range(256)) * 400)
    (tmp_path / "_static" / "lib.whl").write_bytes(b"PK" + b"z" * 100)
    (tmp_path / "_static" / "app.css").write_text("body { color: black }")
    (tmp_path / "_static" / "chunks").mkdir()
    (tmp_path / "_static" / "chunks" / "editor-AI747IJY.js").write_text("export const x = 1;")
    (tmp_path / "_static" / "labs-bytecode-560db9cd8129.zip").write_bytes(b"PK" + b"y" * 100)
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


def test_a_port_in_use_is_a_clear_error(site, capsys):
    from pyodide_cells.serve import main

    base, root = site
    port = int(base.rsplit(":", 1)[1])  # the fixture's server holds it
    assert main([str(root), "--port", str(port)]) == 2
    assert f"port {port} on 127.0.0.1 is in use" in capsys.readouterr().err


YEAR_IMMUTABLE = "public, max-age=31536000, immutable"


@pytest.mark.parametrize(
    "path",
    [
        "/_static/app.css?v=7bdb33bb",  # Sphinx's checksum query
        "/_static/chunks/editor-AI747IJY.js",  # esbuild's content hash
        "/_static/labs-bytecode-560db9cd8129.zip",  # the snapshot key in the name
    ],
)
def test_a_versioned_url_is_kept_a_year_without_asking_again(site, path):
    base, _ = site
    response = get(base + path, **{"Accept-Encoding": "gzip"})
    assert response.status == 200 and response.read()
    assert response.headers["Cache-Control"] == YEAR_IMMUTABLE


@pytest.mark.parametrize("path", ["/_static/chunks/editor-GONE2345.js", "/_static/missing.css?v=7bdb33bb", "/_static/pyodide/gone.js"])
def test_a_missing_file_is_never_stored_even_at_a_versioned_url(site, path):
    """A 404 seen during a rebuild must not outlive the file's return (it would, kept a year)."""
    base, _ = site
    with pytest.raises(urllib.error.HTTPError) as err:
        get(base + path)
    assert err.value.code == 404
    assert err.value.headers["Cache-Control"] == "no-store"


def test_the_same_file_without_its_version_revalidates(site):
    base, _ = site
    assert get(base + "/_static/app.css").headers["Cache-Control"] == "no-cache"
    assert get(base + "/_static/app.css?v=").headers["Cache-Control"] == "no-cache"


@pytest.mark.parametrize(
    ("url", "versioned"),
    [
        ("/_static/furo.css?v=7bdb33bb", True),
        ("/_static/pyodide_cells/worker.js?v=f983e2ea", True),
        ("/_static/wheels/ai_systems_labs-0.1.0-py3-none-any.whl?v=0123456789abcdef", True),
        ("/_static/app.js?x=1&v=2", True),
        ("/page.html?v=2", False),  # pages name the versions; they never carry one
        ("/chunks/editor-AI747IJY.js", False),  # outside _static
        ("/_static/mystnb.11b39860a7a0cbfd473a3ad8a317855267ff0bd372690045ca344a6b62be495e.css", True),
        ("/_static/pyodide/python_stdlib-560db9cd8129.zip", True),
        ("/_static/pyodide_cells/chunks/editor-AI747IJY.js", True),
        ("/index.html", False),
        ("/_static/pyodide_cells/worker.js", False),
        ("/_static/x.js?v=", False),
        ("/_static/pyodide_cells/chunks/editor-AI747IJY.js.map", False),
        ("/_static/pyodide/python_stdlib-560db9cd8129-src/json/__init__.py", False),
        ("/_static/NOTICE-LICENSE1.txt", False),
        ("/_static/scripts/furo.js.LICENSE.txt", False),
    ],
)
def test_what_counts_as_a_versioned_url(url, versioned):
    assert is_versioned(url) is versioned


@pytest.mark.parametrize("port", ["99999", "abc"])
def test_a_bad_port_is_a_clear_error(site, port, capsys):
    from pyodide_cells.serve import main

    _, root = site
    with pytest.raises(SystemExit) as err:
        main([str(root), "--port", port])
    assert err.value.code == 2
    assert "expected 0-65535" in capsys.readouterr().err


def test_an_unknown_host_is_a_clear_error(site, capsys):
    from pyodide_cells.serve import main

    _, root = site
    assert main([str(root), "--port", "0", "--host", "nosuchhost.invalid"]) == 2
    assert "cannot serve on nosuchhost.invalid:0" in capsys.readouterr().err
