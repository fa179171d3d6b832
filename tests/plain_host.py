"""A static host that adds nothing: Python's ``http.server`` on a built site (no COOP/COEP,
no gzip, no cache headers), as GitHub Pages or any plain web server serves it.

Used by the browser tests of plain hosts and by the benchmark harness. ``stop()`` takes the host
away entirely: nothing listens any more, and the connections a browser opened ahead of need are
closed too (else the next request goes through one and is answered).
"""

from __future__ import annotations

import functools
import http.server
import socket
from pathlib import Path

from tests.background import serve_in_background


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - stdlib signature
        pass


class PlainServer(http.server.ThreadingHTTPServer):
    """http.server that keeps the connections it holds open, to close them when stopped."""

    daemon_threads = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.open: set = set()

    def process_request(self, request, client_address) -> None:
        self.open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request) -> None:
        self.open.discard(request)
        super().shutdown_request(request)


class PlainHost:
    """Serve ``root`` on 127.0.0.1 (a free port) until ``stop()``; ``base`` is its URL."""

    def __init__(self, root: Path) -> None:
        self.server: PlainServer | None = PlainServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(root)))
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        serve_in_background(self.server)

    def stop(self) -> None:
        """The host is gone: nothing listens, and the connections the browser opened ahead are closed."""
        server, self.server = self.server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        for sock in list(server.open):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def __enter__(self) -> PlainHost:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
