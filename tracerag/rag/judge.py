"""The RAG evaluation's LM judge: ALCE-style citation recall and precision of an answer. Each judge call is a
guarded stage (the breaker, the run's fault budget, a typed verdict); the pure metrics call no LM."""

from __future__ import annotations

import dspy

from ..errors import InvalidValue
from ..metrics.citations import CHUNK_ID_PATTERN, extract_cited_ids, split_sentences
from ..programs.guarded_step import Stages
from .signatures import VerifyGroundedness


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
