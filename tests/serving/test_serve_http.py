"""``tracerag serve`` end to end: the real command in a subprocess on 127.0.0.1, called over HTTP with httpx.

One service for the module serves all five programs on their bundled defaults (lexical embedder, so it
starts in seconds; no LM; a bearer token set); its answers are compared with the same programs called
in this process. A second service fronts a failing LM endpoint and must answer with the fallbacks.
"""

from __future__ import annotations

import json
import re

import httpx
import pytest
from conftest import FakeEngine
from lm_server import StubLMServer
from serve_helpers import ServeProcess, ThreadServer, stable, until

TOKEN = "test-token-5f2c"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"Content-Type": "application/json"}
COMMAND_QUERIES = [("打开客厅的灯", "home_small"), ("把主卧空调调到26度", "home_small"),
                   ("除了卧室，其他灯都关掉", "home_medium"), ("turn off all the lights", "home_en")]
RAG_QUESTIONS = ["Do statins lower LDL cholesterol in diabetes?",
                 "Does telephone counselling increase mammography screening?"]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """The tools tests' cache: the bundled corpus is ingested into it once per session, for both."""
    path = tmp_path_factory.getbasetemp() / "tools-cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRACERAG_CACHE_DIR", str(path))  # the services inherit it
        yield path


@pytest.fixture(scope="module")
def embedder(cache_dir):
    from tracerag.embedding.embedder_choice import make_embedder

    return make_embedder("lexical", cache_dir=cache_dir)


@pytest.fixture(scope="module")
def service(cache_dir, tmp_path_factory):
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with ServeProcess(["--embedder", "lexical"], env={"TRACERAG_SERVE_TOKEN": TOKEN}, log=log) as server:
        with httpx.Client(base_url=server.url, headers=AUTH, timeout=60) as client:
            yield client


def _url(client: httpx.Client, path: str) -> str:
    return str(client.base_url).rstrip("/") + path


def _in_process(program, **kwargs) -> dict:
    from tracerag.serving.programs import prediction_json

    return stable(prediction_json(program(**kwargs)))


# -- answers equal the in-process call -----------------------------------------------------------------


def test_commands_answer_like_the_program_in_process(service, embedder):
    from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
    from tracerag.commands.service import CommandsResponse
    from tracerag.datasets.smarthome import home_dirs, resolve_dataset

    program = CommandRetrieval(build_indexes(home_dirs(resolve_dataset("smarthome")), embedder), ir_source="none")
    for query, home in COMMAND_QUERIES:
        reply = service.post("/v1/commands", json={"query": query, "home": home})
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert body == _in_process(program, query=query, home=home), query
        CommandsResponse.model_validate(body)  # the documented schema holds
    assert body["bulk"] is not None and set(body) >= {"candidates", "ir", "hint", "parse_source", "lm_fallbacks",
                                                       "withheld", "lm_overruled", "lm_parse"}
    # the caller's own parse is used as given (the gold path)
    ir = {"action": "关闭", "type_hint": "Light", "quantifier": "all"}
    body = service.post("/v1/commands", json={"query": "关灯", "home": "home_small", "ir": ir}).json()
    assert body["parse_source"] == "gold" and body["ir"]["type_hint"] == "Light"


def test_rag_answers_like_the_program_in_process(service, embedder):
    from tracerag.documents.hybrid import HybridRetriever
    from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG
    from tracerag.rag.service import RAGResponse
    from tracerag.tools.pubmed_corpus import open_pubmedqa_bank

    program = SelfReflectiveRAG(HybridRetriever(open_pubmedqa_bank(embedder)), RAGConfig(k=10, max_rounds=2))
    for question in RAG_QUESTIONS:
        body = service.post("/v1/rag", json={"question": question}).json()
        assert stable(body) == _in_process(program, question=question)
        RAGResponse.model_validate(body)
        assert body["hint"] == "no_lm" and body["cited_ids"] and set(body["cited_ids"]) <= set(body["retrieved_ids"])


def test_experience_answers_like_the_program_in_process(service, embedder, tmp_path):
    from tracerag.datasets.experience import load_experience_queries
    from tracerag.datasets.smarthome import resolve_dataset
    from tracerag.experience.experience_retrieval import ExperienceConfig, ExperienceRetrieval
    from tracerag.experience.service import ExperienceResponse
    from tracerag.memory.experience_bank import build_experience_bank
    from tracerag.stores.cosine_bank import CosineBank

    build_experience_bank(resolve_dataset("experience"), tmp_path / "bank", embedder, rebuild=True)
    program = ExperienceRetrieval(CosineBank.load(tmp_path / "bank", embedder), ExperienceConfig(enable=True))
    for q in load_experience_queries("experience", "test")[:2]:
        request = {"question": q.question, "sub_task": q.sub_task, "caption": q.caption}
        body = service.post("/v1/experience", json=request).json()
        assert body == _in_process(program, **request)
        ExperienceResponse.model_validate(body)
        assert body["task_ids"] and body["task_ids"][0]


def test_plan_answers_like_the_program_in_process(service):
    from tracerag.datasets.planner import load_planner_cases
    from tracerag.planner.service import PlanResponse
    from tracerag.planner.traceable_planner import TraceablePlanner

    case = load_planner_cases("planner", "test")[0]
    request = {"requirements": case.requirements, "bullets": [b.render() for b in case.bullets],
               "templates": [{"id": t.id, "title": t.title, "text": t.text, "score": t.score} for t in case.templates]}
    body = service.post("/v1/plan", json=request).json()
    assert stable(body) == _in_process(TraceablePlanner(), **request)
    PlanResponse.model_validate(body)
    assert body["plan"] is None and body["hint"] == "no_lm" and body["retrieved_bullet_ids"]  # no LM: no plan
    bad = service.post("/v1/plan", json={**request, "bullets": ["not a playbook line"]})
    assert bad.status_code == 422 and bad.json()["fields"][0]["field"] == "bullets"


def test_agent_answers_like_the_program_in_process(service):
    from tracerag.agent.search_agent import SearchAgent
    from tracerag.agent.service import AgentResponse
    from tracerag.tools.mcp_client import Toolbox

    question = RAG_QUESTIONS[1]
    body = service.post("/v1/agent", json={"question": question}).json()
    with Toolbox.open(embedder="lexical") as tools:
        assert stable(body) == _in_process(SearchAgent(tools), question=question)
    AgentResponse.model_validate(body)
    assert body["hint"] == "no_lm" and body["ids_cited"] and body["trajectory"]["tool_calls"]


# -- the service's own endpoints -----------------------------------------------------------------------


def test_healthz_programs_and_openapi(service):
    health = httpx.get(_url(service, "/healthz"))  # open: no token needed
    assert health.status_code == 200 and health.json() == {"status": "ok", "programs": [
        "commands", "experience", "rag", "planner", "agent"]}
    listing = service.get("/v1/programs").json()["programs"]
    assert listing["commands"]["source"] == "bundled default" and listing["commands"]["embedder"].startswith("lexical")
    assert set(listing["commands"]["store"]["homes"]) == {"home_en", "home_large", "home_medium", "home_small"}
    assert listing["rag"]["store"]["rows"] > 1000 and listing["rag"]["program"] == "SelfReflectiveRAG"
    assert listing["agent"]["store"]["tools"] == ["pubmed_search"] and listing["planner"]["embedder"] is None
    spec = service.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    for path in ("/v1/commands", "/v1/experience", "/v1/rag", "/v1/plan", "/v1/agent"):
        post = spec["paths"][path]["post"]
        assert {"200", "400", "401", "404", "413", "422", "500"} <= set(post["responses"])
        assert post["requestBody"]["content"]["application/json"]["schema"]["$ref"].startswith("#/components/")
    schemas = spec["components"]["schemas"]
    assert schemas["CommandsRequest"]["required"] == ["query"] and "Candidate" in schemas
    assert "question" in schemas["RAGRequest"]["properties"]


# -- bad requests: 4xx JSON naming the problem -----------------------------------------------------------


def test_malformed_json_is_400(service):
    reply = service.post("/v1/rag", content=b'{"question": ', headers=JSON)
    assert reply.status_code == 400 and reply.json()["error"].startswith("malformed JSON")
    assert service.post("/v1/rag", content=b"\xff\xfe", headers=JSON).status_code == 400
    assert service.post("/v1/rag", content=b"[" * 100_000, headers=JSON).status_code == 400  # nested too deeply


@pytest.mark.parametrize(("body", "field"), [
    ({"question": 3}, "question"),
    ({}, "question"),
    ({"question": "x", "stray": 1}, "stray"),
    (["question"], "body"),
])
def test_wrong_fields_are_422_naming_the_field(service, body, field):
    reply = service.post("/v1/rag", json=body)
    assert reply.status_code == 422
    assert reply.json()["fields"][0]["field"] == field and field in reply.json()["error"]


def test_an_unknown_home_is_422_naming_the_homes(service):
    reply = service.post("/v1/commands", json={"query": "开灯", "home": "castle"})
    assert reply.status_code == 422 and reply.json()["fields"] == [
        {"field": "home", "message": "unknown home 'castle'; this program indexes "
                                     "['home_en', 'home_large', 'home_medium', 'home_small']"}]
    assert service.post("/v1/commands", json={"query": "开灯"}).json()["fields"][0]["field"] == "home"


def test_unknown_program_is_404(service):
    reply = service.post("/v1/poetry", json={"question": "x"})
    assert reply.status_code == 404 and "unknown program 'poetry'" in reply.json()["error"]
    assert service.get("/nowhere").status_code == 404 and service.get("/nowhere").json()["error"]


def test_an_oversize_body_is_413_while_it_is_read(service):
    big = json.dumps({"question": "x" * (1 << 20)}).encode()
    assert service.post("/v1/rag", content=big, headers=JSON).status_code == 413  # declared too large: refused unread

    def chunks():  # no Content-Length: the limit is counted as the body arrives
        yield b'{"question": "'
        for _ in range(18):
            yield b"x" * 65536
        yield b'"}'

    reply = service.post("/v1/rag", content=chunks(), headers=JSON)
    assert reply.status_code == 413 and "1048576 bytes" in reply.json()["error"]
    assert service.post("/v1/rag", json={"question": RAG_QUESTIONS[0]}).status_code == 200  # still serving


def test_requests_without_the_right_token_are_401(service):
    url = _url(service, "/v1/rag")
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        reply = httpx.post(url, json={"question": "x"}, headers=headers)
        assert reply.status_code == 401 and reply.headers["www-authenticate"] == "Bearer"
        assert "bearer token" in reply.json()["error"]
    assert httpx.get(_url(service, "/v1/programs")).status_code == 401


# -- a failing LM takes the fallback, never a 500 --------------------------------------------------------


def test_a_failing_lm_gives_the_fallback_not_an_error(cache_dir, embedder, tmp_path):
    import tracerag
    from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
    from tracerag.datasets.smarthome import resolve_dataset

    home = resolve_dataset("smarthome/home_small")
    no_lm = CommandRetrieval(build_indexes([home], embedder), ir_source="none")
    artifact = tmp_path / "commands.json"
    tracerag.save(no_lm, artifact, dataset=str(home))
    with StubLMServer(FakeEngine(), mode="http500") as stub, \
            ServeProcess(["--program", f"commands={artifact}", "--program", "rag", "--embedder", "lexical",
                          "--lm", "openai/stub-model", "--api-base", stub.url, "--api-key", "k", "--lm-retries", "0",
                          "--metrics"],
                         log=tmp_path / "serve.log") as server:
        reply = httpx.post(f"{server.url}/v1/commands", json={"query": "打开客厅的灯"}, timeout=60)
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert body["hint"] == "lm_failed" and body["lm_fallbacks"] == ["parse"]
        assert body["parse_source"] == "rules_fallback"
        expected = _in_process(no_lm, query="打开客厅的灯")
        assert body["candidates"] == expected["candidates"] and body["ir"] == expected["ir"]
        reply = httpx.post(f"{server.url}/v1/rag", json={"question": RAG_QUESTIONS[0]}, timeout=60)
        assert reply.status_code == 200, reply.text
        assert reply.json()["hint"] == "lm_failed" and reply.json()["lm_fallbacks"] == ["grade"]
        assert reply.json()["answer"] and reply.json()["cited_ids"]
        programs = httpx.get(f"{server.url}/v1/programs").json()["programs"]
        assert programs["commands"]["source"] == str(artifact)
        assert programs["commands"]["metadata"]["program"] == "CommandRetrieval"
        metrics = httpx.get(f"{server.url}/metrics").text  # what an operator's alert reads
        assert 'tracerag_lm_fallbacks_total{program="commands",stage="parse"} 1\n' in metrics
        assert 'tracerag_lm_fallbacks_total{program="rag",stage="grade"} 1\n' in metrics
        assert re.search(r"^tracerag_lm_breaker_open [01]$", metrics, re.M)
    assert any(fault == "http500" for _, fault in stub.requests)  # the LM really was asked


# -- unexpected failures and a busy service, on a real uvicorn in a thread -------------------------------


class _Broken:
    def __call__(self, **kwargs):
        raise RuntimeError("the index file vanished\nTraceback (most recent call last): secret detail")


class _Held:
    """A rag program whose calls wait until the test releases them; it counts the calls inside at once."""

    def __init__(self):
        import threading

        self.inside = self.most = 0
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, question: str):
        import dspy

        with self._lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        try:
            assert self.release.wait(30), "the test never released the calls"
        finally:
            with self._lock:
                self.inside -= 1
        return dspy.Prediction(answer=question)


def test_an_unexpected_failure_is_a_one_line_500(caplog):
    from tracerag.serving.app import build_app
    from tracerag.serving.programs import ENDPOINTS, ServedProgram

    app = build_app({"rag": ServedProgram(ENDPOINTS["rag"], _Broken())})
    with ThreadServer(app) as server, caplog.at_level("ERROR", logger="tracerag.serving.app"):
        reply = httpx.post(f"{server.url}/v1/rag", json={"question": "x"})
    assert reply.status_code == 500
    assert reply.json() == {"error": "internal error: RuntimeError: the index file vanished", "fields": []}
    assert "Traceback" not in reply.text
    assert any("vanished" in r.getMessage() or r.exc_info for r in caplog.records)  # logged here, in full


def test_calls_run_off_the_event_loop_with_bounded_concurrency():
    import concurrent.futures

    from tracerag.serving.app import build_app
    from tracerag.serving.programs import ENDPOINTS, ServedProgram

    held = _Held()
    app = build_app({"rag": ServedProgram(ENDPOINTS["rag"], held)}, concurrency=2, metrics=True)
    with ThreadServer(app) as server, concurrent.futures.ThreadPoolExecutor(4) as pool:
        calls = [pool.submit(httpx.post, f"{server.url}/v1/rag", json={"question": str(i)}, timeout=60)
                 for i in range(4)]

        def received() -> int:  # the four calls, and this /metrics request itself
            text = httpx.get(f"{server.url}/metrics").text
            return int(re.search(r"^tracerag_requests_in_flight (\d+)$", text, re.M).group(1))

        until(lambda: received() == 5 and held.inside == 2, "four calls received, two of them running")
        assert httpx.get(f"{server.url}/healthz").status_code == 200  # answered while the calls are held
        assert held.inside == 2  # two at a time: the other two wait for a slot
        held.release.set()
        assert [c.result().json()["answer"] for c in calls] == ["0", "1", "2", "3"]
    assert held.most == 2


def test_serve_help_is_lazy_and_a_bad_program_is_one_error_line(capsys):
    import subprocess
    import sys

    from serve_helpers import ROOT

    code = ("import json, sys, optimize\ntry:\n    optimize.main(['serve', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'dspy', 'numpy', 'pydantic', "
            "'starlette', 'uvicorn', 'httpx'})))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip().splitlines()[-1] == "[]", out.stderr
    import optimize

    assert optimize.main(["serve", "--program", "poetry"]) == 2
    assert "unknown program 'poetry'" in capsys.readouterr().err


def test_async_calls_answer_like_thread_calls(embedder):
    from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
    from tracerag.datasets.smarthome import resolve_dataset
    from tracerag.serving.app import build_app
    from tracerag.serving.programs import ENDPOINTS, ServedProgram

    program = CommandRetrieval(build_indexes([resolve_dataset("smarthome/home_small")], embedder), ir_source="none")
    app = build_app({"commands": ServedProgram(ENDPOINTS["commands"], program)}, calls="async")
    with ThreadServer(app) as server:
        for query, _ in COMMAND_QUERIES[:2]:
            reply = httpx.post(f"{server.url}/v1/commands", json={"query": query}, timeout=30)
            assert reply.status_code == 200 and reply.json() == _in_process(program, query=query)
