"""The tool server (`python -m tracerag.tools`) started over streamable HTTP on a free 127.0.0.1 port,
as a remote agent or desktop assistant reaches it; stopped when the test is done."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def http_tool_server(args: list[str], log_dir: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """Yield the server's MCP URL once it accepts connections (its output goes to ``log_dir/server.log``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log_path = log_dir / "server.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen([sys.executable, "-m", "tracerag.tools", "--transport", "http", "--port", str(port),
                                   *args], env=dict(os.environ) if env is None else env, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 60
            while True:
                assert server.poll() is None, log_path.read_text()
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, "the HTTP server did not start"
                    time.sleep(0.1)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.terminate()
            server.wait(10)
