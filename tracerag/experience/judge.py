"""The experience evaluation's LM judge: how useful a distilled experience is for its task. The judge call is a
guarded stage (the breaker, the run's fault budget, a typed verdict)."""

from __future__ import annotations

import dspy

from ..lm.calls import lm_of
from ..programs.guarded_step import Stages
from .signatures import JudgeExperience

_judge = dspy.Predict(JudgeExperience)


def usefulness(example, pred, trace=None, *, stages=None) -> float | None:
    """LM-judged usefulness of the experience in [0, 1] against how a relevant task was really solved.

    Needs a configured LM and ``example.reference_strategy``; returns None without them, 0 for an
    empty experience, and None (with a warning) when the judge fails. The judge is a guarded stage
    (``judge``): pass ``stages`` (a ``guarded_step.Stages``) to count its calls and fallbacks there.
    """
    experience = (getattr(pred, "experience", "") or "").strip()
    reference = getattr(example, "reference_strategy", None)
    if lm_of(_judge) is None or not reference:
        return None
    if not experience:
        return 0.0
    value = (stages if stages is not None else Stages()).call(
        "judge", _judge, check=lambda out: float(out.usefulness), fallback="no usefulness score",
        question=example.question, reference_strategy=reference, experience=experience)
    return None if value is None else min(1.0, max(0.0, value))
