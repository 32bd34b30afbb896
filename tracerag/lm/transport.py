"""The wire under every LM call tracerag builds: a deadline per attempt and a cap on the reply's bytes.

Why: DSPy's native engine (lm15) bounds each socket read, not a call. A server that drips a byte a
second, or declares a 10 GB body and sends a kilobyte every half second, keeps a call alive for ever;
one that streams an endless body or a gzip bomb grows the process by gigabytes (lm15 reads the whole
body, and inflates each chunk without a limit). Retries and timeouts above the wire cannot fix that.

So the LMs ``bounded_lm.make_lm`` builds (``BoundedLM``) hand DSPy's native engine this transport instead of
lm15's own. It speaks lm15's transport interface (``stream(TransportRequest) -> TransportResponse``) over
httpx with the pieces of ``http_json`` that already hold against hostile servers:

- **a deadline per attempt**: ``timeout`` seconds from the start of an attempt to the last byte of its
  reply (connect, send, headers and every body read are clamped to the time left), and never past the
  whole call's deadline (``call_deadline``). DSPy's retries start a new attempt, so one call lasts at most
  ``timeout * (retries + 1)`` plus the waits between attempts;
- **a cap on the decoded reply** (``MAX_REPLY_BYTES``): gzip/deflate are inflated here in bounded steps,
  so a gzip bomb stops at the cap. A reply over the cap fails at once, not retried (the same server
  would send it again).

A failure surfaces as lm15's own errors (a read timeout, a connection error: DSPy retries them; the cap:
``CollectionLimitError``, which it does not), so DSPy's callbacks, history, cache and retries are as
with lm15's transport. Which engine DSPy picks is untouched: ``BoundedEngines`` (the LM's engine
store) gives each native engine DSPy builds this transport before its first call.

When DSPy sends a call through LiteLLM instead, an ``openai/…`` model goes out through the OpenAI SDK
over LiteLLM's shared httpx sessions; ``install_litellm_sessions`` makes those ``BoundedHTTPX`` /
``AsyncBoundedHTTPX``, which apply the same bounds to the requests made inside a bounded LM call
(``call_deadline``) and pass every other request through.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace

import httpx
from dspy._vendor.lm15.transports import (
    AsyncTransportResponse,
    ConnectError,
    ConnectTimeout,
    ProtocolError,
    ReadError,
    ReadTimeout,
    TransportRequest,
    TransportResponse,
    WriteError,
)
from dspy.clients.engines.lm15_engine import AsyncLM15Engine
from dspy.lm15 import CollectionLimitError

from ..http_json import (
    _deadline,
    _Decoder,
    bounded_async_client,
    bounded_client,
    deadline_transport,
    shared_ssl_context,
)
from .call_limit import at_most, call_limit

__all__ = ["MAX_REPLY_BYTES", "AsyncBoundedHTTPX", "AsyncBoundedTransport", "BoundedEngines", "BoundedHTTPX",
           "BoundedTransport", "at_most", "attempt_end", "call_deadline", "call_limit", "call_time_left",
           "install_litellm_sessions"]

MAX_REPLY_BYTES = 8 * 2**20  # a chat reply is kilobytes; logprobs of a long one a few MB
DEFAULT_TIMEOUT = 600.0  # seconds per attempt when the LM sets no timeout (lm15's own read default)

# the bounded LM call in progress: [its deadline (set when its first attempt starts), its seconds]
_call: contextvars.ContextVar[list | None] = contextvars.ContextVar("tracerag_lm_call", default=None)
# (seconds per attempt, reply cap) of the bounded LM call in progress, for the LiteLLM sessions
_limits: contextvars.ContextVar[tuple[float, int] | None] = contextvars.ContextVar("tracerag_lm_limits", default=None)


@contextmanager
def call_deadline(seconds: float, *, attempt: float | None = None, max_bytes: int = MAX_REPLY_BYTES):
    """No attempt made inside this block runs past ``seconds`` after the first one started (the clock
    starts on the wire, so DSPy's own first-call setup is not counted). With ``attempt`` (seconds), the
    LiteLLM sessions (``install_litellm_sessions``) also bound each attempt made inside the block by it,
    and its reply by ``max_bytes``."""
    call = _call.set([None, seconds])
    limits = _limits.set((attempt, max_bytes) if attempt else _limits.get())
    try:
        yield
    finally:
        _limits.reset(limits)
        _call.reset(call)


def call_time_left() -> float | None:
    """Seconds left before the deadline of the bounded LM call in progress (None: no call, or its first
    attempt has not started). A wait before a retry is cut to it: past the deadline no attempt can run."""
    call = _call.get()
    return None if call is None or call[0] is None else max(call[0] - time.monotonic(), 0.0)


def _attempt_end(timeout: float) -> float:
    now, call = time.monotonic(), _call.get()
    if call is None:
        return now + timeout
    if call[0] is None:
        call[0] = now + call[1]
    return min(now + timeout, call[0])


def attempt_end(timeout: float) -> float:
    """When an attempt starting now must end (``time.monotonic``): ``timeout`` seconds on, and never past the
    deadline of the bounded LM call in progress, whose clock this first attempt starts. An in-process model
    (``local_model``) bounds its calls by it, as the transports bound theirs."""
    return _attempt_end(timeout)


def _timed_out(url: str, timeout: float) -> ReadTimeout:
    return ReadTimeout(f"read timed out: no complete reply from {url} within the {timeout:g} s deadline of "
                       "one attempt (--lm-timeout)")


def _lm15_error(exc: httpx.TransportError, url: str, timeout: float) -> Exception:
    """The lm15 transport error DSPy expects for an httpx one (DSPy retries these)."""
    if isinstance(exc, httpx.ConnectTimeout):
        return ConnectTimeout(f"timed out connecting to {url}")
    if isinstance(exc, httpx.TimeoutException):
        return _timed_out(url, timeout)
    if isinstance(exc, httpx.ConnectError):
        return ConnectError(f"failed to connect to {url}: {exc}")
    if isinstance(exc, httpx.WriteError):
        return WriteError(f"write to {url} failed: {exc}")
    if isinstance(exc, httpx.RemoteProtocolError | httpx.LocalProtocolError):
        return ProtocolError(f"{url}: {exc}")
    return ReadError(f"read from {url} failed: {type(exc).__name__}: {exc}")


class _Reply:
    """One reply's body: decoded in bounded steps, counted against the cap, cut at the deadline."""

    def __init__(self, response: httpx.Response, url: str, timeout: float, end: float, max_bytes: int) -> None:
        self.url, self.timeout, self.end, self.max_bytes = url, timeout, end, max_bytes
        self.total = 0
        try:
            self.decoder = _Decoder(response.headers.get("Content-Encoding", ""))
        except ValueError as exc:
            raise ProtocolError(f"{url}: {exc}") from None
        # the body goes up decoded: drop the headers that describe it on the wire
        self.headers = [(k, v) for k, v in response.headers.multi_items()
                        if k.lower() not in ("content-encoding", "content-length")]

    def time_left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise _timed_out(self.url, self.timeout)
        return left

    def decode(self, raw: bytes) -> Iterator[bytes]:
        try:
            for piece in self.decoder.decode(raw):
                self.total += len(piece)
                if self.total > self.max_bytes:
                    raise CollectionLimitError(
                        f"the reply from {self.url} is larger than {self.max_bytes} bytes (decoded); not read further",
                        limit="bytes", maximum=self.max_bytes)
                yield piece
        except zlib.error as exc:
            raise ProtocolError(f"{self.url}: undecodable {self.decoder.coding} body ({exc})") from None


def _httpx_request(client: httpx.Client | httpx.AsyncClient, request: TransportRequest, timeout: float):
    headers = [(k, v) for k, v in request.headers if k.lower() not in ("accept-encoding", "content-length", "host")]
    return client.build_request(request.method, request.url, headers=headers, content=request.body or None,
                                timeout=timeout)


class BoundedTransport:
    """lm15's synchronous transport interface over httpx, bounded per attempt (see the module doc).

    ``timeout``: seconds one attempt may take, connect to last byte; ``max_bytes``: the decoded reply cap."""

    def __init__(self, timeout: float | None = None, max_bytes: int = MAX_REPLY_BYTES) -> None:
        self.timeout = float(timeout or DEFAULT_TIMEOUT)
        self.max_bytes = max_bytes
        self._client = bounded_client(self.timeout)

    def stream(self, request: TransportRequest) -> TransportResponse:
        end = _attempt_end(self.timeout)
        token = _deadline.set(end)  # every socket operation of the client is clamped to it
        try:
            response = self._client.send(_httpx_request(self._client, request, self.timeout), stream=True)
        except httpx.TransportError as exc:
            raise _lm15_error(exc, request.url, self.timeout) from None
        finally:
            _deadline.reset(token)
        try:
            reply = _Reply(response, request.url, self.timeout, end, self.max_bytes)
        except BaseException:
            response.close()
            raise
        return TransportResponse(status=response.status_code, reason=response.reason_phrase, headers=reply.headers,
                                 http_version=response.http_version, chunks=self._body(response, reply),
                                 release=lambda consumed: response.close())

    def _body(self, response: httpx.Response, reply: _Reply) -> Iterator[bytes]:
        raw_chunks = response.iter_raw()
        while True:
            reply.time_left()
            token = _deadline.set(reply.end)
            try:
                raw = next(raw_chunks, None)
            except httpx.TransportError as exc:
                raise _lm15_error(exc, reply.url, self.timeout) from None
            finally:
                _deadline.reset(token)
            if raw is None:
                return
            yield from reply.decode(raw)

    def close(self) -> None:
        self._client.close()


class AsyncBoundedTransport:
    """``BoundedTransport`` for lm15's async engine: each wait is cut at the deadline on the event loop."""

    def __init__(self, timeout: float | None = None, max_bytes: int = MAX_REPLY_BYTES) -> None:
        self.timeout = float(timeout or DEFAULT_TIMEOUT)
        self.max_bytes = max_bytes
        self._client = bounded_async_client(self.timeout)

    @asynccontextmanager
    async def stream(self, request: TransportRequest) -> AsyncIterator[AsyncTransportResponse]:
        end = _attempt_end(self.timeout)
        try:
            async with asyncio.timeout(max(end - time.monotonic(), 0.0)):
                response = await self._client.send(_httpx_request(self._client, request, self.timeout),
                                                   stream=True)
        except TimeoutError:
            raise _timed_out(request.url, self.timeout) from None
        except httpx.TransportError as exc:
            raise _lm15_error(exc, request.url, self.timeout) from None
        try:
            reply = _Reply(response, request.url, self.timeout, end, self.max_bytes)

            async def release(consumed: bool) -> None:
                await response.aclose()

            yield AsyncTransportResponse(status=response.status_code, reason=response.reason_phrase,
                                         headers=reply.headers, http_version=response.http_version,
                                         chunks=self._body(response, reply), release=release)
        finally:
            await response.aclose()

    async def _body(self, response: httpx.Response, reply: _Reply) -> AsyncIterator[bytes]:
        raw_chunks = response.aiter_raw()
        while True:
            try:
                async with asyncio.timeout(reply.time_left()):
                    raw = await anext(raw_chunks, None)
            except TimeoutError:
                raise _timed_out(reply.url, self.timeout) from None
            except httpx.TransportError as exc:
                raise _lm15_error(exc, reply.url, self.timeout) from None
            if raw is None:
                return
            for piece in reply.decode(raw):
                yield piece

    async def aclose(self) -> None:
        await self._client.aclose()


class BoundedEngines(dict):
    """An LM's store of native engines (DSPy's ``LM._engine_store``: one per client setting and event
    loop) that gives each engine DSPy puts in it a bounded transport, before the engine's first call.

    DSPy builds a native engine from a ``RouterConfig`` whose ``timeouts`` shape lm15's own transport;
    here the engine gets the same config with ``transport=`` a ``BoundedTransport`` of that read timeout
    instead (the async engine an ``AsyncBoundedTransport``). An engine that is not lm15's is left as is."""

    def __init__(self, max_bytes: int = MAX_REPLY_BYTES) -> None:
        super().__init__()
        self.max_bytes = max_bytes

    def __setitem__(self, key, engine) -> None:
        config, router = getattr(engine, "config", None), getattr(engine, "router", None)
        if config is not None and router is not None and getattr(config, "transport", "?") is None:
            timeout = config.timeouts.read if config.timeouts is not None else None
            kind = AsyncBoundedTransport if isinstance(engine, AsyncLM15Engine) else BoundedTransport
            transport = kind(timeout, self.max_bytes)
            engine.config = replace(config, timeouts=None, transport=transport)
            engine.router = type(router)(engine.config)
        super().__setitem__(key, engine)

    def transports(self, loop=None) -> list:
        """The bounded transports of the engines held for ``loop`` (None: the synchronous ones)."""
        return [engine.config.transport for key, engine in list(self.items())
                if key[0] is loop and isinstance(getattr(getattr(engine, "config", None), "transport", None),
                                                 BoundedTransport | AsyncBoundedTransport)]


# -- LiteLLM ---------------------------------------------------------------------------------------
# A call DSPy routes through LiteLLM goes out through the OpenAI SDK for OpenAI-compatible providers,
# over ``litellm.client_session`` / ``aclient_session`` when they are set. These httpx transports bound
# the requests made while a bounded LM call is in progress (``call_deadline(attempt=...)``) the same way,
# and pass any other request through untouched (another library's LiteLLM calls are not ours to bound).


class _BoundedStream(httpx.SyncByteStream):
    def __init__(self, raw: httpx.SyncByteStream, reply: _Reply) -> None:
        self._raw, self._reply = raw, reply

    def __iter__(self) -> Iterator[bytes]:
        raw_chunks = iter(self._raw)
        while True:
            try:
                self._reply.time_left()
            except ReadTimeout as exc:
                raise httpx.ReadTimeout(str(exc)) from None
            token = _deadline.set(self._reply.end)
            try:
                raw = next(raw_chunks, None)
            finally:
                _deadline.reset(token)
            if raw is None:
                return
            yield from self._reply.decode(raw)

    def close(self) -> None:
        self._raw.close()


class BoundedHTTPX(httpx.BaseTransport):
    """An httpx transport that bounds each request made inside a bounded LM call: the attempt's deadline
    on connect, headers and every body read, and the decoded reply against the cap."""

    def __init__(self) -> None:
        self._inner = deadline_transport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        limits = _limits.get()
        if limits is None:
            return self._inner.handle_request(request)
        timeout, max_bytes = limits
        end = _attempt_end(timeout)
        token = _deadline.set(end)
        try:
            response = self._inner.handle_request(request)
        finally:
            _deadline.reset(token)
        try:
            reply = _Reply(response, str(request.url), timeout, end, max_bytes)
        except BaseException:
            response.close()
            raise
        return httpx.Response(response.status_code, headers=reply.headers,
                              stream=_BoundedStream(response.stream, reply), extensions=response.extensions)

    def close(self) -> None:
        self._inner.close()


class _AsyncBoundedStream(httpx.AsyncByteStream):
    def __init__(self, raw: httpx.AsyncByteStream, reply: _Reply) -> None:
        self._raw, self._reply = raw, reply

    async def __aiter__(self) -> AsyncIterator[bytes]:
        raw_chunks = aiter(self._raw)
        while True:
            try:
                async with asyncio.timeout(self._reply.time_left()):
                    raw = await anext(raw_chunks, None)
            except (TimeoutError, ReadTimeout):
                raise httpx.ReadTimeout(str(_timed_out(self._reply.url, self._reply.timeout))) from None
            if raw is None:
                return
            for piece in self._reply.decode(raw):
                yield piece

    async def aclose(self) -> None:
        await self._raw.aclose()


class AsyncBoundedHTTPX(httpx.AsyncBaseTransport):
    """``BoundedHTTPX`` for an event loop (each wait cut at the deadline there); one connection pool per
    running loop, so a session shared by many ``asyncio.run()`` calls never reuses a dead loop's."""

    def __init__(self) -> None:
        self._inner: dict[asyncio.AbstractEventLoop, httpx.AsyncHTTPTransport] = {}

    def _transport(self) -> httpx.AsyncHTTPTransport:
        loop = asyncio.get_running_loop()
        for closed in [other for other in self._inner if other.is_closed()]:
            del self._inner[closed]
        if loop not in self._inner:
            self._inner[loop] = httpx.AsyncHTTPTransport(verify=shared_ssl_context())
        return self._inner[loop]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        inner, limits = self._transport(), _limits.get()
        if limits is None:
            return await inner.handle_async_request(request)
        timeout, max_bytes = limits
        end = _attempt_end(timeout)
        try:
            async with asyncio.timeout(max(end - time.monotonic(), 0.0)):
                response = await inner.handle_async_request(request)
        except TimeoutError:
            raise httpx.ReadTimeout(str(_timed_out(str(request.url), timeout))) from None
        try:
            reply = _Reply(response, str(request.url), timeout, end, max_bytes)
        except BaseException:
            await response.aclose()
            raise
        return httpx.Response(response.status_code, headers=reply.headers,
                              stream=_AsyncBoundedStream(response.stream, reply), extensions=response.extensions)

    async def aclose(self) -> None:
        transport = self._inner.pop(asyncio.get_running_loop(), None)
        if transport is not None:
            await transport.aclose()


def install_litellm_sessions() -> bool:
    """Give LiteLLM bounded httpx sessions (``litellm.client_session``, ``aclient_session``) unless it has
    sessions already (someone else's choice, kept). True when LiteLLM's sessions are ours."""
    import litellm

    encodings = {"Accept-Encoding": "gzip, deflate"}  # the codings inflated here in bounded steps
    if litellm.client_session is None:
        litellm.client_session = httpx.Client(transport=BoundedHTTPX(), follow_redirects=True, headers=encodings,
                                              verify=shared_ssl_context())
    if litellm.aclient_session is None:
        litellm.aclient_session = httpx.AsyncClient(transport=AsyncBoundedHTTPX(), follow_redirects=True,
                                                     headers=encodings, verify=shared_ssl_context())
    return isinstance(getattr(litellm.client_session, "_transport", None), BoundedHTTPX)
