"""SelfReflectiveRAG metrics: pure functions of (example, prediction).

``example.gold_doc_ids`` are the documents that answer the question (PubMedQA: the question's own
PMID); ``example.final_decision`` is yes/no/maybe. Retrieval recall@k reads the first round, the
retrieval of the question as asked: the share of gold documents among the top-k chunks' documents.
"""

from __future__ import annotations

from ..hints import Hint
from ..metrics.citations import CHUNK_ID_PATTERN, citation_coverage, extract_cited_ids, split_sentences  # noqa: F401 (public here)
from ..metrics.citations import citation_validity as shared_validity


def doc_recall_at_k(example, pred, k: int = 10) -> float:
    gold = set(example.gold_doc_ids)
    if not gold:
        return 1.0
    first_round = (pred.retrieved_per_round or [[]])[0][:k]
    found = {pred.chunk_doc_ids.get(c) for c in first_round}
    return len(gold & found) / len(gold)


def doc_reciprocal_rank(example, pred, k: int = 10) -> float:
    gold = set(example.gold_doc_ids)
    for rank, chunk in enumerate((pred.retrieved_per_round or [[]])[0][:k], start=1):
        if pred.chunk_doc_ids.get(chunk) in gold:
            return 1.0 / rank
    return 0.0


def decision_accuracy(example, pred) -> float | None:
    """1 when the verdict matches the gold yes/no/maybe decision; None when there is no gold decision."""
    gold = (getattr(example, "final_decision", None) or "").lower()
    if not gold:
        return None
    return float((pred.verdict or "") == gold)


def kept_gold(example, pred) -> float:
    """Share of gold documents that survived grading (the grader kept one of their chunks)."""
    gold = set(example.gold_doc_ids)
    kept = {pred.chunk_doc_ids.get(c) for c in pred.kept_ids}
    return len(gold & kept) / len(gold) if gold else 1.0


def citation_validity(pred) -> float | None:
    """Share of cited chunk ids that were in the answer's context, counting the ids the program removed
    from the answer as invalid (``invalid_cited_ids``: a forged citation is never shown, and never scores
    as traced); None when nothing is cited (an uncited answer is what coverage penalises) or when there
    is no answer (nothing kept)."""
    cited = [*pred.cited_ids, *(getattr(pred, "invalid_cited_ids", None) or [])]
    return shared_validity(cited, pred.context_ids) if cited else None


def answer_citation_coverage(pred) -> float | None:
    """Share of the answer's sentences carrying at least one valid [chunk-id]; None when the program
    gave the "need more context" answer (there is nothing to cite). The extractive answer (no LM, or
    an LM stage that failed) cites what it quotes, so it is scored like the LM's."""
    if pred.hint not in (None, Hint.REGENERATED) and not pred.cited_ids:
        return None
    return citation_coverage(split_sentences(pred.answer), pred.context_ids, CHUNK_ID_PATTERN)


def rag_score(example, pred, trace=None) -> float | bool:
    """The optimisation metric: right decision, cited (validity x coverage), verified grounded.

    Each part counts a third (a regenerated, unverified answer counts half for groundedness). When
    bootstrapping, a demo is kept only if all three hold.
    """
    correct = decision_accuracy(example, pred) or 0.0
    cited = (citation_validity(pred) or 0.0) * (answer_citation_coverage(pred) or 0.0)
    grounded = 1.0 if pred.grounded else 0.5 if pred.hint == Hint.REGENERATED else 0.0
    if trace is not None:
        return correct == 1.0 and cited == 1.0 and grounded == 1.0
    return (correct + cited + grounded) / 3


def rag_feedback(gold, pred, trace=None, pred_name=None, pred_trace=None):
    """rag_score with a diagnosis for GEPA: wrong verdict, invalid or missing citations, unsupported claims."""
    import dspy

    score = rag_score(gold, pred)
    lines = [f"score = {score:.2f}; outcome: {pred.hint or 'answered'}"]
    if decision_accuracy(gold, pred) == 0.0:
        lines.append(f"The verdict was {pred.verdict or 'missing'!r}; the correct decision is {gold.final_decision!r}.")
    if pred.invalid_cited_ids:
        lines.append(f"Cited ids that were not provided: {pred.invalid_cited_ids}. Cite only the listed chunk ids.")
    if not pred.cited_ids and pred.hint is None:
        lines.append("The answer cites nothing; every sentence must end with [chunk-id] citations.")
    if pred.unsupported_claims:
        lines.append(f"Claims the cited chunks do not support: {pred.unsupported_claims}.")
    if kept_gold(gold, pred) == 0.0 and doc_recall_at_k(gold, pred) == 1.0:
        lines.append("A chunk of the document that answers the question was retrieved but graded irrelevant.")
    return dspy.Prediction(score=score, feedback="\n".join(lines))
