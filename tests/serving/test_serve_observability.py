"""What an operator watches: ``GET /metrics`` (Prometheus text) and ``--trace otel`` (one trace per request).

The fast tests run a built app under a real uvicorn server in a thread, over programs made up here (a
retrieval span, an LM stage that fell back); the slow ones start the real ``tracerag serve --trace otel
--metrics`` with a stand-in OTLP collector on 127.0.0.1 and the bundled programs.
"""

from __future__ import annotations

import concurrent.futures
import json
import re
import sys

import dspy
import httpx
import pytest
from otlp_stub import OTLPStub
from serve_helpers import ServeProcess, ThreadServer

from tracerag.programs.spans import CORPUS_SEARCH, span

TOKEN = "metrics-token-91ab"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


class _Searching(dspy.Module):
    """A program with one retrieval span; a question containing "fail" reports an LM stage that fell back."""

    def forward(self, question: str):
        with span(CORPUS_SEARCH, {"query": question, "k": 1}) as step:
            step.outputs = {"ids": [f"{question}#0"], "scores": [1.0]}
        return dspy.Prediction(answer=question, lm_fallbacks=["answer", "verify"] if "fail" in question else [])


def _served(program=None):
    from tracerag.serving.programs import ENDPOINTS, ServedProgram

    return {"rag": ServedProgram(ENDPOINTS["rag"], program or _Searching())}


def parse_metrics(text: str) -> dict[tuple[str, frozenset], float]:
    """Prometheus text -> {(sample name, its labels): value}, read by Prometheus' own client parser (what a
    scraper reads: a line it cannot read fails here)."""
    from prometheus_client.parser import text_string_to_metric_families

    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def _get(samples, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


# -- /metrics ----------------------------------------------------------------------------------------------


def test_metrics_are_off_unless_enabled():
    from tracerag.serving.app import build_app

    with ThreadServer(build_app(_served())) as server:
        assert httpx.get(f"{server.url}/metrics").status_code == 404


def test_metrics_count_requests_statuses_latency_and_fallbacks():
    from tracerag.serving.app import build_app

    app = build_app(_served(), token=TOKEN, metrics=True)
    with ThreadServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        assert client.get("/metrics").status_code == 401  # behind the token like the programs
        for question in ("one", "two", "please fail"):
            assert client.post("/v1/rag", json={"question": question}, headers=AUTH).status_code == 200
        assert client.post("/v1/rag", json={"question": 3}, headers=AUTH).status_code == 422
        assert client.post("/v1/rag", json={"question": "x"}).status_code == 401
        assert client.get("/no/such/path/1", headers=AUTH).status_code == 404
        assert client.get("/no/such/path/2", headers=AUTH).status_code == 404
        assert client.get("/healthz").status_code == 200
        reply = client.get("/metrics", headers=AUTH)
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    samples = parse_metrics(reply.text)
    requests = "tracerag_requests_total"
    assert _get(samples, requests, route="/v1/rag", method="POST", status="200") == 3
    assert _get(samples, requests, route="/v1/rag", method="POST", status="422") == 1
    assert _get(samples, requests, route="/v1/rag", method="POST", status="401") == 1
    assert _get(samples, requests, route="/metrics", method="GET", status="401") == 1
    assert _get(samples, requests, route="other", method="GET", status="404") == 2  # paths never become labels
    assert _get(samples, requests, route="/healthz", method="GET", status="200") == 1
    histogram = "tracerag_request_duration_seconds"
    assert _get(samples, f"{histogram}_count", route="/v1/rag") == 5
    assert _get(samples, f"{histogram}_bucket", route="/v1/rag", le="+Inf") == 5
    bounds = sorted((float(dict(labels)["le"]), value) for (name, labels), value in samples.items()
                    if name == f"{histogram}_bucket" and dict(labels)["route"] == "/v1/rag")
    assert [v for _, v in bounds] == sorted(v for _, v in bounds)  # cumulative
    assert _get(samples, f"{histogram}_sum", route="/v1/rag") > 0
    assert _get(samples, "tracerag_lm_fallbacks_total", program="rag", stage="answer") == 1
    assert _get(samples, "tracerag_lm_fallbacks_total", program="rag", stage="verify") == 1
    assert _get(samples, "tracerag_requests_in_flight") == 1  # the scrape itself


def test_metrics_label_values_are_escaped():
    from tracerag.serving.metrics import ServiceMetrics

    metrics = ServiceMetrics(routes=("/v1/rag",))
    metrics.fell_back("rag", ['say "hi"\\\nnow'])
    samples = parse_metrics(metrics.render())
    assert _get(samples, "tracerag_lm_fallbacks_total", program="rag", stage='say "hi"\\\nnow') == 1  # round trip


def test_the_breaker_gauge_follows_the_configured_lm():
    from tracerag.lm.breaker import BREAKER
    from tracerag.serving.metrics import ServiceMetrics, configured_lm_breaker_open

    metrics = ServiceMetrics(breaker_open=configured_lm_breaker_open)
    with dspy.context(lm=None):
        assert "tracerag_lm_breaker_open" not in metrics.render()  # no LM: no sample
    lm = dspy.LM("openai/breaker-gauge-test", api_base="http://127.0.0.1:9/v1", api_key="k")  # its own breaker key
    with dspy.context(lm=lm):
        assert "\ntracerag_lm_breaker_open 0\n" in metrics.render()
        for _ in range(50):  # consecutive failures until the breaker opens
            BREAKER.record(lm, ok=False, stage="parse")
            if BREAKER.is_open(lm):
                break
        assert _get(parse_metrics(metrics.render()), "tracerag_lm_breaker_open") == 1
        BREAKER.record(lm, ok=True, stage="parse")  # a probe answered: closed again
        assert _get(parse_metrics(metrics.render()), "tracerag_lm_breaker_open") == 0


# -- tracing -----------------------------------------------------------------------------------------------


@pytest.fixture
def in_memory_tracing():
    """The service's OpenTelemetry tracing with an in-memory exporter, as a DSPy callback for this test only."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from tracerag.serving.tracing import OpenTelemetrySpans, Tracing

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    previous = list(dspy.settings.get("callbacks", None) or [])
    dspy.configure(callbacks=[*previous, OpenTelemetrySpans(tracer)])
    try:
        yield Tracing("otel", tracer, provider), exporter
    finally:
        dspy.configure(callbacks=previous)


def _traces(spans) -> dict[int, list]:
    by_trace: dict[int, list] = {}
    for s in spans:
        by_trace.setdefault(s.context.trace_id, []).append(s)
    return by_trace


def test_each_request_is_one_trace_with_the_programs_spans(in_memory_tracing):
    from tracerag.serving.app import build_app

    tracing, exporter = in_memory_tracing
    questions = [f"question {i}" for i in range(6)]
    app = build_app(_served(), tracing=tracing, concurrency=4)
    with ThreadServer(app) as server, concurrent.futures.ThreadPoolExecutor(6) as pool:
        replies = list(pool.map(lambda q: httpx.post(f"{server.url}/v1/rag", json={"question": q}, timeout=30),
                                questions))
        assert httpx.get(f"{server.url}/healthz").status_code == 200  # not a program call: no trace
    assert [r.json()["answer"] for r in replies] == questions
    traces = _traces(exporter.get_finished_spans())
    assert len(traces) == len(questions)
    seen = []
    for spans in traces.values():
        by_name = {s.name: s for s in spans}
        assert sorted(by_name) == ["POST /v1/rag", "Tool.corpus.search", "_Searching.forward"], sorted(by_name)
        root, module, tool = by_name["POST /v1/rag"], by_name["_Searching.forward"], by_name["Tool.corpus.search"]
        assert root.parent is None and root.attributes["http.response.status_code"] == 200
        assert module.parent.span_id == root.context.span_id
        assert tool.parent.span_id == module.context.span_id
        question = json.loads(module.attributes["input.value"])["question"]
        assert json.loads(tool.attributes["input.value"])["query"] == question  # its own question's search
        assert '#0"' in tool.attributes["output.value"]
        seen.append(question)
    assert len(set(seen)) == len(questions)


def test_a_failing_program_call_is_an_error_span(in_memory_tracing):
    from opentelemetry.trace import StatusCode

    from tracerag.serving.app import build_app

    class Broken(dspy.Module):
        def forward(self, question):
            raise RuntimeError("the index file vanished")

    tracing, exporter = in_memory_tracing
    with ThreadServer(build_app(_served(Broken()), tracing=tracing)) as server:
        assert httpx.post(f"{server.url}/v1/rag", json={"question": "x"}).status_code == 500
    by_name = {s.name: s for s in exporter.get_finished_spans()}
    assert by_name["Broken.forward"].status.status_code == StatusCode.ERROR
    assert by_name["POST /v1/rag"].attributes["http.response.status_code"] == 500


@pytest.mark.parametrize("tracer, module, extra", [("otel", "opentelemetry.sdk.trace", "otel"),
                                                   ("mlflow", "mlflow", "mlflow")])
def test_a_tracer_whose_package_is_missing_names_the_extra(monkeypatch, tracer, module, extra):
    from tracerag.serving.tracing import start_tracing

    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    with pytest.raises(RuntimeError, match=re.escape(f"pip install 'tracerag[{extra}]'")):
        start_tracing(tracer)


# -- the real command --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_serve_trace_otel_sends_one_trace_per_request_to_the_collector(tmp_path):
    questions = ["Do statins lower LDL cholesterol in diabetes?", "Does aspirin raise bleeding risk?",
                 "Does telephone counselling increase mammography screening?"]
    env = {"TRACERAG_SERVE_TOKEN": TOKEN, "TRACERAG_EMBEDDER": "lexical", "TRACERAG_CACHE_DIR": str(tmp_path / "c"),
           "OTEL_BSP_SCHEDULE_DELAY": "200"}
    with OTLPStub() as collector:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.url
        flags = ["--program", "rag", "--program", "commands", "--trace", "otel", "--metrics"]
        with ServeProcess(flags, env=env, log=tmp_path / "serve.log") as server, \
                concurrent.futures.ThreadPoolExecutor(3) as pool:
            post = lambda path, body: httpx.post(f"{server.url}{path}", json=body, headers=AUTH, timeout=60)  # noqa: E731
            replies = list(pool.map(lambda q: post("/v1/rag", {"question": q}), questions))
            replies.append(post("/v1/commands", {"query": "turn off all the lights", "home": "home_en"}))
            assert [r.status_code for r in replies] == [200] * 4
            samples = parse_metrics(httpx.get(f"{server.url}/metrics", headers=AUTH).text)
            assert _get(samples, "tracerag_requests_total", route="/v1/rag", method="POST", status="200") == 3
        spans = collector.spans()  # the service flushed its last batch as it stopped
    traces: dict[str, list[dict]] = {}
    for s in spans:
        traces.setdefault(s["trace"], []).append(s)
    assert len(traces) == 4, [s["name"] for s in spans]
    roots = sorted(next(s["name"] for s in t if not s["parent"]) for t in traces.values())
    assert roots == ["POST /v1/commands", "POST /v1/rag", "POST /v1/rag", "POST /v1/rag"]
    assert {s["service"] for s in spans} == {"tracerag"}
    searched = []
    for t in traces.values():
        ids = {s["id"] for s in t}
        assert all(not s["parent"] or s["parent"] in ids for s in t)  # one tree per trace
        names = [s["name"] for s in t]
        if "POST /v1/rag" in names:
            assert "SelfReflectiveRAG.forward" in names and names.count("Tool.corpus.search") == 1
            module = next(s for s in t if s["name"] == "SelfReflectiveRAG.forward")
            tool = next(s for s in t if s["name"] == "Tool.corpus.search")
            assert tool["parent"] == module["id"]
            question = next(q for q in questions if q in module["attributes"]["input.value"])
            assert question in tool["attributes"]["input.value"]
            searched.append(question)
        else:
            assert {"CommandRetrieval.forward", "Tool.command_index.search"} <= set(names)
    assert sorted(searched) == sorted(questions)


@pytest.mark.slow
def test_a_collector_that_is_down_fails_no_request_and_the_service_still_stops_cleanly(tmp_path):
    import time

    from serve_helpers import free_port

    env = {"TRACERAG_EMBEDDER": "lexical", "TRACERAG_CACHE_DIR": str(tmp_path / "c"), "OTEL_BSP_SCHEDULE_DELAY": "100",
           "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{free_port()}"}  # nothing listens there
    server = ServeProcess(["--program", "rag", "--trace", "otel"], env=env, log=tmp_path / "serve.log")
    try:
        for i in range(3):
            reply = httpx.post(f"{server.url}/v1/rag", json={"question": f"Do statins lower LDL? ({i})"}, timeout=60)
            assert reply.status_code == 200 and reply.json()["answer"]
        time.sleep(0.5)  # a batch has been tried and failed
        started = time.monotonic()
        server.proc.terminate()
        assert server.proc.wait(30) == 0  # systemd's TimeoutStopSec in docs/deployment.md
        assert time.monotonic() - started < 30
    finally:
        server.stop()
    log = (tmp_path / "serve.log").read_text()
    assert "Transient error" in log or "Failed to export" in log  # said in the log, not to the clients
