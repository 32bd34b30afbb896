"""SelfReflectiveRAG with document ids beyond ASCII (``指南1``, ``my doc``, ``_notes``): the no-LM answer
cites them, an LM answer citing them is kept, and an invented citation item is never kept or counted."""

import json

import dspy
import pytest

from tracerag.rag import metrics as metrics
from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG

DOCS = {
    "指南1": "Statins lower LDL cholesterol in adults with diabetes. The trial followed 2,000 patients.",
    "my doc": "Aspirin before colonoscopy does not raise bleeding risk. A cohort of 800 patients was studied.",
    "_notes": "Vitamin D supplements did not prevent fractures in older adults. The trial enrolled 5,000 people.",
}
QUESTION = "Do statins lower cholesterol in diabetes?"


@pytest.fixture
def unicode_retriever(tmp_path, embedder):
    from tracerag.documents.corpus import ingest_documents
    from tracerag.documents.hybrid import HybridRetriever
    from tracerag.stores.cosine_bank import CosineBank

    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"id": k, "text": v}, ensure_ascii=False) + "\n" for k, v in DOCS.items()),
                    encoding="utf-8")
    ingest_documents(path, tmp_path / "bank", embedder, size=400, overlap=0)
    return HybridRetriever(CosineBank.load(tmp_path / "bank", embedder))


def test_the_no_lm_answer_cites_every_document_id_it_quotes(unicode_retriever):
    pred = SelfReflectiveRAG(unicode_retriever, RAGConfig(k=3))(question=QUESTION)
    assert pred.hint == "no_lm" and sorted(pred.cited_ids) == sorted(["指南1#0", "my doc#0", "_notes#0"])
    assert "[指南1#0]" in pred.answer and "[my doc#0]" in pred.answer and pred.invalid_cited_ids == []
    assert metrics.citation_validity(pred) == 1.0 and metrics.answer_citation_coverage(pred) == 1.0


def _scripted(program, answer: str) -> None:
    """Every chunk graded relevant, the answer written as given, the answer verified grounded."""
    def grade(**kwargs):
        ids = [line[1:line.index("] ")] for line in kwargs["chunks"].split("\n\n")]
        return dspy.Prediction(grades=[{"id": i, "score": 0.9, "reason": "on topic"} for i in ids])

    program.grade.forward = grade
    program.answer.forward = lambda **kwargs: dspy.Prediction(answer=answer, verdict="yes")
    program.verify.forward = lambda **kwargs: dspy.Prediction(grounded=True, unsupported_claims=[],
                                                              missing_evidence="")


def test_an_lm_answer_citing_unicode_and_spaced_ids_is_kept(unicode_retriever, fake_lm):
    fake_lm()
    program = SelfReflectiveRAG(unicode_retriever, RAGConfig(k=3))
    answer = "Yes, statins lower LDL [指南1#0]. Aspirin is unrelated [my doc#0; _notes#0]."
    _scripted(program, answer)
    pred = program(question=QUESTION)
    assert pred.hint is None and pred.lm_fallbacks == [] and pred.answer == answer and pred.verdict == "yes"
    assert pred.cited_ids == ["指南1#0", "my doc#0", "_notes#0"] and pred.invalid_cited_ids == []
    assert metrics.citation_validity(pred) == 1.0 and metrics.answer_citation_coverage(pred) == 1.0


@pytest.mark.parametrize("forged", ["[指南1#0, FORGED4]", "[指南1#0] [doc#0]", "[指南1#0; 指南1#9]"])
def test_an_answer_with_an_invented_citation_item_is_never_kept(unicode_retriever, fake_lm, forged):
    fake_lm()
    program = SelfReflectiveRAG(unicode_retriever, RAGConfig(k=3))
    _scripted(program, f"Yes, statins lower LDL {forged}.")
    pred = program(question=QUESTION)
    assert pred.hint == "lm_failed" and pred.lm_fallbacks == ["answer"] and "not given" in pred.lm_errors[0]
    assert "FORGED4" not in pred.answer and "[doc#0]" not in pred.answer and "指南1#9" not in pred.answer
    assert set(pred.cited_ids) <= set(pred.context_ids) and metrics.rag_score(None, pred, trace=True) is False


def test_an_invented_id_in_the_missing_evidence_text_is_removed_and_counted(unicode_retriever, fake_lm):
    fake_lm()
    program = SelfReflectiveRAG(unicode_retriever, RAGConfig(k=3))
    _scripted(program, "Yes [指南1#0].")
    program.verify.forward = lambda **kwargs: dspy.Prediction(
        grounded=False, unsupported_claims=["Yes"], missing_evidence="the trial [FORGED#1, 指南1#0]")
    program.answer.forward = _fails_after_first(program.answer.forward)
    pred = program(question=QUESTION)
    assert pred.hint == "not_grounded" and "FORGED#1" not in pred.answer
    assert pred.invalid_cited_ids == ["FORGED#1"] and pred.cited_ids == ["指南1#0"]
    assert metrics.citation_validity(pred) == 0.5


def _fails_after_first(forward):
    calls = []

    def answer(**kwargs):
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("the endpoint is down")
        return forward(**kwargs)
    return answer
