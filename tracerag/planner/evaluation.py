"""Evaluating TraceablePlanner: every labelled example scored, into the report every program shares."""

from __future__ import annotations

import time
from collections import defaultdict

from ..evaluation import fallback_metrics, latency_metrics, lm_outcome, mean_of, run_examples
from ..lm.fault_budget import lm_fault_budget
from .result import PlanResult


def _planner_summary(rows: list[dict]) -> dict:
    return {key: mean_of(r[key] for r in rows) for key in ("used_recall", "used_precision", "used_f1",
                                                         "citation_validity", "citation_coverage", "score")} | {
        "hallucinated_per_plan": mean_of(float(r["hallucinated"]) for r in rows), "n": len(rows)}


def evaluate_planner(program, examples: list, *, dataset: str, progress: bool = True,
                     num_threads: int = 1) -> dict:
    """Score TraceablePlanner on Examples from `PlannerCase.to_example` (same report shape)."""
    from . import metrics as p

    def score_one(ex) -> dict:
        started = time.perf_counter()
        pred = program(**ex.inputs())
        elapsed_ms = (time.perf_counter() - started) * 1000
        result = PlanResult.of(pred)  # its fields, typed; the metrics read the Prediction, as DSPy's do
        return {
            "id": ex.id, "domain": ex.domain, "requirements": ex.requirements,
            "used_recall": p.used_id_recall(ex, pred), "used_precision": p.used_id_precision(ex, pred),
            "used_f1": p.used_id_f1(ex, pred),
            "citation_validity": p.plan_citation_validity(ex, pred),
            "citation_coverage": p.plan_citation_coverage(ex, pred), "score": p.planner_score(ex, pred),
            "hallucinated": len(result.hallucinated_ids), "lm_calls": result.lm_calls, "error": result.error,
            "planned": result.plan is not None, **lm_outcome(pred),
            "ms": round(elapsed_ms, 2), "gold": list(ex.gold_bullet_ids) + list(ex.gold_template_ids),
            "used": list(result.bullets_used) + list(result.templates_used), "metadata": result.metadata,
        }

    with lm_fault_budget() as budget:  # the run's, reported
        rows = run_examples(score_one, examples, num_threads=num_threads, desc="evaluate planner", unit="case",
                            progress=progress)
    groups = defaultdict(list)
    for row in rows:
        groups[row["domain"]].append(row)
    metrics = _planner_summary(rows)
    metrics["lm_calls_per_query"] = mean_of(row["lm_calls"] for row in rows)
    metrics["errors"] = sum(row["error"] is not None for row in rows)
    metrics["plans"] = sum(row["planned"] for row in rows)  # 0 without an LM: the no-LM path plans nothing
    metrics.update(fallback_metrics(rows))
    metrics.update(latency_metrics(rows))
    metrics["lm_fault_budget"] = budget.report()
    return {"program": "TraceablePlanner", "dataset": dataset, "k": None, "n": len(rows),
            "config": program.config.model_dump(), "metrics": metrics,
            "breakdown": {"domain": {name: _planner_summary(rs) for name, rs in sorted(groups.items())}},
            "per_query": rows}
