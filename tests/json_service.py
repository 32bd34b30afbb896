"""A real JSON POST endpoint on 127.0.0.1 for testing the HTTP clients (embedder, reranker).

Subclass ScriptedService with the route and a ``respond(payload) -> dict``; tests script failures
(answered first, in order), a delay, or a raw body, and read every request back. ``hostile`` serves
the answers a client must survive (a trickled body or header, a gzip bomb, an oversized body).
"""

from __future__ import annotations

import functools
import gzip
import json
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedService:
    route = "/v1/"

    def __init__(self):
        self.requests: list[dict] = []  # {"path", "auth", **payload}
        self.failures: list[tuple[int, dict, str]] = []  # answered (status, headers, body) first, in order
        self.sleep = 0.0
        self.raw_body: str | None = None
        self.base_url = ""

    def respond(self, payload: dict) -> dict:
        raise NotImplementedError


class BurstServer(ThreadingHTTPServer):
    """A thread per request, and a listen backlog that takes a burst of concurrent clients."""

    request_queue_size = 128  # socketserver's 5 would make a burst of clients wait for SYN retries
    daemon_threads = True


@contextmanager
def on_localhost(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (a free port) from a daemon thread; yields ``http://127.0.0.1:PORT``."""
    server = BurstServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serving(state: ScriptedService) -> Iterator[ScriptedService]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body, headers=()):
            data = body.encode()
            self.send_response(status)
            for key, value in dict(headers).items():
                self.send_header(key, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def do_POST(self):
            payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **payload})
            if state.sleep:
                time.sleep(state.sleep)
            if state.failures:
                status, headers, body = state.failures.pop(0)
                return self.answer(status, body, headers)
            if self.path != state.route:
                return self.answer(404, '{"error": "not found"}')
            if state.raw_body is not None:
                return self.answer(200, state.raw_body)
            self.answer(200, json.dumps(state.respond(payload)))

    with on_localhost(Handler) as address:
        state.base_url = f"{address}/v1"
        yield state


# Hostile servers: the same answer to any GET or POST, served in a way that must not hang or blow up a client.

def gzip_bomb(size: int = 500 * 2**20) -> bytes:
    """One gzip member that expands to ``size`` zero bytes (about 1/1000 of it on the wire)."""
    return _gzip_bomb(size)


@functools.lru_cache(maxsize=2)
def _gzip_bomb(size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = bytes(2**20)
    parts = [packer.compress(block) for _ in range(size // len(block))]
    return b"".join([*parts, packer.compress(bytes(size % len(block))), packer.flush()])


class Hostile:
    """How a hostile server answers: ``mode`` is

    - ``"normal"``: ``body(path)`` at once (gzip-encoded when ``gzip``);
    - ``"trickle"``: status and headers at once, then the body one byte every ``interval`` seconds;
    - ``"trickle-headers"``: the status line and headers themselves one byte every ``interval`` seconds;
    - ``"bomb"``: a gzip body expanding to ``bomb_size`` bytes;
    - ``"oversize"``: ``oversize`` plain bytes of valid-looking JSON.
    """

    def __init__(self, mode: str, body=lambda path: b"{}", *, interval: float = 0.5, gzip: bool = False,
                 bomb_size: int = 500 * 2**20, oversize: int = 8 * 2**20):
        self.mode, self.body, self.interval, self.gzip = mode, body, interval, gzip
        self.bomb_size, self.oversize = bomb_size, oversize
        self.requests: list[str] = []  # paths
        self.base_url = ""


@contextmanager
def hostile(state: Hostile) -> Iterator[Hostile]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def head(self, body: bytes, encoding: str | None = None, length: int | None = None) -> bytes:
            lines = ["HTTP/1.1 200 OK", "Content-Type: application/json",
                     f"Content-Length: {len(body) if length is None else length}", "Connection: close"]
            if encoding:
                lines.append(f"Content-Encoding: {encoding}")
            return ("\r\n".join(lines) + "\r\n\r\n").encode()

        def trickle(self, data: bytes) -> None:
            for i in range(len(data)):
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
                time.sleep(state.interval)

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            state.requests.append(self.path)
            self.close_connection = True
            try:
                if state.mode == "normal":
                    body = state.body(self.path)
                    if state.gzip:
                        body = gzip.compress(body)
                    self.wfile.write(self.head(body, "gzip" if state.gzip else None) + body)
                elif state.mode == "trickle":
                    self.wfile.write(self.head(b"", length=10**6))
                    self.wfile.flush()
                    self.trickle(b"[" + b"0," * 10**6)
                elif state.mode == "trickle-headers":
                    self.trickle(self.head(b"{}") + b"{}")
                elif state.mode == "bomb":
                    body = gzip_bomb(state.bomb_size)
                    self.wfile.write(self.head(body, "gzip") + body)
                elif state.mode == "oversize":
                    chunk = b"[" + b"0," * (2**20 // 2 - 1) + b"0]"
                    count = -(-state.oversize // len(chunk))
                    self.wfile.write(self.head(b"", length=count * len(chunk)))
                    for _ in range(count):
                        self.wfile.write(chunk)
                else:
                    raise ValueError(f"unknown mode {state.mode!r}")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up, as it should

        do_GET = do_POST = handle_any

    with on_localhost(Handler) as address:
        state.base_url = address
        yield state
