"""One retrying JSON POST for every HTTP client of the retrievers (embeddings, rerank).

Remote services fail transiently (rate limits, restarts), so 429, 5xx and transport errors are
retried with exponential backoff (a server's Retry-After wins); everything else fails at once with
the URL, status and a body excerpt, so a misconfigured endpoint is diagnosable from the exception.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import httpx

logger = logging.getLogger(__name__)

MAX_DELAY = 30.0  # seconds; cap for both exponential backoff and a server's Retry-After
EXCERPT = 300


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return float(response.headers["Retry-After"])
    except (KeyError, ValueError):
        return None  # absent, or an HTTP date: fall back to exponential backoff


def post_json(client: httpx.Client, url: str, payload: dict[str, Any], *, max_retries: int, backoff: float,
              error: type[Exception]) -> Any:
    """POST `payload` and return the decoded JSON answer; raise `error` when it cannot be had."""
    for attempt in range(max_retries + 1):
        last = attempt == max_retries
        delay = min(backoff * 2**attempt, MAX_DELAY)
        try:
            response = client.post(url, json=payload)
        except httpx.TransportError as exc:  # includes connect/read timeouts
            if last:
                raise error(f"POST {url} failed after {attempt + 1} attempt(s): {type(exc).__name__}: {exc}") from exc
            logger.warning("POST %s: %s (attempt %d), retrying", url, type(exc).__name__, attempt + 1)
        else:
            if response.is_success:
                try:
                    return response.json()
                except ValueError as exc:
                    raise error(f"POST {url} returned invalid JSON: {response.text[:EXCERPT]!r}") from exc
            retryable = response.status_code == 429 or response.status_code >= 500
            if last or not retryable:
                raise error(f"POST {url} failed with HTTP {response.status_code} after {attempt + 1} "
                            f"attempt(s): {response.text[:EXCERPT]!r}")
            retry_after = _retry_after(response)
            if retry_after is not None:
                delay = min(max(retry_after, 0.0), MAX_DELAY)
            logger.warning("POST %s: HTTP %d (attempt %d), retrying", url, response.status_code, attempt + 1)
        time.sleep(delay)
    raise AssertionError("unreachable")


class JsonEndpoint:
    """A lazily opened, thread-safe client for one JSON endpoint (`base_url + path`) with retries.

    Subclasses set `error`, the exception their callers catch."""

    error: type[Exception] = RuntimeError

    def __init__(self, base_url: str, path: str, api_key: str | None, timeout: float, max_retries: int,
                 backoff: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + path
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self._api_key = api_key
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def _post(self, payload: dict[str, Any]) -> Any:
        with self._lock:
            if self._client is None:
                headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
                self._client = httpx.Client(timeout=self.timeout, headers=headers)
            client = self._client
        return post_json(client, self.url, payload, max_retries=self.max_retries, backoff=self.backoff,
                         error=self.error)
