"""RAG metrics on hand-made predictions."""

import dspy
import pytest

from tracerag.rag import judge
from tracerag.rag import metrics as m


def example(decision="yes"):
    return dspy.Example(question="q", gold_doc_ids=["7"], final_decision=decision)


def pred(answer="Yes [7#0]. It worked [7#1].", context=("7#0", "7#1"), hint=None, grounded=True, verdict="yes"):
    cited = m.extract_cited_ids(answer, m.CHUNK_ID_PATTERN)
    return dspy.Prediction(
        answer=answer, verdict=verdict, hint=hint, grounded=grounded, cited_ids=cited,
        invalid_cited_ids=[c for c in cited if c not in context], context_ids=list(context), kept_ids=list(context),
        retrieved_per_round=[["3#0", "7#0", "7#1"]], chunk_doc_ids={"3#0": "3", "7#0": "7", "7#1": "7"},
        context_texts={c: f"text of {c}" for c in context}, unsupported_claims=[])


def test_retrieval_and_decision():
    p = pred()
    assert m.doc_recall_at_k(example(), p, 1) == 0.0 and m.doc_recall_at_k(example(), p, 2) == 1.0
    assert m.doc_reciprocal_rank(example(), p) == 0.5 and m.kept_gold(example(), p) == 1.0
    assert m.decision_accuracy(example(), p) == 1.0 and m.decision_accuracy(example("no"), p) == 0.0


def test_citations_validity_and_coverage():
    p = pred("Yes [7#0]. It worked [9#9]. Unclear.")
    assert m.citation_validity(p) == 0.5
    assert m.answer_citation_coverage(p) == pytest.approx(1 / 3)
    assert m.citation_validity(pred("No citations.")) is None
    assert m.answer_citation_coverage(pred("I need more context.", hint="not_grounded")) is None


def test_rag_score_and_feedback():
    assert m.rag_score(example(), pred()) == 1.0 and m.rag_score(example(), pred(), trace=[]) is True
    wrong = pred("Yes [7#0]. It worked [9#9].", verdict="no")
    assert m.rag_score(example(), wrong) == pytest.approx((0 + 0.5 * 0.5 + 1) / 3)
    feedback = m.rag_feedback(example(), wrong).feedback
    assert "correct decision is 'yes'" in feedback and "['9#9']" in feedback


def test_alce_scores_with_the_judge(fake_lm):
    assert judge.alce_citation_scores(pred()) == (None, None)  # no LM
    fake_lm(grounded=[True, False])  # sentence 1 supported, sentence 2 not
    recall, precision = judge.alce_citation_scores(pred())
    assert recall == 0.5 and precision == 0.5
