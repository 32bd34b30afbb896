"""SelfReflectiveRAG with the fake LM: grading, refinement, the round cap, verification and fallbacks.
(Faults of a real HTTP endpoint at each stage: tests/faults/test_rag_faults.py.)"""


import pytest

from tracerag.rag import metrics as metrics
from tracerag.rag.self_reflective_rag import (
    NEED_MORE_CONTEXT,
    RAGConfig,
    SelfReflectiveRAG,
    cited_ids,
    extractive_answer,
)

QUESTION = "Do statins lower cholesterol in diabetes patients?"


def rag(retriever, **config):
    return SelfReflectiveRAG(retriever, RAGConfig(**config))


def test_no_lm_gives_a_cited_extractive_answer(retriever):
    pred = rag(retriever, k=4)(question=QUESTION)
    assert pred.hint == "no_lm" and pred.lm_calls == 0 and pred.lm_fallbacks == []  # no LM is not a failure
    assert pred.retrieved_ids[0].startswith("100#") and pred.chunk_doc_ids[pred.retrieved_ids[0]] == "100"
    # the leading sentence of each of the top 3 chunks, each cited; nothing decided
    assert pred.context_ids == pred.retrieved_per_round[0][:3] == pred.cited_ids
    assert pred.answer.startswith(f"Statins lower LDL cholesterol in adults with diabetes [{pred.cited_ids[0]}]. ")
    assert pred.verdict == "" and pred.grounded is None and pred.kept_ids == [] and pred.invalid_cited_ids == []
    assert metrics.citation_validity(pred) == 1.0 and metrics.answer_citation_coverage(pred) == 1.0
    assert rag(retriever, k=4)(question=QUESTION).answer == pred.answer  # deterministic


def test_extractive_answer_cuts_long_and_unpunctuated_text():
    from tracerag.documents.hybrid import ScoredChunk

    def chunk(cid, text):
        return ScoredChunk(id=cid, score=1.0, dense=None, lexical=None, metadata={"doc_id": cid[0], "text": text})

    chunks = [chunk("1#0", "E.g. statins are a short example. Second sentence here."), chunk("2#0", "word " * 100),
              chunk("3#0", "他汀类药物降低胆固醇。第二句。"), chunk("4#0", "Never quoted: only three chunks are.")]
    answer = extractive_answer(chunks)
    assert answer.startswith("E.g. statins are a short example [1#0]. word word ") and "… [2#0]. " in answer
    assert answer.endswith(" 他汀类药物降低胆固醇 [3#0]。") and len(answer) < 400
    assert cited_ids(answer) == ["1#0", "2#0", "3#0"] and extractive_answer([chunk("5#0", "")]) == ""


def test_grounded_answer_in_one_round(retriever, fake_lm):
    engine = fake_lm(relevant={c for c in retriever.store.bank.ids if c.startswith("100#")})
    program = rag(retriever, k=4)  # 2 of the 4 chunks are relevant: quality 0.5, no refinement
    pred = program(question=QUESTION)
    assert pred.grounded is True and pred.hint is None and pred.rounds == 1 and pred.verdict == "yes"
    assert engine.calls == ["GradeRelevance", "AnswerWithCitations", "VerifyGroundedness"]
    assert pred.kept_ids and all(c.startswith("100#") for c in pred.kept_ids)
    assert pred.cited_ids == cited_ids(pred.answer) and set(pred.cited_ids) <= set(pred.kept_ids)
    assert pred.invalid_cited_ids == [] and set(pred.grades) == set(pred.retrieved_ids)
    assert pred.lm_calls == 3 <= program.lm_call_budget()


def test_low_quality_refines_and_stops_at_the_cap(retriever, fake_lm):
    engine = fake_lm(relevant=set())  # nothing is ever relevant
    program = rag(retriever, k=4, max_rounds=3)
    pred = program(question=QUESTION)
    assert pred.rounds == 3 and pred.queries[1:] == [f"refined {QUESTION}", f"refined refined {QUESTION}"]
    # no refinement after the last round; round 3 found only chunks graded before, which keep their grades
    assert engine.calls == ["GradeRelevance", "RefineQuery"] * 2
    assert pred.hint == "nothing_relevant" and pred.answer.startswith(NEED_MORE_CONTEXT)
    assert pred.kept_ids == [] and pred.lm_calls == len(engine.calls)


def test_batches_of_ten_and_malformed_items_regraded_together(retriever, fake_lm):
    ids = [c.id for c in retriever.search([QUESTION], k=12)[0]]
    engine = fake_lm(relevant=set(ids[:2]), malformed={ids[3], ids[5], ids[11]})  # the fake fixes one alone
    program = rag(retriever, k=12, grade_batch=10, min_quality=0)
    pred = program(question=QUESTION)
    # 10 chunks, their two malformed items in one more call; 2 chunks, their malformed one in one more call
    assert engine.calls[:5] == ["GradeRelevance"] * 4 + ["AnswerWithCitations"]
    assert pred.regraded == 3 and pred.grades[ids[11]]["score"] == 0.1
    assert [pred.grades[i]["reason"] for i in (ids[3], ids[5])] == ["could not be graded"] * 2  # still malformed
    assert pred.lm_calls == len(engine.calls) <= program.lm_call_budget() == 2 * 2 * 2 + 1 + 3
    assert pred.lm_fallbacks == [] and pred.hint is None and pred.grounded is True


def test_not_grounded_regenerates_once(retriever, fake_lm):
    engine = fake_lm(grounded=[False])
    pred = rag(retriever, k=4)(question=QUESTION)
    assert engine.calls[-3:] == ["AnswerWithCitations", "VerifyGroundedness", "AnswerWithCitations"]
    assert pred.hint == "regenerated" and pred.grounded is None
    assert "The effect was large" not in pred.answer and pred.unsupported_claims == ["The effect was large"]


def test_not_grounded_and_regeneration_fails_needs_more_context(retriever, fake_lm, monkeypatch):
    fake_lm(grounded=[False])
    program = rag(retriever, k=4)
    original, calls = program.answer.forward, []

    def second_answer_fails(**kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the server went away")
        return original(**kwargs)

    monkeypatch.setattr(program.answer, "forward", second_answer_fails)
    pred = program(question=QUESTION)
    assert pred.hint == "not_grounded" and pred.grounded is False and pred.answer.startswith(NEED_MORE_CONTEXT)
    assert pred.lm_fallbacks == ["regenerate"] and "RuntimeError" in pred.lm_errors[0]


def test_unsupported_and_unrepairable_lists_what_is_missing(retriever, fake_lm, monkeypatch):
    engine = fake_lm(grounded=[False])
    program = rag(retriever, k=4)
    calls = {"n": 0}
    original = program.answer.forward

    def second_answer_cites_nothing(**kwargs):
        calls["n"] += 1
        out = original(**kwargs)
        if calls["n"] == 2:
            out.answer = "Yes, probably."
        return out

    monkeypatch.setattr(program.answer, "forward", second_answer_cites_nothing)
    pred = program(question=QUESTION)
    assert pred.hint == "not_grounded" and pred.grounded is False
    assert pred.answer == f"{NEED_MORE_CONTEXT} Missing: a measured effect size"
    assert engine.calls.count("AnswerWithCitations") == 2 and pred.lm_fallbacks == ["regenerate"]


@pytest.mark.parametrize("mode", ["error", "garbage"])
def test_dead_or_garbled_lm_gives_the_no_lm_answer_marked(retriever, fake_lm, mode):
    no_lm = rag(retriever, k=4)(question=QUESTION)
    engine = fake_lm(mode=mode)
    pred = rag(retriever, k=4)(question=QUESTION)
    assert (pred.answer, pred.cited_ids, pred.retrieved_ids) == (no_lm.answer, no_lm.cited_ids, no_lm.retrieved_ids)
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["grade"] and pred.verdict == "" and pred.kept_ids == []
    assert pred.lm_calls == 1 and engine.calls in ([], ["GradeRelevance"])  # one grading call, never regraded


def test_every_malformed_grade_is_a_failed_call_not_regraded(retriever, fake_lm):
    ids = [c.id for c in retriever.search([QUESTION], k=4)[0]]
    engine = fake_lm(malformed=set(ids))
    pred = rag(retriever, k=4)(question=QUESTION)
    assert engine.calls == ["GradeRelevance"] and pred.hint == "lm_failed" and pred.lm_fallbacks == ["grade"]


def test_an_answer_citing_ids_it_was_not_given_falls_back_to_the_kept_chunks(retriever, fake_lm, monkeypatch):
    fake_lm(relevant={c for c in retriever.store.bank.ids if c.startswith("100#")})
    program = rag(retriever, k=4)
    original = program.answer.forward

    def cites_elsewhere(**kwargs):
        out = original(**kwargs)
        out.answer += " Also [999#0]."
        return out

    monkeypatch.setattr(program.answer, "forward", cites_elsewhere)
    pred = program(question=QUESTION)
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["answer"] and pred.verdict == ""
    assert pred.context_ids == pred.kept_ids and pred.cited_ids == pred.kept_ids[:3]  # all graded 0.9
    assert pred.answer.startswith(f"Statins lower LDL cholesterol in adults with diabetes [{pred.kept_ids[0]}].")
    assert pred.invalid_cited_ids == [] and pred.grounded is None


def test_failed_refine_answers_from_what_was_kept(retriever, fake_lm):
    engine = fake_lm(fail={"RefineQuery": "error"})
    pred = rag(retriever, k=8, max_rounds=2)(question=QUESTION)  # quality 2/8 < 0.5 asks for a refinement
    assert "RefineQuery" in engine.calls and pred.rounds == 1 and pred.grounded is True
    assert pred.lm_fallbacks == ["refine"] and pred.hint == "lm_failed" and pred.verdict == "yes"


def test_deepcopy_shares_the_retriever(retriever):
    program = rag(retriever)
    assert program.deepcopy().retriever is retriever
