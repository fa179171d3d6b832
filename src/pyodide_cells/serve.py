"""Serve a built site on 127.0.0.1 for learners, tests and benchmarks.

``python -m pyodide_cells.serve build/html --port 8000``

A thin layer over :mod:`http.server` that adds what the runtime wants from a
static host:

- ``Cross-Origin-Opener-Policy: same-origin`` and
  ``Cross-Origin-Embedder-Policy: require-corp``: the page is cross-origin
  isolated, so ``SharedArrayBuffer`` exists and a Stop button can interrupt
  Python through Pyodide's interrupt buffer (hosts that cannot send headers
  fall back to restarting the worker);
- ``application/wasm`` for ``.wasm`` (streaming compilation needs it);
- ``Cache-Control``: a URL with a version in its query (``?v=``: Sphinx adds
  a checksum of the file to its CSS and scripts, and the runtime one to the
  worker, the runner and the wheel) never changes, so browsers keep it a year
  without asking again (``immutable``); the Pyodide core, KaTeX and Graphviz
  folders are cached for a day; everything else, the pages first, revalidates
  (304 when unchanged). Each revalidation is a round trip that a second visit
  would wait on. Errors (a 404 during a rebuild) are never stored;
- Brotli where the browser accepts it and the build wrote a copy beside the
  file (``precompress.py``: the 10 MB pyodide.asm.wasm travels as about
  2.3 MB), else gzip for text and WebAssembly (about 3.2 MB), each file
  compressed once per modification and kept in memory, up to a bound.

:func:`policy` is the one statement of the headers: the server sends it, and
the build writes it as ``_headers`` for static hosts that read that file
(``headers_file``).

It serves the built site and nothing else: no file or folder whose name starts
with a dot (Sphinx's ``.doctrees`` and ``.buildinfo``), no directory listings,
nothing a symbolic link points to outside the site (checked on the file sent,
after ``.html``, ``index.html`` or the ``.br`` copy is chosen), and a 400 for a
path that is not text (``%00``, a lone surrogate). Bursts of requests queue
rather than being refused, up to ``MAX_CONNECTIONS`` served at once (then a
503); a client that stops sending, or trickles bytes, in the middle of a request
is dropped after ``HEADER_DEADLINE``. Every response has a status line and
``ALWAYS`` (nosniff, a Content-Security-Policy), and a ``Host`` that is not an
IP address, ``localhost`` or the server's own name gets a 421 (DNS rebinding).
"""

from __future__ import annotations

import argparse
import email.utils
import errno
import functools
import gzip
import http.server
import io
import ipaddress
import os
import posixpath
import re
import sys
import threading
import time
import urllib.parse
from collections import OrderedDict
from pathlib import Path

LONG_CACHE = ("/_static/pyodide/", "/_static/katex/", "/_static/viz/")
# Worth compressing: text and WebAssembly. Zip archives (the stdlib, wheels),
# fonts and images are compressed already.
COMPRESSIBLE = (".html", ".js", ".mjs", ".css", ".json", ".wasm", ".svg", ".py", ".txt", ".map", ".bin")  # .bin: the start-up snapshot
# One version of a file: a query such as ``?v=7bdb33bb`` (a checksum), a
# digest of 12 or more hex digits in the file's name (``python_stdlib-<key>.zip``,
# myst-nb's ``mystnb.<sha256>.css``), or esbuild's 8-character content hash
# (``chunks/editor-AI747IJY.js``).
_VERSION = re.compile(r"[?&]v=[0-9A-Za-z]+(&|$)|([.-][0-9a-f]{12,}\.[a-z0-9]+|-[2-7A-Z]{8}\.js)(\?|$)")


def is_versioned(url_path: str) -> bool:
    """True when ``url_path`` names one version of a static file: ``/_static/furo.css?v=7bdb33bb``,
    ``/_static/wheels/labs-bytecode-560db9cd8129.zip``, ``/_static/pyodide_cells/chunks/editor-AI747IJY.js``.
    Pages are never versioned, whatever their query: they are what names the versions."""
    return url_path.startswith("/_static/") and bool(_VERSION.search(url_path))


ISOLATION = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
}
# On every response, errors included. nosniff: a file is only ever what its Content-Type says
# (a .py or .txt is never run as a script or a style sheet). The Content-Security-Policy keeps
# to what the site meets as built: no other site may frame it (COOP does not stop framing),
# no <base> may redirect its relative URLs, no plug-ins. It leaves scripts alone: the pages
# have inline scripts (Furo's theme, the runtime's configuration) and Pyodide evaluates code,
# so a script policy would need per-build hashes and 'unsafe-eval'.
ALWAYS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "frame-ancestors 'self'; base-uri 'self'; object-src 'none'",
}
CACHE_FOREVER = "public, max-age=31536000, immutable"
CACHE_A_DAY = "public, max-age=86400"
REVALIDATE = "no-cache"


def policy(url_path: str) -> dict[str, str]:
    """The headers the site wants for a found file at ``url_path`` (query included).

    Cross-origin isolation and ``ALWAYS`` everywhere; ``Cache-Control``: a year, unasked, for
    one version of a file (:func:`is_versioned`), a day for the runtime's
    vendored folders (``LONG_CACHE``), and revalidation for the rest, pages
    first. Errors are never stored (the handler sends ``no-store`` instead).

    >>> policy("/_static/pyodide/pyodide.asm.wasm")["Cache-Control"]
    'public, max-age=86400'
    """
    if is_versioned(url_path):
        cache = CACHE_FOREVER
    elif url_path.startswith(LONG_CACHE):
        cache = CACHE_A_DAY
    else:
        cache = REVALIDATE
    return {**ISOLATION, **ALWAYS, "Cache-Control": cache}


def headers_file(root: str | Path) -> str:
    """The :func:`policy` for the site in ``root``, as the ``_headers`` file that
    Netlify and Cloudflare Pages read.

    Those hosts join the values of a header when several rules match a path,
    so no two rules here set the same header for one file: ``/*`` sets the
    isolation headers and ``ALWAYS``, and the other rules set a ``Cache-Control`` other than
    revalidation (the hosts' default for the rest: ``max-age=0,
    must-revalidate``), one rule per folder whose files all share it
    (``/_static/katex/*``), else one per file (Cloudflare reads at most 100
    rules). URLs versioned by a query (``?v=``) cannot be matched by a rule;
    they revalidate there.
    """
    root = Path(root)
    caches: dict[str, str] = {}  # url -> Cache-Control, for every file the site serves
    for path in root.rglob("*"):
        url = "/" + path.relative_to(root).as_posix()
        # Brotli copies (precompress.py) are this server's way of sending a file, not files of the site.
        if path.is_file() and not path.name.endswith(".br") and not any(part.startswith(".") for part in url.split("/")):
            caches[url] = policy(url)["Cache-Control"]

    rules: list[tuple[str, str]] = []

    def cover(folder: str) -> None:
        inside = {url: cache for url, cache in caches.items() if url.startswith(folder)}
        kinds = set(inside.values())
        if kinds == {REVALIDATE}:
            return
        if len(kinds) == 1 and folder != "/":
            rules.append((folder + "*", kinds.pop()))
            return
        subfolders = sorted({folder + url[len(folder) :].split("/")[0] + "/" for url in inside if "/" in url[len(folder) :]})
        for url, cache in sorted(inside.items()):
            if "/" not in url[len(folder) :] and cache != REVALIDATE:
                rules.append((url, cache))
        for sub in subfolders:
            cover(sub)

    cover("/")
    lines = ["# Written by the build from pyodide_cells.serve.policy: edit that, not this file.", "/*"]
    lines += [f"  {name}: {value}" for name, value in {**ISOLATION, **ALWAYS}.items()]
    for pattern, cache in rules:
        lines += [urllib.parse.quote(pattern, safe="/*"), f"  Cache-Control: {cache}"]
    return "\n".join(lines) + "\n"


class GzipCache:
    """Each file's gzip-compressed bytes, made once per modification and kept
    up to ``limit`` bytes in all (least recently used first out): a rebuilt
    file replaces its old copy instead of adding to it."""

    def __init__(self, limit: int = 256 * 1024 * 1024) -> None:
        self.limit = limit
        self.size = 0
        self.entries: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self.lock = threading.Lock()
        self.compressing: dict[str, threading.Lock] = {}

    def get(self, path: str) -> bytes:
        mtime = os.stat(path).st_mtime
        with self.lock:
            entry = self.entries.get(path)
            if entry and entry[0] == mtime:
                self.entries.move_to_end(path)
                return entry[1]
            compressing = self.compressing.setdefault(path, threading.Lock())
        # One compression per file: requests that arrive meanwhile (a class opening
        # the page at once after a rebuild) wait for it instead of each compressing.
        with compressing:
            with self.lock:
                entry = self.entries.get(path)
                if entry and entry[0] == mtime:
                    return entry[1]
            with open(path, "rb") as f:
                body = gzip.compress(f.read(), compresslevel=6, mtime=0)
            self._keep(path, mtime, body)
        return body

    def _keep(self, path: str, mtime: float, body: bytes) -> None:
        with self.lock:
            old = self.entries.pop(path, None)
            if old:
                self.size -= len(old[1])
            self.entries[path] = (mtime, body)
            self.size += len(body)
            while self.size > self.limit and len(self.entries) > 1:
                _, (_, dropped) = self.entries.popitem(last=False)
                self.size -= len(dropped)


_gzip_cache = GzipCache()


def brotli_copy(path: str) -> str | None:
    """The Brotli copy the build wrote beside ``path`` (``precompress.py``), if it is newer
    than the file; else None (a file rebuilt since is sent gzipped, never stale)."""
    copy = path + ".br"
    try:
        return copy if os.stat(copy).st_mtime >= os.stat(path).st_mtime else None
    except OSError:
        return None


def accepts_gzip(header: str, coding: str = "gzip") -> bool:
    """True when an ``Accept-Encoding`` header accepts ``coding`` (by name or ``*``, with a q above 0).

    >>> accepts_gzip("gzip, br"), accepts_gzip("gzip;q=0"), accepts_gzip("nogzip"), accepts_gzip("*;q=0.5")
    (True, False, False, True)
    >>> accepts_gzip("gzip, deflate, br, zstd", "br"), accepts_gzip("gzip", "br")
    (True, False)
    """
    for item in header.split(","):
        name, _, params = item.strip().partition(";")
        if name.strip().lower() not in (coding, "*"):
            continue
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        return q > 0
    return False


def not_modified_since(header: str | None, mtime: float) -> bool:
    """True when the file (modified at ``mtime``) has not changed since the ``If-Modified-Since`` date."""
    if not header:
        return False
    try:
        since = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError, IndexError):
        return False
    return since is not None and since.timestamp() >= int(mtime)


class _Deadline:
    """The request's input, read against a deadline: each read waits only for the time left."""

    def __init__(self, raw, handler: SiteHandler) -> None:
        self.raw, self.handler = raw, handler

    def _wait(self) -> None:
        left = self.handler.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request's line and headers took longer than the server's timeout")
        self.handler.connection.settimeout(left)

    def readline(self, limit: int = -1) -> bytes:
        # Byte by byte as they come, not the buffered reader's readline: that waits on each
        # receive with the timeout set once, so a client sending a byte a second inside one
        # header line was never dropped.
        line = bytearray()
        while limit < 0 or len(line) < limit:
            self._wait()
            chunk = self.raw.peek(1)  # what is buffered, or one receive, waiting at most the time left
            if not chunk:
                break  # the client closed the connection
            want = len(chunk) if limit < 0 else min(len(chunk), limit - len(line))
            end = chunk.find(b"\n", 0, want)
            line += self.raw.read(end + 1 if end >= 0 else want)
            if end >= 0:
                break
        return bytes(line)

    def read(self, n: int = -1) -> bytes:
        self._wait()
        return self.raw.read(n)

    def __getattr__(self, name: str):
        return getattr(self.raw, name)


# Seconds a request's line and headers may take to arrive, all together, once its first byte
# has: a client that trickles one header line, or one byte of a line, every few seconds is
# dropped too.
HEADER_DEADLINE = 30.0
# Seconds a connection may wait for a request's first byte: a browser opens connections ahead
# of need and keeps them between requests; closing them sooner than it drops them makes it send
# a request on a closed socket.
IDLE_TIMEOUT = 120.0
# Connections served at once (one thread each). A browser opens at most 6 to a host per
# profile, so this is a classroom behind one address; past it, new connections wait in the
# listen backlog for up to QUEUE_WAIT seconds, then get a 503.
MAX_CONNECTIONS = 512
QUEUE_WAIT = 5.0


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    timeout = HEADER_DEADLINE
    idle_timeout = IDLE_TIMEOUT
    deadline = 0.0
    # A request line that fails to parse is answered as HTTP/1.0, with a status line and the
    # headers (the stdlib's default, HTTP/0.9, sends a bare page: `GET / HTTP/2.0` got one).
    default_request_version = "HTTP/1.0"
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".whl": "application/zip",
        ".py": "text/plain; charset=utf-8",
    }

    def setup(self) -> None:
        super().setup()
        self.rfile = _Deadline(self.rfile, self)

    def handle_one_request(self) -> None:
        self.deadline = time.monotonic() + self.idle_timeout
        try:
            self.connection.settimeout(self.idle_timeout)
            if not self.rfile.raw.peek(1):  # the client closed the connection
                self.close_connection = True
                return
        except (TimeoutError, ConnectionError):
            self.close_connection = True
            return
        self.deadline = time.monotonic() + self.timeout
        super().handle_one_request()

    def refused(self) -> int | None:
        """Why the request's path is not served (400, 404), or None when it may be (send_head then
        checks where the file it serves really is)."""
        raw = self.path.split("?", 1)[0].split("#", 1)[0]
        try:
            text = urllib.parse.unquote(raw, errors="strict")
            text.encode("utf-8")
        except UnicodeError:  # bytes that are not UTF-8, or a lone surrogate (%ED%A0%80)
            return http.HTTPStatus.BAD_REQUEST
        if "\0" in text:
            return http.HTTPStatus.BAD_REQUEST
        if any(part.startswith(".") for part in posixpath.normpath(text).split("/")):
            return http.HTTPStatus.NOT_FOUND  # .doctrees, .buildinfo: the build's, not the site's
        return None

    def list_directory(self, path):
        """No listings: a folder without index.html is not a page."""
        self.send_error(http.HTTPStatus.NOT_FOUND, "File not found")
        return None

    def inside(self, path: str) -> bool:
        """True when ``path``, every symbolic link followed, is in the site's folder."""
        root = os.path.realpath(self.directory)
        real = os.path.realpath(path)
        return real == root or real.startswith(root + os.sep)

    def host_refused(self) -> bool:
        """True when the request names a host this server is not: a page of another site whose
        name was made to resolve to 127.0.0.1 (DNS rebinding) must not read the guide through
        the learner's browser. Accepted: an IP address, ``localhost`` and the name the server was
        started with, at the server's port. A request without ``Host`` (HTTP/1.0 tools) is served:
        browsers always send one."""
        host = self.headers.get("Host")
        if host is None:
            return False
        host = host.strip()
        if host.startswith("["):  # [::1]:8000
            name, _, rest = host[1:].partition("]")
            given = rest[1:] if rest.startswith(":") else ""
        elif host.count(":") == 1:
            name, given = host.split(":")
        else:
            name, given = host, ""
        if (given or "80") != str(self.server.server_address[1]):
            return True
        name = name.lower()
        try:
            ipaddress.ip_address(name)
            return False
        except ValueError:
            return name not in ("localhost", str(getattr(self.server, "host_name", "localhost")).lower())

    def send_head(self):
        """Serve the file the request names (a folder's index.html, a page's .html), a compressed
        copy when the client accepts one, after checking where the file really is."""
        self.connection.settimeout(self.timeout)  # the request is in: the response gets the whole timeout per write
        if self.host_refused():
            self.send_error(http.HTTPStatus.MISDIRECTED_REQUEST, "This server answers for 127.0.0.1 and localhost only")
            return None
        refused = self.refused()
        if refused:
            self.send_error(refused)
            return None
        url = self.path.split("?", 1)[0].split("#", 1)[0]
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            if not url.endswith("/"):
                return super().send_head()  # the stdlib's redirect to the folder's URL with a slash
            path = os.path.join(path, "index.html")  # a folder's page, gzipped like any page
        elif not os.path.exists(path) and os.path.isfile(path + ".html"):
            path += ".html"  # /micrograd is /micrograd.html, as static hosts and the service worker have it
            self.path = url + ".html"
        # Where the file really is, checked on the path that is served, after every substitution
        # above: a link named leak.html, or a folder's index.html that is a link, is a way out too.
        if not os.path.isfile(path) or not self.inside(path):
            self.send_error(http.HTTPStatus.NOT_FOUND, "File not found")
            return None
        accept = self.headers.get("Accept-Encoding", "")
        coding = brotli_copy(path) if accepts_gzip(accept, "br") else None
        if coding is not None and not self.inside(coding):
            coding = None  # a link out of the site named like a copy is no copy of the build's
        gzipped = coding is None and accepts_gzip(accept) and path.endswith(COMPRESSIBLE)
        try:
            # The body is a file, streamed by copyfile in bounded reads (shutil's buffer), never
            # read whole: 150 slow clients of the 2.3 MB Brotli wasm held 310 MB when it was.
            body = open(coding or path, "rb")
        except OSError:
            self.send_error(http.HTTPStatus.NOT_FOUND, "File not found")
            return None
        try:
            stat = os.stat(path)
            if not_modified_since(self.headers.get("If-Modified-Since"), stat.st_mtime):
                body.close()
                self.send_response(http.HTTPStatus.NOT_MODIFIED)
                self.end_headers()
                return None
            if gzipped:
                body.close()
                body = io.BytesIO(_gzip_cache.get(path))  # kept in memory within the cache's bound
            length = body.getbuffer().nbytes if isinstance(body, io.BytesIO) else os.fstat(body.fileno()).st_size
            self.send_response(http.HTTPStatus.OK)
            self.send_header("Content-Type", self.guess_type(path))
            if coding is not None or gzipped:
                self.send_header("Content-Encoding", "br" if coding is not None else "gzip")
            if coding is not None or path.endswith(COMPRESSIBLE):
                self.send_header("Vary", "Accept-Encoding")
            self.send_header("Content-Length", str(length))
            self.send_header("Last-Modified", email.utils.formatdate(stat.st_mtime, usegmt=True))
            self.end_headers()
            return body
        except BaseException:
            body.close()
            raise

    def send_response(self, code, message=None) -> None:
        self.status = int(code)  # end_headers caches only what was found
        super().send_response(code, message)

    def end_headers(self) -> None:
        # send_error for a malformed request line comes before the stdlib sets self.path.
        headers = policy(getattr(self, "path", "/"))
        if getattr(self, "status", 0) not in (http.HTTPStatus.OK, http.HTTPStatus.NOT_MODIFIED):
            # A 404 kept for a year would outlive the file's coming back (a
            # rebuild in progress, a deploy): errors are asked for again.
            headers["Cache-Control"] = "no-store"
        for name, value in headers.items():
            self.send_header(name, value)
        super().end_headers()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        if getattr(self.server, "quiet", False):
            return
        super().log_message(format, *args)


def make_server(
    root: str | Path,
    port: int = 8000,
    host: str = "127.0.0.1",
    quiet: bool = False,
    timeout: float | None = None,
    idle_timeout: float | None = None,
):
    """Return a ThreadingHTTPServer serving ``root``; ``port=0`` picks a free port.
    ``timeout``: seconds a request's line and headers may take once begun (``HEADER_DEADLINE``);
    ``idle_timeout``: seconds a connection may wait for a request to begin (``IDLE_TIMEOUT``).
    At most ``MAX_CONNECTIONS`` are served at once (read when the server is made).

    Raises FileNotFoundError if ``root`` has no index.html (the site is not built).
    """
    root = Path(root)
    if not (root / "index.html").is_file():
        raise FileNotFoundError(f"no built site at {root} (index.html missing); build it first")
    handler = functools.partial(
        type(
            "Handler",
            (SiteHandler,),
            {
                "timeout": HEADER_DEADLINE if timeout is None else timeout,
                "idle_timeout": IDLE_TIMEOUT if idle_timeout is None else idle_timeout,
            },
        ),
        directory=str(root),
    )
    server = SiteServer((host, port), handler)
    server.quiet = quiet  # type: ignore[attr-defined]
    server.host_name = host  # type: ignore[attr-defined]
    return server


# What a connection past MAX_CONNECTIONS gets: a status line and headers, not a reset.
BUSY = (
    "HTTP/1.0 503 Service Unavailable\r\n"
    + "".join(f"{name}: {value}\r\n" for name, value in {**ISOLATION, **ALWAYS}.items())
    + "Cache-Control: no-store\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
).encode()


class SiteServer(http.server.ThreadingHTTPServer):
    # socketserver's listen backlog is 5: a page's burst of requests (or many
    # learners at once) overflowed it and requests went unanswered.
    request_queue_size = 1024
    daemon_threads = True

    def __init__(self, *args, **kwargs) -> None:
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.queue_wait = QUEUE_WAIT
        super().__init__(*args, **kwargs)

    def process_request(self, request, client_address) -> None:
        # The accept loop waits here for a free slot, so a burst stays queued in the backlog
        # and is served in turn; a server still full after queue_wait says so.
        if not self.slots.acquire(timeout=self.queue_wait):
            self.refuse(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def refuse(self, request) -> None:
        """Answer 503 to a connection past the cap, without blocking the accept loop."""
        try:
            request.setblocking(False)
            request.sendall(BUSY)  # a few hundred bytes: a new socket's send buffer holds them
            while request.recv(65536):  # what the client sent, so closing does not reset the connection
                pass
        except OSError:
            pass
        self.shutdown_request(request)

    def handle_error(self, request, client_address) -> None:
        """A client that went away (a closed tab, a cancelled download) is not an error worth a traceback."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def port_number(text: str) -> int:
    """argparse type: a TCP port, 0-65535 (0 picks a free one)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (expected 0-65535)") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is out of range (expected 0-65535)")
    return port


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default="build/html")
    parser.add_argument("--port", type=port_number, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    try:
        server = make_server(args.root, args.port, args.host)
    except FileNotFoundError as err:  # no built site there
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            print(
                f"error: port {args.port} on {args.host} is in use (another server?): "
                f"pass another, e.g. --port {args.port + 1} (nox -s serve -- {args.port + 1})",
                file=sys.stderr,
            )
        else:  # an unknown host name, an address this machine does not have
            print(f"error: cannot serve on {args.host}:{args.port}: {err.strerror or err}", file=sys.stderr)
        return 2
    print(f"Serving {args.root} at http://{args.host}:{server.server_address[1]}/  (Ctrl+C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
