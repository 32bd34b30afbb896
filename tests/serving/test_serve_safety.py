"""What keeps ``tracerag serve`` safe to run: no open bind without a token, no answer to another site's page,
and a clean stop on SIGTERM.

The browser checks run on the built app under a real uvicorn in a thread (fast); the binds and the signals
run the real command in a subprocess (slow: a start costs seconds).
"""

from __future__ import annotations

import signal

import httpx
import pytest
from serve_helpers import ServeProcess, ThreadServer

JSON = {"Content-Type": "application/json"}
PLAN = {"requirements": "Set up a 25 µL PCR.", "bullets": ["[mat-00001] helpful=3 harmful=0 :: Thaw the mix on ice."]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The planner and the commands program (one small home, lexical embedder) behind the app's defaults, plus
    one name an operator added."""
    from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
    from tracerag.datasets.smarthome import resolve_dataset
    from tracerag.embedding.embedder_choice import make_embedder
    from tracerag.planner.traceable_planner import TraceablePlanner
    from tracerag.serving.app import DEFAULT_ALLOWED_HOSTS, build_app
    from tracerag.serving.programs import ENDPOINTS, ServedProgram

    embedder = make_embedder("lexical", cache_dir=tmp_path_factory.mktemp("cache"))
    commands = CommandRetrieval(build_indexes([resolve_dataset("smarthome/home_small")], embedder), ir_source="none")
    app = build_app({"commands": ServedProgram(ENDPOINTS["commands"], commands),
                     "planner": ServedProgram(ENDPOINTS["planner"], TraceablePlanner())},
                    allowed_hosts=(*DEFAULT_ALLOWED_HOSTS, "home.example"))
    with ThreadServer(app) as running, httpx.Client(base_url=running.url) as client:
        client.port = running.port
        yield client


# -- binding: a port other machines reach needs a token ---------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "myhost.lan"])
def test_a_reachable_bind_without_a_token_is_refused_in_one_line(host, monkeypatch, capsys):
    import optimize

    monkeypatch.delenv("TRACERAG_SERVE_TOKEN", raising=False)
    assert optimize.main(["serve", "--host", host, "--program", "planner"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"error: refusing to serve on {host!r} without a token")
    assert "TRACERAG_SERVE_TOKEN" in err and "--insecure-no-token" in err


def test_loopback_binds_need_no_token():
    from tracerag.serving.app import is_loopback

    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.10", "localhost", "LOCALHOST", "::1", "[::1]"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "", "10.0.0.2", "myhost.lan", "localhost.evil.test"))


# -- browser safety: Host, Origin, content type, no CORS --------------------------------------------------


def test_only_allowed_host_names_are_answered(server):
    port = server.port
    for host in ("127.0.0.1", f"127.0.0.1:{port}", f"localhost:{port}", "LocalHost", f"[::1]:{port}",
                 "home.example", f"home.example:{port}"):
        reply = server.post("/v1/plan", json=PLAN, headers={"Host": host})
        assert reply.status_code == 200, (host, reply.text)
    for host in (f"evil.test:{port}", "evil.test", f"localhost:{port + 1}", f"home.example:{port + 1}",
                 f"localhost.evil.test:{port}", f"127.0.0.1.nip.io:{port}"):
        reply = server.post("/v1/plan", json=PLAN, headers={"Host": host})
        assert reply.status_code == 400, host
        assert reply.json()["error"].startswith(f"Host {host!r} is not allowed") and "--allowed-host" in reply.text
        assert server.get("/v1/programs", headers={"Host": host}).status_code == 400
    # liveness probes (a pod's IP as Host) are answered: the reply says only "ok"
    assert server.get("/healthz", headers={"Host": f"10.1.2.3:{port}"}).status_code == 200


def test_cross_site_origins_are_refused_and_no_cors_is_offered(server):
    for origin in ("http://evil.test", "https://evil.test", f"http://localhost:{server.port + 1}", "null",
                   f"file://localhost:{server.port}"):
        reply = server.post("/v1/plan", json=PLAN, headers={"Origin": origin})
        assert reply.status_code == 403 and reply.json()["error"].startswith(f"Origin {origin!r} is not allowed")
        assert server.get("/v1/programs", headers={"Origin": origin}).status_code == 403
        preflight = server.options("/v1/plan", headers={
            "Origin": origin, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type"})
        assert preflight.status_code == 403 and "access-control-allow-origin" not in preflight.headers
    for origin in (f"http://localhost:{server.port}", f"http://127.0.0.1:{server.port}", "https://home.example"):
        reply = server.post("/v1/plan", json=PLAN, headers={"Origin": origin})
        assert reply.status_code == 200 and not any(h.startswith("access-control-") for h in reply.headers)


def test_a_post_body_must_be_declared_json(server):
    body = b'{"requirements": "Set up a 25 \\u00b5L PCR."}'
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                         "application/jsonx"):
        reply = server.post("/v1/plan", content=body, headers={"Content-Type": content_type})
        assert reply.status_code == 415, content_type
        assert reply.json()["error"] == (f"the body must be sent as Content-Type: application/json, "
                                         f"not {content_type!r}")
    reply = server.post("/v1/plan", content=body)
    assert reply.status_code == 415 and reply.json()["error"].endswith("and the request declares none")
    for content_type in ("application/json", "application/json; charset=utf-8", "Application/JSON"):
        reply = server.post("/v1/plan", content=body, headers={"Content-Type": content_type})
        assert reply.status_code == 200 and reply.json()["hint"] == "no_lm"


def test_reads_need_no_content_type_and_the_document_lists_the_refusals(server):
    listing = server.get("/v1/programs")
    assert listing.status_code == 200 and set(listing.json()["programs"]) == {"commands", "planner"}
    spec = server.get("/openapi.json")
    assert spec.status_code == 200
    assert {"400", "403", "415"} <= set(spec.json()["paths"]["/v1/plan"]["post"]["responses"])


# -- the given parse is checked, not repaired; long questions are refused -----------------------------------


@pytest.mark.parametrize(("ir", "field", "message"), [
    ({"quantifier": "many"}, "ir.quantifier", "Input should be 'one', 'any', 'all' or 'except'"),
    ({"action": 1}, "ir.action", "Input should be a valid string"),
    ({"action": "打开", "colour": "red"}, "ir.colour", "Extra inputs are not permitted"),
    ({"scope_include": "卧室"}, "ir.scope_include", "Input should be a valid list"),
    ({"scope_exclude": [1]}, "ir.scope_exclude.0", "Input should be a valid string"),
    ({"type_hint": "Lamp"}, "ir.type_hint", "Input should be 'AirConditioner'"),
    ({"quantifier": "All"}, "ir.quantifier", "Input should be 'one', 'any', 'all' or 'except'"),
    ("all", "ir", "Input should be a valid dictionary or instance of QueryIRIn"),
])
def test_a_wrong_ir_is_422_naming_the_field(server, ir, field, message):
    reply = server.post("/v1/commands", json={"query": "关灯", "ir": ir})
    assert reply.status_code == 422, reply.text
    assert reply.json()["fields"][0]["field"] == field and reply.json()["fields"][0]["message"].startswith(message)
    assert field in reply.json()["error"]


def test_a_right_ir_is_used_as_given(server):
    ir = {"action": "关闭", "type_hint": "Light", "scope_exclude": ["卧室"], "quantifier": "except"}
    body = server.post("/v1/commands", json={"query": "除了卧室都关灯", "ir": ir}).json()
    # as given, with the operation its action says read from it ("关闭": off)
    assert body["parse_source"] == "gold" and body["ir"] == {**ir, "name_hint": "", "scope_include": [],
                                                              "operation": "off"}


@pytest.mark.parametrize(("path", "body", "field"), [
    ("/v1/commands", {"query": "开" * 4001}, "query"),
    ("/v1/plan", {"requirements": "x" * 20_001}, "requirements"),
])
def test_text_over_the_documented_limit_is_422_naming_field_and_limit(server, path, body, field):
    reply = server.post(path, json=body)
    assert reply.status_code == 422 and reply.json()["fields"][0]["field"] == field
    limit = len(body[field]) - 1
    assert reply.json()["fields"][0]["message"] == f"String should have at most {limit} characters"
    at_limit = server.post(path, json={field: body[field][:limit]})
    assert at_limit.status_code == 200


# -- the real command: open binds and stops (slow: each starts a server) ------------------------------------


@pytest.mark.slow
def test_an_open_bind_starts_with_a_token_or_the_insecure_flag(tmp_path):
    token = "t-0b1d"
    with ServeProcess(["--host", "0.0.0.0", "--program", "planner", "--allowed-host", "home.example"],
                      env={"TRACERAG_SERVE_TOKEN": token}, log=tmp_path / "token.log") as server:
        auth = {"Authorization": f"Bearer {token}"}
        assert httpx.post(f"{server.url}/v1/plan", json=PLAN).status_code == 401
        assert httpx.post(f"{server.url}/v1/plan", json=PLAN, headers=auth).status_code == 200
        assert httpx.post(f"{server.url}/v1/plan", json=PLAN, headers={**auth, "Host": "home.example"}).status_code \
            == 200
        assert httpx.post(f"{server.url}/v1/plan", json=PLAN, headers={**auth, "Host": "evil.test"}).status_code \
            == 400
    with ServeProcess(["--host", "0.0.0.0", "--insecure-no-token", "--program", "planner"],
                      env={"TRACERAG_SERVE_TOKEN": ""}, log=tmp_path / "open.log") as server:
        assert httpx.post(f"{server.url}/v1/plan", json=PLAN).status_code == 200
    log = (tmp_path / "open.log").read_text()
    assert "WARNING serving on '0.0.0.0' with no token (--insecure-no-token)" in log


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_ends_the_service_and_removes_its_temp_banks(stop, tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {"TMPDIR": str(temp), "TRACERAG_CACHE_DIR": str(tmp_path / "cache")}
    with ServeProcess(["--program", "experience", "--embedder", "lexical"], env=env, log=tmp_path / "serve.log") \
            as server:
        # the bank built on the bundled traces, for this process, inside the service's own temp directory
        assert list(temp.glob(f"tracerag-serve-{server.proc.pid}-*/tracerag-bank-*"))
        assert httpx.post(f"{server.url}/v1/experience", json={"question": "Sum my receipt."}).status_code == 200
        server.proc.send_signal(stop)
        code = server.proc.wait(30)
    log = (tmp_path / "serve.log").read_text()
    assert list(temp.iterdir()) == [], log  # the bank and the service's temp directory are gone
    assert "Traceback" not in log and code == 0, (code, log)
