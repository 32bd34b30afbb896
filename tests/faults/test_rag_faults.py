"""SelfReflectiveRAG against a real OpenAI-compatible endpoint on 127.0.0.1 that fails in every way
endpoints do: a grading failure gives exactly the no-LM result (the same retrieval and the same cited
extractive answer), marked; a failure at a later stage falls back at that stage only (a failed check
keeps the answer); and the LM calls of a question never exceed ``lm_call_budget()``."""


import dspy
import pytest
from conftest import FakeEngine
from lm_server import StubLMServer

import tracerag
from tracerag.documents.hybrid import ScoredChunk
from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG, extractive_answer

QUESTIONS = ["Do statins lower cholesterol in diabetes patients?",
             "Does aspirin raise bleeding risk before colonoscopy?"]
FAULTS = ["garbage", "empty", "null", "http500", "bad_json", "slow", "wrong_types"]
STAGES = {"GradeRelevance": "grade", "RefineQuery": "refine", "AnswerWithCitations": "answer",
          "VerifyGroundedness": "verify"}


def outcome(pred):
    return {key: pred[key] for key in ("retrieved_ids", "retrieved_per_round", "answer", "cited_ids", "context_ids",
                                       "verdict", "grounded")}


def rag(retriever, **config):
    return SelfReflectiveRAG(retriever, RAGConfig(**{"k": 4, **config}))


@pytest.fixture
def no_lm_results(retriever):
    dspy.configure(lm=None)
    program = rag(retriever)
    results = {q: program(question=q) for q in QUESTIONS}
    assert all(p.hint == "no_lm" and p.lm_fallbacks == [] and p.lm_calls == 0 and p.cited_ids
               for p in results.values())
    return {q: outcome(p) for q, p in results.items()}


def statin_chunks(retriever):
    return {c for c in retriever.store.bank.ids if c.startswith("100#")}


@pytest.mark.parametrize("fault", FAULTS)
def test_a_failing_endpoint_gives_the_no_lm_result_marked(retriever, no_lm_results, fault):
    with StubLMServer(FakeEngine(), fault, delay=1.5) as stub:
        tracerag.configure(lm=stub.lm(timeout=0.5, retries=0))
        program = rag(retriever)
        for question in QUESTIONS:
            pred = program(question=question)
            assert outcome(pred) == no_lm_results[question], question
            assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["grade"] and len(pred.lm_errors) == 1
            assert pred.kept_ids == [] and pred.lm_calls == 1 <= program.lm_call_budget()
        assert [name for name, _ in stub.requests] == ["GradeRelevance"] * len(QUESTIONS)  # never regraded


def test_a_good_endpoint_gives_the_lm_answer(retriever):
    with StubLMServer(FakeEngine(relevant=statin_chunks(retriever))) as stub:
        tracerag.configure(lm=stub.lm())
        pred = rag(retriever)(question=QUESTIONS[0])
    assert pred.hint is None and pred.lm_fallbacks == [] and pred.grounded is True and pred.verdict == "yes"
    assert pred.answer.startswith("Yes, it helps [100#") and set(pred.cited_ids) <= set(pred.kept_ids)
    assert stub.requests == [("GradeRelevance", "good"), ("AnswerWithCitations", "good"),
                             ("VerifyGroundedness", "good")] and pred.lm_calls == 3


def test_grading_failing_alone_gives_the_no_lm_result(retriever, no_lm_results):
    with StubLMServer(FakeEngine(), modes={"GradeRelevance": "http500"}) as stub:
        tracerag.configure(lm=stub.lm())
        pred = rag(retriever)(question=QUESTIONS[0])
    assert outcome(pred) == no_lm_results[QUESTIONS[0]]
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["grade"] and pred.lm_calls == 1
    assert stub.requests == [("GradeRelevance", "http500")]  # no answer is attempted from nothing graded


def test_verification_failing_keeps_the_answer_unverified(retriever):
    with StubLMServer(FakeEngine(relevant=statin_chunks(retriever))) as stub:
        tracerag.configure(lm=stub.lm())
        good = rag(retriever)(question=QUESTIONS[0])
        stub.modes = {"VerifyGroundedness": "http500"}
        pred = rag(retriever)(question=QUESTIONS[0])
    assert pred.answer == good.answer and pred.verdict == "yes" and pred.cited_ids == good.cited_ids
    assert pred.grounded is None and pred.hint == "lm_failed" and pred.lm_fallbacks == ["verify"]
    assert pred.lm_calls == 3


def test_an_answer_that_is_garbage_gives_the_extractive_answer_over_the_kept_chunks(retriever):
    with StubLMServer(FakeEngine(relevant=statin_chunks(retriever)), modes={"AnswerWithCitations": "garbage"}) as stub:
        tracerag.configure(lm=stub.lm())
        pred = rag(retriever)(question=QUESTIONS[0])
    assert pred.kept_ids and set(pred.kept_ids) == statin_chunks(retriever) & set(pred.retrieved_ids)
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["answer"] and pred.verdict == "" and pred.grounded is None
    assert pred.context_ids == pred.kept_ids and pred.cited_ids == pred.kept_ids[:3]
    assert pred.answer.startswith(f"Statins lower LDL cholesterol in adults with diabetes [{pred.kept_ids[0]}].")
    assert pred.answer == extractive_answer([ScoredChunk(c, 0.0, None, None, {"text": pred.context_texts[c]})
                                             for c in pred.context_ids])
    assert [name for name, _ in stub.requests] == ["GradeRelevance", "AnswerWithCitations"]  # nothing to verify


def test_refinement_failing_answers_from_what_was_kept(retriever):
    with StubLMServer(FakeEngine(relevant=statin_chunks(retriever)), modes={"RefineQuery": "http500"}) as stub:
        tracerag.configure(lm=stub.lm())
        pred = rag(retriever, k=8)(question=QUESTIONS[0])  # 2 of 8 kept: quality 0.25 asks for a refinement
    assert pred.rounds == 1 and pred.lm_fallbacks == ["refine"] and pred.hint == "lm_failed"
    assert pred.grounded is True and pred.verdict == "yes" and pred.cited_ids
    assert [name for name, _ in stub.requests] == ["GradeRelevance", "RefineQuery", "AnswerWithCitations",
                                                   "VerifyGroundedness"]


@pytest.mark.parametrize("fault", ["garbage", "http500", "wrong_types", "empty"])
def test_the_call_budget_holds_for_a_fault_at_any_stage(retriever, fault):
    """The worst case the fake can produce: malformed grading items in the batches, a refinement, an answer
    found unsupported and regenerated; plus a fault at one stage."""
    engine = FakeEngine(relevant={"100#0"}, malformed={"100#1", "200#0", "300#0", "400#1"}, grounded=[False])
    program = rag(retriever, k=6, grade_batch=3, max_rounds=2)
    assert program.lm_call_budget() == 2 * 2 * 2 + 1 + 3
    with StubLMServer(engine) as stub:
        tracerag.configure(lm=stub.lm())
        for signature, stage in STAGES.items():
            stub.modes, stub.requests = {signature: fault}, []
            pred = program(question=QUESTIONS[0])
            assert pred.lm_calls == len(stub.requests) <= program.lm_call_budget(), signature
            assert (signature, fault) in stub.requests and stage in pred.lm_fallbacks, signature
            assert pred.hint in ("lm_failed", "not_grounded", "regenerated") and pred.answer, signature
            assert set(pred.cited_ids) <= set(pred.context_ids), signature


@pytest.mark.parametrize("rounds", [1, 3])
def test_malformed_items_cost_one_extra_call_per_batch_at_most(retriever, rounds):
    malformed = set(sorted(retriever.store.bank.ids)[::2])
    with StubLMServer(FakeEngine(relevant=set(), malformed=malformed)) as stub:
        tracerag.configure(lm=stub.lm())
        program = rag(retriever, k=8, grade_batch=3, max_rounds=rounds)
        pred = program(question=QUESTIONS[0])
    grading = [name for name, _ in stub.requests if name == "GradeRelevance"]
    assert pred.regraded and len(grading) <= 2 * 3 * rounds  # ceil(8 / 3) batches a round, never a call a chunk
    assert pred.lm_calls == len(stub.requests) <= program.lm_call_budget() == 2 * 3 * rounds + rounds - 1 + 3


class _Answered:
    """Stands in for SelfReflectiveRAG: every question gets the same answer citing two chunks, no LM call."""

    class config:  # noqa: N801 - the attribute evaluate_rag reads
        @staticmethod
        def model_dump():
            return {}

    @staticmethod
    def lm_call_budget() -> int:
        return 0

    def __call__(self, question):
        return dspy.Prediction(
            answer="Yes [7#0]. It worked [7#1].", verdict="yes", hint=None, grounded=True, cited_ids=["7#0", "7#1"],
            invalid_cited_ids=[], context_ids=["7#0", "7#1"], kept_ids=["7#0", "7#1"], retrieved_ids=["7#0", "7#1"],
            retrieved_per_round=[["7#0", "7#1"]], chunk_doc_ids={"7#0": "7", "7#1": "7"}, rounds=1, lm_calls=0,
            context_texts={"7#0": "Statins lowered it.", "7#1": "It worked in trials."}, unsupported_claims=[],
            lm_fallbacks=[])


@pytest.mark.parametrize("mode", ["good", "http500"])
def test_the_alce_judge_is_a_counted_guarded_stage(mode):
    """``--alce``: the citation judge's calls are counted apart from the program's (``lm_calls_judge``), and a
    judge that fails is a fallback of the row (stage ``judge``), its scores unknown, not zero."""
    from tracerag.rag.evaluation import evaluate_rag

    examples = [dspy.Example(pmid=f"p{n}", question=f"Does it work {n}?", final_decision="yes", gold_doc_ids=["7"])
                for n in range(2)]
    with StubLMServer(FakeEngine(), modes={"VerifyGroundedness": mode}) as stub:
        with dspy.context(lm=stub.lm()):
            report = evaluate_rag(_Answered(), examples, dataset="d", alce=True, progress=False)
    rows, metrics = report["per_query"], report["metrics"]
    if mode == "good":  # one judge call a sentence (each cites one chunk)
        assert [r["lm_calls_judge"] for r in rows] == [2, 2] and metrics["lm_calls_judge"] == 4 == len(stub.requests)
        assert all(r["citation_recall"] is not None and not r["lm_failed"] for r in rows)
        assert metrics["lm_fallbacks"] == {}
    else:  # the first failure ends the judging of the row
        assert [r["lm_calls_judge"] for r in rows] == [1, 1] and metrics["lm_calls_judge"] == 2 == len(stub.requests)
        assert all(r["lm_fallbacks"] == ["judge"] and r["lm_failed"] and r["citation_recall"] is None for r in rows)
        assert metrics["lm_fallbacks"] == {"judge": 2} and metrics["lm_fallback_rate"] == 1.0
