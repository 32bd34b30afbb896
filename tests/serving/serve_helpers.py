"""Start the real service for a test: ``tracerag serve`` in a subprocess on a free 127.0.0.1 port, or a built
app under uvicorn in a thread (for programs a test makes up), and the in-process programs to compare with."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).parents[2]
VOLATILE = {"seconds", "ms", "duration_ms", "duration_s", "timestamp"}  # timings differ between two runs


def until(condition, what: str, seconds: float = 20.0) -> None:
    """Poll ``condition()`` until it is true (a state the test caused, not a guess at a duration); fail the test
    after ``seconds`` (a hang guard)."""
    import pytest

    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {seconds:g}s")
        time.sleep(0.02)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stable(value):
    """``value`` without its timings, for comparing two runs of a program."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


class ServeProcess:
    """``with ServeProcess([...flags], env={...}, log=path) as server: server.url`` — waits for /healthz (200)
    unless ``wait=False``."""

    def __init__(self, flags: list[str], *, env: dict[str, str] | None = None, log: Path, timeout: float = 120.0,
                 wait: bool = True):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        environment = {**os.environ, **(env or {})}
        for key in ("TRACERAG_LM", "TRACERAG_API_BASE", "TRACERAG_API_KEY"):
            environment.pop(key, None)
        self._log_file = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([sys.executable, "-m", "optimize", "serve", "--port", str(self.port), *flags],
                                     cwd=ROOT, env=environment, stdout=self._log_file, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while wait:  # wait=False: the test watches the start itself
            if self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"tracerag serve exited with {self.proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"tracerag serve did not answer within {timeout:g}s:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # uvicorn shuts down gracefully: the agent's tool server is closed too
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log_file.close()

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class ThreadServer:
    """A built ASGI app under a real uvicorn server in a background thread, on a free port, configured as
    ``tracerag serve`` configures it (``limits``: its client limits, default the command's defaults)."""

    def __init__(self, app, limits=None):
        import uvicorn

        from tracerag.serving.slow_clients import uvicorn_config

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn_config(app, host="127.0.0.1", port=self.port, limits=limits,
                                                    log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        return self

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Return once no request is being handled (every request cycle the app started has ended), so what
        the app does after a client goes (a disconnect seen, a log line) has happened."""
        deadline = time.monotonic() + timeout
        while self.server.server_state.tasks:
            if time.monotonic() > deadline:
                raise AssertionError(f"still handling {len(self.server.server_state.tasks)} requests after {timeout} s")
            time.sleep(0.01)

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)
