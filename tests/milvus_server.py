"""Milvus Lite's engine serving Milvus' gRPC protocol on a free 127.0.0.1 port, reached as
``milvus://127.0.0.1:PORT`` the way users reach a Milvus server (the client path of ``open_store`` for
servers, not the Lite-file path). It exercises the wire protocol and the token, not a Milvus server's own
expression parser, consistency or indexes: ``tests/milvus_standalone.py`` runs the real server for that
(the slow step).

The engine is run as its own process:

- milvus-lite >= 3 (pure Python): the engine's gRPC servicer behind a ``grpc.server`` built here, as
  ``python -m milvus_lite server`` builds it, plus one interceptor that refuses every call whose
  ``authorization`` header is not the token (what a Milvus server with authentication does), so tests
  can check that ``TRACERAG_MILVUS_TOKEN`` reaches the server;
- milvus-lite 2.5 (a C++ binary): the binary started with a TCP address; it checks no token.

Run as a script (``python tests/milvus_server.py DATA_DIR PORT``, token in env ``MILVUS_SERVER_TOKEN``) it
serves until SIGTERM; :func:`milvus_server` starts that script and waits until the port answers.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

TOKEN_ENV = "MILVUS_SERVER_TOKEN"
START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class MilvusServer:
    port: int
    token: str | None  # the token every call must carry; None when the engine checks none
    log: Path

    def uri(self, collection: str | None = None) -> str:
        return f"milvus://127.0.0.1:{self.port}" + (f"?collection={collection}" if collection else "")


def checks_tokens() -> bool:
    """Whether the installed engine can be served with a token check (milvus-lite >= 3)."""
    return importlib.util.find_spec("milvus_lite.adapter") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def milvus_server(data_dir: Path, token: str | None = "tracerag-test-token",
                  timeout: float = START_TIMEOUT_S) -> Iterator[MilvusServer]:
    """Start the engine on a free port over ``data_dir``; yield once its port accepts connections (at most
    ``timeout`` seconds, else fail with its log); stop it (SIGTERM, then SIGKILL) on exit."""
    data_dir.mkdir(parents=True, exist_ok=True)
    token = token if checks_tokens() else None
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV} | ({TOKEN_ENV: token} if token else {})
    log_path = data_dir.parent / f"{data_dir.name}-server.log"
    for _ in range(3):  # the free port may be taken between choosing it and binding it
        port = _free_port()
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([sys.executable, __file__, str(data_dir), str(port)], env=env, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        try:
            if _wait_ready(proc, port, time.monotonic() + timeout, log_path):
                yield MilvusServer(port, token, log_path)
                return
        finally:
            _stop(proc)
    raise AssertionError(f"the Milvus engine did not start on a free port: {log_path.read_text()[-2000:]}")


def _wait_ready(proc: subprocess.Popen, port: int, deadline: float, log_path: Path) -> bool:
    """True once the port accepts connections; False when the process died (e.g. the port was taken)."""
    while True:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            if time.monotonic() > deadline:
                raise AssertionError(f"the Milvus engine did not listen within the time limit: "
                                     f"{log_path.read_text()[-2000:]}") from None
            time.sleep(0.05)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


# ---------------------------------------------------------------------------------------------
# The server process.


def _serve_v3(data_dir: str, port: int, token: str | None) -> None:
    from concurrent import futures

    import grpc
    from milvus_lite.adapter.grpc.servicer import MilvusServicer
    from milvus_lite.db import MilvusLite
    from pymilvus.grpc_gen import milvus_pb2_grpc

    class TokenCheck(grpc.ServerInterceptor):
        """Refuse a call without ``authorization: base64(token)``, as a server with authentication does."""

        def __init__(self, token: str) -> None:
            self.expected = base64.b64encode(token.encode()).decode()

            def refuse(request, context):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "auth check failure, please check the token")

            self.refusal = grpc.unary_unary_rpc_method_handler(refuse)

        def intercept_service(self, continuation, details):
            headers = dict(details.invocation_metadata or ())
            return continuation(details) if headers.get("authorization") == self.expected else self.refusal

    db = MilvusLite(data_dir)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), interceptors=[TokenCheck(token)] if token else [],
                         options=[("grpc.max_receive_message_length", 256 << 20),
                                  ("grpc.max_send_message_length", 256 << 20)])
    milvus_pb2_grpc.add_MilvusServiceServicer_to_server(MilvusServicer(db), server)
    if server.add_insecure_port(f"127.0.0.1:{port}") != port:
        raise SystemExit(f"port {port} is taken")
    server.start()
    print(f"serving {data_dir} on 127.0.0.1:{port}", flush=True)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    stopped.wait()
    server.stop(grace=1).wait()
    db.close()


def _serve_v2(data_dir: str, port: int) -> None:
    from milvus_lite.server import Server

    server = Server(str(Path(data_dir) / "milvus.db"), address=f"127.0.0.1:{port}")
    if not server.init() or not server.start():
        raise SystemExit("the Milvus Lite binary did not start")
    print(f"serving {data_dir} on 127.0.0.1:{port}", flush=True)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    stopped.wait()
    server.stop()


if __name__ == "__main__":
    directory, port_text = sys.argv[1:3]
    if checks_tokens():
        _serve_v3(directory, int(port_text), os.environ.get(TOKEN_ENV))
    else:
        _serve_v2(directory, int(port_text))
