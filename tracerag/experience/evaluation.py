"""Evaluating ExperienceRetrieval: every labelled example scored, into the report every program shares."""

from __future__ import annotations

import time
from collections import defaultdict

from ..evaluation import fallback_metrics, latency_metrics, lm_outcome, mean_of, run_examples
from ..lm.fault_budget import lm_fault_budget
from .result import ExperienceResult


def _experience_summary(rows: list[dict], k: int) -> dict:
    return {
        f"hit@{k}": mean_of(r["hit"] for r in rows),
        f"recall@{k}": mean_of(r["recall"] for r in rows),
        "mrr": mean_of(r["rr"] for r in rows),
        "used_precision": mean_of(r["used_precision"] for r in rows),
        "usefulness": mean_of(r["usefulness"] for r in rows),
        "n": len(rows),
    }


def evaluate_experience(program, examples: list, *, dataset: str, k: int = 5, judge: bool = False,
                        progress: bool = True, num_threads: int = 1, ranked_depth: int | None = None) -> dict:
    """Score ExperienceRetrieval on dspy Examples from `ExperienceQuery.to_example` (same report shape).

    `judge` adds the LM-judged usefulness (one extra LM call per query with a non-empty experience). The
    judge's calls are counted (``lm_calls_judge``; ``lm_calls_observed``: every LM request of the row, the
    program's and the judge's) and a judge that fails is a fallback of the row (stage ``judge``).
    ``ranked_depth`` (any): each row also carries ``recall_at``, its recall@j for j = 1..k by the same metric
    (the HTML report's recall curve; the ranking is the selection handed to the summary, k deep).
    """
    from ..lm.meter import LMMeter
    from ..programs.guarded_step import Stages
    from . import judge
    from . import metrics as e

    def score_one(ex) -> dict:
        meter, judged = LMMeter(), Stages()
        with meter.measure():
            started = time.perf_counter()
            pred = program(**ex.inputs())
            elapsed_ms = (time.perf_counter() - started) * 1000
            usefulness = judge.usefulness(ex, pred, stages=judged) if judge else None
        result = ExperienceResult.of(pred)  # its fields, typed; the metrics and the judge read the Prediction
        return {
            "id": ex.id, "question": ex.question, "family": ex.family or "-",
            "input": "image" if ex.images or ex.caption else "text",
            "hit": e.hit_at_k(ex, pred, k), "recall": e.recall_at_k(ex, pred, k), "rr": e.reciprocal_rank(ex, pred, k),
            "used_precision": e.used_precision(ex, pred),
            "usefulness": usefulness,
            "rounds": result.rounds, "lm_calls": result.lm_calls, "lm_calls_judge": judged.calls,
            "lm_calls_observed": meter.calls, "ms": round(elapsed_ms, 2), "error": result.error,
            **lm_outcome(pred, *judged.fallbacks),
            "queries": result.queries, "ranked": e.ranked_task_ids(pred)[:k], "used": result.used_task_ids,
            "relevant": list(getattr(ex, "relevant_task_ids", None) or []),
            "experience": result.experience,
            **({"recall_at": [e.recall_at_k(ex, pred, j) for j in range(1, k + 1)]} if ranked_depth else {}),
        }

    with lm_fault_budget() as budget:  # the run's, reported
        rows = run_examples(score_one, examples, num_threads=num_threads, desc="evaluate experience", unit="task",
                            progress=progress)
    breakdown = {}
    for key in ("family", "input"):
        groups = defaultdict(list)
        for r in rows:
            groups[r[key]].append(r)
        breakdown[key] = {name: _experience_summary(rs, k) for name, rs in sorted(groups.items())}
    metrics = _experience_summary(rows, k)
    metrics["lm_calls_per_query"] = mean_of(r["lm_calls"] for r in rows)
    metrics["lm_calls_judge"] = sum(r["lm_calls_judge"] for r in rows)
    metrics["lm_calls_observed"] = sum(r["lm_calls_observed"] for r in rows)
    metrics["errors"] = sum(r["error"] is not None for r in rows)
    metrics.update(fallback_metrics(rows))
    metrics.update(latency_metrics(rows))
    metrics["lm_fault_budget"] = budget.report()
    return {"program": "ExperienceRetrieval", "dataset": dataset, "k": k, "n": len(rows),
            "config": program.config.model_dump(), "metrics": metrics, "breakdown": breakdown, "per_query": rows}
