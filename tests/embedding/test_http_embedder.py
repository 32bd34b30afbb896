import copy
import hashlib
import random

import numpy as np
import pytest
from json_service import ScriptedService, serving
from overlap import HANG_S, http_waits

from tracerag.embedding.http_embedder import EmbeddingServiceError, HttpEmbedder

DIM = 8


def fake_vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()[:DIM]
    return [b - 127.5 for b in digest]


class FakeService(ScriptedService):
    """Deterministic /v1/embeddings (a hash of each text); `shuffle` answers out of order."""

    route = "/v1/embeddings"

    def __init__(self):
        super().__init__()
        self.shuffle = False

    def respond(self, payload):
        data = [{"object": "embedding", "index": i, "embedding": fake_vector(t)}
                for i, t in enumerate(payload["input"])]
        if self.shuffle:
            random.Random(0).shuffle(data)
        return {"object": "list", "data": data, "model": payload["model"]}


@pytest.fixture
def service():
    with serving(FakeService()) as state:
        yield state


def expected(texts):
    v = np.asarray([fake_vector(t) for t in texts], dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def make(service, **kw):
    kw.setdefault("backoff", 0.0)
    return HttpEmbedder(service.base_url, "test-model", **kw)


def test_batching_order_and_normalisation(service):
    texts = [f"text {i}" for i in range(10)]
    service.shuffle = True
    emb = make(service, batch_size=4)
    vecs = emb.embed(texts)
    assert [len(r["input"]) for r in service.requests] == [4, 4, 2]
    assert [t for r in service.requests for t in r["input"]] == texts
    assert vecs.dtype == np.float32 and vecs.shape == (10, DIM)
    np.testing.assert_allclose(vecs, expected(texts), rtol=1e-6)
    assert emb.dim == DIM and len(service.requests) == 3  # discovered, no extra probe


def test_trailing_slash_dim_probe_and_bearer(service):
    emb = HttpEmbedder(service.base_url + "/", "test-model", api_key="sk-test")
    assert emb.id == f"http:test-model@{service.base_url}"
    assert emb.dim == DIM  # one probe request
    assert len(service.requests) == 1
    assert emb.embed([]).shape == (0, DIM)
    assert service.requests[0]["path"] == "/v1/embeddings"
    assert service.requests[0]["auth"] == "Bearer sk-test"
    assert "sk-test" not in repr(emb)
    assert copy.deepcopy(emb) is emb
    assert make(service).embed(["a"]).shape == (1, DIM) and service.requests[-1]["auth"] is None


@pytest.mark.parametrize("status,headers", [(500, {}), (503, {}), (429, {"Retry-After": "0"})])
def test_retries_then_success(service, status, headers):
    service.failures = [(status, headers, '{"error": "busy"}')] * 2
    vecs = make(service, max_retries=2).embed(["hello"])
    np.testing.assert_allclose(vecs, expected(["hello"]), rtol=1e-6)
    assert len(service.requests) == 3


def test_retry_after_is_honoured_over_backoff(service, monkeypatch):
    waits = http_waits(monkeypatch)
    service.failures = [(429, {"Retry-After": "0"}, "slow down")]
    make(service, backoff=5.0).embed(["hello"])
    assert waits == [0.0]  # backoff would wait 5 s; Retry-After says 0


def test_gives_up_after_max_retries(service):
    service.failures = [(500, {}, "boom")] * 5
    with pytest.raises(EmbeddingServiceError, match="HTTP 500.*3 attempt"):
        make(service, max_retries=2).embed(["x"])
    assert len(service.requests) == 3


def test_no_retry_on_401_and_error_message(service):
    service.failures = [(401, {}, '{"error": "invalid api key ' + "x" * 500 + '"}')]
    with pytest.raises(EmbeddingServiceError) as info:
        make(service, api_key="wrong").embed(["x"])
    message = str(info.value)
    assert len(service.requests) == 1
    assert "401" in message and service.base_url + "/embeddings" in message
    assert "invalid api key" in message and "x" * 301 not in message
    assert "wrong" not in message


def test_timeout_is_retried_then_raises(service):
    service.sleep = 5.0  # far past the timeout: only the timeout ends an attempt
    with pytest.raises(EmbeddingServiceError, match="failed after 2 attempt.*Timeout"):
        make(service, timeout=0.1, max_retries=1, deadline=HANG_S).embed(["x"])
    assert len(service.requests) == 2


def test_connection_refused():
    emb = HttpEmbedder("http://127.0.0.1:9/v1", "m", max_retries=1, backoff=0.0)
    with pytest.raises(EmbeddingServiceError, match="127.0.0.1:9/v1/embeddings.*ConnectError"):
        emb.embed(["x"])


@pytest.mark.parametrize(
    "body,what",
    [
        ("not json", "invalid JSON"),
        ('{"object": "list"}', "missing 'data'"),
        ('{"data": [{"index": 0, "embedding": [1, 2]}]}', "expected 2 embeddings"),
        ('{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1}]}', "no 'embedding'"),
        ('{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1]}]}', "inconsistent"),
        ('{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 0, "embedding": [1, 2]}]}', "permutation"),
        ('{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1, "a"]}]}', "non-numeric"),
    ],
)
def test_malformed_responses(service, body, what):
    service.raw_body = body
    with pytest.raises(EmbeddingServiceError, match=what):
        make(service).embed(["a", "b"])
    assert len(service.requests) == 1


def test_declared_dim_mismatch(service):
    with pytest.raises(EmbeddingServiceError, match="differs from expected 16"):
        make(service, dim=16).embed(["a"])
