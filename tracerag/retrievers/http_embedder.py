"""Embedder for any OpenAI-compatible ``POST /embeddings`` endpoint (vLLM, TEI, Ollama, OpenAI, ...).

Remote services fail transiently (rate limits, restarts), so transient errors are retried with
exponential backoff; everything else fails loudly with the URL, status and a body excerpt so a
misconfigured endpoint is diagnosable from the exception alone.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from .embedders import l2_normalize
from .http_json import post_json

__all__ = ["EmbeddingServiceError", "HttpEmbedder"]

logger = logging.getLogger(__name__)



class EmbeddingServiceError(RuntimeError):
    """The embedding service could not be reached or answered something unusable."""


class HttpEmbedder:
    """Batched, retrying client for an OpenAI-compatible embeddings API; rows are L2-normalised."""

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
    ) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/embeddings"
        self.model = model
        self.id = f"http:{model}@{self.base_url}"
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self._api_key = api_key
        self._dim = dim
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

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
        parts = [
            self._embed_batch(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)
        ]
        return l2_normalize(np.concatenate(parts))

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def _get_client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
                self._client = httpx.Client(timeout=self.timeout, headers=headers)
            return self._client

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        return self._parse(self._post({"model": self.model, "input": batch}), len(batch))

    def _post(self, payload: dict[str, Any]) -> Any:
        return post_json(self._get_client(), self.url, payload, max_retries=self.max_retries, backoff=self.backoff,
                         error=EmbeddingServiceError)

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
