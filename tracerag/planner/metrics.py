"""TraceablePlanner metrics: did the plan use the ids it should, and can every citation be followed?

Read from a prediction: ``plan`` (a Plan or None), ``bullets_used``, ``templates_used`` (provided ids
only), ``hallucinated_ids`` (cited but never provided), ``retrieved_bullet_ids``,
``retrieved_template_ids`` (what the LM was shown). From an example: ``gold_bullet_ids``,
``gold_template_ids`` (the ids a good plan uses) and, for feedback texts, ``bullets``/``templates``.

- used-id recall / precision / F1: used ids (bullets + templates) against the gold ids. Nothing used
  scores precision 1.0 only when there is no gold id either (else 0.0); no gold ids scores recall 1.0.
- plan citation validity: share of the ids the plan put forward (used + hallucinated) that were provided.
- plan citation coverage: share of steps citing at least one provided id (in ``cites`` or inline).
A prediction without a plan scores 0.0 on all of them. Metric contract: ``planner_score`` with
``trace`` (bootstrapping) returns a strict bool, else a float in [0, 1].
"""

from __future__ import annotations

from collections.abc import Iterable

import dspy

from ..memory.playbook import BULLET_ID_PATTERN, TEMPLATE_ID_PATTERN
from ..metrics.citations import citation_coverage, citation_validity, extract_cited_ids
from ..signatures.planner import Plan, PlanStep

__all__ = ["PLAN_ID_PATTERN", "plan_citation_coverage", "plan_citation_validity", "plan_cited_ids", "plan_text",
           "planner_feedback", "planner_score", "step_cited_ids", "used_id_f1", "used_id_precision",
           "used_id_recall"]

PLAN_ID_PATTERN = rf"{BULLET_ID_PATTERN}|{TEMPLATE_ID_PATTERN}"
WEIGHTS = {"used_id_f1": 0.5, "coverage": 0.25, "validity": 0.25}
BOOTSTRAP_MIN_SCORE = 0.8


# -- ids in a plan -----------------------------------------------------------------------------------


def _ids_in(text: str) -> list[str]:
    """Bracketed bullet/template ids, plus template ids written bare (``tpl-1a2b3c4d`` is unmistakable)."""
    found = {*extract_cited_ids(text, PLAN_ID_PATTERN), *extract_cited_ids(text, TEMPLATE_ID_PATTERN, bracketed=False)}
    return sorted(found, key=text.find)  # in order of first appearance


def step_cited_ids(step: PlanStep) -> list[str]:
    """A step's ``cites`` plus the ids its text cites inline."""
    return list(dict.fromkeys([*(c.strip().strip("[]()").strip() for c in step.cites), *_ids_in(step.text)]))


def plan_text(plan: Plan) -> str:
    """Every text field of a plan, one a line, in reading order."""
    return "\n".join([plan.objective, *plan.materials, *(s.text for s in plan.steps), *plan.safety_notes,
                      plan.expected_outcome])


def plan_cited_ids(plan: Plan) -> list[str]:
    """Every id a plan cites: the steps' ``cites`` and the ids in any of its text fields, first seen first."""
    return list(dict.fromkeys([*(i for s in plan.steps for i in step_cited_ids(s)), *_ids_in(plan_text(plan))]))


# -- metrics -----------------------------------------------------------------------------------------


def _list(value) -> list[str]:
    return [v for v in (value or []) if isinstance(v, str)]


def used_ids(pred) -> list[str]:
    return list(dict.fromkeys([*_list(getattr(pred, "bullets_used", None)),
                               *_list(getattr(pred, "templates_used", None))]))


def gold_ids(example) -> list[str]:
    return list(dict.fromkeys([*_list(getattr(example, "gold_bullet_ids", None)),
                               *_list(getattr(example, "gold_template_ids", None))]))


def _has_plan(pred) -> bool:
    return isinstance(getattr(pred, "plan", None), Plan)


def used_id_recall(example, pred) -> float:
    gold = set(gold_ids(example))
    if not gold:
        return 1.0 if _has_plan(pred) else 0.0
    return len(gold & set(used_ids(pred))) / len(gold) if _has_plan(pred) else 0.0


def used_id_precision(example, pred) -> float:
    if not _has_plan(pred):
        return 0.0
    used, gold = used_ids(pred), set(gold_ids(example))
    if not used:
        return 0.0 if gold else 1.0
    return sum(u in gold for u in used) / len(used)


def used_id_f1(example, pred) -> float:
    recall, precision = used_id_recall(example, pred), used_id_precision(example, pred)
    return 2 * recall * precision / (recall + precision) if recall + precision else 0.0


def provided_ids(pred) -> list[str]:
    return [*_list(getattr(pred, "retrieved_bullet_ids", None)), *_list(getattr(pred, "retrieved_template_ids", None))]


def plan_citation_validity(example, pred) -> float:
    if not _has_plan(pred):
        return 0.0
    cited = [*used_ids(pred), *_list(getattr(pred, "hallucinated_ids", None))]
    return citation_validity(cited, provided_ids(pred))


def plan_citation_coverage(example, pred) -> float:
    if not _has_plan(pred):
        return 0.0
    return citation_coverage([step_cited_ids(s) for s in pred.plan.steps], set(provided_ids(pred)))


def planner_score(example, pred, trace=None) -> float | bool:
    """The optimisation metric: 0.5 used-id F1 + 0.25 step coverage + 0.25 citation validity.

    Bootstrapping keeps a demo only when the plan scores at least 0.8 and cites no invented id.
    """
    validity = plan_citation_validity(example, pred)
    score = (WEIGHTS["used_id_f1"] * used_id_f1(example, pred) + WEIGHTS["coverage"] * plan_citation_coverage(
        example, pred) + WEIGHTS["validity"] * validity)
    if trace is not None:
        return _has_plan(pred) and validity == 1.0 and score >= BOOTSTRAP_MIN_SCORE
    return score


def _describe(ids: Iterable[str], example) -> str:
    """``[id] "first words of its text"`` for each id the example can look up, else ``[id]``."""
    texts = {}
    for item in [*(getattr(example, "bullets", None) or []), *(getattr(example, "templates", None) or [])]:
        item_id = getattr(item, "id", None) or (item.get("id") if isinstance(item, dict) else None)
        text = getattr(item, "title", None) or getattr(item, "text", None)
        if isinstance(item, dict):
            text = item.get("title") or item.get("text")
        if item_id:
            texts[item_id] = " ".join(str(text or "").split())[:80]
    return "; ".join(f'[{i}] "{texts[i]}"' if texts.get(i) else f"[{i}]" for i in ids)


def planner_feedback(gold, pred, trace=None, pred_name=None, pred_trace=None) -> dspy.Prediction:
    """planner_score with a diagnosis for GEPA: the gold ids missed, ids used needlessly, invented ids and
    the steps that cite nothing."""
    score = planner_score(gold, pred)
    if not _has_plan(pred):
        error = getattr(pred, "error", None) or "no plan"
        return dspy.Prediction(score=score, feedback=f"score = 0.00; no plan was produced ({error}). Return a plan "
                                                     "with objective, materials, steps, safety_notes and "
                                                     "expected_outcome.")
    lines = [f"score = {score:.2f} (used-id F1 {used_id_f1(gold, pred):.2f}, step coverage "
             f"{plan_citation_coverage(gold, pred):.2f}, citation validity {plan_citation_validity(gold, pred):.2f})"]
    used, wanted = used_ids(pred), gold_ids(gold)
    missing = [i for i in wanted if i not in used]
    if missing:
        lines.append(f"Missed ids a good plan follows for these requirements: {_describe(missing, gold)}.")
    extra = [i for i in used if i not in set(wanted)]
    if extra:
        lines.append(f"Used ids that do not fit these requirements: {_describe(extra, gold)}.")
    invalid = _list(getattr(pred, "hallucinated_ids", None))
    if invalid:
        lines.append(f"Invalid citations, never provided: {', '.join(invalid)}. Cite only ids shown in the input.")
    provided = set(provided_ids(pred))
    uncited = [str(n) for n, step in enumerate(pred.plan.steps, start=1)
               if not any(i in provided for i in step_cited_ids(step))]
    if uncited:
        lines.append(f"Steps {', '.join(uncited)} cite no provided id; cite the bullet or template each step "
                     "follows as [id].")
    return dspy.Prediction(score=score, feedback="\n".join(lines))
