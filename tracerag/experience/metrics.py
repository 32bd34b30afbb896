"""Experience-retrieval metrics: pure functions of (example, prediction); the LM-judged usefulness is in
``tracerag.experience.judge``.

The ranked list is the last round's selection (after rerank and top_n), which is what the summary
saw. ``example.relevant_task_ids`` are the same-family correct traces. recall@k is capped recall:
|relevant in top k| / min(k, |relevant|), so a family with more traces than k can still score 1.
Metric contract: with ``trace`` (bootstrapping) a strict bool, else a float in [0, 1].
"""

from __future__ import annotations

import dspy


def ranked_task_ids(pred) -> list[str]:
    rounds = getattr(pred, "task_ids", None) or []
    return list(rounds[-1]) if rounds else []


def hit_at_k(example, pred, k: int = 5) -> float:
    relevant = set(example.relevant_task_ids)
    return float(any(t in relevant for t in ranked_task_ids(pred)[:k]))


def recall_at_k(example, pred, k: int = 5) -> float:
    relevant = set(example.relevant_task_ids)
    if not relevant:
        return 1.0
    found = sum(t in relevant for t in ranked_task_ids(pred)[:k])
    return found / min(k, len(relevant))


def reciprocal_rank(example, pred, k: int = 5) -> float:
    relevant = set(example.relevant_task_ids)
    for rank, task_id in enumerate(ranked_task_ids(pred)[:k], start=1):
        if task_id in relevant:
            return 1.0 / rank
    return 0.0


def used_precision(example, pred) -> float | None:
    """Share of the task_ids the experience drew on that are relevant; None when nothing was used."""
    used = list(getattr(pred, "used_task_ids", None) or [])
    if not used:
        return None
    relevant = set(example.relevant_task_ids)
    return sum(t in relevant for t in used) / len(used)


def experience_score(example, pred, trace=None) -> float | bool:
    """The optimisation metric: half retrieval (recall@5), half grounding (used ids are relevant).

    An empty experience scores only its retrieval half. Bootstrapping keeps a demo only when a
    relevant trace was retrieved and every trace the experience drew on was relevant.
    """
    retrieval = recall_at_k(example, pred, 5)
    grounding = used_precision(example, pred) if (pred.experience or "").strip() else None
    if trace is not None:
        return hit_at_k(example, pred, 5) == 1.0 and grounding == 1.0
    return 0.5 * retrieval + 0.5 * (grounding or 0.0)


def experience_feedback(gold, pred, trace=None, pred_name=None, pred_trace=None) -> dspy.Prediction:
    """experience_score with a diagnosis for GEPA: what was missed, what was wrongly drawn on."""
    score = experience_score(gold, pred)
    relevant = set(gold.relevant_task_ids)
    ranked = ranked_task_ids(pred)
    lines = [f"score = {score:.2f}; retrieved (last round): {ranked or 'nothing'}"]
    if not any(t in relevant for t in ranked):
        family = getattr(gold, "family", None) or "the relevant family"
        queries = pred.queries[-1] if pred.queries else []
        lines.append(f"No retrieved task is from {family}; the queries were {queries}. "
                     "Queries should name the kind of task and the tools it needs, not its entities.")
    wrong = [t for t in (getattr(pred, "used_task_ids", None) or []) if t not in relevant]
    if wrong:
        lines.append(f"The experience drew on unrelated tasks {wrong}; only use candidates that match the task type.")
    if not (pred.experience or "").strip():
        lines.append("The experience was empty.")
    return dspy.Prediction(score=score, feedback="\n".join(lines))
