"""A stand-in OpenTelemetry collector for tests: OTLP/HTTP (protobuf) on 127.0.0.1, spans kept in memory.

``with OTLPStub() as collector: ...`` serves ``POST /v1/traces`` (what the SDK's OTLP/HTTP exporter sends
when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is ``collector.url``); ``collector.spans()`` decodes what arrived with
the protocol's own message classes (``opentelemetry-proto``, installed with the exporter).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class OTLPStub:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                if self.path == "/v1/traces" and self.headers.get("content-type") == "application/x-protobuf":
                    with stub._lock:
                        stub.bodies.append(body)
                    status = 200
                else:
                    status = 404
                self.send_response(status)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def spans(self) -> list[dict]:
        """Every span received: name, trace and span ids (hex), parent id ("" for a root) and attributes."""
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        with self._lock:
            bodies = list(self.bodies)
        found = []
        for body in bodies:
            request = ExportTraceServiceRequest.FromString(body)
            for resource_spans in request.resource_spans:
                resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        attributes = {a.key: _value(a.value) for a in span.attributes}
                        found.append({"name": span.name, "trace": span.trace_id.hex(), "id": span.span_id.hex(),
                                      "parent": span.parent_span_id.hex(), "attributes": attributes,
                                      "service": resource.get("service.name")})
        return found

    def __enter__(self) -> OTLPStub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def _value(value):
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None
