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
- gzip for text and WebAssembly when the browser accepts it (the 10 MB
  pyodide.asm.wasm travels as about 3.2 MB); each file is compressed once per
  modification and kept in memory.
"""

from __future__ import annotations

import argparse
import email.utils
import errno
import functools
import gzip
import http.server
import io
import os
import re
import sys
import threading
from pathlib import Path

LONG_CACHE = ("/_static/pyodide/", "/_static/katex/", "/_static/viz/")
# Worth compressing: text and WebAssembly. Zip archives (the stdlib, wheels),
# fonts and images are compressed already.
COMPRESSIBLE = (".html", ".js", ".mjs", ".css", ".json", ".wasm", ".svg", ".py", ".txt", ".map")
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


_gzip_cache: dict[tuple[str, float], bytes] = {}
_gzip_lock = threading.Lock()


def gzipped(path: str) -> bytes:
    """The gzip-compressed bytes of ``path``, computed once per modification time."""
    key = (path, os.stat(path).st_mtime)
    with _gzip_lock:
        if key not in _gzip_cache:
            with open(path, "rb") as f:
                _gzip_cache[key] = gzip.compress(f.read(), compresslevel=6, mtime=0)
        return _gzip_cache[key]


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".whl": "application/zip",
        ".py": "text/plain; charset=utf-8",
    }

    def send_head(self):
        """Serve a compressed copy when the client accepts gzip; else as the stdlib does."""
        path = self.translate_path(self.path)
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and os.path.isfile(path) and path.endswith(COMPRESSIBLE)):
            return super().send_head()
        stat = os.stat(path)
        modified = email.utils.formatdate(stat.st_mtime, usegmt=True)
        if self.headers.get("If-Modified-Since") == modified:
            self.send_response(http.HTTPStatus.NOT_MODIFIED)
            self.end_headers()
            return None
        body = gzipped(path)
        self.send_response(http.HTTPStatus.OK)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", modified)
        self.end_headers()
        return io.BytesIO(body)

    def send_response(self, code, message=None) -> None:
        self.status = int(code)  # end_headers caches only what was found
        super().send_response(code, message)

    def end_headers(self) -> None:
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        found = getattr(self, "status", 0) in (http.HTTPStatus.OK, http.HTTPStatus.NOT_MODIFIED)
        if not found:
            # A 404 kept for a year would outlive the file's coming back (a
            # rebuild in progress, a deploy): errors are asked for again.
            self.send_header("Cache-Control", "no-store")
        elif is_versioned(self.path):
            self.send_header("Cache-Control", "public, max-age=31536000, immutable")
        elif self.path.startswith(LONG_CACHE):
            self.send_header("Cache-Control", "public, max-age=86400")
        else:
            self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        if getattr(self.server, "quiet", False):
            return
        super().log_message(format, *args)


def make_server(root: str | Path, port: int = 8000, host: str = "127.0.0.1", quiet: bool = False):
    """Return a ThreadingHTTPServer serving ``root``; ``port=0`` picks a free port.

    Raises FileNotFoundError if ``root`` has no index.html (the site is not built).
    """
    root = Path(root)
    if not (root / "index.html").is_file():
        raise FileNotFoundError(f"no built site at {root} (index.html missing); build it first")
    handler = functools.partial(SiteHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer((host, port), handler)
    server.quiet = quiet  # type: ignore[attr-defined]
    return server


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
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            print(f"error: port {args.port} on {args.host} is in use (another server?): "
                  f"pass another, e.g. --port {args.port + 1} (nox -s serve -- {args.port + 1})", file=sys.stderr)
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
