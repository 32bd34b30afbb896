"""``HttpEmbedder.aembed`` and ``HttpReranker.arerank`` against real services on 127.0.0.1: the same rows,
order, retries, bounds and error lines as ``embed``/``rerank``, and many calls at once wait together on
the event loop without a thread each."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest
from json_service import Hostile, hostile
from overlap import Together
from remote_services import RemoteService

from tracerag.documents.rerankers import LocalReranker, RerankServiceError
from tracerag.embedding.embedders import LexicalEmbedder
from tracerag.embedding.http_embedder import EmbeddingServiceError, HttpEmbedder, with_embeddings

TEXTS = [f"text number {i} about statins" for i in range(7)]
DOCS = ["statins lower LDL", "aspirin and bleeding", "statins in diabetes lower LDL cholesterol", "exercise"]


def worker_threads() -> list[str]:
    """The event loop's default-executor threads (``asyncio.to_thread`` workers)."""
    return [t.name for t in threading.enumerate() if t.name.startswith("asyncio_")]


def error_of(call) -> str:
    with pytest.raises((EmbeddingServiceError, RerankServiceError)) as info:
        call()
    return str(info.value)


@pytest.fixture
def service():
    with RemoteService() as svc:
        yield svc


def test_aembed_gives_the_rows_and_requests_of_embed(service):
    embedder = service.embedder(batch_size=3)
    sync = embedder.embed(TEXTS)
    async_ = asyncio.run(embedder.aembed(TEXTS))
    assert async_.dtype == np.float32 and np.array_equal(async_, sync)
    assert service.counts["/v1/embeddings"] == 6  # 3 batches each
    assert asyncio.run(embedder.aembed([])).shape == (0, embedder.dim)


def test_arerank_gives_the_order_and_scores_of_rerank(service):
    reranker = service.reranker()
    for top_n in (None, 2, 0):
        assert asyncio.run(reranker.arerank("statins LDL", DOCS, top_n)) == reranker.rerank("statins LDL", DOCS, top_n)
    assert asyncio.run(reranker.arerank("q", [])) == []


def test_local_reranker_over_a_remote_embedder_awaits_it(service):
    reranker = LocalReranker(service.embedder(), LexicalEmbedder(64))
    before = service.counts["/v1/embeddings"]
    assert asyncio.run(reranker.arerank("statins LDL", DOCS, 3)) == reranker.rerank("statins LDL", DOCS, 3)
    assert service.counts["/v1/embeddings"] - before == 2  # one request each way: the thread reused the rows


def test_retries_then_success_and_the_same_error_lines(service):
    embedder, reranker = service.embedder(max_retries=2), service.reranker(max_retries=2)
    service.failures = [(503, "busy"), (429, "slow down")]
    assert np.array_equal(asyncio.run(embedder.aembed(TEXTS[:2])), embedder.embed(TEXTS[:2]))
    assert service.counts["/v1/embeddings"] == 4  # 2 failures + 1 success, then the sync call
    for status, body in [(400, "bad model"), (200, "not json"), (200, '{"data": []}'), (200, '{"results": [{}]}')]:
        service.failures = [(status, body)]
        sync = error_of(lambda: embedder.embed(["x"]))
        service.failures = [(status, body)]
        assert error_of(lambda: asyncio.run(embedder.aembed(["x"]))) == sync
        service.failures = [(status, body)]
        sync = error_of(lambda: reranker.rerank("q", DOCS))
        service.failures = [(status, body)]
        assert error_of(lambda: asyncio.run(reranker.arerank("q", DOCS))) == sync
    service.down = True
    sync = error_of(lambda: embedder.embed(["x"]))
    assert error_of(lambda: asyncio.run(embedder.aembed(["x"]))) == sync
    assert "answered HTTP 503 after 3 attempt(s)" in sync


def test_connection_refused_is_the_same_error_line():
    embedder = HttpEmbedder("http://127.0.0.1:9/v1", "m", max_retries=1, backoff=0.0, timeout=1.0)
    line = "POST http://127.0.0.1:9/v1/embeddings failed after 2 attempt(s): ConnectError: "
    # the same line up to the transport's own wording ("[Errno 111] Connection refused" / "All connection
    # attempts failed")
    assert error_of(lambda: embedder.embed(["x"])).startswith(line)
    assert error_of(lambda: asyncio.run(embedder.aembed(["x"]))).startswith(line)


def test_the_deadline_cuts_a_trickling_answer():
    with hostile(Hostile("trickle", lambda path: b'{"data": []}' * 50, interval=0.1)) as server:
        embedder = HttpEmbedder(server.base_url, "m", max_retries=0, timeout=5.0, deadline=0.8)
        message = error_of(lambda: asyncio.run(embedder.aembed(["x"])))  # each read is quick: only the deadline
        assert "no complete answer within the 0.8 s deadline (1 attempt(s)" in message  # ends it


def test_many_calls_at_once_wait_together_without_a_thread_each():
    with RemoteService() as service:
        embedder, reranker = service.embedder(), service.reranker()

        async def burst():
            rows = await asyncio.gather(*(embedder.aembed([f"query {i}"]) for i in range(16)),
                                        *(reranker.arerank(f"query {i}", DOCS) for i in range(16)))
            return rows, worker_threads()

        asyncio.run(embedder.aembed(["warm"]))
        all_in = Together(32)  # one gate for both paths: the service answers none until all 32 are in flight
        service.together = {"/v1/embeddings": all_in, "/v1/rerank": all_in}
        rows, threads = asyncio.run(burst())
        assert all_in.met and service.in_flight_max == 32 and threads == []  # together, no worker thread
        assert np.array_equal(rows[3], embedder.embed(["query 3"]))


def test_with_embeddings_awaits_the_rows_and_runs_the_work_in_a_thread(service):
    embedder = service.embedder()

    def search(texts):
        return threading.current_thread().name, embedder.embed(texts)

    name, rows = asyncio.run(with_embeddings(embedder, ["a", "b"], search, ["a", "b"]))
    assert name.startswith("asyncio_") and np.array_equal(rows, embedder.embed(["a", "b"]))
    assert service.counts["/v1/embeddings"] == 2  # the awaited request and the sync check; none from the thread
    _, other = asyncio.run(with_embeddings(embedder, ["a"], search, ["c"]))  # texts not awaited: a request
    assert service.counts["/v1/embeddings"] == 4 and np.array_equal(other, embedder.embed(["c"]))
    _, local = asyncio.run(with_embeddings(LexicalEmbedder(64), ["a"], lambda: ("", LexicalEmbedder(64).embed(["a"]))))
    assert local.shape == (1, 64)


def test_one_async_client_per_running_loop_and_none_kept_for_closed_loops(service):
    embedder = service.embedder()
    for _ in range(3):  # asyncio.run per call, as a script does
        asyncio.run(embedder.aembed(["x"]))
    assert len(embedder._aclients) <= 1

    async def twice():
        await embedder.aembed(["x"])
        await embedder.aembed(["y"])
        return len(embedder._aclients)

    with asyncio.Runner() as runner:
        assert runner.run(twice()) == 1 and runner.run(embedder.aclose()) is None
        assert len(embedder._aclients) == 0


def test_the_cached_remote_embedder_is_awaited_and_fills_the_cache(tmp_path):
    """``--embedder URL`` / ``configure(embedder="http://...")`` wrap the HTTP embedder in the on-disk cache:
    its misses are awaited without a thread each, its hits cost no request, and a local model has no
    async path (its work belongs in a worker thread)."""
    from tracerag.embedding.embedding_cache import CachedEmbedder

    assert CachedEmbedder(LexicalEmbedder(64), tmp_path / "local.sqlite").aembed is None
    with RemoteService() as service:
        cached = CachedEmbedder(service.embedder(), tmp_path / "cache.sqlite")
        asyncio.run(cached.aembed(["warm"]))

        async def burst():
            rows = await asyncio.gather(*(cached.aembed([f"query {i}", "warm"]) for i in range(16)))
            return rows, worker_threads()

        service.together = {"/v1/embeddings": Together(16)}
        rows, threads = asyncio.run(burst())
        assert threads == [] and service.together["/v1/embeddings"].met and service.in_flight_max == 16
        requests = service.counts["/v1/embeddings"]
        again = cached.embed([f"query {i}" for i in range(16)] + ["warm"])  # all cached now: no request
        assert service.counts["/v1/embeddings"] == requests
        assert all(np.array_equal(r, again[[i, 16]]) for i, r in enumerate(rows))
        assert np.array_equal(asyncio.run(cached.aembed([])), np.zeros((0, cached.dim), np.float32))
