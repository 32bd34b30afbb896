"""The HTTP service: a Starlette app over the loaded programs, run by uvicorn (``tracerag serve``).

Why Starlette and uvicorn: the MCP SDK already installs them, so serving adds no dependency. Endpoints:
``POST /v1/commands|experience|rag|plan|agent`` (a program call), ``GET /healthz`` (readiness), ``GET /livez``
(liveness), ``GET /v1/programs`` (what is loaded) and ``GET /openapi.json`` (generated from the request and
response models).

Starting: ``tracerag serve`` listens at once and loads its programs in the background, one after the other
(:class:`~tracerag.serving.programs.Startup`), warming each: its embedders compute one vector, so the model is
loaded (or the embedding service has answered) before its first call, not during it. A program answers as soon
as it is loaded and warm, while the next ones load (the first of a cold start in seconds, not after the last).
A call to one still loading is not held: it gets 503 "starting: <program> is loading …" with ``Retry-After:
1`` at once, as load balancers and HTTP clients expect of a service that cannot answer yet (a held request would
tie up a connection and a ``max_pending`` slot for as long as the load takes, tens of seconds for the RAG bank
on an empty cache); ``GET /healthz`` answers 503 ``{"status": "starting", "programs": [...], "ready": [...],
"pending": {program: what it is doing}}`` and ``/v1/programs`` 503 "starting" until every program is ready,
then ``/healthz`` answers 200 ``{"status": "ok", "programs": [...]}`` (readiness: send traffic). ``GET /livez``
answers 200 whenever the process answers HTTP, starting or ready (``{"status": "starting"|"ok"}``; liveness:
restart it only when this fails), so a probe does not kill a service that is still loading. A load that fails
ends the service with its error line (both probes answer 503 ``"failed"`` meanwhile). Both paths are open (no
token, any ``Host``) and say nothing but the status, the program names and which of them are ready.

Temporary state (the experience bank built from the bundled traces, a store being filled, the tool server's
files) goes into the service's own temp directory, ``tracerag-serve-<pid>-…`` (``TMPDIR`` for the process and
its children), removed when the service stops; one that a killed service left is removed by the next start
(:func:`~tracerag.serving.programs.remove_stale_temp_dirs`: only those whose process is gone).

What a client can rely on: every error is a JSON ``{"error": "one line", "fields": [...]}`` — malformed JSON
or a ``Host`` not allowed 400, no or a wrong bearer token 401, an ``Origin`` not allowed 403, an unknown
program 404, a request line, headers or body not received in time 408 (and the connection closed), a body over
the limit 413 (counted while it is read, so a client cannot make the service hold
more), a POST body not declared ``application/json`` 415, a wrong field 422 naming it, anything unexpected
500 (logged here with its traceback; the client gets one line), more program calls than the service holds
(``max_pending``) 503. An LM that fails is never an error: every LM stage of every program falls back to its
no-LM result. Program calls run off the event loop, at most
``concurrency`` at once (:class:`~tracerag.serving.programs.Runner`), so health checks answer while calls run
(and while the programs load).
A client too slow to send its request is answered 408 and dropped (:mod:`~tracerag.serving.slow_clients`).

Why the ``Host``, ``Origin`` and content-type checks: a web page the user visits can send requests to a
service on their machine. A cross-site form or ``fetch`` can only send ``text/plain`` or form bodies without
asking first (so 415 stops it), a cross-site ``fetch`` carries its page's ``Origin`` (403), and a page that
rebinds its own name to 127.0.0.1 sends that name as ``Host`` (400). The service sends no CORS headers, so
no browser lets another site read an answer.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import signal
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..registry import PROGRAMS
from ..service_models import ErrorResponse, RequestError
from .binds import TOKEN_ENV, is_loopback, needs_token
from .metrics import CONTENT_TYPE, MetricsMiddleware, ServiceMetrics, configured_lm_breaker_open
from .programs import BY_PATH, DEFAULT_SOURCE, ENDPOINTS, Runner, ServedProgram, Startup
from .slow_clients import ClientLimits, uvicorn_config
from .tracing import Tracing, start_tracing

__all__ = ["DEFAULT_ALLOWED_HOSTS", "DEFAULT_MAX_BODY", "TOKEN_ENV", "build_app", "is_loopback", "openapi", "serve"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_BODY = 1 << 20
DEFAULT_MAX_PENDING = 256  # program calls held at once (running or waiting), each with its body of <= max_body
OPEN_PATHS = ("/healthz", "/livez")  # probes carry no token or known Host; the answer is a status and names
DEFAULT_ALLOWED_HOSTS = ("localhost", "127.0.0.1", "[::1]")
WILDCARD_BINDS = ("0.0.0.0", "::", "")


class _BodyTooLarge(Exception):
    pass


class _JSON(JSONResponse):
    """JSON as UTF-8 text (Chinese utterances stay readable), never NaN."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def _error(status: int, message: str, fields: list[dict[str, str]] | None = None, headers=None) -> _JSON:
    return _JSON({"error": message, "fields": fields or []}, status_code=status, headers=headers)


async def _read_body(request: Request, limit: int) -> bytes:
    """The body, refusing it as soon as it passes ``limit`` bytes (declared or actually sent)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _BodyTooLarge
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def _one_line(exc: Exception) -> str:
    """What a client sees of an unexpected failure: its type and the first line of its message."""
    lines = str(exc).strip().splitlines()
    return f"internal error: {type(exc).__name__}" + (f": {lines[0][:200]}" if lines else "")


def _field_errors(exc: ValidationError) -> list[dict[str, str]]:
    return [{"field": ".".join(str(part) for part in e["loc"]) or "body", "message": e["msg"]} for e in exc.errors()]


def _split_host(host: str) -> tuple[str, str | None]:
    """``"Name:8700"`` -> ``("name", "8700")``, ``"[::1]:8700"`` -> ``("[::1]", "8700")``, ``"name"`` ->
    ``("name", None)``."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host.partition("]")
        return name + "]", rest[1:] if rest.startswith(":") else None
    name, colon, port = host.rpartition(":")
    return (name, port) if colon and ":" not in name else (host, None)


class BrowserGuard:
    """ASGI middleware: a request to any path but :data:`OPEN_PATHS` must name an allowed host in ``Host``, and
    an ``Origin`` it carries must be one too (a browser sends it on every cross-site call).

    An allowed name without a port matches that name alone (a reverse proxy's ``Host``) or with the port the
    service listens on; ``name:port`` matches exactly. The service sends no CORS headers: no other site's page
    may read an answer."""

    def __init__(self, app, allowed_hosts: Iterable[str]):
        self.app = app
        self.allowed = {_split_host(host) for host in allowed_hosts}
        self.listing = ", ".join(sorted({name if port is None else f"{name}:{port}" for name, port in self.allowed}))

    def _allows(self, host: str, scope) -> bool:
        name, port = _split_host(host)
        server_port = str((scope.get("server") or (None, None))[1])
        return (name, port) in self.allowed or (name, None) in self.allowed and port in (None, server_port)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        host = headers.get(b"host", b"").decode("latin-1")
        if not self._allows(host, scope):
            response = _error(400, f"Host {host!r} is not allowed; this service answers to {self.listing} "
                                   "(tracerag serve --allowed-host NAME adds one)")
            return await response(scope, receive, send)
        origin = headers.get(b"origin")
        if origin is not None:
            text = origin.decode("latin-1")
            parts = urlsplit(text)
            if parts.scheme not in ("http", "https") or not self._allows(parts.netloc, scope):
                response = _error(403, f"Origin {text!r} is not allowed: cross-site requests are refused; a site "
                                       "served from another host needs tracerag serve --allowed-host NAME")
                return await response(scope, receive, send)
        return await self.app(scope, receive, send)


def _is_json(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


class BearerAuth:
    """ASGI middleware: with a token set, every request but :data:`OPEN_PATHS` needs
    ``Authorization: Bearer <token>`` (compared in constant time), else 401."""

    def __init__(self, app, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            return await self.app(scope, receive, send)
        given = next((value for key, value in scope["headers"] if key == b"authorization"), b"")
        if not hmac.compare_digest(given, self.expected):
            response = _error(401, "missing or wrong bearer token (Authorization: Bearer <token>)",
                              headers={"WWW-Authenticate": "Bearer"})
            return await response(scope, receive, send)
        return await self.app(scope, receive, send)


def openapi(programs: Mapping[str, ServedProgram] | Iterable[str]) -> dict[str, Any]:
    """The OpenAPI 3.1 description of this service: the endpoints of ``programs`` (the served programs, or
    their names), health and listing."""
    from pydantic.json_schema import models_json_schema

    endpoints = [ENDPOINTS[name] for name in programs]
    models = [(e.request, "validation") for e in endpoints] + [(e.response, "serialization") for e in endpoints]
    refs, top = models_json_schema([*models, (ErrorResponse, "serialization")],
                                   ref_template="#/components/schemas/{model}")
    errors = {str(code): {"description": what, "content": {"application/json": {"schema": refs[(ErrorResponse,
                                                                                                  "serialization")]}}}
              for code, what in ((400, "malformed JSON, or a Host header not allowed"),
                                 (401, "missing or wrong bearer token"), (403, "an Origin not allowed"),
                                 (404, "unknown program"),
                                 (408, "the headers or body were not received in time; the connection is closed"),
                                 (413, "body over the size limit"),
                                 (415, "the body is not declared Content-Type: application/json"),
                                 (422, "a field is missing, unknown, of the wrong type or over its length"),
                                 (500, "unexpected server error (logged)"),
                                 (503, "busy: as many program calls as the service holds, or still starting "
                                       "(the programs are loading); retry after a second"))}
    paths: dict[str, Any] = {
        "/healthz": {"get": {"summary": "Readiness: 200 once the programs are loaded and warm",
                             "operationId": "healthz",
                             "responses": {"200": {"description": "ok"},
                                           "503": {"description": "starting (loading), or failed"}}}},
        "/livez": {"get": {"summary": "Liveness: 200 when the service answers, starting or ready",
                           "operationId": "livez", "responses": {"200": {"description": "starting or ok"},
                                                                 "503": {"description": "failed"}}}},
        "/v1/programs": {"get": {"summary": "The loaded programs: source, metadata, embedder, store",
                                 "operationId": "programs", "responses": {"200": {"description": "by name"}}}},
    }
    for e in endpoints:
        paths[e.path] = {"post": {
            "summary": e.summary, "operationId": e.tool,
            "requestBody": {"required": True, "content": {"application/json": {"schema": refs[(e.request,
                                                                                                "validation")]}}},
            "responses": {"200": {"description": f"the {e.program_class} prediction's fields",
                                  "content": {"application/json": {"schema": refs[(e.response, "serialization")]}}},
                          **errors}}}
    return {"openapi": "3.1.0",
            "info": {"title": "tracerag", "version": _version(),
                     "description": "Compiled tracerag programs over HTTP; every error is {error, fields}."},
            "paths": paths, "components": {"schemas": top.get("$defs", {}),
                                           "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}}}


def _version() -> str:
    import tracerag

    return tracerag.__version__


def build_app(programs: Mapping[str, ServedProgram] | Startup, *, max_body: int = DEFAULT_MAX_BODY,
              concurrency: int = 8, calls: str = "thread", token: str | None = None,
              allowed_hosts: Iterable[str] = DEFAULT_ALLOWED_HOSTS, max_pending: int = DEFAULT_MAX_PENDING,
              metrics: bool = False, tracing: Tracing | None = None):
    """The ASGI app over ``programs``; closes them on shutdown.

    ``programs``: the loaded programs (:func:`~tracerag.serving.programs.load_programs`; their embedders are
    warmed here, so the app is ready at once), or a :class:`~tracerag.serving.programs.Startup` that loads them
    in the background from the app's startup on (``/healthz`` 503 "starting" until it is done).

    ``allowed_hosts``: the names (``name`` or ``name:port``) a request's ``Host`` and ``Origin`` may carry.
    ``max_pending``: program calls running or waiting for one of the ``concurrency`` slots; a call beyond it is
    answered 503 at once, so a flood of requests cannot queue bodies and tasks without end.
    ``metrics``: count requests and offer them at ``GET /metrics`` (:mod:`~tracerag.serving.metrics`).
    ``tracing``: a span around each program call (:mod:`~tracerag.serving.tracing`); the flush on shutdown."""
    startup = programs if isinstance(programs, Startup) else Startup.of(programs)
    names = list(startup.names)
    runner = Runner(concurrency, calls)
    tracing = tracing or Tracing()
    fixed_routes = ("/healthz", "/livez", "/v1/programs", "/openapi.json", "/metrics")
    counts = ServiceMetrics(routes=(*fixed_routes, *(ENDPOINTS[name].path for name in names)),
                            breaker_open=configured_lm_breaker_open) if metrics else None
    pending = 0
    schema = openapi(names)
    offered = ", ".join(ENDPOINTS[name].path for name in names)
    listing: dict[str, Any] = {}

    def _starting(name: str | None = None) -> _JSON:
        if startup.state == "starting":
            what = (f"{name} is {startup.pending.get(name, 'loading')}" if name is not None
                    else "the programs are loading")
            ready = [n for n in names if startup.ready_for(n)]
            answered = f" ({', '.join(ready)} already answer{'s' if len(ready) == 1 else ''})" if ready else ""
            return _error(503, f"starting: {what}{answered}; retry shortly", headers={"Retry-After": "1"})
        return _error(503, "the programs failed to load; the service is stopping (see its log)")

    async def healthz(request: Request) -> Response:
        if not startup.ready:
            if startup.state != "starting":
                return _JSON({"status": "failed", "programs": names}, status_code=503)
            return _JSON({"status": "starting", "programs": names,
                          "ready": [n for n in names if startup.ready_for(n)],
                          "pending": {n: startup.pending.get(n, "loading") for n in names if not startup.ready_for(n)}},
                         status_code=503, headers={"Retry-After": "1"})
        return _JSON({"status": "ok", "programs": names})

    async def livez(request: Request) -> Response:
        if startup.state in ("starting", "ready"):
            return _JSON({"status": "ok" if startup.ready else "starting"})
        return _JSON({"status": "failed"}, status_code=503)

    async def list_programs(request: Request) -> Response:
        if not startup.ready:
            return _starting()
        if not listing:
            listing.update({name: p.describe() for name, p in startup.programs.items()})
        return _JSON({"programs": listing})

    async def openapi_json(request: Request) -> Response:
        return _JSON(schema)

    async def metrics_text(request: Request) -> Response:
        return Response(counts.render(), media_type=CONTENT_TYPE)

    async def call(request: Request) -> Response:
        path = request.url.path
        endpoint = BY_PATH.get(path)
        if endpoint is None:
            return _error(404, f"unknown program {request.path_params['program']!r}; this service offers {offered}")
        if endpoint.name not in names:
            return _error(404, f"{endpoint.name} is not loaded by this service; it offers {offered}")
        if not startup.ready_for(endpoint.name):  # each program answers once it is loaded, the others may load on
            return _starting(endpoint.name)
        served = startup.programs[endpoint.name]
        content_type = request.headers.get("content-type", "")
        if not _is_json(content_type):
            given = f"not {content_type!r}" if content_type else "and the request declares none"
            return _error(415, f"the body must be sent as Content-Type: application/json, {given}")
        try:
            body = await _read_body(request, max_body)
        except _BodyTooLarge:
            return _error(413, f"request body over the limit of {max_body} bytes")
        except ClientDisconnect:  # the client left, or was dropped for sending too slowly: nobody to answer
            return Response(status_code=400)
        try:
            data = json.loads(body)
        except RecursionError:
            return _error(400, "malformed JSON: nested too deeply")
        except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
            return _error(400, f"malformed JSON: {exc}")
        try:
            parsed = endpoint.request.model_validate(data)
        except ValidationError as exc:
            fields = _field_errors(exc)
            return _error(422, "invalid request: " + "; ".join(f"{f['field']}: {f['message']}" for f in fields[:3]),
                          fields)
        nonlocal pending
        if pending >= max_pending:
            return _error(503, f"busy: {max_pending} program calls are running or waiting; retry shortly",
                          headers={"Retry-After": "1"})
        pending += 1
        try:
            with tracing.request("POST", endpoint.path) as span:
                response = await _answer(served, parsed, endpoint.path)
                if span is not None:
                    span.set_attribute("http.response.status_code", response.status_code)
        finally:
            pending -= 1
        return response

    async def _answer(served: ServedProgram, parsed, path: str) -> Response:
        try:
            answer = await runner.run(served, parsed)
        except RequestError as exc:
            return _error(422, f"invalid request: {exc}", [{"field": exc.field, "message": exc.message}])
        except Exception as exc:
            logger.exception("%s failed", path)
            return _error(500, _one_line(exc))
        if counts is not None and answer.get("lm_fallbacks"):
            counts.fell_back(served.name, answer["lm_fallbacks"])
        return _JSON(answer)

    async def http_error(request: Request, exc: HTTPException) -> Response:
        return _error(exc.status_code, exc.detail, headers=getattr(exc, "headers", None))

    async def server_error(request: Request, exc: Exception) -> Response:
        logger.exception("%s %s failed", request.method, request.url.path)
        return _error(500, _one_line(exc))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        import anyio

        startup.start()  # a no-op for programs loaded already
        yield
        await anyio.to_thread.run_sync(startup.close)  # waits for a program being built, then closes them all
        tracing.shutdown()

    routes = [Route("/healthz", healthz, methods=["GET"]), Route("/livez", livez, methods=["GET"]),
              Route("/v1/programs", list_programs, methods=["GET"]),
              Route("/openapi.json", openapi_json, methods=["GET"])]
    if counts is not None:
        routes.append(Route("/metrics", metrics_text, methods=["GET"]))
    app = Starlette(routes=[*routes, Route("/v1/{program}", call, methods=["POST"])],
                    exception_handlers={HTTPException: http_error, Exception: server_error}, lifespan=lifespan)
    guarded = BrowserGuard(BearerAuth(app, token) if token else app, allowed_hosts)
    return MetricsMiddleware(guarded, counts) if counts is not None else guarded


class _Terminated(BaseException):
    """SIGTERM arrived: unwinds like KeyboardInterrupt (no ``except Exception`` stops it), then ``serve`` returns."""


@contextlib.contextmanager
def _sigterm_ends_cleanly():
    """SIGTERM (what systemd, Docker and Kubernetes send) ends the service the way Ctrl-C does.

    Why: uvicorn stops gracefully on SIGTERM, then re-raises it; under the default handler the process dies at
    once, skipping the ``finally`` blocks and ``atexit`` (which removes the banks built for this process). Here
    the re-raised signal unwinds instead, and the command exits 0."""
    def terminate(signum, frame):
        raise _Terminated

    try:
        previous = signal.signal(signal.SIGTERM, terminate)
    except ValueError:  # not the main thread: the caller owns the signals
        yield
        return
    try:
        yield
    except _Terminated:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


def serve(specs: dict[str, str | None], options: dict[str, dict], args, *,
          set_up: Callable[[], None] | None = None, on_ready: Callable[[], None] | None = None) -> int:
    """``tracerag serve``: load the programs (``options``: per program its builder's keyword options), then run
    the app with uvicorn (``args``: the serve flags) until interrupted or terminated.

    A bind that other machines can reach (anything but loopback) needs a token, or ``--insecure-no-token`` to say
    the network is trusted: otherwise every program is open to whoever reaches the port. That refusal is one
    line and exit 2, before anything loads."""
    import os
    import sys

    token = os.environ.get(TOKEN_ENV) or None
    if not token and not is_loopback(args.host):
        if needs_token(args.host, args.insecure_no_token):
            print(f"error: refusing to serve on {args.host!r} without a token: any machine that reaches the port could "
                  f"call every program; set {TOKEN_ENV}, bind 127.0.0.1, or pass --insecure-no-token",
                  file=sys.stderr, flush=True)
            return 2
        print(f"WARNING serving on {args.host!r} with no token (--insecure-no-token): anyone who reaches the port can "
              "call every program", file=sys.stderr, flush=True)
    allowed = [*DEFAULT_ALLOWED_HOSTS, *args.allowed_host]
    if args.host.strip().lower() not in WILDCARD_BINDS:  # the address bound is a name clients will use
        allowed.append(f"[{args.host.strip('[]')}]" if ":" in args.host else args.host)
    try:  # a tracer whose package is missing is one line, before anything loads
        tracing = start_tracing(getattr(args, "trace", None))
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
    if set_up is not None:  # the LM and the embedder (``tracerag serve``: the flags), once the flags are checked
        try:
            set_up()
        except BaseException:
            tracing.shutdown()
            raise
    with _sigterm_ends_cleanly():
        _run(specs, options, args, token, list(dict.fromkeys(allowed)), tracing, on_ready)
    return 0


def _run(specs: dict[str, str | None], options: dict[str, dict], args, token: str | None, allowed: list[str],
         tracing: Tracing, on_ready: Callable[[], None] | None = None) -> None:
    """Listen at once, load and warm the programs in the background (``/healthz`` 503 "starting" meanwhile),
    serve until stopped; a load that fails stops the service and its error is raised here. Everything temporary
    goes into the service's own temp directory (see the module docstring)."""
    import os
    import shutil
    import sys
    import tempfile

    import uvicorn
    from threadpoolctl import threadpool_limits

    from .programs import LoadingStopped, own_temp_dir, remove_stale_temp_dirs

    remove_stale_temp_dirs()  # what a killed service left
    temp = own_temp_dir()
    previous_tempdir, previous_env = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir, os.environ["TMPDIR"] = str(temp), str(temp)  # this process's and its children's
    server: uvicorn.Server | None = None

    def failed(exc: BaseException) -> None:
        if server is not None:
            server.should_exit = True

    def ready(seconds: float) -> None:
        print(f"tracerag serve: ready ({seconds:.1f} s to load and warm)", file=sys.stderr, flush=True)
        if on_ready is not None:
            on_ready()

    def loading(name: str, source: str) -> None:
        data = f", data {PROGRAMS[name].dataset}" if source == DEFAULT_SOURCE else ""
        print(f"tracerag serve: loading {name} ({source}{data})", file=sys.stderr, flush=True)

    def loaded(name: str, source: str, seconds: float) -> None:
        print(f"tracerag serve: loaded {name} ({source}) in {seconds:.1f} s", file=sys.stderr, flush=True)

    startup = Startup.loading(specs, options, on_failed=failed, on_ready=ready, on_loaded=loaded, on_loading=loading)
    try:
        app = build_app(startup, max_body=args.max_body, concurrency=args.concurrency, calls=args.calls,
                        token=token, allowed_hosts=allowed, max_pending=args.max_pending,
                        metrics=getattr(args, "metrics", False), tracing=tracing)
        # Many calls at once, each a small matrix product: threaded BLAS in every worker oversubscribes the
        # cores; the large banks' searches thread themselves.
        threadpool_limits(limits=1, user_api="blas")
        names = ", ".join(f"{name} ({ENDPOINTS[name].path})" for name in specs)
        extras = "".join(("; bearer token required" if token else "",
                          "; /metrics" if getattr(args, "metrics", False) else "",
                          f"; tracing to {tracing.name}" if tracing.name else ""))
        print(f"tracerag serve: http://{args.host}:{args.port} — {names}{extras}; Host allowed: {', '.join(allowed)}"
              "; loading (GET /healthz answers 200 when ready)", file=sys.stderr, flush=True)
        limits = ClientLimits(header_timeout=args.header_timeout, body_timeout=args.body_timeout,
                              keep_alive=args.keep_alive)
        config = uvicorn_config(app, host=args.host, port=args.port, limits=limits, server_header=False,
                                log_level="info" if args.verbose else "warning", access_log=bool(args.verbose))
        server = uvicorn.Server(config)
        try:
            server.run()
        except KeyboardInterrupt:  # Ctrl-C: uvicorn has stopped gracefully, as uvicorn.run would
            pass
        if startup.error is not None and not isinstance(startup.error, LoadingStopped):
            raise startup.error  # the one error line a load failure always was
        if not server.started:  # e.g. the port was taken; uvicorn has logged why
            raise SystemExit(3)
    finally:  # also when the port was taken or on SIGTERM: the agent's tool servers must not outlive the service
        startup.close()
        tracing.shutdown()  # the spans still batched are sent (a second shutdown does nothing)
        tempfile.tempdir = previous_tempdir
        if previous_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = previous_env
        shutil.rmtree(temp, ignore_errors=True)
