"""``await program.acall(...)`` gives the sync prediction, field by field, for all five programs: with no
LM, with the fake LM engine (through DSPy's async engine door), with a sync-only engine (its calls run in
a worker thread), and over HTTP against the stub endpoint, faults included; and concurrent questions
overlap their LM calls instead of queueing them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import dspy
import pytest
from conftest import ABSTRACTS, AgentEngine, FakeEngine, PlannerEngine, ToolResult
from lm_server import StubLMServer
from overlap import HANG_S, Together
from remote_services import RemoteService

from tracerag.agent.search_agent import SearchAgent
from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.documents.corpus import ingest_documents
from tracerag.documents.hybrid import HybridRetriever
from tracerag.embedding.http_embedder import EmbeddingServiceError
from tracerag.experience.experience_retrieval import ExperienceConfig, ExperienceRetrieval
from tracerag.home_commands.index_params import IndexParams
from tracerag.lm.breaker import BREAKER
from tracerag.memory.experience_bank import build_experience_bank
from tracerag.memory.playbook import Template, index_templates, parse_playbook
from tracerag.planner.traceable_planner import TraceablePlanner
from tracerag.programs.guarded_step import Stages
from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG
from tracerag.stores.cosine_bank import CosineBank
from tracerag.stores.stores import open_store

RAG_QUESTION = "Do statins lower cholesterol in diabetes patients?"
AGENT_QUESTION = "Does aspirin prevent stroke in older adults?"
TASK = "How much did I pay for the groceries on this receipt, tax included?"
PLAYBOOK = parse_playbook("[mat-00001] helpful=3 harmful=0 :: Thaw enzymes on ice.\n"
                          "[proc-00001] helpful=1 harmful=0 :: Include a no-template control.\n")
TEMPLATES = [Template("tpl-a", "Routine Taq PCR", "Mix master mix with primers.", 0.8),
             Template("tpl-b", "High-fidelity PCR", "Use a proofreading polymerase.", 0.6)]
LIGHT_ON = {"action": "打开", "type_hint": "Light", "name_hint": "", "scope_include": ["客厅"],
            "scope_exclude": [], "quantifier": "one"}
BULK = {"action": "调节", "type_hint": "Light", "quantifier": "all"}
TIMING = {"seconds", "ms", "duration_s", "duration_ms", "timestamp"}  # wall-clock fields: the only ones to differ


class AsyncDoor:
    """The async engine door over a fake engine: DSPy awaits ``complete(request)``."""

    def __init__(self, engine):
        self.engine = engine

    async def complete(self, request):
        await asyncio.sleep(0)
        return self.engine.complete(request)


def configure(engine, *, async_door: bool = True) -> None:
    lm = dspy.LM("fake/model", engine=engine, async_engine=AsyncDoor(engine) if async_door else None, cache=False,
                 num_retries=0)
    dspy.configure(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))


def comparable(value):
    """A prediction's fields as plain data, wall-clock timings left out."""
    if isinstance(value, dspy.Prediction):
        return {k: comparable(v) for k, v in value.items() if k not in TIMING}
    if hasattr(value, "model_dump"):
        return comparable(value.model_dump())
    if hasattr(value, "__dataclass_fields__"):
        return {k: comparable(getattr(value, k)) for k in value.__dataclass_fields__ if k not in TIMING}
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list | tuple):
        return [comparable(v) for v in value]
    return value


def same(make_program, make_engine=None, *, async_door: bool = True, **inputs):
    """Run sync then async, each on a fresh program and a fresh engine; assert equal; return both."""
    results = []
    for mode in ("sync", "async"):
        engine = make_engine() if make_engine else None
        if engine is not None:
            configure(engine, async_door=async_door)
        else:
            dspy.configure(lm=None)
        program = make_program()
        pred = program(**inputs) if mode == "sync" else asyncio.run(program.acall(**inputs))
        results.append((pred, engine))
    (sync, sync_engine), (async_, async_engine) = results
    assert comparable(async_) == comparable(sync)
    if sync_engine is not None:
        assert async_engine.calls == sync_engine.calls
    return sync, async_


# -- the five programs, field by field ---------------------------------------------------------------------


def test_commands_async_equals_sync(index):
    for query in ("打开客厅的灯", "hello", "所有灯都关掉"):
        same(lambda: CommandRetrieval(index), query=query)
    pred, _ = same(lambda: CommandRetrieval(index), lambda: FakeEngine(irs={"打开客厅的灯": LIGHT_ON}),
                   query="打开客厅的灯")
    assert pred.parse_source == "lm" and pred.lm_calls == 1
    pred, _ = same(lambda: CommandRetrieval(index), lambda: FakeEngine(mode="garbage"), query="打开客厅的灯")
    assert pred.lm_fallbacks == ["parse"]
    index.params = IndexParams(min_top1_ratio=0.99, min_margin=0.99)  # low confidence: the arbiter is asked
    pred, _ = same(lambda: CommandRetrieval(index, arbitration=True),
                   lambda: FakeEngine(irs={"所有灯都调一下": BULK}, arbitration={"choice_index": 1}),
                   query="所有灯都调一下")
    assert pred.lm_calls == 2 and pred.bulk.hint is None and pred.bulk.targets


@pytest.fixture
def bank(traces_dir, tmp_path, embedder):
    build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    return CosineBank.load(tmp_path / "bank", embedder)


def test_experience_async_equals_sync(bank):
    def program(**config):
        return lambda: ExperienceRetrieval(bank, ExperienceConfig(enable=True, **config))

    same(program(), question=TASK)
    pred, _ = same(program(max_retrieval_rounds=2), lambda: FakeEngine(sufficiency=[False]), question=TASK)
    assert pred.rounds == 2 and pred.lm_calls == 5 and pred.used_task_ids
    pred, _ = same(program(), lambda: FakeEngine(fail={"SummarizeExperience": "error"}), question=TASK)
    assert pred.lm_fallbacks == ["summarize"]


def test_rag_async_equals_sync(retriever):
    same(lambda: SelfReflectiveRAG(retriever), question=RAG_QUESTION)
    pred, _ = same(lambda: SelfReflectiveRAG(retriever), FakeEngine, question=RAG_QUESTION)
    assert pred.grounded is True and pred.cited_ids
    pred, _ = same(lambda: SelfReflectiveRAG(retriever, RAGConfig(min_quality=1.0, max_rounds=2)),
                   lambda: FakeEngine(grounded=[False]), question=RAG_QUESTION)
    assert pred.rounds == 2 and pred.hint == "regenerated"
    pred, _ = same(lambda: SelfReflectiveRAG(retriever), lambda: FakeEngine(mode="error"), question=RAG_QUESTION)
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["grade"]


def test_planner_async_equals_sync():
    def planner():
        return TraceablePlanner(retrieve_templates=lambda requirements: TEMPLATES)

    same(planner, requirements="Set up a PCR.", bullets=PLAYBOOK)
    pred, _ = same(planner, PlannerEngine, requirements="Set up a PCR.", bullets=PLAYBOOK)
    assert pred.plan is not None and pred.lm_calls == 1 and pred.metadata["usage"]
    pred, _ = same(planner, lambda: PlannerEngine(plan_mode="garbage"), requirements="Set up a PCR.", bullets=PLAYBOOK)
    assert pred.plan is None and pred.hint == "lm_failed"


class Tools:
    def schemas(self):
        return {"pubmed_search": {"limit": int}}

    def call(self, call):
        docs = [{"id": "111", "text": "Aspirin lowered stroke risk in adults. More.", "score": 0.9},
                {"id": "222", "text": "Second abstract here.", "score": 0.5}]
        return ToolResult(call.name, docs[: call.params.get("limit", 5)])


def test_agent_async_equals_sync():
    same(lambda: SearchAgent(Tools()), question=AGENT_QUESTION)
    pred, _ = same(lambda: SearchAgent(Tools()), AgentEngine, question=AGENT_QUESTION)
    assert pred.stop_reason == "answered" and pred.ids_cited == ["111"] and pred.lm_calls == 2
    pred, _ = same(lambda: SearchAgent(Tools()), lambda: AgentEngine(agent="chatty"), question=AGENT_QUESTION)
    assert pred.hint == "lm_failed" and pred.stop_reason == "no_action"
    pred, _ = same(lambda: SearchAgent(Tools()), lambda: AgentEngine(agent="error"), question=AGENT_QUESTION)
    assert pred.stop_reason == "lm_error" and pred.lm_fallbacks == ["step"]


def test_an_lm_without_an_async_path_runs_its_calls_in_a_worker_thread(retriever):
    """A custom engine with no async door: acall still answers, the same, with no fallback."""
    pred, _ = same(lambda: SelfReflectiveRAG(retriever), FakeEngine, async_door=False, question=RAG_QUESTION)
    assert pred.grounded is True and pred.lm_fallbacks == []
    same(lambda: SearchAgent(Tools()), AgentEngine, async_door=False, question=AGENT_QUESTION)


# -- Stages.acall: the same guard as Stages.call ------------------------------------------------------------


def test_stages_acall_counts_falls_back_and_opens_the_breaker_like_call():
    configure(FakeEngine(mode="error"))
    predictor = dspy.Predict("question -> answer")

    def run(stages, number):
        if number % 2:
            return asyncio.run(stages.acall("s", predictor, question="q"))
        return stages.call("s", predictor, question="q")

    sync, async_ = Stages(), Stages()
    for n in range(6):  # the breaker opens after 5 failures, whichever path made them
        assert run(sync if n < 3 else async_, n) is None
    assert sync.calls == 3 and async_.calls == 2 and async_.fallbacks == ["s"] * 3
    assert async_.errors[-1] == "s: the LM is skipped after repeated failures"
    assert BREAKER.is_open(dspy.settings.lm)


# -- over HTTP: the stub endpoint ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["good", "http500", "garbage"])
def test_rag_over_http_async_equals_sync(retriever, mode):
    preds = []
    for run in ("sync", "async"):
        with StubLMServer(FakeEngine(), mode=mode) as stub:
            dspy.configure(lm=stub.lm(), adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
            program = SelfReflectiveRAG(retriever)
            preds.append(program(question=RAG_QUESTION) if run == "sync" else
                         asyncio.run(program.acall(question=RAG_QUESTION)))
            requests = list(stub.requests)
        if run == "sync":
            sync_requests = requests
    assert comparable(preds[1]) == comparable(preds[0]) and requests == sync_requests
    assert (preds[0].hint == "lm_failed") == (mode != "good")


def test_an_async_call_past_the_timeout_falls_back_at_its_deadline(retriever):
    with StubLMServer(FakeEngine(), mode="slow", delay=3.0) as stub:
        dspy.configure(lm=stub.lm(timeout=0.5), adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
        pred = asyncio.run(SelfReflectiveRAG(retriever).acall(question=RAG_QUESTION))  # unbounded: answered at 3 s
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["grade"]
    assert "no reply within 0.5 s" in pred.lm_errors[0]  # cut at the deadline the LM gave its transport


def test_concurrent_questions_overlap_their_lm_calls(retriever):
    """N questions at once have their first LM calls in flight together: the endpoint answers none of them until
    all N are in, which questions asked one after another never achieve (``benchmarks/bench_async.py`` measures
    the seconds)."""
    questions = [f"What did the study of {text.split()[0].lower()} find?" for text in ABSTRACTS.values()]
    with StubLMServer(FakeEngine()) as stub:
        dspy.configure(lm=stub.lm(timeout=HANG_S + 10), adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
        program = SelfReflectiveRAG(retriever, RAGConfig(max_rounds=1))
        stub.together = Together(len(questions))

        async def ask(batch):
            return await asyncio.gather(*(program.acall(question=q) for q in batch))

        preds = asyncio.run(ask(questions))
    assert stub.together.met and all(p.lm_fallbacks == [] for p in preds)
    assert preds[0].lm_calls >= 2  # sequential LM calls of one question (grade, answer, verify)


# -- remote embedder, reranker: awaited on the event loop (aembed / arerank), not in a thread each ----------


@pytest.fixture
def remote():
    with RemoteService() as service:
        yield service


def remote_retriever(service, tmp_path) -> HybridRetriever:
    embedder = service.embedder()
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in ABSTRACTS.items()), encoding="utf-8")
    ingest_documents(path, tmp_path / "remote-bank", embedder, size=120, overlap=0)
    return HybridRetriever(CosineBank.load(tmp_path / "remote-bank", embedder))


def remote_experience(service, traces_dir, tmp_path, **config) -> Callable[[], ExperienceRetrieval]:
    embedder = service.embedder()
    build_experience_bank(traces_dir, tmp_path / "remote-exp", embedder)
    bank = CosineBank.load(tmp_path / "remote-exp", embedder)
    return lambda reranker=None: ExperienceRetrieval(bank, ExperienceConfig(enable=True, **config), reranker=reranker)


# 16 calls queued behind one worker thread would reach a remote service one at a time. Awaited, all 16 are in
# flight at once: the service answers none of a step's first 16 requests until all 16 are in (``Together``).


def on_one_worker_thread(calls):
    """Await ``calls()`` (a gather) on a fresh loop whose ``asyncio.to_thread`` has a single worker thread."""
    async def run():
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(1))
        return await calls()

    return asyncio.run(run())


def test_rag_and_planner_with_a_remote_embedder_async_equals_sync(remote, tmp_path):
    retriever = remote_retriever(remote, tmp_path)
    before = remote.counts["/v1/embeddings"]
    same(lambda: SelfReflectiveRAG(retriever), question=RAG_QUESTION)
    assert remote.counts["/v1/embeddings"] - before == 2  # one query embedding each way: none repeated in the thread
    pred, _ = same(lambda: SelfReflectiveRAG(retriever, RAGConfig(min_quality=1.0, max_rounds=2)),
                   lambda: FakeEngine(grounded=[False]), question=RAG_QUESTION)
    assert pred.rounds == 2 and pred.retrieved_ids
    embedder = remote.embedder()
    store = open_store(tmp_path / "tpl", embedder_id=embedder.id, dim=embedder.dim, create=True)
    index_templates(store, embedder, [{"id": t.id, "title": t.title, "text": t.text} for t in TEMPLATES])
    pred, _ = same(lambda: TraceablePlanner(retrieve_templates=store, embedder=embedder), PlannerEngine,
                   requirements="Set up a high-fidelity PCR.", bullets=PLAYBOOK)
    assert pred.retrieved_template_ids and pred.plan is not None


def test_experience_with_a_remote_embedder_and_reranker_async_equals_sync(remote, traces_dir, tmp_path):
    make = remote_experience(remote, traces_dir, tmp_path, max_retrieval_rounds=2)
    for reranker in (remote.reranker(), None):  # the rerank service; the local blend over the remote embedder
        pred, _ = same(lambda reranker=reranker: make(reranker), question=TASK)
        assert pred.retrieved_task_ids and pred.error is None
        pred, _ = same(lambda reranker=reranker: make(reranker), lambda: FakeEngine(sufficiency=[False]), question=TASK)
        assert pred.rounds == 2 and pred.used_task_ids


def test_a_remote_failure_takes_the_same_fallback(remote, traces_dir, tmp_path):
    make = remote_experience(remote, traces_dir, tmp_path)
    with RemoteService() as down:
        down.down = True
        pred, _ = same(lambda: make(down.reranker(max_retries=1)), question=TASK)  # rerank down: retrieval order
        assert pred.retrieved_task_ids and pred.error is None and down.counts["/v1/rerank"] == 4
    retriever = remote_retriever(remote, tmp_path)
    remote.down = True
    pred, _ = same(lambda: make(remote.reranker()), question=TASK)  # embedder down: no experience, the error
    assert pred.experience == "" and "EmbeddingServiceError" in pred.error and "HTTP 503" in pred.error
    errors = []
    for run in (lambda p: p(question=RAG_QUESTION), lambda p: asyncio.run(p.acall(question=RAG_QUESTION))):
        with pytest.raises(EmbeddingServiceError) as info:
            run(SelfReflectiveRAG(retriever))
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_concurrent_calls_wait_for_the_remote_services_without_a_thread_each(remote, traces_dir, tmp_path):
    """16 calls with ONE worker thread for the CPU-bound searches: each remote step has all 16 requests in
    flight at once, where a thread per remote call would send them one at a time."""
    retriever = remote_retriever(remote, tmp_path)
    make = remote_experience(remote, traces_dir, tmp_path, enable_query_rewrite=False)
    rag, experience = SelfReflectiveRAG(retriever), make(remote.reranker())
    questions = [f"What did the study of {text.split()[0].lower()} find? ({i})" for i, text in
                 enumerate(list(ABSTRACTS.values()) * 2)]
    sync_rag = [comparable(rag(question=q)) for q in questions]
    sync_exp = [comparable(experience(question=q)) for q in questions]
    remote.in_flight_max, remote.together = 0, {"/v1/embeddings": Together(16)}
    preds = on_one_worker_thread(lambda: asyncio.gather(*(rag.acall(question=q) for q in questions)))
    assert [comparable(p) for p in preds] == sync_rag
    assert remote.together["/v1/embeddings"].met and remote.in_flight_max == 16
    remote.in_flight_max, remote.together = 0, {"/v1/embeddings": Together(16), "/v1/rerank": Together(16)}
    preds = on_one_worker_thread(lambda: asyncio.gather(*(experience.acall(question=q) for q in questions)))
    assert [comparable(p) for p in preds] == sync_exp
    assert all(gate.met for gate in remote.together.values()) and remote.in_flight_max == 16  # embed, then rerank


def test_command_search_awaits_a_remote_embedder_without_a_thread_each(remote, home_dir):
    """CommandRetrieval over a remote embedder: the texts its index search embeds are awaited first, so 16
    calls on ONE worker thread have their embeddings in flight at once, with the predictions of the sync path."""
    from tracerag.home_commands.home import Home
    from tracerag.home_commands.home_index import CommandIndex

    program = CommandRetrieval(CommandIndex(Home.load(home_dir), remote.embedder()))
    queries = [f"打开客厅的灯 {i}" for i in range(8)] + [f"所有灯都关掉 {i}" for i in range(8)]
    expected = [comparable(program(query=q)) for q in queries]
    remote.in_flight_max, remote.together = 0, {"/v1/embeddings": Together(16)}
    preds = on_one_worker_thread(lambda: asyncio.gather(*(program.acall(query=q) for q in queries)))
    assert [comparable(p) for p in preds] == expected
    assert remote.together["/v1/embeddings"].met and remote.in_flight_max == 16


def test_the_breaker_waits_a_whole_interval_after_a_failed_probe_and_probes_once_at_a_time(monkeypatch):
    """A probe slower than the probe interval once made every later call a probe: the interval now runs
    from the end of the failed probe, and a second call never probes while one is in flight."""
    from tracerag.lm import breaker as breaking

    clock = [1000.0]
    monkeypatch.setattr(breaking.time, "monotonic", lambda: clock[0])
    breaker = breaking.CircuitBreaker()
    lm = dspy.LM("openai/stub", api_base="http://127.0.0.1:9/v1")
    for _ in range(breaking.policy().breaker_failures):
        breaker.record(lm, ok=False, stage="parse")
    assert breaker.is_open(lm) and not breaker.allow(lm, "parse")
    clock[0] += breaking.policy().probe_seconds
    assert breaker.allow(lm, "parse")  # the probe
    assert not breaker.allow(lm, "answer")  # one probe in flight
    clock[0] += 10 * breaking.policy().probe_seconds  # the probe stalls far past the interval
    assert not breaker.allow(lm, "answer")
    breaker.record(lm, ok=False, stage="parse")  # and fails
    assert not breaker.allow(lm, "parse")  # the next probe waits a whole interval from now
    clock[0] += breaking.policy().probe_seconds
    assert breaker.allow(lm, "parse")
    breaker.record(lm, ok=True, stage="parse")
    assert not breaker.is_open(lm)


def test_one_failing_stage_opens_alone_whatever_the_other_stages_do():
    """The other stages' successes once reset the count, so a stage that always failed paid its full retry
    cost on every example."""
    from tracerag.lm import breaker as breaking

    breaker = breaking.CircuitBreaker()
    lm = dspy.LM("openai/stub", api_base="http://127.0.0.1:9/v1")
    for _ in range(breaking.policy().breaker_failures):
        breaker.record(lm, ok=True, stage="parse")
        breaker.record(lm, ok=False, stage="verify")
    assert breaker.is_open(lm, "verify") and not breaker.allow(lm, "verify")
    assert not breaker.is_open(lm) and breaker.allow(lm, "parse")  # the endpoint and the other stages go on
