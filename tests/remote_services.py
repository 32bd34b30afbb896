"""A real embeddings + rerank service on 127.0.0.1 with a set latency, for the remote-client paths of the
programs (``aforward`` awaiting ``aembed``/``arerank``) and their benchmark.

``POST /v1/embeddings`` answers hashed character n-gram vectors (``LexicalEmbedder``: deterministic,
no weights, and meaningful enough to retrieve with); ``POST /v1/rerank`` scores each document by its
lexical cosine to the query. Every answer comes after ``latency`` seconds; ``failures`` (status, body)
are answered first, in order; ``down`` answers 503 to everything. Requests are counted per path, and
``in_flight_max`` is the most requests the service held at once; ``together`` ({path: ``overlap.Together``})
holds a path's first requests until they are all in, which calls made one at a time never achieve. The server
takes a burst of concurrent clients (a listen backlog of 128, a thread per request).
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler

import numpy as np
from json_service import BurstServer
from overlap import Together

from tracerag.documents.rerankers import HttpReranker
from tracerag.embedding.embedders import LexicalEmbedder
from tracerag.embedding.http_embedder import HttpEmbedder

DIM = 256


class RemoteService:
    """``with RemoteService(latency=0.2) as svc: svc.embedder()``, ``svc.reranker()``."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.failures: list[tuple[int, str]] = []
        self.down = False
        self.counts: Counter = Counter()
        self.together: dict[str, Together] = {}
        self.in_flight = self.in_flight_max = 0
        self._lock = threading.Lock()
        self._lexical = LexicalEmbedder(DIM)
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with service._lock:
                    service.counts[self.path] += 1
                    service.in_flight += 1
                    service.in_flight_max = max(service.in_flight_max, service.in_flight)
                try:
                    if self.path in service.together:
                        service.together[self.path].arrive()
                    time.sleep(service.latency)
                    status, body = service._answer(self.path, payload)
                finally:
                    with service._lock:
                        service.in_flight -= 1
                data = body.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._server = BurstServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def embedder(self, **kwargs) -> HttpEmbedder:
        kwargs.setdefault("backoff", 0.0)
        kwargs.setdefault("dim", DIM)
        return HttpEmbedder(self.base_url, "lexical-test", **kwargs)

    def reranker(self, **kwargs) -> HttpReranker:
        kwargs.setdefault("backoff", 0.0)
        return HttpReranker(self.base_url, "lexical-rerank", **kwargs)

    def _answer(self, path: str, payload: dict) -> tuple[int, str]:
        with self._lock:
            failure = self.failures.pop(0) if self.failures else None
        if failure is not None:
            return failure
        if self.down:
            return 503, '{"error": "down"}'
        if path == "/v1/embeddings":
            vectors = self._lexical.embed(payload["input"])
            data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
            return 200, json.dumps({"object": "list", "data": data, "model": payload["model"]})
        if path == "/v1/rerank":
            vectors = self._lexical.embed([payload["query"], *payload["documents"]])
            scores = np.round(vectors[1:] @ vectors[0], 6).tolist()
            results = [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]
            return 200, json.dumps({"results": results[::-1]})  # server order is not trusted
        return 404, '{"error": "not found"}'

    def __enter__(self) -> RemoteService:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
