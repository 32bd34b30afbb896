"""A real JSON POST endpoint on 127.0.0.1 for testing the HTTP clients (embedder, reranker).

Subclass ScriptedService with the route and a ``respond(payload) -> dict``; tests script failures
(answered first, in order), a delay, or a raw body, and read every request back.
"""

from __future__ import annotations

import json
import threading
import time
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


@contextmanager
def on_localhost(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (a free port) from a daemon thread; yields ``http://127.0.0.1:PORT``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
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
