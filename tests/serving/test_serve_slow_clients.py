"""Slow and idle clients are dropped: a request line, headers or body not sent in time gets 408 and the connection
is closed, while other clients are answered and a long program call is never cut short.

Raw sockets, since an HTTP client library always sends whole requests. The fast tests run the built app under a
real uvicorn in a thread with deadlines of a fraction of a second; the slow one runs ``tracerag serve`` itself
against a few hundred slowloris connections.
"""

from __future__ import annotations

import json
import select
import socket
import time

import httpx
import pytest
from overlap import HANG_S
from serve_helpers import ServeProcess, ThreadServer

from tracerag.serving.slow_clients import ClientLimits

DEADLINE = 0.2  # seconds; the fast tests' header and body timeouts
EARLY = 0.02  # an event loop may fire a timer this much before its time
PLAN = {"requirements": "Set up a 25 µL PCR.", "bullets": ["[mat-00001] helpful=3 harmful=0 :: Thaw the mix on ice."]}


class _SlowRag:
    """Answers after longer than both deadlines."""

    def __call__(self, question: str):
        import dspy

        time.sleep(1.5 * DEADLINE)
        return dspy.Prediction(answer=question)


@pytest.fixture(scope="module")
def server():
    """The planner on its defaults and a slow rag, behind deadlines of :data:`DEADLINE`."""
    from tracerag.planner.traceable_planner import TraceablePlanner
    from tracerag.serving.app import build_app
    from tracerag.serving.programs import ENDPOINTS, ServedProgram

    app = build_app({"planner": ServedProgram(ENDPOINTS["planner"], TraceablePlanner()),
                     "rag": ServedProgram(ENDPOINTS["rag"], _SlowRag())})
    with ThreadServer(app, ClientLimits(header_timeout=DEADLINE, body_timeout=DEADLINE)) as running:
        yield running


def _connect(server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=HANG_S)  # a hang guard: it closes at DEADLINE


def _until_closed(sock: socket.socket, started: float) -> tuple[bytes, float]:
    """What the server sent until it closed the connection, and when it closed (seconds since ``started``)."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    except TimeoutError:
        pytest.fail(f"the server kept the connection open for {HANG_S:g} s; it sent {data[:200]!r}")
    return data, time.monotonic() - started


def _status_and_json(data: bytes) -> tuple[int, dict]:
    head, _, body = data.partition(b"\r\n\r\n")
    assert b"connection: close" in head.lower()
    return int(head.split()[1]), json.loads(body)


def test_a_partial_request_line_gets_408_and_is_closed(server):
    with _connect(server) as sock:
        started = time.monotonic()
        sock.sendall(b"POST /v1/pl")
        data, seconds = _until_closed(sock, started)
    assert seconds >= DEADLINE - EARLY
    status, body = _status_and_json(data)
    assert status == 408 and body == {"error": f"request head not received within {DEADLINE:g} s; the connection "
                                               "is closed", "fields": []}


def test_headers_sent_a_byte_at_a_time_do_not_extend_the_deadline(server):
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000
    with _connect(server) as sock:
        started = time.monotonic()
        sent = 0
        for byte in request:  # one byte every 20 ms: 20 s for the whole head, far past the deadline
            if select.select([sock], [], [], 0)[0]:
                break  # the server answered: stop sending, so no byte reaches a closed socket
            sock.sendall(bytes([byte]))
            sent += 1
            time.sleep(0.02)
        data, seconds = _until_closed(sock, started)
    assert sent < len(request) and DEADLINE - EARLY <= seconds
    assert _status_and_json(data)[0] == 408


def test_a_body_that_stops_coming_gets_408_and_the_app_sees_a_disconnect(server, caplog):
    body = json.dumps(PLAN).encode()
    with _connect(server) as sock, caplog.at_level("WARNING"):
        sock.sendall(b"POST /v1/plan HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body[:10])
        started = time.monotonic()
        data, seconds = _until_closed(sock, started)
        assert seconds >= DEADLINE - EARLY
        status, answer = _status_and_json(data)
        assert status == 408 and answer["error"].startswith("request body not received within")
        server.wait_idle()  # the app's side of the disconnect runs after the close
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]  # no 500, no traceback


def test_an_idle_connection_is_closed_without_an_answer(server):
    with _connect(server) as sock:
        data, seconds = _until_closed(sock, time.monotonic())
    assert data == b"" and seconds >= DEADLINE - EARLY  # a pooled client just reconnects


def test_whole_requests_are_answered_while_slow_clients_hang_and_keep_alive_still_works(server):
    hanging = [_connect(server) for _ in range(20)]
    try:
        for sock in hanging:
            sock.sendall(b"GET /heal")
        with httpx.Client(base_url=server.url) as client:  # one connection, reused
            for _ in range(3):
                assert client.get("/healthz").json()["status"] == "ok"
                assert client.post("/v1/plan", json=PLAN).status_code == 200
    finally:
        for sock in hanging:
            sock.close()


def test_a_long_program_call_is_not_cut_short(server):
    reply = httpx.post(f"{server.url}/v1/rag", json={"question": "slow"}, timeout=10)
    assert reply.status_code == 200 and reply.json()["answer"] == "slow"


class _Held:
    """A rag program that answers only when the test lets it."""

    def __init__(self):
        import threading

        self.entered, self.release = threading.Event(), threading.Event()

    def __call__(self, question: str):
        import dspy

        self.entered.set()
        self.release.wait(10)
        return dspy.Prediction(answer=question)


def test_calls_beyond_max_pending_get_503_at_once_and_slow_connections_do_not_count():
    import concurrent.futures

    from tracerag.serving.app import build_app
    from tracerag.serving.programs import ENDPOINTS, ServedProgram

    held = _Held()
    app = build_app({"rag": ServedProgram(ENDPOINTS["rag"], held)}, concurrency=1, max_pending=1)
    with ThreadServer(app) as running, concurrent.futures.ThreadPoolExecutor(1) as pool:
        hanging = [socket.create_connection(("127.0.0.1", running.port), timeout=5) for _ in range(20)]
        for sock in hanging:
            sock.sendall(b"GET /heal")  # half-sent requests: not program calls, so they take no place
        first = pool.submit(httpx.post, f"{running.url}/v1/rag", json={"question": "first"}, timeout=10)
        assert held.entered.wait(10)
        busy = httpx.post(f"{running.url}/v1/rag", json={"question": "second"}, timeout=10)
        assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
        assert busy.json()["error"].startswith("busy: 1 program calls are running or waiting")
        held.release.set()
        assert first.result().json()["answer"] == "first"
        assert httpx.post(f"{running.url}/v1/rag", json={"question": "third"}, timeout=10).status_code == 200
        for sock in hanging:
            sock.close()


def test_limits_reach_uvicorn_and_bad_ones_are_refused():
    from tracerag.serving.slow_clients import uvicorn_config

    limits = ClientLimits(keep_alive=2, max_header_bytes=8192)
    config = uvicorn_config(object(), host="127.0.0.1", port=1, limits=limits)
    assert (config.timeout_keep_alive, config.h11_max_incomplete_event_size) == (2, 8192)
    assert config.limit_concurrency is None  # it would count half-sent requests: see --max-pending
    with pytest.raises(ValueError, match="header_timeout must be positive"):
        ClientLimits(header_timeout=0)


def test_serve_flags_for_slow_clients():
    import optimize
    from tracerag.serving.app import DEFAULT_MAX_PENDING

    args = optimize.build_parser().parse_args(["serve", "--header-timeout", "2.5", "--body-timeout", "7",
                                               "--keep-alive", "1", "--max-pending", "64"])
    assert (args.header_timeout, args.body_timeout, args.keep_alive, args.max_pending) == (2.5, 7.0, 1.0, 64)
    defaults = optimize.build_parser().parse_args(["serve"])
    limits = ClientLimits()
    assert (defaults.header_timeout, defaults.body_timeout, defaults.keep_alive, defaults.max_pending) == (
        limits.header_timeout, limits.body_timeout, limits.keep_alive, DEFAULT_MAX_PENDING)
    with pytest.raises(SystemExit):
        optimize.build_parser().parse_args(["serve", "--header-timeout", "0"])


@pytest.mark.slow
def test_tracerag_serve_drops_hundreds_of_slowloris_connections_and_keeps_answering(tmp_path):
    """The real command, its documented flag: 300 connections that send half a request and then nothing are all
    closed once ``--header-timeout`` passes; requests sent meanwhile are answered."""
    with ServeProcess(["--program", "planner", "--header-timeout", "1"], log=tmp_path / "serve.log") as running:
        host, port = "127.0.0.1", running.port
        hanging = []
        for _ in range(300):
            sock = socket.create_connection((host, port), timeout=10)
            sock.sendall(b"POST /v1/plan HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
            hanging.append(sock)
        started = time.monotonic()
        try:
            reply = httpx.post(f"{running.url}/v1/plan", json=PLAN, timeout=10)
            assert reply.status_code == 200 and "plan" in reply.json()
            closed = [_until_closed(sock, started) for sock in hanging]  # each fails the test if still open
        finally:
            for sock in hanging:
                sock.close()
        assert all(_status_and_json(data)[0] == 408 for data, _ in closed)
        assert max(seconds for _, seconds in closed) < 1 + 5  # the deadline, plus ample time to close 300
        assert httpx.get(f"{running.url}/healthz", timeout=10).status_code == 200
