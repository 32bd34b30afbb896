"""Input that says nothing (empty, blanks, punctuation only) costs no LM call in any program: each is run
against a real endpoint on 127.0.0.1 that would answer, and the endpoint must see no request. The
stages say they were skipped, not that the LM failed."""

import asyncio

import dspy
from conftest import AgentEngine, FakeEngine, PlannerEngine
from faults.test_agent_faults import Library
from faults.test_planner_faults import PLAYBOOK
from lm_server import StubLMServer

import tracerag
from tracerag.agent.search_agent import SearchAgent
from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.experience.experience_retrieval import ExperienceConfig, ExperienceRetrieval
from tracerag.memory.experience_bank import build_experience_bank
from tracerag.planner.traceable_planner import TraceablePlanner
from tracerag.programs.guarded_step import says_nothing
from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG
from tracerag.stores.cosine_bank import CosineBank

BLANK = ["", "  ", "?!。", "\n\t…", "¿¡ -- ..."]


def against_stub(engine, run):
    """``run()`` for every blank input with a good endpoint configured; the predictions and the requests."""
    with StubLMServer(engine) as stub:
        tracerag.configure(lm=stub.lm())
        preds = [run(text) for text in BLANK]
    return preds, stub.requests


def without_lm(run):
    dspy.configure(lm=None)
    return [run(text) for text in BLANK]


def same(preds, others, *keys):
    assert [[p[k] for k in keys] for p in preds] == [[p[k] for k in keys] for p in others]


def test_what_says_nothing():
    assert all(says_nothing(text) for text in BLANK)
    assert not any(says_nothing(text) for text in ["a", "。好", "42", "?1", "💡", "+"])


def assert_no_call(preds, requests):
    assert requests == []
    for pred in preds:
        assert pred.lm_calls == 0 and not pred.lm_fallbacks and pred.hint != "lm_failed"


def test_commands(index):
    program = CommandRetrieval(index)
    preds, requests = against_stub(FakeEngine(), lambda text: program(query=text))
    assert_no_call(preds, requests)


def test_experience(traces_dir, tmp_path, embedder):
    build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    bank = CosineBank.load(tmp_path / "bank", embedder)
    program = ExperienceRetrieval(bank, ExperienceConfig(enable=True, max_retrieval_rounds=2))
    preds, requests = against_stub(FakeEngine(sufficiency=[False]), lambda text: program(question=text))
    assert_no_call(preds, requests)
    assert all(p.lm_skipped[:1] == ["rewrite"] and p.hint == "empty_input" for p in preds)
    same(preds, without_lm(lambda text: program(question=text)), "queries", "task_ids", "experience")


def test_rag(retriever):
    program = SelfReflectiveRAG(retriever, RAGConfig(k=4))
    preds, requests = against_stub(FakeEngine(), lambda text: program(question=text))
    assert_no_call(preds, requests)
    assert all(p.lm_skipped == ["grade"] and p.hint == "empty_input" for p in preds)
    same(preds, without_lm(lambda text: program(question=text)), "answer", "retrieved_ids", "cited_ids")


def test_planner():
    program = TraceablePlanner()
    preds, requests = against_stub(PlannerEngine(), lambda text: program(requirements=text, bullets=PLAYBOOK))
    assert_no_call(preds, requests)
    assert all(p.plan is None and p.lm_skipped == ["generate"] for p in preds)


def test_agent():
    program = SearchAgent(Library())
    preds, requests = against_stub(AgentEngine(), lambda text: program(question=text))
    assert_no_call(preds, requests)
    assert all(p.lm_skipped == ["step"] and p.stop_reason == "no_lm" and p.hint == "empty_input" for p in preds)
    same(preds, without_lm(lambda text: SearchAgent(Library())(question=text)), "answer", "ids_cited")


def test_the_async_path_skips_too(retriever):
    program = SelfReflectiveRAG(retriever, RAGConfig(k=4))
    preds, requests = against_stub(FakeEngine(), lambda text: asyncio.run(program.acall(question=text)))
    assert_no_call(preds, requests)
