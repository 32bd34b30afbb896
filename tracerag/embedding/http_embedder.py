"""Embedder for any OpenAI-compatible ``POST /embeddings`` endpoint (vLLM, TEI, Ollama, OpenAI, ...).

Remote services fail transiently (rate limits, restarts), so transient errors are retried with
exponential backoff; everything else fails loudly with the URL, status and a body excerpt so a
misconfigured endpoint is diagnosable from the exception alone. Each batch's POST is bounded by a
total ``deadline`` (retries included; default ``timeout * (max_retries + 1)``) and its decoded answer
by ``max_bytes`` (see :mod:`..http_json`).

``aembed`` is ``embed`` awaited on an event loop (``httpx.AsyncClient``; the same batching, bounds,
retries, errors and response checks), so an ``aforward`` waiting for the service holds no thread.
CPU-bound search that embeds its query itself (a bank search in a worker thread) gets the awaited rows
through :func:`~.awaited_rows.with_embeddings`: the rows are awaited first, then ``embed`` of those same texts
inside the worker thread returns them without a second request.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InvalidValue, TraceragError
from ..http_json import MAX_BYTES, JsonEndpoint
from .awaited_rows import awaited_rows, with_embeddings
from .embedders import l2_normalize

__all__ = ["EmbeddingServiceError", "HttpEmbedder", "with_embeddings"]

logger = logging.getLogger(__name__)

class EmbeddingServiceError(TraceragError, RuntimeError):
    """The embedding service could not be reached or answered something unusable."""


class HttpEmbedder(JsonEndpoint):
    """Batched, retrying client for an OpenAI-compatible embeddings API; rows are L2-normalised."""

    error = EmbeddingServiceError

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        dim: int | None = None,
        deadline: float | None = None,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        if batch_size <= 0:
            raise InvalidValue(f"batch_size must be positive, got {batch_size}")
        super().__init__(base_url, "/embeddings", api_key, timeout, max_retries, backoff, deadline, max_bytes)
        self.model = model
        self.id = f"http:{model}@{self.base_url}"
        self.batch_size = batch_size
        self._dim = dim

    @property
    def dim(self) -> int:
        """Embedding width; when not given, discovered by embedding one short probe text."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        awaited = awaited_rows(self, texts)
        if awaited is not None:
            return awaited
        return self._rows([self._parse(self._post(payload), n) for payload, n in self._batches(texts)])

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        """``embed`` awaited on an event loop: the same requests, bounds, retries, errors and rows."""
        texts = list(texts)
        if not texts:
            if self._dim is None:
                await self.aembed(["dimension probe"])
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._rows([self._parse(await self._apost(payload), n) for payload, n in self._batches(texts)])

    def _batches(self, texts: list[str]) -> list[tuple[dict[str, Any], int]]:
        """(request payload, number of texts) per batch of ``batch_size``."""
        batches = [texts[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        return [({"model": self.model, "input": batch}, len(batch)) for batch in batches]

    @staticmethod
    def _rows(parts: list[np.ndarray]) -> np.ndarray:
        return l2_normalize(np.concatenate(parts))

    def _parse(self, body: Any, n: int) -> np.ndarray:
        def bad(what: str) -> EmbeddingServiceError:
            return EmbeddingServiceError(f"malformed response from {self.url}: {what}")

        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise bad("missing 'data' list")
        if len(data) != n:
            raise bad(f"expected {n} embeddings, got {len(data)}")
        if not all(isinstance(item, dict) and isinstance(item.get("embedding"), list) for item in data):
            raise bad("an item has no 'embedding' list")
        if all("index" in item for item in data):
            indices = [item["index"] for item in data]
            if not all(type(i) is int for i in indices) or sorted(indices) != list(range(n)):
                raise bad(f"'index' values are not a permutation of 0..{n - 1}")
            data = sorted(data, key=lambda item: item["index"])
        dims = {len(item["embedding"]) for item in data}
        if len(dims) != 1 or 0 in dims:
            raise bad(f"inconsistent or empty embedding dimensions {sorted(dims)}")
        (dim,) = dims
        if self._dim is not None and dim != self._dim:
            raise bad(f"embedding dimension {dim} differs from expected {self._dim}")
        try:
            vectors = np.asarray([item["embedding"] for item in data], dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise bad(f"non-numeric embedding values ({exc})") from exc
        self._dim = dim
        return vectors

    def __deepcopy__(self, memo: dict) -> HttpEmbedder:
        return self

    def __repr__(self) -> str:
        return f"HttpEmbedder(model={self.model!r}, base_url={self.base_url!r})"
