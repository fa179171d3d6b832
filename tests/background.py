"""The tests' servers, each in a thread of its own: ``serve_in_background(server)``."""

from __future__ import annotations

import threading
from socketserver import BaseServer

# How often a server's loop looks for `shutdown()`: a test's teardown waits up to this long for it.
# The standard library's 0.5 s cost each of the tests that start a server half a second.
POLL_S = 0.02


def serve_in_background(server: BaseServer) -> threading.Thread:
    """Run ``server.serve_forever`` in a daemon thread, started; ``server.shutdown()`` ends it."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_S}, daemon=True)
    thread.start()
    return thread
