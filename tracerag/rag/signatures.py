"""Signatures of SelfReflectiveRAG: grade chunks in batches, refine the query, answer with citations,
verify the answer against what it cites."""

from __future__ import annotations

from typing import Any

import dspy
from pydantic import BaseModel, Field

from ..lm.typed_decoding import Bound, bound


class ChunkGrade(BaseModel):
    """One graded chunk; each item of a batch answer is validated on its own, so one malformed item
    costs a re-grade of that chunk only."""

    id: str
    score: float = Field(ge=0.0, le=1.0)
    reason: str = ""


class GradeRelevance(dspy.Signature):
    """Grade how useful each chunk is for answering the question, from 0 (irrelevant) to 1 (directly
    answers it or gives the evidence needed). Judge each chunk on its own. Return one item per chunk,
    referencing the chunk by its id: {"id", "score", "reason"} with a reason of a few words."""

    question: str = dspy.InputField()
    chunks: str = dspy.InputField(desc="chunks, each headed by [chunk-id]")
    grades: list[dict[str, Any]] = dspy.OutputField(desc='[{"id": "...", "score": 0.0-1.0, "reason": "..."}]')


class RefineQuery(dspy.Signature):
    """The search for the question returned mostly irrelevant chunks. Write one better search query:
    more specific, using the terms a relevant passage would contain, steering away from what the
    rejected chunks are about."""

    question: str = dspy.InputField()
    previous_query: str = dspy.InputField()
    rejected_chunks: str = dspy.InputField(desc="short excerpts of chunks judged irrelevant")
    query: str = dspy.OutputField()


class AnswerWithCitations(dspy.Signature):
    """Answer the question using only the given chunks. End every sentence with the ids of the
    chunks that support it, in square brackets, e.g. "... was lower [12345#0][12345#2]." Never cite
    an id that is not listed. Do not state anything listed under avoid_claims. For a yes/no
    question also give the verdict: yes, no or maybe."""

    question: str = dspy.InputField()
    chunks: str = dspy.InputField(desc="the evidence, each chunk headed by [chunk-id]")
    avoid_claims: list[str] = dspy.InputField(desc="claims found unsupported in an earlier answer; may be empty")
    answer: str = dspy.OutputField(desc="sentences each ending with [chunk-id] citations")
    verdict: str = dspy.OutputField(desc="yes, no or maybe for a yes/no question; else empty")


class VerifyGroundedness(dspy.Signature):
    """Check the answer claim by claim against the chunks it cites. grounded is true only when every
    claim is supported by the cited chunks; list each unsupported claim, and say briefly what
    evidence would be needed."""

    answer: str = dspy.InputField()
    cited_chunks: str = dspy.InputField(desc="the chunks the answer cites, each headed by [chunk-id]")
    grounded: bool = dspy.OutputField()
    unsupported_claims: list[str] = dspy.OutputField(desc="claims the chunks do not support; empty when grounded")
    missing_evidence: str = dspy.OutputField(desc="what evidence would settle the unsupported claims; may be empty")


# What a model decoding against the schema may write (``lm.typed_decoding``): what each field's description asks
# for, within the reply's token cap (a free string is where a small model loops until the cap, and a reply cut
# there does not parse). A batch grades at most 10 chunks (``grade_batch``); each grade is an open object, so a
# model may still write on inside one.
VERDICTS = ["yes", "no", "maybe", ""]
bound(GradeRelevance, grades=Bound(max_items=10))
bound(RefineQuery, query=Bound(max_length=300))
bound(AnswerWithCitations, answer=Bound(max_length=1000), verdict=Bound(choices=lambda inputs: VERDICTS))
bound(VerifyGroundedness, unsupported_claims=Bound(max_items=5, max_length=300),
      missing_evidence=Bound(max_length=300))
