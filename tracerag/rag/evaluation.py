"""Evaluating SelfReflectiveRAG: every labelled example scored, into the report every program shares."""

from __future__ import annotations

from collections import defaultdict

from ..evaluation import fallback_metrics, latency_metrics, lm_outcome, mean_of, run_examples
from ..hints import Hint
from ..lm.fault_budget import lm_fault_budget
from .result import RAGResult


def _rag_summary(rows: list[dict], k: int) -> dict:
    return {
        f"recall@{k}": mean_of(r["recall"] for r in rows),
        "mrr": mean_of(r["rr"] for r in rows),
        "accuracy": mean_of(r["accuracy"] for r in rows),
        "kept_gold": mean_of(r["kept_gold"] for r in rows),
        "grounded_rate": mean_of(None if r["grounded"] is None else float(r["grounded"]) for r in rows),
        "citation_validity": mean_of(r["citation_validity"] for r in rows),
        "citation_coverage": mean_of(r["citation_coverage"] for r in rows),
        "citation_recall": mean_of(r["citation_recall"] for r in rows),
        "citation_precision": mean_of(r["citation_precision"] for r in rows),
        "n": len(rows),
    }


def _ranked_documents(ex, pred: RAGResult, k: int) -> dict:
    """The documents of the first round's top-k chunks in rank order, and the gold documents (the HTML
    report's recall curve). No deeper search: the hybrid search's candidate pools grow with k, so a second
    search 50 deep does not start with the chunks the row was scored on (130 of the 206 bundled questions)."""
    first = (pred.retrieved_per_round or [[]])[0][:k]
    return {"ranking": [pred.chunk_doc_ids.get(c) for c in first], "relevant": list(ex.gold_doc_ids)}


def _rag_decided(pred: RAGResult) -> bool:
    """False for the extractive answer that decides nothing (no LM, an LM stage that failed before a
    verdict, a question that says nothing): its accuracy and kept_gold are not scored, so a dead endpoint
    reports what no LM does."""
    return not (pred.hint in (Hint.NO_LM, Hint.EMPTY_INPUT) or (pred.hint == Hint.LM_FAILED and not pred.verdict))


def evaluate_rag(program, examples: list, *, dataset: str, k: int = 10, alce: bool = False,
                 progress: bool = True, num_threads: int = 1, ranked_depth: int | None = None) -> dict:
    """Score SelfReflectiveRAG on PubMedQA-style Examples (same report shape as the other programs).

    LM calls are counted twice: by the program and by an LMMeter (a DSPy callback); the report carries both and
    the program's per-question budget. ``alce`` adds the LM-judged citation recall and precision
    (after the program's calls, so they do not count against its budget): the judge is a guarded stage
    (``judge``: the breaker and the run's fault budget apply), its calls are counted apart
    (``lm_calls_judge``) and a judge that fails is a fallback of the row. ``ranked_depth`` (any): each row
    also carries ``ranking``, the documents of its first round's top k, and ``relevant``, its gold documents
    (the HTML report's recall curve, to k: ``--k 50`` for one to 50); nothing else changes.
    """
    from ..lm.meter import LMMeter
    from ..programs.guarded_step import Stages
    from . import judge
    from . import metrics as r

    def score_one(ex) -> dict:
        meter, judged = LMMeter(), Stages()
        with meter.measure():
            pred = program(question=ex.question)
        elapsed_ms = meter.seconds * 1000
        result = RAGResult.of(pred)  # its fields, typed; the metrics and the judge read the Prediction, as DSPy's do
        citation_recall, citation_precision = judge.alce_citation_scores(pred, stages=judged) if alce else (None, None)
        decided = _rag_decided(result)
        return {
            "id": ex.pmid, "question": ex.question, "gold": ex.final_decision, "verdict": result.verdict,
            "recall": r.doc_recall_at_k(ex, pred, k), "rr": r.doc_reciprocal_rank(ex, pred, k),
            "accuracy": r.decision_accuracy(ex, pred) if decided else None,
            "kept_gold": r.kept_gold(ex, pred) if decided else None,
            "grounded": result.grounded, "hint": result.hint or "-",
            "citation_validity": r.citation_validity(pred), "citation_coverage": r.answer_citation_coverage(pred),
            "citation_recall": citation_recall, "citation_precision": citation_precision,
            "rounds": result.rounds, "lm_calls": result.lm_calls, "lm_calls_observed": meter.calls,
            "lm_calls_judge": judged.calls, **lm_outcome(pred, *judged.fallbacks),
            "ms": round(elapsed_ms, 2), "answer": result.answer, "retrieved": result.retrieved_per_round[0][:k],
            "kept": result.kept_ids, "cited": result.cited_ids, "invalid_cited": result.invalid_cited_ids,
            **(_ranked_documents(ex, result, k) if ranked_depth else {}),
        }

    with lm_fault_budget() as budget:  # the run's, reported
        rows = run_examples(score_one, examples, num_threads=num_threads, desc="evaluate rag", unit="question",
                            progress=progress)
    groups = defaultdict(list)
    for row in rows:
        groups[row["hint"]].append(row)
    metrics = _rag_summary(rows, k)
    metrics["lm_calls_per_question"] = mean_of(row["lm_calls_observed"] for row in rows)
    metrics["lm_calls_max"] = max((row["lm_calls_observed"] for row in rows), default=0)
    metrics["lm_call_budget"] = program.lm_call_budget()
    metrics["lm_calls_judge"] = sum(row["lm_calls_judge"] for row in rows)
    metrics.update(fallback_metrics(rows))
    metrics.update(latency_metrics(rows))
    metrics["lm_fault_budget"] = budget.report()
    return {"program": "SelfReflectiveRAG", "dataset": dataset, "k": k, "n": len(rows),
            "config": program.config.model_dump(), "metrics": metrics,
            "breakdown": {"hint": {name: _rag_summary(rs, k) for name, rs in sorted(groups.items())}},
            "per_query": rows}
