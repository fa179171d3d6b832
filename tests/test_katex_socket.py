"""The fix for sphinxcontrib-katex's server start: a refused first connection is retried."""

from __future__ import annotations

import sys
import textwrap

import pytest

from pyodide_cells.katex_socket import start_server_process

# A stand-in for node katex-server.js: it creates the socket file (bind), waits,
# and only then listens, the order that made the extension's single connect fail.
SLOW_SERVER = textwrap.dedent("""
    import socket, sys, time
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(sys.argv[1])
    time.sleep(0.4)
    s.listen(1)
    conn, _ = s.accept()
    conn.sendall(b"ok")
    time.sleep(1)
""")


class FakeServer:
    @classmethod
    def build_command(cls, socket):
        return [sys.executable, "-c", SLOW_SERVER, str(socket)]

    @classmethod
    def timeout_error(cls, timeout):
        return TimeoutError(f"no KaTeX server after {timeout} s")


def test_a_server_that_binds_before_it_listens_is_reached(tmp_path):
    process, sock = start_server_process(FakeServer, tmp_path, timeout=10)
    try:
        assert sock.recv(2) == b"ok"
        assert sock.gettimeout() is None  # blocking again, as the extension expects
    finally:
        sock.close()
        process.kill()


def test_a_server_that_never_listens_times_out_and_is_stopped(tmp_path):
    class Silent(FakeServer):
        @classmethod
        def build_command(cls, socket):
            return [sys.executable, "-c", "import time; time.sleep(30)"]

    with pytest.raises(TimeoutError, match="no KaTeX server after 0.5 s"):
        start_server_process(Silent, tmp_path, timeout=0.5)
