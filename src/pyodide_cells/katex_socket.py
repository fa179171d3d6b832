"""A fix for sphinxcontrib-katex 0.9.11's prerendering server start (build time only).

sphinxcontrib-katex starts ``node katex-server.js --socket katex.sock``, waits
until the socket file exists and connects once. Node creates the file when it
binds, which can be before it listens: the connection is then refused and the
build fails with ``ConnectionRefusedError`` (2 builds in 13 on a busy 2-core
machine). :func:`start_server_process` connects again until the extension's
own timeout instead, and stops the server if it never answers.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from subprocess import PIPE, Popen


def start_server_process(cls, rundir: Path, timeout: float):
    """Start KaTeX's server and connect to its unix socket, retrying refused connections.

    Returns ``(process, connected socket)``; raises the extension's timeout
    error (``cls.timeout_error``) after ``timeout`` seconds.
    """
    socket_path = Path(rundir) / "katex.sock"
    process = Popen(cls.build_command(socket=socket_path), stdin=PIPE, stdout=PIPE, cwd=rundir)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if socket_path.is_socket():
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.settimeout(max(deadline - time.monotonic(), 0.05))
                sock.connect(str(socket_path))
                sock.settimeout(None)
                return process, sock
            except (TimeoutError, ConnectionRefusedError, FileNotFoundError):
                sock.close()
        time.sleep(0.01)
    process.kill()
    raise cls.timeout_error(timeout)


def install() -> None:
    """Replace sphinxcontrib-katex's server start with :func:`start_server_process`."""
    from sphinxcontrib import katex

    katex.KaTeXServer.start_server_process = classmethod(start_server_process)
