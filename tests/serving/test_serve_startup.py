"""A service is ready only when it can answer: ``/healthz`` says "starting" (503) until its programs are loaded
and its embedders warm, then "ok"; ``/livez`` answers throughout. A killed service's temp directory is removed
by the next start.

The readiness tests run the built app under a real uvicorn in a thread, with a load and a warm-up the test
holds and releases (no timing luck); the temp-directory test runs the real command, killed with SIGKILL.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import subprocess
import sys
import threading

import httpx
import numpy as np
import pytest
from json_service import ScriptedService, serving
from serve_helpers import ServeProcess, ThreadServer, until

PLAN = {"requirements": "Set up a 25 µL PCR.", "bullets": ["[mat-00001] helpful=3 harmful=0 :: Thaw the mix on ice."]}


class HeldEmbedder:
    """An embedder whose first ``embed`` waits until the test releases it (a model still loading)."""

    id = "held"
    dim = 4

    def __init__(self):
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        self.entered.set()
        assert self.release.wait(30), "the test never released the warm-up"
        return np.ones((len(texts), self.dim), dtype=np.float32) / 2


class NoTemplates:
    """A planner's template retriever that finds none, searching with ``embedder`` (the one to warm)."""

    def __init__(self, embedder):
        self.embedder = embedder

    def __call__(self, requirements):
        return []


def _planner(embedder=None):
    from tracerag.planner.traceable_planner import TraceablePlanner
    from tracerag.serving.programs import ENDPOINTS, ServedProgram

    program = TraceablePlanner(retrieve_templates=NoTemplates(embedder) if embedder is not None else None)
    return {"planner": ServedProgram(ENDPOINTS["planner"], program)}


def test_healthz_says_starting_until_loaded_and_warm_then_ok(tmp_path):
    from tracerag.embedding.embedding_cache import CachedEmbedder
    from tracerag.serving.app import build_app
    from tracerag.serving.programs import Startup

    held = HeldEmbedder()
    cached = CachedEmbedder(held, tmp_path / "embeddings.sqlite")  # the warm-up must reach the model behind it
    loading = threading.Event()
    loaded = threading.Event()

    def load(stop):
        loading.set()
        assert loaded.wait(30), "the test never released the load"
        return _planner(cached)

    startup = Startup(["planner"], load)
    with ThreadServer(build_app(startup, token="t0k", metrics=True)) as server:
        assert loading.wait(10)
        for stage, doing in (("loading", "loading"), ("warming", "warming its embedder")):
            health = httpx.get(f"{server.url}/healthz")  # open: no token
            assert health.status_code == 503, stage
            assert health.json() == {"status": "starting", "programs": ["planner"], "ready": [],
                                     "pending": {"planner": doing}} and health.headers["retry-after"]
            live = httpx.get(f"{server.url}/livez")
            assert live.status_code == 200 and live.json() == {"status": "starting"}
            auth = {"Authorization": "Bearer t0k"}
            call = httpx.post(f"{server.url}/v1/plan", json=PLAN, headers=auth)
            assert call.status_code == 503 and call.json()["error"] == f"starting: planner is {doing}; retry shortly"
            assert call.headers["retry-after"] == "1"
            assert httpx.get(f"{server.url}/v1/programs", headers=auth).status_code == 503
            assert httpx.post(f"{server.url}/v1/plan", json=PLAN).status_code == 401  # the token still counts
            assert httpx.post(f"{server.url}/v1/rag", json={"question": "x"}, headers=auth).status_code == 404
            assert httpx.get(f"{server.url}/openapi.json", headers=auth).status_code == 200
            if stage == "loading":
                loaded.set()
                assert held.entered.wait(10)  # loaded; now the warm-up computes its vector
        assert startup.state == "starting" and held.calls == [["warm-up"]]
        held.release.set()
        until(lambda: startup.ready, "the warm-up")
        health = httpx.get(f"{server.url}/healthz")
        assert health.status_code == 200 and health.json() == {"status": "ok", "programs": ["planner"]}
        assert httpx.get(f"{server.url}/livez").json() == {"status": "ok"}
        reply = httpx.post(f"{server.url}/v1/plan", json=PLAN, headers={"Authorization": "Bearer t0k"})
        assert reply.status_code == 200, reply.text
        metrics = httpx.get(f"{server.url}/metrics", headers={"Authorization": "Bearer t0k"}).text
        assert 'route="/healthz",method="GET",status="503"' in metrics and 'route="/livez",method="GET"' in metrics


def test_programs_given_ready_made_are_warmed_before_the_app_answers():
    from tracerag.serving.app import build_app

    held = HeldEmbedder()
    held.release.set()
    app = build_app(_planner(held))
    assert held.calls == [["warm-up"]]  # warmed by build_app itself
    with ThreadServer(app) as server:
        assert httpx.get(f"{server.url}/healthz").status_code == 200


def test_one_store_for_two_programs_on_their_defaults_is_refused_before_either_is_built():
    from tracerag.serving.programs import load_programs

    with pytest.raises(ValueError, match="--store is ambiguous with experience and rag on their defaults"):
        load_programs({"experience": None, "rag": None, "commands": None},
                      {name: {"store": "milvus:./x.db"} for name in ("experience", "rag", "commands")})


def test_a_program_on_given_data_says_which_in_its_source_and_log(caplog, embedder):
    from tracerag.serving.programs import DEFAULT_SOURCE, load_programs

    with caplog.at_level(logging.INFO, logger="tracerag.serving.programs"):
        served = load_programs({"planner": None, "experience": None},
                               {"planner": {"dataset": "planner", "embedder": embedder},
                                "experience": {"embedder": embedder}})
    try:
        assert served["planner"].source == "dataset=planner" and served["experience"].source == DEFAULT_SOURCE
        assert "loaded planner from dataset=planner" in caplog.text
    finally:
        for program in served.values():
            program.close()


def test_a_load_that_fails_says_failed_and_stops_the_service():
    from tracerag.serving.app import build_app
    from tracerag.serving.programs import Startup

    def load(stop):
        raise ValueError("out/c.json: field 'config' is missing")

    failures = []
    startup = Startup(["planner"], load, on_failed=failures.append)
    with ThreadServer(build_app(startup)) as server:
        until(lambda: startup.state == "failed", "the failure")
        health = httpx.get(f"{server.url}/healthz")
        assert health.status_code == 503 and health.json()["status"] == "failed"
        assert "config" not in health.text  # an open path says no more than the status
        assert httpx.get(f"{server.url}/livez").status_code == 503
        assert httpx.post(f"{server.url}/v1/plan", json=PLAN).status_code == 503
    assert [str(e) for e in failures] == ["out/c.json: field 'config' is missing"]


def test_a_warm_up_that_fails_is_retried_and_stopping_ends_it():
    from tracerag.serving.programs import LoadingStopped, warm_up

    class Flaky:
        id, dim = "flaky", 4

        def __init__(self, failures):
            self.failures = failures

        def embed(self, texts):
            if self.failures:
                self.failures -= 1
                raise ConnectionError("embedding service not up yet")
            return np.ones((len(texts), self.dim), dtype=np.float32)

    heard = []
    stop = threading.Event()
    embedder = Flaky(1)
    warm_up(_planner(embedder), stop, on_wait=heard.append)  # one retry, a second later
    assert embedder.failures == 0 and heard == ["embedder flaky did not answer: ConnectionError: embedding service "
                                                "not up yet"]
    stop.set()
    with pytest.raises(LoadingStopped):
        warm_up(_planner(Flaky(5)), stop)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_only_the_temp_dirs_of_gone_services_are_removed(tmp_path):
    from tracerag.serving.programs import own_temp_dir, remove_stale_temp_dirs

    dead = tmp_path / f"tracerag-serve-{_dead_pid()}-abc12345"
    (dead / "tracerag-bank-x" / "bank").mkdir(parents=True)
    (dead / "tracerag-bank-x" / "bank" / "vectors.npy").write_bytes(b"x")
    alive = tmp_path / f"tracerag-serve-{os.getppid()}-def67890"  # a running process's
    alive.mkdir()
    mine = own_temp_dir(tmp_path)
    assert mine.name.startswith(f"tracerag-serve-{os.getpid()}-")
    others = [tmp_path / "tracerag-bank-old", tmp_path / f"tracerag-serve-{_dead_pid()}"]  # not our pattern
    for other in others:
        other.mkdir()
    a_file = tmp_path / f"tracerag-serve-{_dead_pid()}-file0000"
    a_file.write_text("not a directory")
    assert remove_stale_temp_dirs(tmp_path) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in [alive, mine, *others, a_file])


@pytest.mark.slow
def test_a_killed_service_leaves_its_temp_dir_and_the_next_start_removes_it(tmp_path):
    """The finding: SIGKILL of ``serve`` left its temp bank behind for good. Now it is in the service's own
    directory, which the next start removes; a clean stop removes its own."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {"TMPDIR": str(temp), "TRACERAG_CACHE_DIR": str(tmp_path / "cache")}
    with ServeProcess(["--program", "experience", "--embedder", "lexical"], env=env, log=tmp_path / "a.log") as first:
        killed = first.proc.pid
        banks = list(temp.glob(f"tracerag-serve-{killed}-*/tracerag-bank-*"))
        assert banks, list(temp.rglob("*"))  # the temp bank lives in the service's own directory
        first.proc.kill()
        first.proc.wait(10)
    assert banks[0].exists()  # SIGKILL: nothing could remove it
    with ServeProcess(["--program", "planner"], env=env, log=tmp_path / "b.log") as second:
        assert not banks[0].parents[0].exists()  # removed at the start: its process is gone
        assert [p.name.split("-")[2] for p in temp.iterdir()] == [str(second.proc.pid)]
    assert list(temp.iterdir()) == []  # a clean stop removes its own


@pytest.mark.slow
def test_a_damaged_embedding_cache_costs_no_request(tmp_path):
    """The finding: a damaged or full cache made /v1/commands return 500. A cache is an optimisation: the service
    starts, answers every request from the embedder itself, and says once which file it set aside."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "embeddings.sqlite").write_bytes(b"this is no sqlite file\x00" * 64)
    env = {"TRACERAG_CACHE_DIR": str(cache), "TRACERAG_EMBEDDER": "lexical"}
    with ServeProcess(["--program", "commands"], env=env, log=tmp_path / "serve.log") as server:
        replies = [httpx.post(f"{server.url}/v1/commands", json={"query": query, "home": "home_en"}, timeout=60)
                   for query in ("turn off all the lights", "set the thermostat to 70", "pause the tv") * 5]
        assert [r.status_code for r in replies] == [200] * 15
        assert all(r.json()["candidates"] or r.json()["bulk"] for r in replies)
    log = (tmp_path / "serve.log").read_text()
    assert log.count("embeddings.sqlite: not a readable cache file") == 1 and "Traceback" not in log
    assert list(cache.glob("embeddings.sqlite.corrupt-*"))  # set aside beside itself, not deleted


def test_a_starting_service_says_what_it_loaded_and_when_it_is_ready(tmp_path):
    """A cold start took 23 s with nothing on the terminal: it now says what it starts, each program when it
    loads and is loaded, and when it is ready."""
    log = tmp_path / "serve.log"
    with ServeProcess(["--program", "planner"], env={"TRACERAG_CACHE_DIR": str(tmp_path / "cache")}, log=log):
        pass
    lines = log.read_text(encoding="utf-8").splitlines()
    said = [line for line in lines if line.startswith("tracerag serve: ")]
    assert said[0] == "tracerag serve: starting planner"
    listening = next(line for line in said if line.startswith("tracerag serve: http://"))
    assert listening.endswith("loading (GET /healthz answers 200 when ready)")
    loading = said.index("tracerag serve: loading planner (bundled default, data planner)")
    loaded = next(i for i, line in enumerate(said)
                  if re.fullmatch(r"tracerag serve: loaded planner \(bundled default\) in \d+\.\d s", line))
    assert said.index(listening) < loading < loaded
    assert re.fullmatch(r"tracerag serve: ready \(\d+\.\d s to load and warm\)", said[-1]), said


class HeldEmbeddings(ScriptedService):
    """An OpenAI-compatible ``/v1/embeddings`` that answers (a hash of each text) once the test releases it."""

    route = "/v1/embeddings"

    def __init__(self):
        super().__init__()
        self.asked = threading.Event()
        self.release = threading.Event()

    def respond(self, payload):
        self.asked.set()
        assert self.release.wait(60), "the test never released the embeddings"
        rows = [hashlib.sha256(text.encode()).digest()[:8] for text in payload["input"]]
        return {"data": [{"object": "embedding", "index": i, "embedding": [b - 127.5 for b in row]}
                         for i, row in enumerate(rows)]}


def test_a_real_service_says_starting_with_what_is_pending_then_ready(tmp_path):
    """The real command, its commands program held while it indexes (the embedding service answers when the test
    says): /healthz says starting and what is pending, a call gets 503 with Retry-After and what it waits for,
    the log says what is loading; released, the program answers and /healthz says ok."""
    held = HeldEmbeddings()
    log = tmp_path / "serve.log"
    with serving(held) as service:
        flags = ["--program", "commands", "--dataset", "smarthome/home_small", "--embedder", service.base_url]
        with ServeProcess(flags, env={"TRACERAG_CACHE_DIR": str(tmp_path / "cache")}, log=log, wait=False) as server:
            assert held.asked.wait(60), log.read_text()
            until(lambda: _answers(f"{server.url}/healthz"), "the service listening", 60)
            health = httpx.get(f"{server.url}/healthz")
            assert health.status_code == 503 and health.headers["retry-after"] == "1"
            assert health.json() == {"status": "starting", "programs": ["commands"], "ready": [],
                                     "pending": {"commands": "loading"}}
            call = httpx.post(f"{server.url}/v1/commands", json={"query": "打开客厅的灯"})
            assert call.status_code == 503 and call.headers["retry-after"] == "1"
            assert call.json()["error"] == "starting: commands is loading; retry shortly"
            said = log.read_text(encoding="utf-8")
            assert "tracerag serve: starting commands\n" in said
            assert "tracerag serve: loading commands (homes=smarthome/home_small)\n" in said
            held.release.set()
            until(lambda: httpx.get(f"{server.url}/healthz").status_code == 200, "the service ready", 60)
            assert httpx.get(f"{server.url}/healthz").json() == {"status": "ok", "programs": ["commands"]}
            reply = httpx.post(f"{server.url}/v1/commands", json={"query": "打开客厅的灯"})
            assert reply.status_code == 200 and reply.json()["candidates"], reply.text
    said = log.read_text(encoding="utf-8")
    assert re.search(r"tracerag serve: indexed home_small: 18 devices, \d+ commands, \d+ distinct documents "
                     r"\(\S+\) in \d+\.\d\d s\n", said), said
    assert re.search(r"tracerag serve: loaded commands \(homes=smarthome/home_small\) in \d+\.\d s\n", said), said
    assert re.search(r"tracerag serve: ready \(\d+\.\d s to load and warm\)\n", said), said


def _answers(url: str) -> bool:
    try:
        httpx.get(url, timeout=2.0)
    except httpx.HTTPError:
        return False
    return True
