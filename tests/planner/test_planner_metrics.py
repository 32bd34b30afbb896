"""Planner metrics on hand-made predictions: used-id recall/precision, citation validity/coverage, the
combined score and its bootstrap bool, and the GEPA feedback naming missing and invalid ids."""

import dspy
import pytest

from tracerag.memory.playbook import Bullet, Template
from tracerag.planner.metrics import (
    plan_citation_coverage,
    plan_citation_validity,
    plan_cited_ids,
    planner_feedback,
    planner_score,
    step_cited_ids,
    used_id_f1,
    used_id_precision,
    used_id_recall,
)
from tracerag.signatures.planner import Plan, PlanStep

BULLETS = [Bullet("mat-00001", "mat", 0, 0, "Thaw enzymes on ice."),
           Bullet("proc-00001", "proc", 0, 0, "Add a no-template control."),
           Bullet("safe-00001", "safe", 0, 0, "Use a fume hood.")]
TEMPLATES = [Template("tpl-0a1b2c3d", "Routine PCR", "Mix, cycle, check on a gel.", 0.8)]
EXAMPLE = dspy.Example(requirements="Run a PCR.", bullets=BULLETS, templates=TEMPLATES,
                       gold_bullet_ids=["mat-00001", "proc-00001"], gold_template_ids=["tpl-0a1b2c3d"])
PROVIDED = {"retrieved_bullet_ids": ["mat-00001", "proc-00001", "safe-00001"],
            "retrieved_template_ids": ["tpl-0a1b2c3d"]}


def plan(*steps):
    return Plan(objective="Run a PCR.", steps=[PlanStep(text=t, cites=c) for t, c in steps])


def pred(plan_, bullets_used=(), templates_used=(), hallucinated=()):
    return dspy.Prediction(plan=plan_, bullets_used=list(bullets_used), templates_used=list(templates_used),
                           hallucinated_ids=list(hallucinated), error=None if plan_ else "LM failed", **PROVIDED)


PERFECT = pred(plan(("Follow the routine PCR template [tpl-0a1b2c3d].", []),
                    ("Thaw enzymes on ice.", ["mat-00001"]),
                    ("Add a no-template control (proc-00001).", [])),
               ["mat-00001", "proc-00001"], ["tpl-0a1b2c3d"])
PARTIAL = pred(plan(("Thaw enzymes on ice [mat-00001].", []),
                    ("Work in a fume hood [safe-00001] as [mat-09999] says.", []),
                    ("Run the gel.", []),
                    ("Cycle 30 times.", ["mat-09999"])),
               ["mat-00001", "safe-00001"], [], ["mat-09999"])


def test_ids_in_a_plan_come_from_cites_and_text():
    step = PlanStep(text="Follow tpl-0a1b2c3d and [mat-00001; proc-00001].", cites=["[safe-00001]", "mat-00001"])
    assert step_cited_ids(step) == ["safe-00001", "mat-00001", "tpl-0a1b2c3d", "proc-00001"]
    p = Plan(objective="x", materials=["tube (mat-00002)"], steps=[step], safety_notes=["gloves [safe-00002]"])
    assert plan_cited_ids(p) == ["safe-00001", "mat-00001", "tpl-0a1b2c3d", "proc-00001", "mat-00002", "safe-00002"]


def test_a_plan_using_exactly_the_gold_ids_scores_one():
    assert used_id_recall(EXAMPLE, PERFECT) == used_id_precision(EXAMPLE, PERFECT) == 1.0
    assert plan_citation_validity(EXAMPLE, PERFECT) == plan_citation_coverage(EXAMPLE, PERFECT) == 1.0
    assert planner_score(EXAMPLE, PERFECT) == 1.0 and planner_score(EXAMPLE, PERFECT, trace=[]) is True


def test_partial_plan_values():
    assert used_id_recall(EXAMPLE, PARTIAL) == pytest.approx(1 / 3)  # mat-00001 of three gold ids
    assert used_id_precision(EXAMPLE, PARTIAL) == 0.5  # safe-00001 is not needed here
    assert used_id_f1(EXAMPLE, PARTIAL) == pytest.approx(0.4)
    assert plan_citation_validity(EXAMPLE, PARTIAL) == pytest.approx(2 / 3)  # mat-09999 was never provided
    assert plan_citation_coverage(EXAMPLE, PARTIAL) == 0.5  # steps 1 and 2; step 4 cites only an invented id
    assert planner_score(EXAMPLE, PARTIAL) == pytest.approx(0.5 * 0.4 + 0.25 * 0.5 + 0.25 * 2 / 3)
    assert planner_score(EXAMPLE, PARTIAL, trace=[]) is False


def test_a_high_scoring_plan_with_an_invented_id_is_no_demo():
    invented = pred(PERFECT.plan, ["mat-00001", "proc-00001"], ["tpl-0a1b2c3d"], ["mat-09999"])
    assert planner_score(EXAMPLE, invented) == pytest.approx(0.5 + 0.25 + 0.25 * 0.75)
    assert planner_score(EXAMPLE, invented, trace=[]) is False


def test_no_plan_scores_zero_everywhere():
    failed = pred(None)
    for metric in (used_id_recall, used_id_precision, used_id_f1, plan_citation_validity, plan_citation_coverage,
                   planner_score):
        assert metric(EXAMPLE, failed) == 0.0
    assert planner_score(EXAMPLE, failed, trace=[]) is False


def test_edge_cases_of_recall_and_precision():
    no_gold = dspy.Example(gold_bullet_ids=[], gold_template_ids=[])
    uses_nothing = pred(plan(("Just do it.", [])))
    assert used_id_recall(no_gold, uses_nothing) == used_id_precision(no_gold, uses_nothing) == 1.0
    assert used_id_precision(EXAMPLE, uses_nothing) == 0.0 and used_id_recall(EXAMPLE, uses_nothing) == 0.0
    assert plan_citation_validity(EXAMPLE, uses_nothing) == 1.0 and plan_citation_coverage(EXAMPLE, uses_nothing) == 0


def test_feedback_names_missing_extra_and_invalid_ids_and_uncited_steps():
    out = planner_feedback(EXAMPLE, PARTIAL)
    assert out.score == pytest.approx(planner_score(EXAMPLE, PARTIAL))
    assert '[proc-00001] "Add a no-template control."' in out.feedback
    assert '[tpl-0a1b2c3d] "Routine PCR"' in out.feedback
    assert 'Used ids that do not fit these requirements: [safe-00001] "Use a fume hood."' in out.feedback
    assert "Invalid citations, never provided: mat-09999" in out.feedback
    assert "Steps 3, 4 cite no provided id" in out.feedback


def test_feedback_for_a_perfect_plan_and_for_no_plan():
    assert planner_feedback(EXAMPLE, PERFECT).feedback.startswith("score = 1.00")
    assert "Missed" not in planner_feedback(EXAMPLE, PERFECT).feedback
    failed = planner_feedback(EXAMPLE, pred(None))
    assert failed.score == 0.0 and "no plan was produced (LM failed)" in failed.feedback
