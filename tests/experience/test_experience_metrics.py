"""Experience metrics on hand-made predictions."""

import dspy
import pytest

from tracerag.experience import judge
from tracerag.experience import metrics as m


def example(relevant=("a", "b", "c")):
    return dspy.Example(question="q", relevant_task_ids=list(relevant), family="fam")


def pred(rounds, used=(), experience="Use OCR."):
    return dspy.Prediction(task_ids=rounds, used_task_ids=list(used), experience=experience, queries=[["q"]])


def test_ranking_metrics_read_the_last_round():
    p = pred([["a", "b"], ["x", "a", "y", "b", "z", "c"]])
    assert m.hit_at_k(example(), p, 1) == 0.0 and m.hit_at_k(example(), p, 2) == 1.0
    assert m.reciprocal_rank(example(), p, 5) == 0.5
    assert m.recall_at_k(example(), p, 5) == pytest.approx(2 / 3)
    assert m.recall_at_k(example(), p, 2) == 0.5  # capped: min(k, |relevant|) = 2
    assert m.hit_at_k(example(), pred([]), 5) == 0.0 and m.reciprocal_rank(example(), pred([]), 5) == 0.0


def test_used_precision_and_score():
    p = pred([["a", "x", "b"]], used=["a", "x"])
    assert m.used_precision(example(), p) == 0.5
    assert m.used_precision(example(), pred([["a"]], used=[])) is None
    assert m.experience_score(example(), p) == pytest.approx(0.5 * (2 / 3) + 0.5 * 0.5)
    assert m.experience_score(example(), p, trace=[]) is False
    assert m.experience_score(example(), pred([["a"]], used=["a"]), trace=[]) is True
    empty = pred([["a", "b", "c"]], used=["a"], experience="")
    assert m.experience_score(example(), empty) == 0.5  # retrieval half only


def test_feedback_names_what_went_wrong():
    fb = m.experience_feedback(example(), pred([["x", "y"]], used=["x"]))
    assert fb.score == 0.0
    assert "No retrieved task is from fam" in fb.feedback and "unrelated tasks ['x']" in fb.feedback


def test_usefulness_needs_an_lm_and_a_reference(fake_lm):
    ex = example()
    assert judge.usefulness(ex, pred([["a"]])) is None  # no LM configured
    fake_lm()
    assert judge.usefulness(ex, pred([["a"]])) is None  # no reference strategy
    ex.reference_strategy = "OCR, then add up."
    assert judge.usefulness(ex, pred([["a"]])) == 0.75
    assert judge.usefulness(ex, pred([["a"]], experience="")) == 0.0
