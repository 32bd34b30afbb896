import copy

import pytest
from json_service import ScriptedService, serving
from overlap import HANG_S

from tracerag.documents.rerankers import (
    HttpReranker,
    LocalReranker,
    Reranker,
    RerankServiceError,
    make_reranker,
)
from tracerag.embedding.embedders import LexicalEmbedder


def overlap(query: str, doc: str) -> float:
    """The fake cross-encoder: shared lowercase words, normalised; deterministic and easy to predict."""
    q, d = set(query.lower().split()), set(doc.lower().split())
    return len(q & d) / (len(q) or 1)


class FakeService(ScriptedService):
    """Deterministic /v1/rerank scoring by word overlap."""

    route = "/v1/rerank"

    def __init__(self):
        super().__init__()
        self.score_key = "relevance_score"
        self.reverse_order = False

    def respond(self, payload):
        scored = [(i, overlap(payload["query"], d)) for i, d in enumerate(payload["documents"])]
        scored.sort(key=lambda p: (-p[1], p[0]), reverse=self.reverse_order)
        top = scored[: payload["top_n"]] if not self.reverse_order else scored[-payload["top_n"]:]
        results = [{"index": i, self.score_key: s, "document": {"text": payload["documents"][i]}} for i, s in top]
        return {"model": payload["model"], "results": results}


@pytest.fixture
def service():
    with serving(FakeService()) as state:
        yield state


DOCS = ["the red apple", "a green pear", "red red wine and apple pie", "blue sky", "apple"]
QUERY = "red apple"


def make(service, **kw):
    kw.setdefault("backoff", 0.0)
    return HttpReranker(service.base_url, "rerank-model", **kw)


def test_ordering_and_request_shape(service):
    reranker = make(service, api_key="sk-test")
    result = reranker.rerank(QUERY, DOCS)
    assert [i for i, _ in result] == [0, 2, 4, 1, 3]
    assert [s for _, s in result] == [1.0, 1.0, 0.5, 0.0, 0.0]
    (req,) = service.requests
    assert req["path"] == "/v1/rerank" and req["auth"] == "Bearer sk-test"
    assert req["model"] == "rerank-model" and req["query"] == QUERY and req["documents"] == DOCS
    assert req["top_n"] == len(DOCS)
    assert isinstance(reranker, Reranker) and copy.deepcopy(reranker) is reranker
    assert "sk-test" not in repr(reranker)


def test_top_n_and_server_order_not_trusted(service):
    service.reverse_order = True  # worst first, and "score" instead of "relevance_score"
    service.score_key = "score"
    result = make(service).rerank(QUERY, DOCS, top_n=2)
    assert service.requests[0]["top_n"] == 2
    assert result == [(0, 1.0), (2, 1.0)]
    assert make(service).rerank(QUERY, DOCS, top_n=50)[0] == (0, 1.0)
    assert service.requests[-1]["top_n"] == len(DOCS)


def test_empty_inputs_make_no_request(service):
    assert make(service).rerank(QUERY, []) == []
    assert make(service).rerank(QUERY, DOCS, top_n=0) == []
    assert service.requests == []
    with pytest.raises(ValueError, match="top_n"):
        make(service).rerank(QUERY, DOCS, top_n=-1)


@pytest.mark.parametrize("status,headers", [(500, {}), (503, {}), (429, {"Retry-After": "0"})])
def test_retries_then_success(service, status, headers):
    service.failures = [(status, headers, '{"error": "busy"}')] * 2
    assert make(service, max_retries=2).rerank(QUERY, DOCS, top_n=1) == [(0, 1.0)]
    assert len(service.requests) == 3


def test_gives_up_after_max_retries(service):
    service.failures = [(502, {}, "bad gateway")] * 5
    with pytest.raises(RerankServiceError, match="HTTP 502.*3 attempt.*bad gateway"):
        make(service, max_retries=2).rerank(QUERY, DOCS)
    assert len(service.requests) == 3


def test_4xx_is_not_retried_and_message_names_url_status_body(service):
    service.failures = [(422, {}, '{"detail": "unknown model ' + "x" * 500 + '"}')]
    with pytest.raises(RerankServiceError) as info:
        make(service, api_key="secret").rerank(QUERY, DOCS)
    message = str(info.value)
    assert len(service.requests) == 1
    assert "422" in message and service.base_url + "/rerank" in message
    assert "unknown model" in message and "x" * 301 not in message and "secret" not in message


def test_timeout_is_retried_then_raises(service):
    service.sleep = 5.0  # far past the timeout: only the timeout ends an attempt
    with pytest.raises(RerankServiceError, match="failed after 2 attempt.*Timeout"):
        make(service, timeout=0.1, max_retries=1, deadline=HANG_S).rerank(QUERY, DOCS)
    assert len(service.requests) == 2


def test_connection_refused():
    reranker = HttpReranker("http://127.0.0.1:9/v1", "m", max_retries=1, backoff=0.0)
    with pytest.raises(RerankServiceError, match="127.0.0.1:9/v1/rerank.*ConnectError"):
        reranker.rerank(QUERY, DOCS)


@pytest.mark.parametrize(
    "body,what",
    [
        ("not json", "invalid JSON"),
        ('{"data": []}', "missing 'results'"),
        ('{"results": [1]}', "not an object"),
        ('{"results": [{"relevance_score": 0.5}]}', "index None"),
        ('{"results": [{"index": 7, "relevance_score": 0.5}]}', "index 7 is not an int in 0..4"),
        ('{"results": [{"index": 1.0, "relevance_score": 0.5}]}', "index 1.0"),
        ('{"results": [{"index": 0}]}', "no finite 'relevance_score' or 'score'"),
        ('{"results": [{"index": 0, "relevance_score": "high"}]}', "no finite"),
        ('{"results": [{"index": 0, "relevance_score": NaN}]}', "no finite"),
        ('{"results": [{"index": 0, "score": 1}, {"index": 0, "score": 0.5}]}', "duplicate"),
    ],
)
def test_malformed_responses(service, body, what):
    service.raw_body = body
    with pytest.raises(RerankServiceError, match=what):
        make(service).rerank(QUERY, DOCS)
    assert len(service.requests) == 1


# -- local fallback ------------------------------------------------------------------------------


def test_local_reranker_lexical_only_is_deterministic():
    reranker = LocalReranker(embedder=LexicalEmbedder(), dense_weight=0.0, lexical_weight=1.0)
    result = reranker.rerank(QUERY, DOCS)
    assert sorted(i for i, _ in result) == list(range(len(DOCS)))
    assert result[0][0] in (0, 4) and result[-1][0] in (1, 3)
    assert [s for _, s in result] == sorted((s for _, s in result), reverse=True)
    assert reranker.rerank(QUERY, DOCS) == result
    assert reranker.rerank(QUERY, DOCS, top_n=2) == result[:2]
    assert reranker.rerank(QUERY, [], top_n=3) == []
    assert copy.deepcopy(reranker) is reranker and isinstance(reranker, Reranker)
    with pytest.raises(ValueError, match="weights"):
        LocalReranker(LexicalEmbedder(), dense_weight=0, lexical_weight=0)


def test_local_reranker_blends_dense_and_lexical(embedder):
    reranker = LocalReranker(embedder)
    docs = ["关闭主卧窗帘", "turn on the living room light", "Play jazz in the kitchen", "打开客厅的灯"]
    result = reranker.rerank("打开客厅的灯", docs)
    assert result[0][0] == 3 and result[0][1] == pytest.approx(1.0, abs=1e-5)
    assert result[1][0] == 1  # the English paraphrase beats unrelated Chinese commands (dense channel)
    lexical = LexicalEmbedder()
    dense_vecs, lex_vecs = embedder.embed(["打开客厅的灯", *docs]), lexical.embed(["打开客厅的灯", *docs])
    expected = 0.7 * (dense_vecs[1:] @ dense_vecs[0]) + 0.3 * (lex_vecs[1:] @ lex_vecs[0])
    assert dict(result) == pytest.approx(dict(enumerate(expected.tolist())), abs=1e-5)


def test_make_reranker(service, embedder):
    local = make_reranker(None, embedder=embedder)
    assert isinstance(local, LocalReranker) and local.embedder is embedder
    assert isinstance(make_reranker("local"), LocalReranker)
    remote = make_reranker(service.base_url + "/", model="bge-reranker", api_key="k")
    assert isinstance(remote, HttpReranker) and remote.url == service.base_url + "/rerank"
    assert remote.model == "bge-reranker"
    assert remote.rerank(QUERY, DOCS, top_n=1) == [(0, 1.0)]
    with pytest.raises(ValueError, match="unknown reranker spec"):
        make_reranker("cohere")
