"""One bounded, retrying HTTP request for every HTTP client of the project (embeddings, rerank, E-utilities),
blocking (`request`) or awaited on an event loop (`arequest`), with one retry and error logic (`_attempts`).

Every call has two hard limits besides the per-read ``timeout``:

- a **total deadline** (seconds, wall clock) for the whole call, retries and their waits included. A
  per-read timeout alone lets a server that trickles one byte a second keep a call alive for ever;
  here every socket read and connect is clamped to the time left, so a call ends at its deadline
  whether the server is silent, slow to send its headers, or slow to send its body;
- a **response-size cap** on the *decoded* bytes read. The body is streamed and decompressed by this
  module in bounded steps (only ``gzip``/``deflate``/identity are accepted), so a gzip bomb stops at the
  cap instead of growing the process by the expanded size.

Remote services fail transiently (rate limits, restarts), so 429, 5xx and transport errors are
retried with exponential backoff (a server's Retry-After wins, capped at ``MAX_DELAY`` and at the time
left); everything else fails at once with one line naming the method, URL, status and a body excerpt
(or the limit that was hit), so a misconfigured endpoint is diagnosable from the exception.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import ssl
import threading
import time
import zlib
from collections.abc import Generator
from dataclasses import dataclass
from functools import cache
from typing import Any

import httpcore
import httpx

from .errors import InvalidValue

logger = logging.getLogger(__name__)

MAX_DELAY = 30.0  # seconds; cap for both exponential backoff and a server's Retry-After
MAX_BYTES = 32 * 2**20  # default cap on a decoded response body (an embedding batch is a few MB)
EXCERPT = 300
_STEP = 64 * 2**10  # decoded bytes produced per decompression step
_ERROR_BODY = 16 * 2**10  # bytes of an error answer read for its excerpt

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("tracerag_http_deadline", default=None)


class _DeadlineExceeded(Exception):
    pass


class _TooLarge(Exception):
    pass


def _clamp(timeout: float | None) -> float:
    """A socket operation's timeout, never past the current call's deadline."""
    end = _deadline.get()
    if end is None:
        return timeout  # type: ignore[return-value]
    left = end - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the call's total deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _clamp(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _clamp(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, _clamp(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend with every connect/read/write clamped to the call's deadline."""

    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return _DeadlineStream(self._backend.connect_tcp(host, port, _clamp(timeout), local_address,
                                                         socket_options))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        return _DeadlineStream(self._backend.connect_unix_socket(path, _clamp(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


@cache
def shared_ssl_context() -> ssl.SSLContext:
    """The process's one SSL context (httpx's defaults): every new one loads the CA bundle again, natively, and
    keeps it (1-10 MB a client), while clients are made per endpoint, per program and per LM."""
    return httpx.create_ssl_context()


def deadline_transport() -> httpx.HTTPTransport:
    """An httpx transport whose socket operations honour the deadline of the `request` in progress (without
    the hook the deadline is still checked between body chunks, just not inside one read)."""
    transport = httpx.HTTPTransport(verify=shared_ssl_context())
    pool = getattr(transport, "_pool", None)
    if isinstance(getattr(pool, "_network_backend", None), httpcore.NetworkBackend):
        pool._network_backend = _DeadlineBackend(pool._network_backend)  # type: ignore[union-attr]
    return transport


def bounded_client(timeout: float, headers: dict[str, str] | None = None) -> httpx.Client:
    """An httpx client over `deadline_transport`. Only gzip/deflate are asked for, because this module decodes
    them itself in bounded steps."""
    return httpx.Client(timeout=timeout, transport=deadline_transport(), verify=shared_ssl_context(),
                        headers={"Accept-Encoding": "gzip, deflate", **(headers or {})})


def bounded_async_client(timeout: float, headers: dict[str, str] | None = None) -> httpx.AsyncClient:
    """`bounded_client` for an event loop: `arequest` cuts each attempt at the call's deadline itself
    (a cancellation), so no network-backend hook is needed."""
    return httpx.AsyncClient(timeout=timeout, verify=shared_ssl_context(),
                             headers={"Accept-Encoding": "gzip, deflate", **(headers or {})})


class _Decoder:
    """Content-Encoding gzip/deflate/identity, decoded at most `_STEP` bytes at a time."""

    def __init__(self, encoding: str) -> None:
        codings = [c.strip().lower() for c in encoding.split(",") if c.strip() and c.strip().lower() != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise InvalidValue(f"unsupported Content-Encoding {encoding!r}")
        self.coding = codings[0] if codings else None
        self._new()

    def _new(self) -> None:
        wbits = zlib.MAX_WBITS | 16 if self.coding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self._zlib = zlib.decompressobj(wbits) if self.coding else None
        self._first = True

    def decode(self, data: bytes):
        """Yield decoded pieces of at most `_STEP` bytes each."""
        if self._zlib is None:
            for i in range(0, len(data), _STEP):
                yield data[i : i + _STEP]
            return
        while data:
            try:
                out = self._zlib.decompress(data, _STEP)
            except zlib.error:
                if not (self.coding == "deflate" and self._first):
                    raise
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send
                out = self._zlib.decompress(data, _STEP)
            self._first = False
            if out:
                yield out
            data = self._zlib.unconsumed_tail
            if self._zlib.eof and self._zlib.unused_data:  # a further gzip member
                data = self._zlib.unused_data
                self._new()


class _Reader:
    """One answer's body, fed chunk by chunk by a sync or an async loop (`_exchange` / `_aexchange`).

    A success is read up to `max_bytes` (past it: the "too large" problem); an error answer up to
    `_ERROR_BODY` bytes, truncated, for its excerpt. An unsupported or undecodable encoding is a problem
    of a success and an empty excerpt of an error. Reading past `end` raises _DeadlineExceeded."""

    def __init__(self, response: httpx.Response, max_bytes: int, end: float) -> None:
        self.status = response.status_code
        self.ok = response.is_success
        self.retry_after = _retry_after(response)
        self.limit = max_bytes if self.ok else min(_ERROR_BODY, max_bytes)
        self.end = end
        self.parts: list[bytes] = []
        self.total = 0
        self.problem: str | None = None  # why a success's body is unusable
        self.done = False
        try:
            self.decoder = _Decoder(response.headers.get("Content-Encoding", ""))
        except ValueError as exc:
            self._stop(str(exc))

    def _stop(self, problem: str | None) -> bool:
        self.done = True
        self.problem = problem if self.ok else None  # an error answer keeps what it has as its excerpt
        return True

    def feed(self, raw: bytes) -> bool:
        """Take one raw chunk; True when the body is complete enough (stop reading)."""
        try:
            for piece in self.decoder.decode(raw):
                self.total += len(piece)
                if self.total > self.limit:
                    if not self.ok:  # an excerpt: keep what fits
                        self.parts.append(piece[: len(piece) - (self.total - self.limit)])
                        return self._stop(None)
                    return self._stop(_TOO_LARGE)
                self.parts.append(piece)
        except zlib.error as exc:
            if not self.ok:  # an excerpt: what was decoded so far
                self.done = True
                return True
            return self._stop(f"undecodable {self.decoder.coding} body ({exc})")
        if time.monotonic() > self.end:
            raise _DeadlineExceeded
        return False

    @property
    def body(self) -> bytes:
        return b"".join(self.parts)


_TOO_LARGE = "too large"


def _exchange(client: httpx.Client, method: str, url: str, timeout: float, max_bytes: int, end: float,
              kwargs: dict[str, Any]) -> _Reader:
    """One attempt, synchronously: the status and the (bounded) body."""
    with client.stream(method, url, timeout=timeout, **kwargs) as response:
        reader = _Reader(response, max_bytes, end)
        if not reader.done:
            for raw in response.iter_raw(_STEP):
                if reader.feed(raw):
                    break
        return reader


async def _aexchange(client: httpx.AsyncClient, method: str, url: str, timeout: float, max_bytes: int, end: float,
                     kwargs: dict[str, Any]) -> _Reader:
    """One attempt on an event loop, the whole of it cut at the call's deadline (no thread held)."""
    try:
        async with asyncio.timeout(max(end - time.monotonic(), 0.0)):
            async with client.stream(method, url, timeout=timeout, **kwargs) as response:
                reader = _Reader(response, max_bytes, end)
                if not reader.done:
                    async for raw in response.aiter_raw(_STEP):
                        if reader.feed(raw):
                            break
                return reader
    except TimeoutError:
        raise _DeadlineExceeded from None


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return float(response.headers["Retry-After"])
    except (KeyError, ValueError):
        return None  # absent, or an HTTP date: fall back to exponential backoff


@dataclass(frozen=True)
class _Attempt:
    timeout: float  # the attempt's per-read timeout (never past the deadline)


@dataclass(frozen=True)
class _Wait:
    seconds: float


_BEFORE = object()  # run the caller's `before()` (e.g. a rate limiter)


def _attempts(method: str, url: str, *, read_timeout: float | None, error: type[Exception], deadline: float,
              start: float, max_bytes: int, max_retries: int, backoff: float) -> Generator[Any, Any, bytes]:
    """The retry, backoff, deadline and error logic of one call, written once for `request` and
    `arequest`: yields `_BEFORE`, `_Attempt` (answered with the attempt's `_Reader`; a transport error or
    `_DeadlineExceeded` is thrown in) and `_Wait`; returns the decoded body of a success."""
    end = start + deadline
    attempts = 0
    cause = ""  # what the last failed attempt ran into
    try:
        for attempt in range(max_retries + 1):
            attempts = attempt + 1
            last = attempt == max_retries
            delay = min(backoff * 2**attempt, MAX_DELAY)
            try:
                yield _BEFORE
                left = end - time.monotonic()
                if left <= 0:
                    raise _DeadlineExceeded
                reply: _Reader = yield _Attempt(min(read_timeout or left, left))
                if reply.ok:
                    if reply.problem == _TOO_LARGE:
                        raise error(f"{method} {url}: answer larger than the {max_bytes}-byte limit (max_bytes)")
                    if reply.problem is not None:
                        raise error(f"{method} {url}: {reply.problem}")
                    return reply.body
                excerpt_text = reply.body.decode("utf-8", "replace").strip()[:EXCERPT]
                retryable = reply.status == 429 or reply.status >= 500
                cause = f"HTTP {reply.status}"
                if last or not retryable:
                    raise error(f"{method} {url} answered HTTP {reply.status} after {attempts} "
                                f"attempt(s): {excerpt_text!r}")
                if reply.retry_after is not None:
                    delay = min(max(reply.retry_after, 0.0), MAX_DELAY)
                logger.warning("%s %s: HTTP %d (attempt %d), retrying", method, url, reply.status, attempts)
            except httpx.TransportError as exc:  # includes connect/read timeouts
                if time.monotonic() >= end:  # a read cut by the deadline itself
                    raise _DeadlineExceeded from None
                cause = type(exc).__name__
                if last:
                    raise error(f"{method} {url} failed after {attempts} attempt(s): {type(exc).__name__}: "
                                f"{exc}") from None
                logger.warning("%s %s: %s (attempt %d), retrying", method, url, type(exc).__name__, attempts)
            if time.monotonic() + delay >= end:
                raise _DeadlineExceeded
            yield _Wait(delay)
    except _DeadlineExceeded:
        last = f"; last: {cause}" if cause else ""
        raise error(f"{method} {url}: no complete answer within the {deadline:g} s deadline "
                    f"({attempts} attempt(s) in {time.monotonic() - start:.1f} s{last})") from None
    raise AssertionError("unreachable")


def request(client: httpx.Client, method: str, url: str, *, error: type[Exception], deadline: float,
            max_bytes: int = MAX_BYTES, max_retries: int = 0, backoff: float = 0.5,
            before: Any = None, started: float | None = None, **kwargs: Any) -> bytes:
    """The decoded body of a successful answer to `method url` (httpx `kwargs`: json=, params=, ...).

    Raises `error` with one line: a non-retryable or last failing status, a transport error after the
    retries, no complete answer within `deadline` seconds, or a body larger than `max_bytes`.
    `before()` runs before each attempt (e.g. a rate limiter), inside the deadline. `started` (a
    `time.monotonic()` value, default now) is when the deadline began, for a deadline that spans
    several requests."""
    start = time.monotonic() if started is None else started
    token = _deadline.set(start + deadline)
    steps = _attempts(method, url, read_timeout=client.timeout.read, error=error, deadline=deadline, start=start,
                      max_bytes=max_bytes, max_retries=max_retries, backoff=backoff)
    value: Any = None
    thrown: BaseException | None = None
    try:
        while True:
            try:
                step = steps.throw(thrown) if thrown is not None else steps.send(value)
            except StopIteration as done:
                return done.value
            value, thrown = None, None
            try:
                if step is _BEFORE:
                    if before is not None:
                        before()
                elif isinstance(step, _Wait):
                    time.sleep(step.seconds)
                else:
                    value = _exchange(client, method, url, step.timeout, max_bytes, start + deadline, kwargs)
            except (httpx.TransportError, _DeadlineExceeded) as exc:
                thrown = exc
    finally:
        _deadline.reset(token)


async def arequest(client: httpx.AsyncClient, method: str, url: str, *, error: type[Exception], deadline: float,
                   max_bytes: int = MAX_BYTES, max_retries: int = 0, backoff: float = 0.5,
                   before: Any = None, started: float | None = None, **kwargs: Any) -> bytes:
    """`request` on an event loop (an `httpx.AsyncClient`): the same retries, backoff, deadline, size cap
    and errors (one logic, `_attempts`); waiting for the server holds no thread. `before` is awaited
    before each attempt."""
    start = time.monotonic() if started is None else started
    steps = _attempts(method, url, read_timeout=client.timeout.read, error=error, deadline=deadline, start=start,
                      max_bytes=max_bytes, max_retries=max_retries, backoff=backoff)
    value: Any = None
    thrown: BaseException | None = None
    while True:
        try:
            step = steps.throw(thrown) if thrown is not None else steps.send(value)
        except StopIteration as done:
            return done.value
        value, thrown = None, None
        try:
            if step is _BEFORE:
                if before is not None:
                    await before()
            elif isinstance(step, _Wait):
                await asyncio.sleep(step.seconds)
            else:
                value = await _aexchange(client, method, url, step.timeout, max_bytes, start + deadline, kwargs)
        except (httpx.TransportError, _DeadlineExceeded) as exc:
            thrown = exc


def post_json(client: httpx.Client, url: str, payload: dict[str, Any], *, max_retries: int, backoff: float,
              error: type[Exception], deadline: float, max_bytes: int = MAX_BYTES) -> Any:
    """POST `payload` and return the decoded JSON answer; raise `error` when it cannot be had."""
    body = request(client, "POST", url, json=payload, error=error, deadline=deadline, max_bytes=max_bytes,
                   max_retries=max_retries, backoff=backoff)
    return _json(body, "POST", url, error)


async def apost_json(client: httpx.AsyncClient, url: str, payload: dict[str, Any], *, max_retries: int,
                     backoff: float, error: type[Exception], deadline: float, max_bytes: int = MAX_BYTES) -> Any:
    """`post_json` on an event loop."""
    body = await arequest(client, "POST", url, json=payload, error=error, deadline=deadline, max_bytes=max_bytes,
                          max_retries=max_retries, backoff=backoff)
    return _json(body, "POST", url, error)


def _json(body: bytes, method: str, url: str, error: type[Exception]) -> Any:
    try:
        return json.loads(body)
    except ValueError as exc:
        excerpt = body[:EXCERPT].decode("utf-8", "replace")
        raise error(f"{method} {url} returned invalid JSON: {excerpt!r}") from exc


class LoopClients:
    """One `httpx.AsyncClient` per running event loop, opened there on first use by `make()`; the clients
    of loops that have closed are dropped (a script calling `asyncio.run()` per request leaves no pile)."""

    def __init__(self, make: Any) -> None:
        self._make = make
        self._clients: dict[asyncio.AbstractEventLoop, httpx.AsyncClient] = {}
        self._lock = threading.Lock()

    def get(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        with self._lock:
            for closed in [other for other in self._clients if other.is_closed()]:
                del self._clients[closed]  # (its connections went with its loop)
            client = self._clients.get(loop)
            if client is None:
                client = self._clients[loop] = self._make()
            return client

    def __len__(self) -> int:
        return len(self._clients)

    def clear(self) -> None:
        with self._lock:
            self._clients.clear()

    async def aclose(self) -> None:
        """Close the running loop's client."""
        with self._lock:
            client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()


class JsonEndpoint:
    """A lazily opened, thread-safe client for one JSON endpoint (`base_url + path`) with retries.

    ``timeout`` bounds each read; ``deadline`` (default ``timeout * (max_retries + 1)``) bounds a whole
    POST, retries included; ``max_bytes`` caps a decoded answer. Subclasses set `error`, the exception
    their callers catch. `_post` is the blocking call, `_apost` the same call awaited on an event loop
    (one `httpx.AsyncClient` per running loop, opened on first use there)."""

    error: type[Exception] = RuntimeError

    def __init__(self, base_url: str, path: str, api_key: str | None, timeout: float, max_retries: int,
                 backoff: float, deadline: float | None = None, max_bytes: int = MAX_BYTES) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + path
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.deadline = timeout * (max_retries + 1) if deadline is None else deadline
        self.max_bytes = max_bytes
        if self.deadline <= 0 or max_bytes <= 0:
            raise InvalidValue(f"deadline and max_bytes must be positive, got {self.deadline}, {max_bytes}")
        self._api_key = api_key
        self._client: httpx.Client | None = None
        self._aclients = LoopClients(lambda: bounded_async_client(self.timeout, self._headers()))
        self._lock = threading.Lock()

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def close(self) -> None:
        """Close the blocking client; async clients are dropped (``aclose`` closes the running loop's)."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
            self._aclients.clear()

    async def aclose(self) -> None:
        """Close the running loop's async client."""
        await self._aclients.aclose()

    def _post(self, payload: dict[str, Any]) -> Any:
        with self._lock:
            if self._client is None:
                self._client = bounded_client(self.timeout, self._headers())
            client = self._client
        return post_json(client, self.url, payload, max_retries=self.max_retries, backoff=self.backoff,
                         error=self.error, deadline=self.deadline, max_bytes=self.max_bytes)

    async def _apost(self, payload: dict[str, Any]) -> Any:
        return await apost_json(self._aclients.get(), self.url, payload, max_retries=self.max_retries,
                                backoff=self.backoff, error=self.error, deadline=self.deadline,
                                max_bytes=self.max_bytes)
