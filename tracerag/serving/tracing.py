"""``tracerag serve --trace otel|mlflow``: each request one trace, holding the program's spans.

The programs already report what they do through DSPy's callbacks: the program and its predictors as
module spans, every LM call, and each retrieval step or tool call as a tool span
(:mod:`tracerag.programs.spans`). Tracing only has to listen:

- ``otel``: :class:`OpenTelemetrySpans`, a DSPy callback that turns those events into OpenTelemetry spans,
  exported over OTLP/HTTP (``pip install 'tracerag[otel]'``) to where the standard ``OTEL_EXPORTER_OTLP_*``
  variables point (default ``http://localhost:4318/v1/traces``: a local collector). The service opens one
  ``POST /v1/<program>`` server span per request; the program's spans nest under it, each parented by the
  call that was active when it started (DSPy's ``ACTIVE_CALL_ID``), so concurrent requests never mix.
  Spans are batched and sent from a background thread; the batch left is flushed when the service stops.
- ``mlflow``: ``mlflow.dspy.autolog()`` (``pip install 'tracerag[mlflow]'``), which builds its traces from the
  same callbacks; the program's module span is the root of each trace, logged where ``MLFLOW_TRACKING_URI``
  points (default: ``./mlruns``).

Span attributes carry the inputs and outputs (``input.value``, ``output.value``, as JSON, each cut at
:data:`MAX_ATTRIBUTE` characters): traces hold the users' questions, so send them only where the questions
may go.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterator
from typing import Any

from dspy.utils.callback import ACTIVE_CALL_ID, BaseCallback

from ..errors import InvalidValue

__all__ = ["MAX_ATTRIBUTE", "TRACERS", "OpenTelemetrySpans", "Tracing", "start_tracing"]

logger = logging.getLogger(__name__)

TRACERS = ("otel", "mlflow")
MAX_ATTRIBUTE = 4096  # characters of one input or output attribute
SCOPE = "tracerag.serving"


def _json(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=_plain)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= MAX_ATTRIBUTE else text[:MAX_ATTRIBUTE] + "…"


def _plain(value: Any) -> Any:
    for method in ("model_dump", "toDict"):
        if hasattr(value, method):
            with contextlib.suppress(Exception):
                return getattr(value, method)()
    return str(value)


class OpenTelemetrySpans(BaseCallback):
    """A DSPy callback that reports modules, LM calls and tool spans as OpenTelemetry spans of ``tracer``.

    A span's parent is the span of the DSPy call active when it started; a call with none (the program
    itself) is parented by the current OpenTelemetry context: the request's server span."""

    def __init__(self, tracer) -> None:
        from opentelemetry import trace

        self._trace = trace
        self.tracer = tracer
        self._spans: dict[str, Any] = {}  # call_id -> open span
        self._lock = threading.Lock()

    def _start(self, call_id: str, name: str, kind: str, inputs: dict[str, Any], **attributes: Any) -> None:
        parent_id = ACTIVE_CALL_ID.get()
        with self._lock:
            parent = self._spans.get(parent_id) if parent_id else None
        context = self._trace.set_span_in_context(parent) if parent is not None else None
        span = self.tracer.start_span(name, context=context, attributes={
            "tracerag.kind": kind, "input.value": _json(inputs),
            **{k: v for k, v in attributes.items() if v is not None}})
        with self._lock:
            self._spans[call_id] = span

    def _end(self, call_id: str, outputs: Any, exception: BaseException | None) -> None:
        with self._lock:
            span = self._spans.pop(call_id, None)
        if span is None:
            return
        if exception is not None:
            span.record_exception(exception)
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, f"{type(exception).__name__}"))
        elif outputs is not None:
            span.set_attribute("output.value", _json(outputs))
        span.end()

    def on_module_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        args, kwargs = inputs.get("args"), inputs.get("kwargs")
        if not args and isinstance(kwargs, dict):  # Module.__call__(**kwargs): the program's own arguments
            inputs = kwargs
        self._start(call_id, f"{type(instance).__name__}.forward", "module", inputs)

    def on_module_end(self, call_id: str, outputs: Any | None, exception: Exception | None = None) -> None:
        self._end(call_id, outputs, exception)

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        model = getattr(instance, "model", None)
        self._start(call_id, f"LM {model}" if model else "LM", "lm", inputs,
                    **{"gen_ai.request.model": model if isinstance(model, str) else None})

    def on_lm_end(self, call_id: str, outputs: Any | None, exception: Exception | None = None) -> None:
        self._end(call_id, outputs, exception)

    def on_tool_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        self._start(call_id, f"Tool.{getattr(instance, 'name', type(instance).__name__)}", "tool", inputs)

    def on_tool_end(self, call_id: str, outputs: Any | None, exception: Exception | None = None) -> None:
        self._end(call_id, outputs, exception)


class Tracing:
    """What the service needs of a tracer: a span around each request, and a flush when it stops.

    ``Tracing()`` (no tracer) costs nothing per request."""

    def __init__(self, name: str | None = None, tracer=None, provider=None) -> None:
        self.name = name
        self.tracer = tracer  # an OpenTelemetry tracer; None: the program's own spans are the traces (mlflow)
        self.provider = provider

    @contextlib.contextmanager
    def request(self, method: str, path: str) -> Iterator[Any]:
        """A server span named ``"POST /v1/rag"`` made current while the request runs (None without otel);
        the caller sets ``http.response.status_code`` on it."""
        if self.tracer is None:
            yield None
            return
        from opentelemetry.trace import SpanKind

        with self.tracer.start_as_current_span(f"{method} {path}", kind=SpanKind.SERVER, attributes={
                "http.request.method": method, "url.path": path}) as span:
            yield span

    def shutdown(self) -> None:
        """Send the spans still batched (the service is stopping)."""
        provider, self.provider = self.provider, None  # once: the lifespan and the command both stop it
        if provider is not None:
            try:
                provider.shutdown()
            except Exception as exc:  # a collector that is down must not keep the service from stopping
                logger.warning("flushing the last spans failed: %s", exc)


def _missing(extra: str, exc: ImportError) -> RuntimeError:
    return RuntimeError(f"--trace {extra} needs {exc.name}: pip install 'tracerag[{extra}]'")


def start_tracing(name: str | None, exporter=None) -> Tracing:
    """Turn tracing on for this process: ``"otel"`` or ``"mlflow"`` (None: off). Registers the DSPy callback
    (``dspy.configure(callbacks=...)``), so every program call in the process is traced.

    ``exporter``: an OpenTelemetry span exporter to use instead of OTLP/HTTP (tests: an in-memory one).
    A missing package is a RuntimeError naming the extra to install."""
    import dspy

    if name is None:
        return Tracing()
    if name not in TRACERS:
        raise InvalidValue(f"unknown tracer {name!r}; choose from {', '.join(TRACERS)}")
    if name == "mlflow":
        try:
            import mlflow.dspy  # needs pandas besides mlflow-skinny
        except ImportError as exc:
            raise _missing("mlflow", exc) from None
        mlflow.dspy.autolog()
        return Tracing("mlflow")
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
        if exporter is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as exc:
        raise _missing("otel", exc) from None
    import tracerag

    # the service's own provider, not the global one: an app that embeds the service keeps its own tracing
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or "tracerag",
                                "service.version": tracerag.__version__})
    provider = TracerProvider(resource=resource)
    if exporter is None:  # endpoint, headers, timeout: the standard OTEL_EXPORTER_OTLP_* variables
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    else:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer(SCOPE, tracerag.__version__)
    dspy.configure(callbacks=[*(dspy.settings.get("callbacks", None) or []), OpenTelemetrySpans(tracer)])
    return Tracing("otel", tracer, provider)
