"""Retrieval steps and tool calls reach DSPy's callbacks as tool spans, sync and async: one span per step,
named after it, with its inputs (query text, k) and the ids and scores it returned, nested under the
program's own module span; the LM calls are still reported; a broken callback never breaks a program."""

from __future__ import annotations

import asyncio

import dspy
import pytest
from conftest import AgentEngine, FakeEngine, PlannerEngine, ToolResult
from dspy.utils.callback import ACTIVE_CALL_ID, BaseCallback

from tracerag.agent.search_agent import SearchAgent
from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.experience.experience_retrieval import ExperienceConfig, ExperienceRetrieval
from tracerag.memory.experience_bank import build_experience_bank
from tracerag.memory.playbook import Template, parse_playbook
from tracerag.planner.traceable_planner import TraceablePlanner
from tracerag.programs.spans import COMMAND_BULK, COMMAND_SEARCH, CORPUS_SEARCH, EXPERIENCE_SEARCH, TEMPLATE_SEARCH
from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG
from tracerag.stores.cosine_bank import CosineBank

MODES = ["sync", "async"]


class Recorder(BaseCallback):
    """Every tool span (name, inputs, outputs, exception, parent call id), module call ids and LM calls."""

    def __init__(self):
        self.open: dict[str, dict] = {}
        self.spans: list[dict] = []
        self.modules: dict[str, str] = {}  # call id -> module class name
        self.lm_calls = 0

    def on_module_start(self, call_id, instance, inputs):
        self.modules[call_id] = type(instance).__name__

    def on_lm_start(self, call_id, instance, inputs):
        self.lm_calls += 1

    def on_tool_start(self, call_id, instance, inputs):
        assert isinstance(instance, dspy.Tool) and instance.name and instance.desc
        self.open[call_id] = {"name": instance.name, "inputs": inputs, "parent": ACTIVE_CALL_ID.get()}

    def on_tool_end(self, call_id, outputs, exception=None):
        span = self.open.pop(call_id)
        self.spans.append({**span, "outputs": outputs, "exception": exception})

    def named(self, name):
        return [s for s in self.spans if s["name"] == name]

    def parents(self):
        return {self.modules.get(s["parent"]) for s in self.spans}


class AsyncDoor:
    def __init__(self, engine):
        self.engine = engine

    async def complete(self, request):
        return self.engine.complete(request)


def use(engine=None):
    lm = None if engine is None else dspy.LM("fake/model", engine=engine, async_engine=AsyncDoor(engine), cache=False,
                                             num_retries=0)
    dspy.configure(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))


def traced(program, mode, **inputs):
    """Run the program with a recording callback (configured globally for sync, per context for async)."""
    recorder = Recorder()
    if mode == "sync":
        dspy.configure(callbacks=[recorder])
        try:
            pred = program(**inputs)
        finally:
            dspy.configure(callbacks=[])
    else:
        async def run():
            with dspy.context(callbacks=[recorder]):
                return await program.acall(**inputs)
        pred = asyncio.run(run())
    assert not recorder.open  # every span closed
    return pred, recorder


@pytest.mark.parametrize("mode", MODES)
def test_command_search_span(index, mode):
    use()
    pred, rec = traced(CommandRetrieval(index, k=5), mode, query="打开客厅的灯")
    # a room named without a quantifier is also planned over (both living-room lights)
    assert [s["name"] for s in rec.spans] == [COMMAND_SEARCH, COMMAND_BULK]
    span = rec.spans[0]
    assert span["name"] == COMMAND_SEARCH and span["inputs"]["query"] == "打开客厅的灯" and span["inputs"]["k"] == 5
    assert span["inputs"]["home"] == "tiny" and span["inputs"]["ir"]["scope_include"] == ["客厅"]
    assert span["outputs"]["ids"] == [f"{c.device_id}/{c.command_id}" for c in pred.candidates]
    assert span["outputs"]["scores"] == [c.score for c in pred.candidates] and len(pred.candidates) == 5
    assert rec.parents() == {"CommandRetrieval"}


@pytest.mark.parametrize("mode", MODES)
def test_bulk_plan_span(index, mode):
    use(FakeEngine(irs={"所有灯都关掉": {"action": "关掉", "type_hint": "Light", "quantifier": "all"}}))
    pred, rec = traced(CommandRetrieval(index), mode, query="所有灯都关掉")
    assert [s["name"] for s in rec.spans] == [COMMAND_SEARCH, COMMAND_BULK]
    bulk = rec.named(COMMAND_BULK)[0]["outputs"]
    assert bulk["command_id"] == pred.bulk.command_id and bulk["ids"] == [f"{d}/{c}" for d, c in pred.bulk.targets]
    assert bulk["ids"] and rec.lm_calls == 1  # the parse is still reported as an LM call


@pytest.fixture
def bank(traces_dir, tmp_path, embedder):
    build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    return CosineBank.load(tmp_path / "bank", embedder)


@pytest.mark.parametrize("mode", MODES)
def test_experience_search_span_per_round(bank, mode):
    use(FakeEngine(sufficiency=[False]))
    program = ExperienceRetrieval(bank, ExperienceConfig(enable=True, max_retrieval_rounds=2, top_n=3))
    pred, rec = traced(program, mode, question="What did I pay in total for groceries, tax included?")
    spans = rec.named(EXPERIENCE_SEARCH)
    assert len(spans) == pred.rounds == 2 and len(rec.spans) == 2
    for number, span in enumerate(spans):
        assert span["inputs"]["queries"] == pred.queries[number] and span["inputs"]["k"] == 10
        assert span["outputs"]["ids"] == pred.retrieved_task_ids[number]
        assert span["outputs"]["reranked_ids"][:3] == pred.task_ids[number]
        assert len(span["outputs"]["scores"]) == len(span["outputs"]["ids"])
    assert rec.lm_calls == 5 and rec.parents() == {"ExperienceRetrieval"}


@pytest.mark.parametrize("mode", MODES)
def test_corpus_search_span_per_round(retriever, mode):
    use(FakeEngine())
    program = SelfReflectiveRAG(retriever, RAGConfig(k=4, min_quality=1.0, max_rounds=2))
    pred, rec = traced(program, mode, question="Do statins lower cholesterol in diabetes patients?")
    spans = rec.named(CORPUS_SEARCH)
    assert len(spans) == len(rec.spans) == pred.rounds == 2
    assert [s["inputs"]["query"] for s in spans] == pred.queries and {s["inputs"]["k"] for s in spans} == {4}
    assert [s["outputs"]["ids"] for s in spans] == pred.retrieved_per_round
    assert all(s["outputs"]["doc_ids"] == [pred.chunk_doc_ids[c] for c in s["outputs"]["ids"]] for s in spans)
    assert all(isinstance(x, float) for s in spans for x in s["outputs"]["scores"])
    assert rec.lm_calls == pred.lm_calls and rec.parents() == {"SelfReflectiveRAG"}


@pytest.mark.parametrize("mode", MODES)
def test_template_retrieval_span(mode):
    templates = [Template("tpl-a", "Taq PCR", "Mix master mix.", 0.8), Template("tpl-b", "HiFi", "Proofread.", 0.6)]
    use(PlannerEngine())
    planner = TraceablePlanner(retrieve_templates=lambda requirements: templates)
    bullets = parse_playbook("[mat-00001] helpful=1 harmful=0 :: Thaw on ice.\n"
                             "[proc-00001] helpful=1 harmful=0 :: Add a control.\n")
    pred, rec = traced(planner, mode, requirements="Set up a PCR.", bullets=bullets)
    [span] = rec.spans
    assert span["name"] == TEMPLATE_SEARCH and span["inputs"] == {"query": "Set up a PCR.", "k": 5}
    assert span["outputs"] == {"ids": ["tpl-a", "tpl-b"], "scores": [0.8, 0.6]}
    assert pred.retrieved_template_ids == ["tpl-a", "tpl-b"] and rec.lm_calls == 1
    # templates given by the caller: nothing was retrieved, no span
    _, rec = traced(planner, mode, requirements="Set up a PCR.", bullets=bullets, templates=templates)
    assert rec.spans == []


@pytest.mark.parametrize("mode", MODES)
def test_a_failing_retrieval_is_a_span_with_its_exception(mode):
    use()

    def broken(requirements):
        raise ConnectionError("template service down")

    pred, rec = traced(TraceablePlanner(retrieve_templates=broken), mode, requirements="Set up a PCR.")
    [span] = rec.spans
    assert isinstance(span["exception"], ConnectionError) and span["outputs"] is None
    assert pred.retrieved_template_ids == []


class Tools:
    def schemas(self):
        return {"pubmed_search": {"limit": int}}

    def call(self, call):
        docs = [{"id": "111", "text": "Aspirin lowered stroke risk in adults.", "score": 0.9},
                {"id": "222", "text": "Second abstract here.", "score": 0.4}]
        return ToolResult(call.name, docs[: call.params.get("limit", 5)])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lm", [True, False])
def test_each_agent_tool_call_is_a_span(mode, lm):
    use(AgentEngine() if lm else None)
    pred, rec = traced(SearchAgent(Tools()), mode, question="Does aspirin prevent stroke in older adults?")
    [span] = rec.spans
    call = pred.trajectory.tool_calls[0]
    assert span["name"] == "pubmed_search" == call.tool
    assert span["inputs"] == {"query": call.query, "params": {"limit": 3}}
    assert span["outputs"] == {"ids": ["111", "222"], "scores": [0.9, 0.4], "error": None}
    assert rec.lm_calls == pred.lm_calls and rec.parents() == {"SearchAgent"}


def test_concurrent_async_calls_keep_their_spans_apart(retriever):
    use()
    program = SelfReflectiveRAG(retriever)
    recorder = Recorder()
    questions = ["Do statins lower cholesterol?", "Does aspirin raise bleeding risk?", "Do sanitiser stations help?"]

    async def run():
        with dspy.context(callbacks=[recorder]):
            return await asyncio.gather(*(program.acall(question=q) for q in questions))

    preds = asyncio.run(run())
    by_parent = {s["parent"]: s for s in recorder.spans}
    assert len(by_parent) == 3 and set(recorder.modules.values()) == {"SelfReflectiveRAG"}
    assert sorted(s["inputs"]["query"] for s in by_parent.values()) == sorted(questions)
    for pred in preds:
        [span] = [s for s in recorder.spans if s["inputs"]["query"] == pred.queries[0]]
        assert span["outputs"]["ids"] == pred.retrieved_ids


def test_a_broken_callback_never_breaks_the_program(index, caplog):
    class Broken(BaseCallback):
        def on_tool_start(self, call_id, instance, inputs):
            raise RuntimeError("exporter down")

        def on_tool_end(self, call_id, outputs, exception=None):
            raise RuntimeError("exporter down")

    use()
    plain = CommandRetrieval(index)(query="打开客厅的灯")
    with dspy.context(callbacks=[Broken()]):
        pred = CommandRetrieval(index)(query="打开客厅的灯")
    assert [c.device_id for c in pred.candidates] == [c.device_id for c in plain.candidates]
    assert "exporter down" in caplog.text
