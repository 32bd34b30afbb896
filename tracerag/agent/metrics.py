"""SearchAgent metrics: pure functions of (example, prediction), no LM.

A prediction carries ``answer`` (the inner text of ``<answer>``, cites kept), ``ids_cited`` and
``returned_ids`` (every snippet id the tools returned in the run). PubMedQA examples carry
``final_decision`` (yes/no/maybe) and ``gold_doc_ids`` (the question's own PMID).
"""

from __future__ import annotations

import html
import re

from ..metrics.citations import citation_coverage as shared_coverage
from ..metrics.citations import citation_validity as shared_validity
from ..metrics.citations import split_sentences
from ..tools.cite_tags import extract_citations

__all__ = ["agent_feedback", "agent_score", "answer_decision", "citation_coverage", "citation_validity",
           "decision_accuracy", "gold_found"]

_CITE = re.compile(r"<cite\b[^<>]*>(.*?)(?:</cite\s*>|(?=<cite\b)|$)", re.S)
_TAG = re.compile(r"<[^<>]*>")
_LEADING_DECISION = re.compile(r"^\W*(yes|no|maybe)\b", re.I)
_DECISION = re.compile(r"\b(yes|no|maybe)\b(?=\s*[,.;:!])", re.I)
_ANY_ID = r"[^\s,;\[\]()]+"


def _plain(answer: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", answer or "")).split())


def answer_decision(answer: str | None) -> str | None:
    """yes/no/maybe when the answer opens with one (as the policy is told to), else one standing alone
    before punctuation in its first sentence ("Based on these trials, no."); None when it takes no side."""
    text = _plain(answer or "")
    if not text:
        return None
    match = _LEADING_DECISION.match(text) or _DECISION.search((split_sentences(text) or [text])[0])
    return match.group(1).lower() if match else None


def decision_accuracy(example, pred) -> float | None:
    """1 when the answer's decision matches the gold one; None when the example has no gold decision."""
    gold = (getattr(example, "final_decision", None) or "").lower()
    if not gold:
        return None
    return float(answer_decision(pred.answer) == gold)


def citation_validity(pred) -> float:
    """Share of cited ids that a tool returned in this run, the invented ones dropped from the answer
    (``invalid_cited_ids``) counted (1.0 when nothing is cited)."""
    return shared_validity([*pred.ids_cited, *(getattr(pred, "invalid_cited_ids", None) or [])], pred.returned_ids)


def citation_coverage(pred) -> float:
    """Share of answer sentences carrying a citation of a returned id (0.0 for no answer)."""
    if not pred.answer:
        return 0.0

    def bracketed(match: re.Match) -> str:
        ids = [i for c in extract_citations(match.group(0)) for i in c.ids]
        return f"{match.group(1)} [{', '.join(ids)}]"

    text = _TAG.sub(" ", _CITE.sub(bracketed, pred.answer))
    return shared_coverage(split_sentences(" ".join(text.split())), set(pred.returned_ids), _ANY_ID)


def gold_found(example, pred) -> float | None:
    """Share of the gold documents that the tools returned (did the search find the evidence?)."""
    gold = set(getattr(example, "gold_doc_ids", None) or [])
    if not gold:
        return None
    return len(gold & set(pred.returned_ids)) / len(gold)


def agent_score(example, pred, trace=None) -> float | bool:
    """Compile metric. Bootstrapping (``trace`` set): a strict bool, the decision right (when there is
    a gold one) with at least one citation and none invalid. Otherwise the mean of decision accuracy,
    citation validity and coverage."""
    accuracy = decision_accuracy(example, pred)
    validity = citation_validity(pred)
    if trace is not None:
        return accuracy in (None, 1.0) and bool(pred.ids_cited) and validity == 1.0
    parts = [validity, citation_coverage(pred)] + ([accuracy] if accuracy is not None else [])
    return sum(parts) / len(parts)


def agent_feedback(gold, pred, trace=None, pred_name=None, pred_trace=None):
    """agent_score with a diagnosis for GEPA: why the run stopped, the wrong decision, bad citations."""
    import dspy

    score = agent_score(gold, pred)
    lines = [f"score = {score:.2f}; the run ended: {pred.stop_reason}; tool calls: {pred.tool_calls}"]
    if pred.stop_reason != "answered":
        lines.append("The run ended without an <answer>; after the evidence is in, answer within the call limits.")
    if decision_accuracy(gold, pred) == 0.0:
        lines.append(f"The answer's decision was {answer_decision(pred.answer)!r}; the correct one is "
                     f"{gold.final_decision!r}. Start a yes/no answer with Yes, No or Maybe.")
    invalid = [i for i in pred.ids_cited if i not in set(pred.returned_ids)]
    if invalid:
        lines.append(f"Cited ids no tool returned: {invalid}. Cite only snippet ids from a tool output.")
    if pred.answer and not pred.ids_cited:
        lines.append('The answer cites nothing; wrap each claim in <cite id="ID">...</cite>.')
    if pred.hallucinated_outputs:
        lines.append("The reply wrote its own <tool_output>; stop after </call_tool> and wait for the system.")
    if gold_found(gold, pred) == 0.0:
        lines.append("The searches never returned the abstract that answers the question; use other keywords.")
    return dspy.Prediction(score=score, feedback="\n".join(lines))
