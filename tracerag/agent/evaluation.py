"""Evaluating SearchAgent: every labelled example scored, into the report every program shares."""

from __future__ import annotations

from collections import defaultdict

from ..evaluation import fallback_metrics, latency_metrics, lm_outcome, mean_of, run_examples
from ..hints import Hint
from ..lm.fault_budget import lm_fault_budget
from .result import AgentResult


def _agent_summary(rows: list[dict]) -> dict:
    return {key: mean_of(r[key] for r in rows) for key in (
        "accuracy", "citation_validity", "citation_coverage", "gold_found", "tool_calls", "hallucinated_outputs",
        "lm_calls")} | {"answered_rate": mean_of(float(r["stop_reason"] == "answered") for r in rows), "n": len(rows)}


def evaluate_agent(program, examples: list, *, dataset: str, progress: bool = True,
                   num_threads: int = 1) -> dict:
    """Score SearchAgent on PubMedQA-style Examples (same report shape); ``trajectories`` holds every
    run's Trajectory by example id, for export."""
    from . import metrics as a

    trajectories = {}

    def score_one(ex) -> dict:
        pred = program(question=ex.question)
        result = AgentResult.of(pred)  # its fields, typed; the metrics read the Prediction, as DSPy's do
        trajectories[ex.pmid] = result.trajectory
        return {
            "id": ex.pmid, "question": ex.question, "gold": ex.final_decision,
            "relevant": list(getattr(ex, "gold_doc_ids", None) or []), "decision": a.answer_decision(result.answer),
            # the no-LM answer (also what an LM failure gives) quotes evidence and decides nothing
            "accuracy": a.decision_accuracy(ex, pred)
            if result.hint not in (Hint.NO_LM, Hint.LM_FAILED, Hint.EMPTY_INPUT) else None,
            "citation_validity": a.citation_validity(pred), "citation_coverage": a.citation_coverage(pred),
            "gold_found": a.gold_found(ex, pred), "tool_calls": result.tool_calls,
            "hallucinated_outputs": result.hallucinated_outputs, "lm_calls": result.lm_calls,
            "stop_reason": result.stop_reason, "ms": result.ms, "cited": result.ids_cited,
            "invalid_cited": result.trajectory.invalid_citations, "answer": result.answer,
            **lm_outcome(pred),
        }

    with lm_fault_budget() as budget:  # the run's, reported
        rows = run_examples(score_one, examples, num_threads=num_threads, desc="evaluate agent", unit="question",
                            progress=progress)
    trajectories = {r["id"]: trajectories[r["id"]] for r in rows}  # in the examples' order
    groups = defaultdict(list)
    for row in rows:
        groups[row["stop_reason"]].append(row)
    metrics = _agent_summary(rows)
    metrics.update(fallback_metrics(rows))
    metrics.update(latency_metrics(rows))
    metrics["lm_fault_budget"] = budget.report()
    return {"program": "SearchAgent", "dataset": dataset, "k": None, "n": len(rows),
            "config": program.config.model_dump(), "metrics": metrics,
            "breakdown": {"stop_reason": {name: _agent_summary(rs) for name, rs in sorted(groups.items())}},
            "per_query": rows, "trajectories": trajectories}
