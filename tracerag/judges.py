"""Metrics an LM judges: ALCE-style citation recall and precision of a RAG answer, the usefulness of an
experience. Each judge call is a guarded stage (the breaker, the run's fault budget, a typed verdict), so
these live above the programs' LM machinery; the pure metrics in ``tracerag.metrics`` call no LM."""

from __future__ import annotations

import dspy

from .errors import InvalidValue
from .lm.calls import lm_of
from .metrics.citations import CHUNK_ID_PATTERN, extract_cited_ids, split_sentences
from .programs.guarded_step import Stages
from .signatures.experience import JudgeExperience
from .signatures.rag import VerifyGroundedness


def alce_citation_scores(pred, *, stages=None) -> tuple[float | None, float | None]:
    """ALCE-style citation recall and precision, judged by ``VerifyGroundedness`` (needs an LM).

    Recall: share of the answer's sentences whose cited chunks, together, support it. Precision: share
    of citations that matter: the chunk alone supports its sentence, or the sentence is supported and
    stops being supported without it. (None, None) without an LM, when the answer cites nothing, or
    when a judge call fails (an unknown score, not a zero; the first failure ends the judging).
    Costs one judge call per sentence plus up to two per citation of a multi-citation sentence.

    Each judge call is a guarded stage (``judge``: the breaker, the run's fault budget, a verdict that
    must be a bool): pass ``stages`` (a ``guarded_step.Stages``) to count its calls and fallbacks there.
    """
    texts = getattr(pred, "context_texts", None) or {}
    sentences = [(s, [c for c in extract_cited_ids(s, CHUNK_ID_PATTERN) if c in texts])
                 for s in split_sentences(pred.answer)]
    if dspy.settings.lm is None or not any(cites for _, cites in sentences):
        return None, None
    judge = dspy.Predict(VerifyGroundedness)
    stages = stages if stages is not None else Stages()

    class JudgeFailed(Exception):
        pass

    def verdict(out) -> bool:
        if not isinstance(out.grounded, bool):
            raise InvalidValue(f"grounded is {type(out.grounded).__name__}, not a bool")
        return out.grounded

    def supports(sentence: str, cites: list[str]) -> bool:
        if not cites:
            return False
        chunks = "\n\n".join(f"[{c}] {texts[c]}" for c in cites)
        grounded = stages.call("judge", judge, check=verdict, fallback="no citation recall or precision",
                               answer=sentence, cited_chunks=chunks)
        if grounded is None:
            raise JudgeFailed
        return grounded

    supported, relevant, citations = 0, 0, 0
    try:
        for sentence, cites in sentences:
            whole = supports(sentence, cites)
            supported += whole
            for c in cites:
                citations += 1
                if len(cites) == 1:
                    relevant += whole
                else:
                    relevant += supports(sentence, [c]) or (whole and not supports(sentence,
                                                                                   [x for x in cites if x != c]))
    except JudgeFailed:
        return None, None
    return supported / len(sentences), (relevant / citations if citations else None)


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
