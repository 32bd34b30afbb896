"""Rerankers: re-score a retriever's candidates against the query, best first.

A cross-encoder behind an HTTP endpoint (``POST {base_url}/rerank``, the Jina/Cohere/vLLM shape) is the
quality option; ``LocalReranker`` is the always-available fallback that needs no service: a blend of
dense cosine (multilingual paraphrase) and lexical overlap (exact wording such as names and numbers).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..embedding.awaited_rows import with_embeddings
from ..embedding.embedders import Embedder, LexicalEmbedder, LocalUSEEmbedder
from ..errors import InvalidValue, TraceragError
from ..http_json import MAX_BYTES, JsonEndpoint

__all__ = ["HttpReranker", "LocalReranker", "RerankServiceError", "Reranker", "make_reranker"]

logger = logging.getLogger(__name__)



@runtime_checkable
class Reranker(Protocol):
    def rerank(self, query: str, documents: Sequence[str], top_n: int | None = None) -> list[tuple[int, float]]:
        """(document index, relevance score) pairs, best first; at most ``top_n`` of them."""
        ...


def _check_top_n(top_n: int | None) -> None:
    if top_n is not None and (isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 0):
        raise InvalidValue(f"top_n must be a non-negative int or None, got {top_n!r}")


def _ranked(scores: Sequence[float], indices: Sequence[int], top_n: int | None) -> list[tuple[int, float]]:
    """Best first; equal scores keep document order so results are deterministic."""
    pairs = sorted(zip(indices, scores, strict=True), key=lambda p: (-p[1], p[0]))
    return [(int(i), float(s)) for i, s in (pairs if top_n is None else pairs[:top_n])]


class LocalReranker:
    """Deterministic fallback: ``dense_weight * dense cosine + lexical_weight * lexical cosine``.

    Defaults 0.7 / 0.3: the dense channel carries meaning across languages and paraphrases and should
    dominate; the lexical channel (hashed character n-grams) breaks ties towards documents that share
    the query's exact words, labels and numbers, which dense sentence encoders blur. Scores lie in
    [-dense_weight, 1] and are comparable across queries.
    """

    def __init__(
        self,
        embedder: Embedder | None = None,
        lexical: Embedder | None = None,
        dense_weight: float = 0.7,
        lexical_weight: float = 0.3,
    ) -> None:
        if dense_weight < 0 or lexical_weight < 0 or dense_weight + lexical_weight == 0:
            raise InvalidValue(f"weights must be non-negative and not both zero, got {dense_weight}, {lexical_weight}")
        self.embedder = embedder if embedder is not None else LocalUSEEmbedder()
        self.lexical = lexical if lexical is not None else LexicalEmbedder()
        self.dense_weight = dense_weight
        self.lexical_weight = lexical_weight

    def rerank(self, query: str, documents: Sequence[str], top_n: int | None = None) -> list[tuple[int, float]]:
        _check_top_n(top_n)
        documents = list(documents)
        if not documents or top_n == 0:
            return []
        scores = np.zeros(len(documents), dtype=np.float32)
        for weight, embedder in ((self.dense_weight, self.embedder), (self.lexical_weight, self.lexical)):
            if weight:
                vectors = embedder.embed([query, *documents])  # one call: query and documents together
                scores += weight * (vectors[1:] @ vectors[0])
        return _ranked(scores.tolist(), range(len(documents)), top_n)

    async def arerank(self, query: str, documents: Sequence[str], top_n: int | None = None) -> list[tuple[int, float]]:
        """``rerank`` for an event loop: in a worker thread, with a remote embedder's rows for the query and
        documents awaited first without holding it (``with_embeddings``); the same scores."""
        _check_top_n(top_n)
        documents = list(documents)
        embedder = self.embedder if documents and top_n != 0 and self.dense_weight else None
        return await with_embeddings(embedder, [query, *documents], self.rerank, query, documents, top_n)

    def __deepcopy__(self, memo: dict) -> LocalReranker:
        return self

    def __repr__(self) -> str:
        return (f"LocalReranker({self.embedder!r}, {self.lexical!r}, dense_weight={self.dense_weight}, "
                f"lexical_weight={self.lexical_weight})")


class RerankServiceError(TraceragError, RuntimeError):
    """The rerank service could not be reached or answered something unusable."""


class HttpReranker(JsonEndpoint):
    """Retrying client for ``POST {base_url}/rerank`` (Jina, Cohere-compatible, vLLM, TEI-style gateways).

    Sends ``{"model", "query", "documents", "top_n"}`` and reads ``{"results": [{"index",
    "relevance_score" | "score"}, ...]}``; results are re-sorted locally, so server ordering is not trusted.
    A call is bounded by a total ``deadline`` (retries included; default ``timeout * (max_retries + 1)``)
    and its decoded answer by ``max_bytes``.
    """

    error = RerankServiceError

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        deadline: float | None = None,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        super().__init__(base_url, "/rerank", api_key, timeout, max_retries, backoff, deadline, max_bytes)
        self.model = model

    def rerank(self, query: str, documents: Sequence[str], top_n: int | None = None) -> list[tuple[int, float]]:
        _check_top_n(top_n)
        documents = list(documents)
        if not documents or top_n == 0:
            return []
        payload = self._payload(query, documents, top_n)
        return self._ranked(self._post(payload), len(documents), payload["top_n"])

    async def arerank(self, query: str, documents: Sequence[str], top_n: int | None = None) -> list[tuple[int, float]]:
        """``rerank`` awaited on an event loop (no thread held): the same request, bounds, errors, order."""
        _check_top_n(top_n)
        documents = list(documents)
        if not documents or top_n == 0:
            return []
        payload = self._payload(query, documents, top_n)
        return self._ranked(await self._apost(payload), len(documents), payload["top_n"])

    def _payload(self, query: str, documents: list[str], top_n: int | None) -> dict[str, Any]:
        n = len(documents) if top_n is None else min(top_n, len(documents))
        return {"model": self.model, "query": query, "documents": documents, "top_n": n}

    def _ranked(self, body: Any, n_documents: int, top_n: int) -> list[tuple[int, float]]:
        indices, scores = self._parse(body, n_documents)
        return _ranked(scores, indices, top_n)

    def _parse(self, body: Any, n: int) -> tuple[list[int], list[float]]:
        def bad(what: str) -> RerankServiceError:
            return RerankServiceError(f"malformed response from {self.url}: {what}")

        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list):
            raise bad("missing 'results' list")
        indices: list[int] = []
        scores: list[float] = []
        for item in results:
            if not isinstance(item, dict):
                raise bad(f"a result is a {type(item).__name__}, not an object")
            index = item.get("index")
            if type(index) is not int or not 0 <= index < n:
                raise bad(f"result index {index!r} is not an int in 0..{n - 1}")
            score = item.get("relevance_score", item.get("score"))
            if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
                raise bad(f"result for index {index} has no finite 'relevance_score' or 'score' ({score!r})")
            indices.append(index)
            scores.append(float(score))
        if len(set(indices)) != len(indices):
            raise bad("duplicate result indices")
        return indices, scores

    def __deepcopy__(self, memo: dict) -> HttpReranker:
        return self

    def __repr__(self) -> str:
        return f"HttpReranker(model={self.model!r}, base_url={self.base_url!r})"


def make_reranker(
    spec: str | None = None,
    *,
    model: str | None = None,
    api_key: str | None = None,
    embedder: Embedder | None = None,
    timeout: float = 30.0,
) -> Reranker:
    """None or "local" -> :class:`LocalReranker` (with ``embedder``); an http(s) base URL -> :class:`HttpReranker`."""
    if spec is None or spec == "local":
        return LocalReranker(embedder)
    if spec.startswith(("http://", "https://")):
        return HttpReranker(spec, model or "default", api_key=api_key, timeout=timeout)
    raise InvalidValue(
        f"unknown reranker spec {spec!r}; expected None or 'local' (dense + lexical blend) or a rerank "
        "service base URL such as 'http://host:port/v1' (POST {base_url}/rerank)"
    )
