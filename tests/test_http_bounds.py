"""Every HTTP client of the project against hostile servers on 127.0.0.1: a call ends at its total
deadline however slowly the server trickles, a gzip bomb or an oversized body stops at the size cap
without growing the process, a normal (plain or gzip) answer still works; and an LM server's
Retry-After cannot hold an LM call for longer than its cap.

What ended a call is read from its error line (the deadline it names, the cap), the requests the server saw
and the waits the client asked for, none of which a busy machine changes; ``HANG_S`` only catches a call
that never ends. ``benchmarks/bench_http_bounds.py`` measures the seconds.
"""

from __future__ import annotations

import json
import resource
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler

import dspy
import pytest
from json_service import Hostile, ScriptedService, gzip_bomb, hostile, on_localhost, serving
from overlap import HANG_S, http_waits, lm_retry_waits

from tracerag.documents.rerankers import HttpReranker, RerankServiceError
from tracerag.embedding.http_embedder import EmbeddingServiceError, HttpEmbedder
from tracerag.lm.failures import reset_lm_guard
from tracerag.programs.guarded_step import Stages
from tracerag.tools.eutils import EUtilsError, PubMedEUtils

CAP = 2**20  # max_bytes in these tests
ESEARCH = {"esearchresult": {"count": "1", "idlist": ["7"]}}
EFETCH = ("<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>7</PMID><Article><ArticleTitle>T</ArticleTitle>"
          "<Abstract><AbstractText>Seven.</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle>"
          "</PubmedArticleSet>")


def answer(path: str) -> bytes:
    if path.endswith("/embeddings"):
        return json.dumps({"data": [{"index": 0, "embedding": [3.0, 4.0]}]}).encode()
    if path.endswith("/rerank"):
        return json.dumps({"results": [{"index": 1, "relevance_score": 0.9},
                                       {"index": 0, "relevance_score": 0.1}]}).encode()
    if "/esearch.fcgi" in path:
        return json.dumps(ESEARCH).encode()
    return EFETCH.encode()


def embed(base, **kw):
    vectors = HttpEmbedder(base + "/v1", "m", backoff=0.0, **kw).embed(["x"])
    return [[round(float(v), 3) for v in row] for row in vectors]


def rerank(base, **kw):
    return HttpReranker(base + "/v1", "m", backoff=0.0, **kw).rerank("q", ["a", "b"])


def search(base, *, max_retries, **kw):
    with PubMedEUtils(base, retries=max_retries, backoff=0.0, min_interval=0, **kw) as client:
        return client.search("x", limit=1)


CLIENTS = {  # name -> (call, error, what a normal answer gives)
    "embedder": (embed, EmbeddingServiceError, [[0.6, 0.8]]),
    "reranker": (rerank, RerankServiceError, [(1, 0.9), (0, 0.1)]),
    "eutils": (search, EUtilsError, (1, [{"id": "7", "text": "Seven.", "title": "T"}])),
}


@pytest.fixture(params=sorted(CLIENTS))
def client(request):
    return CLIENTS[request.param]


@pytest.mark.parametrize("gzip", [False, True])
def test_a_normal_answer_still_works(client, gzip):
    call, _, expected = client
    with hostile(Hostile("normal", answer, gzip=gzip)) as server:
        assert call(server.base_url, timeout=5, max_retries=2, deadline=5, max_bytes=CAP) == expected


@pytest.mark.parametrize("mode", ["trickle", "trickle-headers"])
def test_a_trickling_server_is_cut_at_the_total_deadline(client, mode):
    call, error, _ = client
    with hostile(Hostile(mode, interval=0.5)) as server:
        start = time.monotonic()
        with pytest.raises(error, match=r"no complete answer within the 1.5 s deadline \(1 attempt"):
            call(server.base_url, timeout=5, max_retries=2, deadline=1.5, max_bytes=CAP)
        elapsed = time.monotonic() - start
    # each read waits 0.5 s < timeout, and the trickle never ends: only the deadline ends the call
    assert elapsed < HANG_S, elapsed
    assert len(server.requests) == 1  # the deadline is spent: no retry


def test_a_gzip_bomb_stops_at_the_cap_without_growing_the_process(client):
    call, error, _ = client
    gzip_bomb()  # built (and cached) before measuring
    with hostile(Hostile("bomb")) as server:
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
        tracemalloc.start()
        try:
            with pytest.raises(error, match=rf"answer larger than the {CAP}-byte limit"):
                call(server.base_url, timeout=5, max_retries=2, deadline=10, max_bytes=CAP)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    assert peak < 4 * CAP, peak  # the cap plus bounded decompression steps, not 500 MB
    assert rss_growth < 64 * 1024, rss_growth
    assert len(server.requests) == 1  # too large is not retried


def test_an_oversized_plain_body_is_an_error(client):
    call, error, _ = client
    with hostile(Hostile("oversize", oversize=8 * CAP)) as server:
        with pytest.raises(error, match=rf"answer larger than the {CAP}-byte limit"):
            call(server.base_url, timeout=5, max_retries=2, deadline=10, max_bytes=CAP)
    assert len(server.requests) == 1


def test_error_messages_are_one_line_naming_url_and_limit():
    with hostile(Hostile("oversize")) as server, pytest.raises(EmbeddingServiceError) as info:
        embed(server.base_url, max_bytes=1000)
    url = f"{server.base_url}/v1/embeddings"
    assert str(info.value) == f"POST {url}: answer larger than the 1000-byte limit (max_bytes)"


def test_the_default_deadline_is_every_attempt_at_its_timeout():
    assert HttpEmbedder("http://h/v1", "m", timeout=2, max_retries=3).deadline == 8
    assert HttpReranker("http://h/v1", "m", timeout=2, max_retries=1, deadline=3).deadline == 3
    assert PubMedEUtils("http://h", timeout=2, retries=2).deadline == 6
    with pytest.raises(ValueError, match="must be positive"):
        HttpEmbedder("http://h/v1", "m", max_bytes=0)


class Busy(ScriptedService):
    route = "/v1/embeddings"


def test_retries_stay_within_the_deadline_whatever_retry_after_says(monkeypatch):
    waits = http_waits(monkeypatch)
    with serving(Busy()) as service:
        service.failures = [(503, {"Retry-After": "1000"}, "busy")] * 5
        with pytest.raises(EmbeddingServiceError, match=r"1 s deadline \(1 attempt\(s\).*last: HTTP 503"):
            HttpEmbedder(service.base_url, "m", max_retries=3, deadline=1).embed(["x"])
        assert waits == []  # a wait past the deadline is not started
        assert len(service.requests) == 1


# The LM client: DSPy sleeps whatever Retry-After says; make_lm's LMs wait at most min(timeout, 10 s).

class Overloaded(BaseHTTPRequestHandler):
    hits: list[float] = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        Overloaded.hits.append(time.monotonic())
        body = b'{"error": {"message": "overloaded", "type": "server_error"}}'
        self.send_response(503)
        self.send_header("Retry-After", "1000")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class CountCalls(dspy.utils.BaseCallback):
    def __init__(self):
        self.starts = 0

    def on_lm_start(self, call_id, instance, inputs):
        self.starts += 1


def test_an_lm_retry_after_of_1000_s_is_capped_and_the_stage_falls_back(monkeypatch):
    from tracerag.lm.bounded_lm import make_lm

    reset_lm_guard()
    Overloaded.hits = []
    counter = CountCalls()
    waits = lm_retry_waits(monkeypatch)
    with on_localhost(Overloaded) as address:
        lm = make_lm("openai/stub-model", address + "/v1", "test-key", timeout=1, retries=2, cache=False)
        stages = Stages()
        with dspy.context(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False), callbacks=[counter]):
            assert stages.call("answer", dspy.Predict("question -> answer"), question="hi") is None
    reset_lm_guard()
    assert stages.fallbacks == ["answer"] and "overloaded" in stages.errors[0]
    assert len(Overloaded.hits) == 3  # DSPy retried twice ...
    assert len(waits) == 2 and all(0 < wait <= 1.0 for wait in waits), waits  # ... each wait min(Retry-After,
    assert counter.starts == 1 and stages.calls == 1  # timeout) = 1 s at most, not 1000 s; inside one LM call


def test_clients_share_one_ssl_context_so_each_new_one_costs_no_ca_bundle():
    """Clients are made per endpoint, per program and per LM; each used to load the CA bundle into its own SSL
    context (1-10 MB kept natively: an evaluation whose LM stages answered grew by 115 MB)."""
    import httpx

    from tracerag.http_json import bounded_async_client, bounded_client, deadline_transport, shared_ssl_context
    from tracerag.lm.transport import BoundedTransport

    def anon_kb() -> int:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("RssAnon:"))

    shared_ssl_context(), BoundedTransport(timeout=5)  # the one context, loaded once
    before = anon_kb()
    made = [bounded_client(5) for _ in range(20)] + [BoundedTransport(timeout=5) for _ in range(20)]
    grown_mb = (anon_kb() - before) / 1024
    assert grown_mb < 10, grown_mb  # one CA bundle per client was >= 1.3 MB each: >= 52 MB here
    assert deadline_transport()._pool._ssl_context is shared_ssl_context()
    assert isinstance(bounded_async_client(5), httpx.AsyncClient)
    for client in made:
        getattr(client, "close", lambda: None)()
