"""The JSON-over-HTTP client both smart-home APIs are reached with, on top of ``tracerag/http_json``.

Every request has the project's bounds (a total deadline per request, retries and waits included, and a
cap on the decoded answer). 429 (honouring Retry-After, capped at ``http_json.MAX_DELAY`` and at the
time left) and 5xx are retried up to ``retries`` times; every other failure is an ``ApiError`` that
carries the HTTP status, so callers can turn a 401/403 into one line naming the scope that is missing.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any
from urllib.parse import urljoin, urlsplit

from .. import http_json
from ..errors import InvalidValue, TraceragError

DEFAULT_TIMEOUT = 20.0  # seconds per read
DEFAULT_DEADLINE = 60.0  # seconds per request, retries and their waits included
DEFAULT_RETRIES = 4  # of a 429, a 5xx or a transport error
MAX_BYTES = 64 * 2**20  # a decoded answer; a large home's registry is a few MB

_STATUS = re.compile(r"answered HTTP (\d{3})")


class ApiError(TraceragError, RuntimeError):
    """A request that failed; ``status`` is the HTTP status when the server answered one."""

    @property
    def status(self) -> int | None:
        match = _STATUS.search(str(self))
        return int(match.group(1)) if match else None


class RestClient:
    """Bearer-token JSON requests against one base URL (thread-safe; one pooled httpx client)."""

    def __init__(self, base_url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT,
                 deadline: float = DEFAULT_DEADLINE, retries: int = DEFAULT_RETRIES, backoff: float = 0.5,
                 max_bytes: int = MAX_BYTES) -> None:
        if not token:
            raise InvalidValue("an API token is required")
        self.base_url = base_url.rstrip("/")
        self.timeout, self.deadline, self.retries, self.backoff = timeout, deadline, retries, backoff
        self.max_bytes = max_bytes
        self._token = token
        self._client = None
        self._lock = threading.Lock()

    def url(self, path_or_url: str) -> str:
        """An absolute URL on this API; a link the server gave (paging) must stay on the same origin,
        so the token is never sent anywhere else."""
        url = urljoin(self.base_url + "/", path_or_url.lstrip("/")) if "://" not in path_or_url else path_or_url
        if urlsplit(url)[:2] != urlsplit(self.base_url)[:2]:
            raise ApiError(f"refusing to follow {url!r}: not on {self.base_url}")
        return url

    def get(self, path_or_url: str, *, params: dict | None = None) -> Any:
        return self._json("GET", path_or_url, params=params)

    def post(self, path_or_url: str, payload: Any, *, retries: int | None = None) -> Any:
        return self._json("POST", path_or_url, json=payload, retries=retries)

    def _json(self, method: str, path_or_url: str, *, retries: int | None = None, **kwargs) -> Any:
        url = self.url(path_or_url)
        body = http_json.request(self._http(), method, url, error=ApiError, deadline=self.deadline,
                                 max_bytes=self.max_bytes, backoff=self.backoff,
                                 max_retries=self.retries if retries is None else retries, **kwargs)
        if not body.strip():
            return None
        try:
            return json.loads(body)
        except ValueError:
            raise ApiError(f"{method} {url} returned invalid JSON: {body[:200]!r}") from None

    def _http(self):
        with self._lock:
            if self._client is None:
                self._client = http_json.bounded_client(self.timeout, {
                    "Authorization": f"Bearer {self._token}", "Accept": "application/json"})
            return self._client

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> RestClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
