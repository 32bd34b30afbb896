"""``GET /metrics``: what the service did, in Prometheus' text format (``tracerag serve --metrics``).

Why a small writer of our own and not ``prometheus-client``: the service needs a few metric families, all
updated on the event loop, and the text format is a few lines of spec; the default install stays as it is.
The families:

- ``tracerag_requests_total{route, method, status}``: answered requests, counted when the response starts
  (errors included: a 401, 413 or 503 is as much the service's doing as a 200);
- ``tracerag_request_duration_seconds{route}``: a histogram of the time from the request's arrival to the end
  of its response;
- ``tracerag_lm_fallbacks_total{program, stage}``: LM stages that took their no-LM fallback (an LM that
  failed, timed out, answered unusably, or is skipped by the circuit breaker): the answers' ``lm_fallbacks``;
- ``tracerag_requests_in_flight``: requests received and not yet answered;
- ``tracerag_lm_breaker_open``: 1 while the circuit breaker skips the configured LM (it failed repeatedly;
  every stage answers on its no-LM path until a probe call succeeds), 0 otherwise; absent with no LM.
- ``tracerag_embedding_cache_errors_total{cause}``: failures of this process's embedding caches (every
  ``CachedEmbedder``, the one serving uses included) by cause, each cause listed from 0: the answers were
  computed without the cache, slower (:mod:`tracerag.embedding.cache_failures`).

``route`` is the endpoint's path for the service's own routes and ``other`` for any other path, so a client
probing random paths cannot grow the label set. Why off by default: the counts tell whoever reads them how
the service is used; enabled, ``/metrics`` is behind the same ``Host`` check and bearer token as the programs
(a Prometheus job sends ``authorization: Bearer <token>``; see docs/deployment.md).
"""

from __future__ import annotations

import bisect
import threading
import time
from collections import defaultdict
from collections.abc import Callable

__all__ = ["BUCKETS", "CONTENT_TYPE", "MetricsMiddleware", "ServiceMetrics", "configured_lm_breaker_open"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# seconds: a commands call without an LM answers in a few ms; an LM stage takes seconds
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(names: tuple[str, ...], values: tuple[str, ...]) -> str:
    return ",".join(f'{n}="{_escape(v)}"' for n, v in zip(names, values, strict=True))


def _number(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


class ServiceMetrics:
    """The counters behind ``/metrics``; :meth:`render` writes them. Thread-safe (a lock per update: the
    service updates them from the event loop, tests and embedders may from threads)."""

    def __init__(self, routes: tuple[str, ...] = (), breaker_open: Callable[[], bool | None] | None = None) -> None:
        self.routes = frozenset(routes)
        self.breaker_open = breaker_open  # None from it: no LM configured, no sample
        self._lock = threading.Lock()
        self._requests: defaultdict[tuple[str, str, str], int] = defaultdict(int)
        self._buckets: dict[str, list[int]] = {}  # route -> count per bucket (not cumulative), + the +Inf one
        self._sums: defaultdict[str, float] = defaultdict(float)
        self._fallbacks: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.in_flight = 0

    def route(self, path: str) -> str:
        """The ``route`` label of a path: itself when it is one of the service's routes, else ``other``."""
        return path if path in self.routes else "other"

    def started(self) -> None:
        with self._lock:
            self.in_flight += 1

    def finished(self, route: str, method: str, status: int, seconds: float) -> None:
        with self._lock:
            self.in_flight -= 1
            self._requests[(route, method, str(status))] += 1
            counts = self._buckets.setdefault(route, [0] * (len(BUCKETS) + 1))
            counts[bisect.bisect_left(BUCKETS, seconds)] += 1
            self._sums[route] += seconds

    def fell_back(self, program: str, stages: list[str]) -> None:
        """Count the LM stages of one answer that took their fallback (its ``lm_fallbacks``)."""
        with self._lock:
            for stage in stages:
                self._fallbacks[(program, str(stage))] += 1

    def render(self) -> str:
        """The metrics in Prometheus' text exposition format (0.0.4)."""
        with self._lock:
            requests = sorted(self._requests.items())
            buckets = {route: list(counts) for route, counts in sorted(self._buckets.items())}
            sums = dict(self._sums)
            fallbacks = sorted(self._fallbacks.items())
            in_flight = self.in_flight
        lines = ["# HELP tracerag_requests_total HTTP requests answered, by route, method and status.",
                 "# TYPE tracerag_requests_total counter"]
        lines += [f"tracerag_requests_total{{{_labels(('route', 'method', 'status'), key)}}} {count}"
                  for key, count in requests]
        lines += ["# HELP tracerag_request_duration_seconds Time from a request's arrival to the end of its response.",
                  "# TYPE tracerag_request_duration_seconds histogram"]
        for route, counts in buckets.items():
            label = _labels(("route",), (route,))
            running = 0
            for bound, count in zip((*BUCKETS, float("inf")), counts, strict=True):
                running += count
                le = "+Inf" if bound == float("inf") else _number(bound)
                lines.append(f'tracerag_request_duration_seconds_bucket{{{label},le="{le}"}} {running}')
            lines.append(f"tracerag_request_duration_seconds_sum{{{label}}} {sums[route]!r}")
            lines.append(f"tracerag_request_duration_seconds_count{{{label}}} {running}")
        lines += ["# HELP tracerag_lm_fallbacks_total LM stages that took their no-LM fallback, by program and stage.",
                  "# TYPE tracerag_lm_fallbacks_total counter"]
        lines += [f"tracerag_lm_fallbacks_total{{{_labels(('program', 'stage'), key)}}} {count}"
                  for key, count in fallbacks]
        lines += ["# HELP tracerag_requests_in_flight Requests received and not yet answered.",
                  "# TYPE tracerag_requests_in_flight gauge", f"tracerag_requests_in_flight {in_flight}"]
        from ..embedding.cache_failures import cache_errors

        lines += ["# HELP tracerag_embedding_cache_errors_total Embedding cache failures, by cause (answers computed "
                  "without the cache).", "# TYPE tracerag_embedding_cache_errors_total counter"]
        lines += [f"tracerag_embedding_cache_errors_total{{{_labels(('cause',), (cause,))}}} {count}"
                  for cause, count in cache_errors().items()]
        is_open = self.breaker_open() if self.breaker_open is not None else None
        if is_open is not None:
            lines += ["# HELP tracerag_lm_breaker_open 1 while the circuit breaker skips the configured LM.",
                      "# TYPE tracerag_lm_breaker_open gauge", f"tracerag_lm_breaker_open {int(is_open)}"]
        return "\n".join(lines) + "\n"


def configured_lm_breaker_open() -> bool | None:
    """Whether the circuit breaker skips the LM configured for this process (``dspy.settings.lm``); None
    without one. (A predictor with an LM of its own has its own breaker key, not reported here.)"""
    import dspy

    from ..lm.breaker import BREAKER

    lm = dspy.settings.lm
    return None if lm is None else BREAKER.is_open(lm)


class MetricsMiddleware:
    """ASGI middleware, outermost: counts every HTTP request, including those the ``Host`` check or the token
    refuses, with its status and duration, and how many are in flight."""

    def __init__(self, app, metrics: ServiceMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        metrics, started, status = self.metrics, time.perf_counter(), 500  # no response started: counted as 500
        metrics.started()

        async def send_status(message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            metrics.finished(metrics.route(scope["path"]), scope["method"], status, time.perf_counter() - started)
