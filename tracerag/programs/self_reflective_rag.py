"""SelfReflectiveRAG: question -> graded context -> cited answer -> groundedness check.

retrieve top-k chunks -> grade them in batches of at most 10 per LM call -> keep score > threshold
-> quality = kept / retrieved -> if quality < min_quality and rounds remain: refine the query and
retrieve again (each round independent, kept chunks accumulate) -> answer citing [chunk-id] ->
verify the answer against what it cites -> if not grounded: one regeneration told to avoid the
unsupported claims. LM calls per question: at most (ceil(k/10) + 1) per round + 2 when every grading
item parses (a malformed item is re-graded alone, one call each).

Failure paths (an app never sees an error):
- no LM: retrieval only; the answer is the "need more context" answer and ``hint="no_lm"``;
- nothing kept: the "need more context" answer, no answer call;
- a grading batch that fails: each of its chunks graded alone; a chunk that still fails scores 0;
- RefineQuery fails: the rounds stop there;
- the answer or the verification fails: "need more context" naming what went wrong.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field

import dspy
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..metrics.citations import CHUNK_ID_PATTERN, extract_cited_ids
from ..retrievers.hybrid import HybridRetriever, ScoredChunk
from ..signatures.rag import AnswerWithCitations, ChunkGrade, GradeRelevance, RefineQuery, VerifyGroundedness

__all__ = ["NEED_MORE_CONTEXT", "RAGConfig", "SelfReflectiveRAG", "cited_ids"]

logger = logging.getLogger(__name__)

NEED_MORE_CONTEXT = "I need more context to answer this reliably."
def cited_ids(answer: str) -> list[str]:
    """The chunk ids an answer cites as ``[doc#n]`` (several may share brackets), first appearance first."""
    return extract_cited_ids(answer or "", CHUNK_ID_PATTERN)


class RAGConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    k: int = Field(10, ge=1, le=100)  # chunks retrieved per round
    grade_batch: int = Field(10, ge=1, le=10)  # chunks per GradeRelevance call
    threshold: float = Field(0.7, ge=0.0, le=1.0)  # keep score > threshold
    min_quality: float = Field(0.5, ge=0.0, le=1.0)  # refine when kept / retrieved is below this
    max_rounds: int = Field(2, ge=1, le=5)
    max_context_chunks: int = Field(10, ge=1, le=50)  # best kept chunks handed to the answer


@dataclass
class _Run:
    """What one question's run accumulates; becomes the Prediction."""

    queries: list[str] = field(default_factory=list)
    retrieved: list[list[str]] = field(default_factory=list)  # per round
    grades: dict[str, ChunkGrade] = field(default_factory=dict)
    chunks: dict[str, ScoredChunk] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)
    lm_calls: int = 0
    regraded: int = 0


class SelfReflectiveRAG(dspy.Module):
    """Answer from a chunk bank with graded retrieval and verified, cited answers."""

    def __init__(self, retriever: HybridRetriever, config: RAGConfig | dict | None = None):
        super().__init__()
        self.retriever = retriever
        self.config = config if isinstance(config, RAGConfig) else RAGConfig(**(config or {}))
        self.grade = dspy.Predict(GradeRelevance)
        self.refine = dspy.Predict(RefineQuery)
        self.answer = dspy.Predict(AnswerWithCitations)
        self.verify = dspy.Predict(VerifyGroundedness)

    def forward(self, question: str) -> dspy.Prediction:
        started = time.perf_counter()
        run = _Run()
        if dspy.settings.lm is None:
            self._retrieve(question, run)
            return self._result(run, NEED_MORE_CONTEXT, hint="no_lm", started=started)
        query = question
        for number in range(1, self.config.max_rounds + 1):
            retrieved = self._retrieve(query, run)
            self._grade(question, retrieved, run)
            kept = [c.id for c in retrieved if run.grades[c.id].score > self.config.threshold]
            run.kept += [c for c in kept if c not in run.kept]
            quality = len(kept) / len(retrieved) if retrieved else 0.0
            if quality >= self.config.min_quality or number == self.config.max_rounds:
                break
            refined = self._refine(question, query, [c for c in retrieved if c.id not in kept], run)
            if not refined or refined == query:
                break
            query = refined
        if not run.kept:
            return self._result(run, NEED_MORE_CONTEXT, hint="nothing_relevant", started=started,
                                missing="no retrieved passage was judged relevant to the question")
        return self._answer_and_verify(question, run, started)

    # -- stages ----------------------------------------------------------------------------------

    def _retrieve(self, query: str, run: _Run) -> list[ScoredChunk]:
        chunks = self.retriever.search([query], k=self.config.k)[0]
        run.queries.append(query)
        run.retrieved.append([c.id for c in chunks])
        run.chunks.update({c.id: c for c in chunks})
        return chunks

    def _grade(self, question: str, chunks: list[ScoredChunk], run: _Run) -> None:
        """Batches of ``grade_batch``; every item validated alone; the unparsed ones re-graded alone."""
        todo = [c for c in chunks if c.id not in run.grades]  # a chunk seen in an earlier round keeps its grade
        size = self.config.grade_batch
        for start in range(0, len(todo), size):
            batch = todo[start : start + size]
            grades = self._grade_call(question, batch, run)
            for chunk in batch:
                if chunk.id not in grades and len(batch) > 1:  # a batch of one was that call already
                    run.regraded += 1
                    grades.update(self._grade_call(question, [chunk], run))
                run.grades[chunk.id] = grades.get(chunk.id) or ChunkGrade(id=chunk.id, score=0.0,
                                                                           reason="could not be graded")

    def _grade_call(self, question: str, batch: list[ScoredChunk], run: _Run) -> dict[str, ChunkGrade]:
        run.lm_calls += 1
        wanted = {c.id for c in batch}
        try:
            items = self.grade(question=question, chunks=format_chunks(batch)).grades or []
        except Exception as exc:
            logger.warning("GradeRelevance failed for %d chunks (%s: %s)", len(batch), type(exc).__name__, exc)
            return {}
        grades = {}
        for item in items:
            try:
                grade = ChunkGrade.model_validate(item)
            except ValidationError:
                continue
            if grade.id in wanted:
                grades.setdefault(grade.id, grade)
        return grades

    def _refine(self, question: str, query: str, rejected: list[ScoredChunk], run: _Run) -> str | None:
        run.lm_calls += 1
        excerpts = "\n".join(f"- {_text(c)[:200]}" for c in rejected[:5])
        try:
            return (self.refine(question=question, previous_query=query, rejected_chunks=excerpts).query or "").strip()
        except Exception as exc:
            logger.warning("RefineQuery failed (%s: %s); answering from what was kept", type(exc).__name__, exc)
            return None

    def _answer_and_verify(self, question: str, run: _Run, started: float) -> dspy.Prediction:
        context = sorted(run.kept, key=lambda c: -run.grades[c].score)[: self.config.max_context_chunks]
        evidence = [run.chunks[c] for c in context]
        try:
            run.lm_calls += 1
            out = self.answer(question=question, chunks=format_chunks(evidence), avoid_claims=[])
            answer, verdict = (out.answer or "").strip(), _verdict(out.verdict)
            run.lm_calls += 1
            check = self.verify(answer=answer, cited_chunks=format_chunks(_cited_chunks(answer, evidence)))
        except Exception as exc:
            logger.warning("answering failed (%s: %s)", type(exc).__name__, exc)
            return self._result(run, NEED_MORE_CONTEXT, hint="lm_failed", started=started, context=context,
                                missing=f"the answer could not be produced ({type(exc).__name__})")
        unsupported = [c for c in (check.unsupported_claims or []) if isinstance(c, str) and c.strip()]
        if check.grounded and not unsupported:
            return self._result(run, answer, verdict=verdict, grounded=True, started=started, context=context)
        try:  # one regeneration, told which claims to leave out; not verified again (the call budget)
            run.lm_calls += 1
            again = self.answer(question=question, chunks=format_chunks(evidence), avoid_claims=unsupported)
            regenerated = (again.answer or "").strip()
        except Exception as exc:
            logger.warning("regeneration failed (%s: %s)", type(exc).__name__, exc)
            regenerated = ""
        if regenerated and cited_ids(regenerated) and set(cited_ids(regenerated)) <= set(context):
            return self._result(run, regenerated, verdict=_verdict(again.verdict) or verdict, grounded=None,
                                hint="regenerated", started=started, context=context, unsupported=unsupported)
        missing = (check.missing_evidence or "").strip() or "; ".join(unsupported) or "supporting evidence"
        return self._result(run, NEED_MORE_CONTEXT, hint="not_grounded", grounded=False, started=started,
                            context=context, unsupported=unsupported, missing=missing)

    # -- result ----------------------------------------------------------------------------------

    def _result(self, run: _Run, answer: str, *, started: float, hint: str | None = None, verdict: str = "",
                grounded: bool | None = None, context: list[str] = (), unsupported: list[str] = (),
                missing: str = "") -> dspy.Prediction:
        if answer == NEED_MORE_CONTEXT and missing:
            answer = f"{NEED_MORE_CONTEXT} Missing: {missing}"
        cited = cited_ids(answer)
        return dspy.Prediction(
            answer=answer, verdict=verdict, grounded=grounded, hint=hint,
            retrieved_ids=list(dict.fromkeys(c for ids in run.retrieved for c in ids)),
            retrieved_per_round=run.retrieved, kept_ids=list(run.kept), context_ids=list(context),
            cited_ids=cited, invalid_cited_ids=[c for c in cited if c not in context],
            grades={c: g.model_dump() for c, g in run.grades.items()},
            unsupported_claims=list(unsupported), queries=run.queries, rounds=len(run.retrieved),
            lm_calls=run.lm_calls, regraded=run.regraded, seconds=round(time.perf_counter() - started, 4),
            chunk_doc_ids={c: chunk.doc_id for c, chunk in run.chunks.items()},
            context_texts={c: _text(run.chunks[c]) for c in context},
        )

    def lm_call_budget(self) -> int:
        """The most LM calls a question can take when every grading item parses."""
        per_round = math.ceil(self.config.k / self.config.grade_batch) + 1
        return per_round * self.config.max_rounds + 2


def _text(chunk: ScoredChunk) -> str:
    return str(chunk.metadata.get("text") or "")


def format_chunks(chunks: list[ScoredChunk]) -> str:
    return "\n\n".join(f"[{c.id}] {_text(c)}" for c in chunks)


def _cited_chunks(answer: str, evidence: list[ScoredChunk]) -> list[ScoredChunk]:
    """The chunks the answer cites; all of the evidence when it cites none (so verify still sees it)."""
    cited = set(cited_ids(answer))
    return [c for c in evidence if c.id in cited] or evidence


def _verdict(value) -> str:
    word = str(value or "").strip().lower().split()
    return word[0].strip(".,;:!") if word and word[0].strip(".,;:!") in ("yes", "no", "maybe") else ""
