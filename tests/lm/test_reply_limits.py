"""Replies over their caps or naming ids they were never given (the stub's ``huge`` and ``invented``
modes, from a real endpoint on 127.0.0.1) are rejected by the stage's check: the stage falls back,
counted, and the result is the program's fallback, never the oversized or invented reply."""

import dspy
import pytest
from conftest import AgentEngine, FakeEngine, PlannerEngine
from faults.test_agent_faults import Library
from faults.test_agent_faults import outcome as agent_outcome
from faults.test_planner_faults import PLAYBOOK, TEMPLATES
from faults.test_rag_faults import outcome as rag_outcome
from faults.test_rag_faults import statin_chunks
from lm_server import StubLMServer

import tracerag
from tracerag.agent.search_agent import SearchAgent
from tracerag.experience.experience_retrieval import ExperienceConfig, ExperienceRetrieval
from tracerag.lm.reply_limits import MAX_SUMMARY_CHARS, ReplyRejected, given_ids, prose
from tracerag.memory.experience_bank import build_experience_bank
from tracerag.planner.traceable_planner import TraceablePlanner
from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG
from tracerag.stores.cosine_bank import CosineBank

TASK = "How much did I pay for the groceries on this receipt, tax included?"
QUESTION = "Does aspirin prevent stroke in older adults?"


def test_the_helpers():
    assert prose("  a sentence. ", "x", 20) == "a sentence." and prose("[100#0] says so", "x", 20)
    assert prose("None", "x", 20) == prose(" n/a ", "x", 20) == ""
    for value in ("a" * 21, '{"unexpected": "x"}', '["a"]', 3, None, "str", "List[str]"):
        with pytest.raises(ReplyRejected):
            prose(value, "x", 20)
    assert given_ids(["a", "zz", "a", "b"], {"a", "b"}, "ids") == ["a", "b"]
    with pytest.raises(ReplyRejected, match="only ids it was not given"):
        given_ids(["zz"], {"a"}, "ids")
    with pytest.raises(ReplyRejected, match="cap"):
        given_ids([str(n) for n in range(51)], {"1"}, "ids")


@pytest.fixture
def experience(traces_dir, tmp_path, embedder):
    build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    bank = CosineBank.load(tmp_path / "bank", embedder)
    return lambda **config: ExperienceRetrieval(bank, ExperienceConfig(enable=True, **config))


@pytest.mark.parametrize("mode", ["huge", "invented"])
def test_experience_keeps_no_oversized_or_invented_summary(experience, mode):
    with StubLMServer(FakeEngine(), modes={"SummarizeExperience": mode}) as stub:
        tracerag.configure(lm=stub.lm())
        pred = experience()(question=TASK)
        requests = list(stub.requests)
        extractive = experience(enable_summary=False)(question=TASK)
    assert pred.lm_fallbacks == ["summarize"] and pred.hint == "lm_failed" and len(pred.lm_errors) == 1
    assert pred.experience == extractive.experience and pred.used_task_ids == extractive.used_task_ids
    assert len(pred.experience) <= MAX_SUMMARY_CHARS and not any("invented" in t for t in pred.used_task_ids)
    assert requests == [("RewriteQuery", "good"), ("SummarizeExperience", mode)]


@pytest.mark.parametrize("signature", ["RewriteQuery", "CheckSufficiency"])
def test_experience_rejects_huge_rewrites_and_checks(experience, signature):
    stage = {"RewriteQuery": "rewrite", "CheckSufficiency": "check"}[signature]
    with StubLMServer(FakeEngine(sufficiency=[False]), modes={signature: "huge"}) as stub:
        tracerag.configure(lm=stub.lm())
        pred = experience(max_retrieval_rounds=2)(question=TASK)
    assert stage in pred.lm_fallbacks and pred.hint == "lm_failed"
    assert all(len(q) <= 500 for qs in pred.queries for q in qs) and len(pred.queries[0]) <= 6
    assert pred.lm_calls == len(stub.requests)


@pytest.mark.parametrize("mode", ["huge", "invented"])
def test_the_agent_never_keeps_an_answer_citing_what_no_tool_returned(mode):
    dspy.configure(lm=None)
    no_lm = agent_outcome(SearchAgent(Library())(question=QUESTION))
    with StubLMServer(AgentEngine(), mode) as stub:
        tracerag.configure(lm=stub.lm())
        pred = SearchAgent(Library())(question=QUESTION)
    # a reply over the cap is no step (lm_error); an answer citing what no tool returned cannot stand
    assert agent_outcome(pred) == no_lm and pred.stop_reason == {"huge": "lm_error", "invented": "invalid_answer"}[mode]
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["step"] and pred.lm_calls == len(stub.requests) == 1
    assert ("the cap is 16,000" if mode == "huge" else "not given") in pred.lm_errors[0]


def test_the_agent_rejects_an_answer_with_too_many_citations():
    class Citing(AgentEngine):
        def _reply(self, question, trajectory):
            reply = super()._reply(question, trajectory)
            if "<answer>" not in reply:
                return reply
            cites = " ".join(f'<cite id="{n}">a claim</cite>' for n in range(40))
            return reply.replace("</answer>", f" {cites}</answer>")

    with StubLMServer(Citing()) as stub:
        tracerag.configure(lm=stub.lm())
        pred = SearchAgent(Library())(question=QUESTION)
    assert pred.stop_reason == "invalid_answer" and pred.lm_fallbacks == ["step"] and pred.lm_calls == 2
    assert "the cap is 30" in pred.lm_errors[0] and len(pred.ids_cited) <= 3


@pytest.mark.parametrize("mode", ["huge", "invented"])
def test_rag_grading_over_the_caps_gives_the_no_lm_result(retriever, mode):
    dspy.configure(lm=None)
    no_lm = rag_outcome(SelfReflectiveRAG(retriever, RAGConfig(k=4))(question=QUESTION))
    with StubLMServer(FakeEngine(), modes={"GradeRelevance": mode}) as stub:
        tracerag.configure(lm=stub.lm())
        pred = SelfReflectiveRAG(retriever, RAGConfig(k=4))(question=QUESTION)
    assert rag_outcome(pred) == no_lm and pred.lm_fallbacks == ["grade"] and pred.hint == "lm_failed"


@pytest.mark.parametrize("mode", ["huge", "invented"])
def test_rag_answers_over_the_caps_give_the_extractive_answer(retriever, mode):
    with StubLMServer(FakeEngine(relevant=statin_chunks(retriever)), modes={"AnswerWithCitations": mode}) as stub:
        tracerag.configure(lm=stub.lm())
        pred = SelfReflectiveRAG(retriever, RAGConfig(k=4))(question="Do statins lower cholesterol in diabetes?")
    assert pred.lm_fallbacks == ["answer"] and pred.hint == "lm_failed" and len(pred.answer) < 2_000
    assert pred.cited_ids and set(pred.cited_ids) <= set(pred.context_ids)


def test_rag_verification_over_the_caps_keeps_the_answer_unverified(retriever):
    with StubLMServer(FakeEngine(relevant=statin_chunks(retriever)), modes={"VerifyGroundedness": "huge"}) as stub:
        tracerag.configure(lm=stub.lm())
        pred = SelfReflectiveRAG(retriever, RAGConfig(k=4))(question="Do statins lower cholesterol in diabetes?")
    assert pred.lm_fallbacks == ["verify"] and pred.grounded is None and pred.unsupported_claims == []


def test_a_huge_plan_is_no_plan():
    with StubLMServer(PlannerEngine(), "huge") as stub:
        tracerag.configure(lm=stub.lm())
        pred = TraceablePlanner()(requirements="Set up a PCR.", bullets=PLAYBOOK, templates=TEMPLATES)
    assert pred.plan is None and pred.lm_fallbacks == ["generate"] and pred.hint == "lm_failed"
    assert "cap" in pred.error and pred.bullets_used == [] and pred.templates_used == []


def test_a_plan_citing_invented_ids_never_uses_them():
    with StubLMServer(PlannerEngine(), "invented") as stub:
        tracerag.configure(lm=stub.lm())
        pred = TraceablePlanner()(requirements="Set up a PCR.", bullets=PLAYBOOK, templates=TEMPLATES)
    assert pred.plan is not None and "invented-1" in pred.hallucinated_ids  # reported, as documented
    assert not any(i.startswith("invented") for i in pred.bullets_used + pred.templates_used)


@pytest.mark.parametrize("signature", ["RewriteQuery", "SummarizeExperience"])
def test_experience_never_searches_or_keeps_a_type_name(experience, signature):
    """A model echoing the schema writes ``list[str]``, which DSPy reads as ``['str']``: not a query."""
    with StubLMServer(FakeEngine(), modes={signature: "type_names"}) as stub:
        tracerag.configure(lm=stub.lm())
        pred = experience()(question=TASK)
    assert pred.lm_fallbacks == [{"RewriteQuery": "rewrite", "SummarizeExperience": "summarize"}[signature]]
    assert all(q != "str" for qs in pred.queries for q in qs) and pred.experience != "str"
    assert "type name" in pred.lm_errors[0] or "not given" in pred.lm_errors[0]
