"""The local server: headers the runtime needs, gzip, caching."""

from __future__ import annotations

import gzip
import urllib.error
import urllib.request

import pytest

from pyodide_cells.serve import is_versioned, make_server
from tests.background import serve_in_background


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
    serve_in_background(server)
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


# ------------------------------------------------------------- hardening


def status_of(base, path):
    """The status the server answers for a raw request path (urllib would re-quote it)."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    conn.putrequest("GET", path, skip_accept_encoding=True)
    conn.endheaders()
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status, response.headers


def test_the_builds_own_files_are_not_served(site):
    base, root = site
    (root / ".buildinfo").write_text("config: abc")
    (root / ".doctrees").mkdir()
    (root / ".doctrees" / "environment.pickle").write_bytes(b"/home/me/project")
    for path in ("/.buildinfo", "/.doctrees/environment.pickle", "/_static/../.buildinfo", "/%2Ebuildinfo"):
        assert status_of(base, path)[0] == 404, path
    assert status_of(base, "/index.html")[0] == 200


def test_folders_are_not_listed(site):
    base, _ = site
    status, headers = status_of(base, "/_static/")
    assert status == 404 and headers["Cache-Control"] == "no-store"
    assert status_of(base, "/")[0] == 200  # a folder with index.html is its page


@pytest.mark.parametrize("path", ["/%00", "/index.html%00", "/%ED%A0%80", "/%FF"])
def test_a_path_that_is_not_text_is_a_400_not_a_dropped_connection(site, path, capfd):
    base, _ = site
    assert status_of(base, path)[0] == 400
    assert "Traceback" not in capfd.readouterr().err


def test_a_symbolic_link_out_of_the_site_is_not_followed(site, tmp_path_factory):
    base, root = site
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("secret")
    (root / "_static" / "out").symlink_to(outside, target_is_directory=True)
    (root / "_static" / "secret.txt").symlink_to(outside / "secret.txt")
    assert status_of(base, "/_static/out/secret.txt")[0] == 404
    assert status_of(base, "/_static/secret.txt")[0] == 404


def test_the_gzip_cache_keeps_one_copy_per_file_and_stays_under_its_bound(tmp_path):
    import os

    from pyodide_cells.serve import GzipCache

    cache = GzipCache(limit=30_000)
    path = tmp_path / "a.wasm"
    for version in range(20):  # 20 rebuilds of one file
        path.write_bytes(os.urandom(10_000))
        os.utime(path, (version, version))
        assert gzip.decompress(cache.get(str(path))) == path.read_bytes()
    assert len(cache.entries) == 1 and cache.size < 11_000
    for name in "bcdef":  # more files than the bound holds: the least recently used go
        (tmp_path / name).write_bytes(os.urandom(10_000))
        cache.get(str(tmp_path / name))
    assert cache.size <= 30_000 and list(cache.entries)[-1].endswith("f")


def test_three_hundred_requests_at_once_are_queued_and_all_answered(site):
    """Connections wait in the listen backlog while the server is busy: 300
    arrive before it accepts any (socketserver's default backlog of 5 let
    about 6 in and dropped the others' SYNs)."""
    import concurrent.futures
    import socket

    _, root = site
    server = make_server(root, port=0, quiet=True)  # not accepting yet
    address = server.server_address
    want = (root / "_static/pyodide/pyodide.asm.wasm").read_bytes()

    def connect(_):
        sock = socket.create_connection(address, timeout=3)
        sock.sendall(b"GET /_static/pyodide/pyodide.asm.wasm HTTP/1.0\r\n\r\n")
        return sock

    with concurrent.futures.ThreadPoolExecutor(max_workers=300) as pool:
        socks = list(pool.map(connect, range(300)))  # raises TimeoutError for a dropped connection
    serve_in_background(server)
    try:

        def answer(sock):
            with sock, sock.makefile("rb") as f:
                sock.settimeout(60)
                return f.read()

        with concurrent.futures.ThreadPoolExecutor(max_workers=300) as pool:
            replies = list(pool.map(answer, socks))
        assert all(reply.startswith(b"HTTP/1.0 200") and reply.endswith(want) for reply in replies)
    finally:
        server.shutdown()
        server.server_close()


def test_a_client_that_stops_mid_request_is_dropped_after_the_timeout(site):
    import socket

    _, root = site
    server = make_server(root, port=0, quiet=True, timeout=0.5)
    serve_in_background(server)
    try:
        with socket.create_connection(server.server_address, timeout=10) as sock:
            sock.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
            assert sock.recv(100) == b""  # closed by the server (recv would block past 10 s otherwise)
        base = f"http://127.0.0.1:{server.server_address[1]}"
        assert get(base + "/index.html").status == 200
    finally:
        server.shutdown()
        server.server_close()


def parse_headers_file(text: str) -> dict[str, dict[str, str]]:
    rules: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if not line.startswith(" "):
            assert line not in rules, f"two rules for {line}"
            current = rules.setdefault(line, {})
        else:
            name, value = line.strip().split(": ", 1)
            current[name] = value
    return rules


def hosts_headers(rules: dict[str, dict[str, str]], url: str) -> dict[str, list[str]]:
    """What a host that reads _headers sends for ``url``: every matching rule's headers, joined."""
    sent: dict[str, list[str]] = {}
    for pattern, headers in rules.items():
        if pattern == url or (pattern.endswith("*") and url.startswith(pattern[:-1])):
            for name, value in headers.items():
                sent.setdefault(name, []).append(value)
    return sent


def test_the_headers_file_states_the_servers_policy_for_every_file(site):
    from pyodide_cells.serve import headers_file, policy

    _, root = site
    (root / "_static" / "katex").mkdir()
    for name in ("a.woff2", "b.woff2"):
        (root / "_static" / "katex" / name).write_bytes(b"w")
    (root / "_static" / "pyodide" / "python_stdlib-0123456789ab.zip").write_bytes(b"PK")
    rules = parse_headers_file(headers_file(root))
    assert "/_static/katex/*" in rules  # a folder of one policy is one rule
    for path in root.rglob("*"):
        if path.is_file():
            url = "/" + path.relative_to(root).as_posix()
            want = policy(url)
            sent = hosts_headers(rules, url)
            assert sent.pop("Cache-Control", ["no-cache"]) == [want.pop("Cache-Control")], url  # one value, the server's
            assert sent == {name: [value] for name, value in want.items()}, url


@pytest.mark.parametrize(
    ("request_line", "status"),
    [
        (b"GARBAGE", 400),
        (b"GET", 400),
        (b"GET / HTTP/9.9", 505),
        (b"GET / HTTP/1.1 extra", 400),
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1", 414),
    ],
)
def test_a_malformed_request_gets_an_error_status_not_a_dropped_connection(site, request_line, status, capfd):
    import socket
    from urllib.parse import urlsplit

    base, _ = site
    parts = urlsplit(base)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request_line + b"\r\n\r\n")
        reply = sock.makefile("rb").read()
    # An answer, not a closed connection.
    assert f"Error code: {status}".encode() in reply
    assert "Traceback" not in capfd.readouterr().err


def test_requests_that_arrive_together_share_one_compression(tmp_path, monkeypatch):
    import concurrent.futures

    from pyodide_cells import serve

    calls = []
    real = gzip.compress
    monkeypatch.setattr(serve.gzip, "compress", lambda data, **kw: calls.append(len(data)) or real(data, **kw))
    cache = serve.GzipCache()
    path = tmp_path / "big.wasm"
    path.write_bytes(bytes(range(256)) * 40_000)
    with concurrent.futures.ThreadPoolExecutor(max_workers=50) as pool:
        bodies = set(pool.map(lambda _: cache.get(str(path)), range(50)))
    assert len(bodies) == 1 and calls == [path.stat().st_size]


def test_a_folder_page_and_an_extensionless_page_are_served_as_their_html_files(site):
    base, root = site
    response = get(base + "/", **{"Accept-Encoding": "gzip"})
    assert response.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(response.read()) == (root / "index.html").read_bytes()
    (root / "micrograd.html").write_text("<!doctype html><title>lab</title>")
    assert get(base + "/micrograd").read() == b"<!doctype html><title>lab</title>"


def test_gzip_only_when_accepted_and_dates_compare_as_dates(site):
    base, root = site
    assert get(base + "/index.html", **{"Accept-Encoding": "gzip;q=0"}).headers.get("Content-Encoding") is None
    later = "Fri, 01 Jan 2100 00:00:00 GMT"
    with pytest.raises(urllib.error.HTTPError) as not_modified:
        get(base + "/index.html", **{"Accept-Encoding": "gzip", "If-Modified-Since": later})
    assert not_modified.value.code == 304


def test_the_server_needs_the_standard_library_only(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    src = Path(__file__).resolve().parent.parent / "src"
    proc = subprocess.run(
        [sys.executable, "-S", "-m", "pyodide_cells.serve", str(tmp_path)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(src)},
        timeout=60,
    )
    # No Sphinx on the path (-S), and no warning about the module being imported twice.
    assert proc.returncode == 2 and proc.stderr.strip() == f"error: no built site at {tmp_path} (index.html missing); build it first"


def test_a_client_that_trickles_its_headers_is_dropped_after_the_timeout(site):
    """The timeout bounds the whole request line and headers, not each line: one header every
    0.3 s, with a timeout of 1 s, is dropped after about 1 s (it held its thread forever)."""
    import socket
    import time

    _, root = site
    server = make_server(root, port=0, quiet=True, timeout=1.0)
    serve_in_background(server)
    try:
        with socket.create_connection(server.server_address, timeout=10) as sock:
            sock.sendall(b"GET /index.html HTTP/1.1\r\n")
            started = time.monotonic()
            closed = False
            for n in range(30):  # 9 s of trickling, if nobody stops it
                try:
                    sock.sendall(f"X-Trickle-{n}: 1\r\n".encode())
                except OSError:  # the server closed the connection
                    closed = True
                    break
                sock.settimeout(0.3)
                try:
                    if sock.recv(100) == b"":
                        closed = True
                        break
                except TimeoutError:
                    pass
            assert closed and time.monotonic() - started < 4
    finally:
        server.shutdown()
        server.server_close()


def test_an_idle_connection_waits_longer_than_a_stalled_request(site):
    """A connection opened ahead of need (a browser's preconnect) is kept for idle_timeout; one
    whose request has begun and stalls is dropped after timeout."""
    import socket
    import time

    _, root = site
    server = make_server(root, port=0, quiet=True, timeout=0.5, idle_timeout=3.0)
    serve_in_background(server)
    try:
        with socket.create_connection(server.server_address, timeout=10) as idle:
            # Wait for the server to close it: past `timeout` (0.5 s) it still has not.
            idle.settimeout(1.0)
            with pytest.raises(TimeoutError):
                idle.recv(100)  # b"" had it been closed
            idle.settimeout(10)
            idle.sendall(b"GET /index.html HTTP/1.0\r\n\r\n")
            assert idle.makefile("rb").read().startswith(b"HTTP/1.0 200")
        with socket.create_connection(server.server_address, timeout=10) as idle:
            started = time.monotonic()
            assert idle.recv(100) == b""  # nothing sent: closed after idle_timeout
            assert 2.5 < time.monotonic() - started < 6
    finally:
        server.shutdown()
        server.server_close()


def test_a_brotli_copy_beside_the_file_is_sent_where_br_is_accepted_and_only_while_fresh(site):
    import os

    base, root = site
    wasm = root / "_static/pyodide/pyodide.asm.wasm"
    copy = wasm.with_name(wasm.name + ".br")
    copy.write_bytes(b"brotli bytes")  # the server sends the copy as it is: it never decodes it
    response = get(base + "/_static/pyodide/pyodide.asm.wasm", **{"Accept-Encoding": "gzip, deflate, br, zstd"})
    assert response.headers["Content-Encoding"] == "br" and response.read() == b"brotli bytes"
    assert response.headers["Content-Type"] == "application/wasm" and response.headers["Vary"] == "Accept-Encoding"
    assert response.headers["Cache-Control"] == "public, max-age=86400"  # the file's policy, not the copy's
    for accept in ("gzip", "gzip, br;q=0"):
        assert get(base + "/_static/pyodide/pyodide.asm.wasm", **{"Accept-Encoding": accept}).headers["Content-Encoding"] == "gzip"
    # A file rebuilt after its copy was made is never answered with the old copy.
    stat = wasm.stat()
    os.utime(copy, (stat.st_atime, stat.st_mtime - 10))
    response = get(base + "/_static/pyodide/pyodide.asm.wasm", **{"Accept-Encoding": "gzip, br"})
    assert response.headers["Content-Encoding"] == "gzip" and gzip.decompress(response.read()) == wasm.read_bytes()


# ------------------------------------------------------------- issue 37: nothing leaks


def raw_reply(address, data: bytes, timeout: float = 10) -> bytes:
    """What the server answers to ``data`` sent as is, up to its closing the connection."""
    import socket

    with socket.create_connection(address, timeout=timeout) as sock:
        sock.sendall(data)
        return sock.makefile("rb").read()


def header_block(reply: bytes) -> dict[str, str]:
    head = reply.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    assert head[0].startswith("HTTP/1."), head[0]  # a status line, not a bare page
    return {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in head[1:])}


def test_symbolic_links_out_of_the_site_are_never_served_whatever_the_path_becomes(site, tmp_path_factory):
    """The real path is checked on the file served, after `.html` is added, a folder's index.html is
    taken or a `.br` copy is chosen: each of those was a way out (6 of 22 planted links served)."""
    import os

    base, root = site
    outside = tmp_path_factory.mktemp("outside")
    for name in ("secret.html", "index.html", "secret.txt"):
        (outside / name).write_text("SECRET " + name)
    (root / "leak.html").symlink_to(outside / "secret.html")  # fetched as /leak
    (root / "d").mkdir()
    (root / "d" / "index.html").symlink_to(outside / "secret.html")  # fetched as /d/
    (root / "out").symlink_to(outside, target_is_directory=True)  # a folder link: /out/, /out/secret.txt
    (root / "secret.txt").symlink_to(outside / "secret.txt")
    css = root / "_static" / "app.css"
    (root / "_static" / "app.css.br").symlink_to(outside / "secret.txt")  # the copy of a file of the site
    os.utime(outside / "secret.txt", (css.stat().st_mtime + 10,) * 2)  # newer than the file: a fresh copy
    (root / "alias.html").symlink_to(root / "index.html")  # a link inside the site is served
    (root / "d2").mkdir()
    (root / "d2" / "index.html").symlink_to(root / "index.html")
    cases = [
        ("/leak", ""),
        ("/leak.html", ""),
        ("/d/", ""),
        ("/d/index.html", ""),
        ("/out/", ""),
        ("/out/secret.html", ""),
        ("/out/secret.txt", ""),
        ("/out/index.html", ""),
        ("/secret.txt", ""),
        ("/_static/app.css", "br"),
        ("/_static/app.css", "gzip, br"),
        ("/_static/app.css.br", ""),
    ]
    for path, accept in cases:
        response = get_any(base + path, **({"Accept-Encoding": accept} if accept else {}))
        assert b"SECRET" not in response.body, (path, accept)
        if path != "/_static/app.css":
            assert response.status in (403, 404), (path, accept)
        else:  # the file itself, from inside the site: not the link named like its copy
            assert response.status == 200 and response.headers.get("Content-Encoding") != "br", (path, accept)
    for path in ("/alias", "/alias.html", "/d2/"):
        assert get_any(base + path).body == (root / "index.html").read_bytes(), path


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body


def get_any(url, **headers) -> Answer:
    """The answer, whatever its status (urllib raises for errors); the body as it came."""
    try:
        response = get(url, **headers)
    except urllib.error.HTTPError as err:
        return Answer(err.code, err.headers, err.read())
    return Answer(response.status, response.headers, response.read())


def test_a_client_that_trickles_bytes_inside_a_header_line_is_dropped_while_others_are_served(site):
    """The deadline bounds the request's head byte by byte: one byte every 0.1 s inside one header
    line held a thread for ever (the timeout was set once per line, and each byte renewed it)."""
    import socket
    import time

    _, root = site
    server = make_server(root, port=0, quiet=True, timeout=0.6)
    serve_in_background(server)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with socket.create_connection(server.server_address, timeout=10) as sock:
            sock.sendall(b"GET /index.html HTTP/1.1\r\nX-Slow: ")
            started, closed, served = time.monotonic(), False, False
            while time.monotonic() - started < 3 and not closed:
                try:
                    sock.sendall(b"a")
                    sock.settimeout(0.1)
                    closed = sock.recv(100) == b""
                except TimeoutError:
                    pass
                except OSError:  # reset: the server closed it
                    closed = True
                if not served:  # a normal client meanwhile
                    served = get(base + "/index.html").status == 200
            assert closed and served
            assert time.monotonic() - started < 2  # 0.6 s, and some slack on a busy machine
    finally:
        server.shutdown()
        server.server_close()


def test_connections_past_the_cap_wait_then_get_a_503_with_headers(site, monkeypatch):
    import socket

    from pyodide_cells import serve

    _, root = site
    monkeypatch.setattr(serve, "MAX_CONNECTIONS", 2, raising=False)
    monkeypatch.setattr(serve, "QUEUE_WAIT", 0.3, raising=False)
    server = make_server(root, port=0, quiet=True)
    serve_in_background(server)
    try:
        idle = [socket.create_connection(server.server_address, timeout=10) for _ in range(2)]  # hold both slots
        reply = raw_reply(server.server_address, b"GET /index.html HTTP/1.0\r\n\r\n")
        assert reply.startswith(b"HTTP/1.0 503")
        headers = header_block(reply)
        assert headers["x-content-type-options"] == "nosniff" and headers["cross-origin-embedder-policy"] == "require-corp"
        idle[0].close()  # a slot frees: the next connection is served
        assert raw_reply(server.server_address, b"GET /index.html HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.0 200")
        idle[1].close()
    finally:
        server.shutdown()
        server.server_close()


def test_a_brotli_copy_is_streamed_from_disk_not_read_whole_per_request(site):
    """Four clients that ask for an 8 MB Brotli copy and do not read: the server holds a bounded
    buffer each, not the file (it held 4 x 8 MB; 150 clients of the wasm took 310 MB)."""
    import os
    import socket
    import tracemalloc

    base, root = site
    wasm = root / "_static/pyodide/pyodide.asm.wasm"
    copy = wasm.with_name(wasm.name + ".br")
    copy.write_bytes(os.urandom(8 * 1024 * 1024))
    port = int(base.rsplit(":", 1)[1])
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        clients = []
        for _ in range(4):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.sendall(b"GET /_static/pyodide/pyodide.asm.wasm HTTP/1.0\r\nAccept-Encoding: br\r\n\r\n")
            clients.append(sock)
        # Every handler has begun to answer (a handler that read the copy whole had it in memory
        # by then); each now waits on a socket that takes no more.
        assert [sock.recv(12) for sock in clients] == [b"HTTP/1.0 200"] * 4
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        for sock in clients:
            sock.close()
    assert held < 2 * 1024 * 1024, f"{held / 2**20:.1f} MB held by four slow clients"


MALFORMED = [
    b"GET / HTTP/2.0",
    b"GARBAGE",
    b"GET",
    b"GET / HTTP/9.9",
    b"GET / HTTP/1.1 extra",
    b"GET / FTP/1.0",
    b"GET / HTTP/1",
    b"GET / HTTP/a.b",
    b"POST /",
    b"GET /" + b"a" * 70_000 + b" HTTP/1.1",
    b"GET / HTTP/1.1x",
]


@pytest.mark.parametrize("request_line", MALFORMED, ids=lambda line: line[:20].decode())
def test_a_malformed_request_line_gets_a_status_line_and_every_header(site, request_line):
    base, _ = site
    port = int(base.rsplit(":", 1)[1])
    reply = raw_reply(("127.0.0.1", port), request_line + b"\r\n\r\n")
    headers = header_block(reply)
    assert reply.split(b" ", 2)[1][:1] in (b"4", b"5")
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["cross-origin-opener-policy"] == "same-origin" and headers["cross-origin-embedder-policy"] == "require-corp"


def test_every_response_says_nosniff(site):
    base, root = site
    port = int(base.rsplit(":", 1)[1])
    (root / "_static" / "pyodide" / "pyodide.asm.wasm.br").write_bytes(b"br")
    modified = get(base + "/index.html").headers["Last-Modified"]
    answers = [
        get_any(base + path, **headers)
        for path, headers in [
            ("/", {}),
            ("/index.html", {"Accept-Encoding": "gzip"}),
            ("/_static/pyodide/pyodide.asm.wasm", {"Accept-Encoding": "br"}),
            ("/index.html", {"If-Modified-Since": modified}),
            ("/missing", {}),
            ("/%00", {}),
            ("/", {"Host": "evil.example"}),
        ]
    ]
    assert [answer.status for answer in answers] == [200, 200, 200, 304, 404, 400, 421]
    assert all(answer.headers["X-Content-Type-Options"] == "nosniff" for answer in answers)
    assert all("frame-ancestors 'self'" in answer.headers["Content-Security-Policy"] for answer in answers)
    redirect = raw_reply(("127.0.0.1", port), b"GET /_static HTTP/1.0\r\n\r\n")  # a folder without its slash
    assert redirect.startswith(b"HTTP/1.0 301") and header_block(redirect)["x-content-type-options"] == "nosniff"
    assert raw_reply(("127.0.0.1", port), b"GET /\r\n\r\n").startswith(b"HTTP/1.0 200")  # HTTP/0.9 gets headers too


def test_only_this_servers_own_host_names_are_answered(site):
    """A page of another site whose name resolves to 127.0.0.1 (DNS rebinding) gets a 421, not the guide."""
    base, _ = site
    port = int(base.rsplit(":", 1)[1])
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}"):
        assert get_any(base + "/", Host=host).status == 200, host
    for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}", "127.0.0.1", f"localhost.evil.example:{port}"):
        answer = get_any(base + "/", Host=host)
        assert answer.status == 421 and b"<title>t</title>" not in answer.body, host
