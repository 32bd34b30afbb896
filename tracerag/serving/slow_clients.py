"""Dropping slow and idle clients: the deadlines uvicorn lacks, and the uvicorn settings that bound the rest.

Why: uvicorn's only client timeout is keep-alive, armed after a response and cancelled by any byte received,
so a client that opens a connection and sends a request a byte at a time, or never finishes it (slowloris),
holds its connection, file descriptor and memory for ever; a thousand of them exhaust a small server. ASGI
middleware cannot help: the app is only called once the request line and headers are complete.

:class:`DeadlineH11Protocol` is uvicorn's h11 protocol with two deadlines on what the client sends:

- **head**: the request line and headers must be complete within ``header_timeout`` seconds of the connection
  opening, or of the previous response ending (a keep-alive connection that stays idle is closed earlier, after
  ``keep_alive`` seconds, by uvicorn);
- **body**: the body must be complete within ``body_timeout`` seconds of the headers.

A client that misses one is answered ``408`` (JSON ``{error, fields}``) when it had started a request the
service has not answered yet, and the connection is closed. Only receiving is timed: a program call that takes
long is never cut short. uvicorn's own settings bound the rest: idle keep-alive connections and how much of
an unfinished request head h11 buffers. uvicorn's ``limit_concurrency`` is left unset on purpose: it counts
open connections, slow ones included, so a few hundred half-sent requests would get every other client a 503;
the app bounds the program calls it holds instead (``tracerag serve --max-pending``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..errors import InvalidValue

__all__ = ["ClientLimits", "DeadlineH11Protocol", "uvicorn_config"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ClientLimits:
    """How long a client may take to send a request, and how much of an unfinished one is buffered
    (``tracerag serve --header-timeout``, ``--body-timeout``, ``--keep-alive``)."""

    header_timeout: float = 10.0  # seconds for the request line and headers
    body_timeout: float = 30.0  # seconds for the body once the headers are in (1 MiB at ~35 kB/s)
    keep_alive: float = 5.0  # seconds an idle keep-alive connection stays open (uvicorn's timeout_keep_alive)
    max_header_bytes: int = 16 * 1024  # unfinished request head buffered; past it 400 (h11_max_incomplete_event_size)

    def __post_init__(self) -> None:
        for name in ("header_timeout", "body_timeout", "keep_alive", "max_header_bytes"):
            if not getattr(self, name) > 0:
                raise InvalidValue(f"ClientLimits.{name} must be positive, not {getattr(self, name)!r}")


def _timeout_response(what: str, seconds: float) -> bytes:
    body = json.dumps({"error": f"{what} not received within {seconds:g} s; the connection is closed",
                       "fields": []}).encode()
    head = (f"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n")
    return head.encode("ascii") + body


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol plus a deadline on each request's head and on its body (see the module docstring).

    The phase is read from h11's state for the client after every step that can change it: ``IDLE`` (waiting
    for a request line and headers), ``SEND_BODY`` (waiting for the body), anything else (the request is in,
    or the connection is ending: no deadline)."""

    def __init__(self, *args: Any, limits: ClientLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits
        self._phase: str | None = None
        self._deadline: Any = None  # asyncio.TimerHandle

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._set_phase(None)
        super().connection_lost(exc)

    def _watch(self) -> None:
        state = self.conn.their_state
        if self.transport is None or self.transport.is_closing():
            self._set_phase(None)
        elif state is h11.IDLE:
            self._set_phase("request head")
        elif state is h11.SEND_BODY:
            self._set_phase("request body")
        else:
            self._set_phase(None)

    def _set_phase(self, phase: str | None) -> None:
        if phase == self._phase:
            return  # the deadline runs from the start of the phase, not from the last byte
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._phase = phase
        if phase is not None:
            seconds = self.limits.header_timeout if phase == "request head" else self.limits.body_timeout
            self._deadline = self.loop.call_later(seconds, self._expire, phase, seconds)

    def _expire(self, phase: str, seconds: float) -> None:
        self._deadline = None
        self._phase = None
        if self.transport.is_closing():
            return
        cycle = self.cycle if phase == "request body" else None
        if cycle is None:
            started = bool(self.conn.trailing_data[0])  # part of a request line or header arrived
        else:
            started = not cycle.response_started
        logger.info("dropping %s: %s not complete after %g s", self.client, phase, seconds)
        if started:  # a client mid-request learns why; an idle one is just closed (it may be a pooled connection)
            self.transport.write(_timeout_response(phase, seconds))
        if cycle is not None and not cycle.response_complete:  # the app waiting for the body sees a disconnect
            cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()


def uvicorn_config(app, *, host: str, port: int, limits: ClientLimits | None = None, **options: Any):
    """A ``uvicorn.Config`` serving ``app`` with ``limits`` (default :class:`ClientLimits`) enforced; ``options``:
    further uvicorn settings."""
    import functools

    import uvicorn

    limits = limits or ClientLimits()
    return uvicorn.Config(app, host=host, port=port, http=functools.partial(DeadlineH11Protocol, limits=limits),
                          ws="none", timeout_keep_alive=limits.keep_alive,
                          h11_max_incomplete_event_size=limits.max_header_bytes, **options)
