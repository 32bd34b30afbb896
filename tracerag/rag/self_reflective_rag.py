"""SelfReflectiveRAG: question -> graded context -> cited answer -> groundedness check.

retrieve top-k chunks -> grade them in batches of at most 10 per LM call -> keep score > threshold
-> quality = kept / retrieved -> if quality < min_quality and rounds remain: refine the query and
retrieve again (each round independent, kept chunks accumulate) -> answer citing [chunk-id] ->
verify the answer against what it cites -> if not grounded: one regeneration told to avoid the
unsupported claims.

Every LM stage is a guarded step (``guarded_step.Stages``: the predictor's own LM, the circuit
breaker, one-line warnings): grade, refine, answer, verify, regenerate. LM calls per question never
exceed ``lm_call_budget()`` = 2 * ceil(k / grade_batch) * max_rounds + (max_rounds - 1) + 3: per
round one grading call per batch and at most one re-grading call per batch (the batch's malformed
items together), a refinement between rounds, then answer, verify and one regeneration.

Failure paths (an app never sees an error, and an LM failure is never worse than no LM):
- no LM: retrieval only, and an extractive answer: the leading sentence of each of the top 3 chunks,
  each cited ``[chunk-id]``; ``verdict=""`` (nothing decided), ``grounded=None``, ``hint="no_lm"``;
- a grading call that fails (transport error, timeout, a reply with no usable grade): the whole
  question takes the no-LM result, with ``hint=Hint.LM_FAILED`` and ``lm_fallbacks=["grade"]`` (a failed
  call is never retried chunk by chunk); the malformed items of a reply that otherwise parses are
  re-graded together in one more call, and score 0 if they are malformed again;
- RefineQuery fails: the rounds stop there and the answer comes from what was kept;
- the answer fails, or cites nothing of its context, or cites anything outside it (a citation item
  that is not a context id, ``[real#0, FORGED4]`` too), or is over
  ``MAX_ANSWER_CHARS`` (``reply_limits``: every stage's reply is held to its caps): the extractive answer
  over the kept chunks (best graded first), ``hint=Hint.LM_FAILED``;
- the verification fails: the answer is kept, unverified (``grounded=None``, ``hint=Hint.LM_FAILED``);
- the regeneration fails: the "need more context" answer naming the missing evidence
  (``hint=Hint.NOT_GROUNDED``);
- nothing kept: the "need more context" answer, no answer call (``hint=Hint.NOTHING_RELEVANT``);
- a question that says nothing (empty, blanks, punctuation): no LM call, the no-LM result with
  ``hint="empty_input"`` and ``lm_skipped=["grade"]``.
Every prediction carries ``hint``, ``lm_fallbacks`` (the stages that fell back, in order; [] with no
LM: no LM is not a failure), ``lm_errors`` and ``lm_calls``.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import dspy
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..documents.hybrid import HybridRetriever, ScoredChunk
from ..embedding.awaited_rows import with_embeddings
from ..errors import InvalidType, InvalidValue
from ..hints import Hint
from ..lm.calls import lm_of
from ..lm.reply_limits import MAX_ANSWER_CHARS, MAX_IDS, MAX_QUERY_CHARS, MAX_SHORT_CHARS, ReplyRejected, prose
from ..metrics.citations import CHUNK_ID_PATTERN, extract_cited_ids, is_citable, keep_citations, render_citation
from ..programs.guarded_step import Pipeline, Stages, lm_step, work
from ..programs.spans import CORPUS_SEARCH
from ..stores.cosine_bank import CosineBank
from ..stores.stores import store_and_embedder
from ..stores.vector_store import VectorStore
from .result import RAGResult
from .signatures import AnswerWithCitations, ChunkGrade, GradeRelevance, RefineQuery, VerifyGroundedness

__all__ = ["EXTRACTIVE_CHUNKS", "NEED_MORE_CONTEXT", "RAGConfig", "SelfReflectiveRAG", "cited_ids",
           "extractive_answer"]

NEED_MORE_CONTEXT = "I need more context to answer this reliably."
EXTRACTIVE_CHUNKS = 3  # chunks quoted by the extractive (no-LM and fallback) answer


def cited_ids(answer: str) -> list[str]:
    """The chunk ids an answer cites as ``[doc#n]`` (several may share brackets), first appearance first,
    read with the citation grammar of ``metrics.citations`` (any citable document id: ``[指南1#0]``)."""
    return extract_cited_ids(answer or "", CHUNK_ID_PATTERN)


class RAGConfig(BaseModel):
    """SelfReflectiveRAG's settings: how much it retrieves and grades, what it keeps, how often it refines."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    k: int = Field(10, ge=1, le=100)
    """Chunks retrieved per round."""
    grade_batch: int = Field(10, ge=1, le=10)
    """Chunks per GradeRelevance call."""
    threshold: float = Field(0.7, ge=0.0, le=1.0)
    """Keep score > threshold."""
    min_quality: float = Field(0.5, ge=0.0, le=1.0)
    """Refine when kept / retrieved is below this."""
    max_rounds: int = Field(2, ge=1, le=5)
    """Retrieval rounds at most (a round refines the query when too little was kept)."""
    max_context_chunks: int = Field(10, ge=1, le=50)
    """Best kept chunks handed to the answer."""


@dataclass
class _Run:
    """What one question's run accumulates; becomes the Prediction."""

    queries: list[str] = field(default_factory=list)
    retrieved: list[list[str]] = field(default_factory=list)  # per round
    grades: dict[str, ChunkGrade] = field(default_factory=dict)
    chunks: dict[str, ScoredChunk] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)
    regraded: int = 0
    stages: Stages = field(default_factory=Stages)

    def first_round(self) -> _Run:
        """The retrieval of the question as asked, and nothing the LM decided: the no-LM run."""
        ids = self.retrieved[:1]
        chunks = {c: self.chunks[c] for round_ids in ids for c in round_ids}
        return _Run(queries=self.queries[:1], retrieved=ids, chunks=chunks, regraded=self.regraded,
                    stages=self.stages)


class _GradingFailed(Exception):
    """A grading call fell back: the question takes the no-LM result."""


class SelfReflectiveRAG(dspy.Module):
    """Answer from a chunk bank with graded retrieval and verified, cited answers.

    ``retriever`` is a HybridRetriever, or a chunk store it is built on: a
    :class:`~tracerag.stores.vector_store.VectorStore` (numpy bank or Milvus), a CosineBank or a store
    URI, searched with ``embedder`` (default: the bank's own, else the configured one).

    The prediction: ``answer``, ``verdict`` (yes/no/maybe, "" when nothing was decided), ``grounded``
    (True verified, None unverified, False unsupported), ``hint`` (None, ``no_lm``, ``empty_input``, ``lm_failed``,
    ``nothing_relevant``, ``regenerated``, ``not_grounded``), ``lm_fallbacks`` (stages that fell back:
    grade, refine, answer, verify, regenerate), ``lm_errors``, ``lm_calls``, and the ids retrieved,
    kept, given as context and cited.
    """

    def __init__(self, retriever: HybridRetriever | VectorStore | CosineBank | str | Path,
                 config: RAGConfig | dict | None = None, *, embedder=None):
        super().__init__()
        if isinstance(retriever, VectorStore | CosineBank | str | Path):  # a store (or its URI): hybrid search
            if embedder is None and not isinstance(retriever, CosineBank):
                from ..config import get_embedder

                embedder = get_embedder()
            store, embedder = store_and_embedder(retriever, embedder)
            retriever = HybridRetriever(store, embedder=embedder)
        self.retriever = retriever
        self.config = config if isinstance(config, RAGConfig) else RAGConfig(**(config or {}))
        self.grade = dspy.Predict(GradeRelevance)
        self.refine = dspy.Predict(RefineQuery)
        self.answer = dspy.Predict(AnswerWithCitations)
        self.verify = dspy.Predict(VerifyGroundedness)

    def forward(self, question: str) -> dspy.Prediction:
        """Answer a question from graded passages, citing them, and check the answer is grounded in them.

        Args:
            question: the question.

        Returns:
            A ``dspy.Prediction`` with the fields of :class:`~tracerag.rag.result.RAGResult`: ``answer`` (citing
            ``[chunk-id]``s), ``verdict``, ``grounded`` (True, False or None: not verified), ``hint``, the ids
            retrieved, kept, given as context and cited, the grades, the LM's outcome and ``seconds``.

        Example:
            >>> program = tracerag.build("rag")
            >>> program(question="Do statins reduce the risk of stroke?").answer
        """
        run = _Run(stages=Stages(subject=question))
        return run.stages.run(self._pipeline(question, run))

    async def aforward(self, question: str) -> dspy.Prediction:
        """``forward`` for ``await program.acall(...)``: LM stages through the LM's async path, the
        corpus search in a worker thread (a remote embedder's query row awaited first, holding no
        thread); the same prediction."""
        run = _Run(stages=Stages(subject=question))
        return await run.stages.arun(self._pipeline(question, run))

    def _pipeline(self, question: str, run: _Run) -> Pipeline:
        started = time.perf_counter()
        if lm_of(self.grade) is None:
            yield from self._retrieve(question, run)
            return self._extractive_result(run, Hint.NO_LM, started)
        query = question
        try:
            for number in range(1, self.config.max_rounds + 1):
                retrieved = yield from self._retrieve(query, run)
                yield from self._grade(question, retrieved, run)
                kept = [c.id for c in retrieved if run.grades[c.id].score > self.config.threshold]
                run.kept += [c for c in kept if c not in run.kept]
                quality = len(kept) / len(retrieved) if retrieved else 0.0
                if quality >= self.config.min_quality or number == self.config.max_rounds:
                    break
                refined = yield from self._refine(question, query, [c for c in retrieved if c.id not in kept], run)
                if not refined or refined == query:
                    break
                query = refined
        except _GradingFailed:
            return self._extractive_result(run.first_round(), run.stages.hint, started)
        if not run.kept:
            return self._result(run, NEED_MORE_CONTEXT, hint=Hint.NOTHING_RELEVANT, started=started,
                                missing="no retrieved passage was judged relevant to the question")
        return (yield from self._answer_and_verify(question, run, started))

    # -- stages ----------------------------------------------------------------------------------

    @staticmethod
    def _call(run: _Run, stage: str, predictor, **kwargs) -> Pipeline:
        """A guarded stage (``lm_step``); a stage whose predictor has no LM (while grading had one) falls
        back, recorded."""
        if lm_of(predictor) is None:
            run.stages.fell_back(stage, "no LM for this stage")
            return None
        return (yield lm_step(stage, predictor, **kwargs))

    def _search(self, query: str) -> list[ScoredChunk]:
        return self.retriever.search([query], k=self.config.k)[0]

    async def _asearch(self, query: str) -> list[ScoredChunk]:
        return await with_embeddings(getattr(self.retriever, "embedder", None), [query], self._search, query)

    def _retrieve(self, query: str, run: _Run) -> Pipeline:
        chunks = yield work(self._search, query, afn=self._asearch, span=CORPUS_SEARCH,
                            inputs={"query": query, "k": self.config.k}, outputs=_search_outputs)
        run.queries.append(query)
        run.retrieved.append([c.id for c in chunks])
        run.chunks.update({c.id: c for c in chunks})
        return chunks

    def _grade(self, question: str, chunks: list[ScoredChunk], run: _Run) -> Pipeline:
        """Batches of ``grade_batch``, every item validated on its own; a batch's malformed or missing
        items are re-graded together in one more call, and score 0 if still malformed. A call that
        fails (or a first reply with no usable grade at all) raises ``_GradingFailed``."""
        todo = [c for c in chunks if c.id not in run.grades]  # a chunk seen in an earlier round keeps its grade
        size = self.config.grade_batch
        for start in range(0, len(todo), size):
            batch = todo[start : start + size]
            grades = yield from self._grade_call(question, batch, run, require_one=True)
            missing = [c for c in batch if c.id not in grades]
            if missing:  # never the whole batch: a reply with no usable grade is a failed call
                run.regraded += len(missing)
                grades.update((yield from self._grade_call(question, missing, run, require_one=False)))
            for chunk in batch:
                run.grades[chunk.id] = grades.get(chunk.id) or ChunkGrade(id=chunk.id, score=0.0,
                                                                           reason="could not be graded")

    def _grade_call(self, question: str, batch: list[ScoredChunk], run: _Run, *, require_one: bool) -> Pipeline:
        grades = yield from self._call(run, "grade", self.grade, check=_grades_for({c.id for c in batch}, require_one),
                                       fallback="answering like without an LM", question=question,
                                       chunks=format_chunks(batch))
        if grades is None:
            raise _GradingFailed
        return grades

    def _refine(self, question: str, query: str, rejected: list[ScoredChunk], run: _Run) -> Pipeline:
        excerpts = "\n".join(f"- {_text(c)[:200]}" for c in rejected[:5])
        return (yield from self._call(run, "refine", self.refine, check=_refined_query,
                                      fallback="answering from what was kept", question=question,
                                      previous_query=query, rejected_chunks=excerpts))

    def _answer_and_verify(self, question: str, run: _Run, started: float) -> Pipeline:
        context = sorted(run.kept, key=lambda c: -run.grades[c].score)[: self.config.max_context_chunks]
        evidence = [run.chunks[c] for c in context]
        answered = yield from self._call(run, "answer", self.answer, check=_cited_answer(context),
                                         fallback="answering with the kept chunks' leading sentences",
                                         question=question, chunks=format_chunks(evidence), avoid_claims=[])
        if answered is None:
            return self._result(run, extractive_answer(evidence), hint=Hint.LM_FAILED, started=started, context=context)
        answer, verdict = answered
        checked = yield from self._call(run, "verify", self.verify, check=_verification,
                                        fallback="keeping the unverified answer", answer=answer,
                                        cited_chunks=format_chunks(_cited_chunks(answer, evidence)))
        if checked is None:  # an answer is never thrown away because only its check failed
            return self._result(run, answer, verdict=verdict, grounded=None, hint=Hint.LM_FAILED, started=started,
                                context=context)
        grounded, unsupported, missing = checked
        if grounded and not unsupported:
            return self._result(run, answer, verdict=verdict, grounded=True, hint=run.stages.hint, started=started,
                                context=context)
        # one regeneration, told which claims to leave out; not verified again (the call budget)
        again = yield from self._call(run, "regenerate", self.answer, check=_cited_answer(context),
                                      fallback="answering that more context is needed", question=question,
                                      chunks=format_chunks(evidence), avoid_claims=unsupported)
        if again is not None:
            return self._result(run, again[0], verdict=again[1] or verdict, grounded=None, hint=Hint.REGENERATED,
                                started=started, context=context, unsupported=unsupported)
        missing = missing or "; ".join(unsupported) or "supporting evidence"
        return self._result(run, NEED_MORE_CONTEXT, hint=Hint.NOT_GROUNDED, grounded=False, started=started,
                            context=context, unsupported=unsupported, missing=missing)

    # -- result ----------------------------------------------------------------------------------

    def _extractive_result(self, run: _Run, hint: str, started: float) -> dspy.Prediction:
        """The no-LM result: the first round's top chunks quoted and cited, nothing decided."""
        context = (run.retrieved or [[]])[0][:EXTRACTIVE_CHUNKS]
        answer = extractive_answer([run.chunks[c] for c in context]) or NEED_MORE_CONTEXT
        return self._result(run, answer, hint=hint, started=started, context=context)

    def _result(self, run: _Run, answer: str, *, started: float, hint: str | None = None, verdict: str = "",
                grounded: bool | None = None, context: list[str] = (), unsupported: list[str] = (),
                missing: str = "") -> dspy.Prediction:
        """The prediction. The answer shown cites only ``context`` ids: any other citation item (one in
        the missing-evidence text, say) is removed from it and listed in ``invalid_cited_ids``, so
        ``cited_ids`` never holds an id the answer was not given, and the metrics still see the forgery."""
        if answer == NEED_MORE_CONTEXT and missing:
            answer = f"{NEED_MORE_CONTEXT} Missing: {missing}"
        answer, removed = keep_citations(answer, context)
        cited = cited_ids(answer)
        stages = run.stages
        return RAGResult.prediction(
            answer=answer, verdict=verdict, grounded=grounded, hint=hint,
            retrieved_ids=list(dict.fromkeys(c for ids in run.retrieved for c in ids)),
            retrieved_per_round=run.retrieved, kept_ids=list(run.kept), context_ids=list(context),
            cited_ids=cited, invalid_cited_ids=removed,
            grades={c: g.model_dump() for c, g in run.grades.items()},
            unsupported_claims=list(unsupported), queries=run.queries, rounds=len(run.retrieved),
            lm_calls=stages.calls, lm_fallbacks=list(stages.fallbacks), lm_errors=list(stages.errors),
            lm_skipped=list(stages.skipped), regraded=run.regraded, seconds=round(time.perf_counter() - started, 4),
            chunk_doc_ids={c: chunk.doc_id for c, chunk in run.chunks.items()},
            context_texts={c: _text(run.chunks[c]) for c in context},
        )

    def lm_call_budget(self) -> int:
        """The most LM calls one question can take, whatever the LM replies or however it fails:
        ``2 * ceil(k / grade_batch) * max_rounds + (max_rounds - 1) + 3`` — per round a grading call
        per batch and at most one re-grading call per batch (its malformed items together), a
        refinement between rounds, then answer, verify and one regeneration."""
        batches = math.ceil(self.config.k / self.config.grade_batch)
        return 2 * batches * self.config.max_rounds + (self.config.max_rounds - 1) + 3


# -- checks: a reply the program cannot use raises, so the stage falls back ----------------------

def _grades_for(wanted: set[str], require_one: bool):
    """The valid grades of the chunks asked about; a batch's first reply must hold at least one."""
    def check(out) -> dict[str, ChunkGrade]:
        items = out.grades
        if not isinstance(items, list):
            raise ReplyRejected(f"grades is a {type(items).__name__}, not a list")
        if len(items) > MAX_IDS:
            raise ReplyRejected(f"grades has {len(items):,} items; the cap is {MAX_IDS}")
        grades: dict[str, ChunkGrade] = {}
        for item in items:
            try:
                grade = ChunkGrade.model_validate(item)
                grade.reason = prose(grade.reason, "a grade's reason", MAX_SHORT_CHARS)
            except (ValidationError, ReplyRejected):  # that item is malformed: re-graded
                continue
            if grade.id in wanted:
                grades.setdefault(grade.id, grade)
        if require_one and not grades:
            raise InvalidValue("no item of the reply is a valid grade of a chunk it was given")
        return grades
    return check


def _refined_query(out) -> str:
    query = prose(out.query, "query", MAX_QUERY_CHARS)
    if not query or query[:1] in "[{":
        raise ReplyRejected(f"not a search query: {query[:80]!r}")
    return query


def _cited_answer(context: list[str]):
    """(answer, verdict). An answer citing none of its chunks is rejected, and so is one any of whose
    citations holds an item that is not a context id: ``[real#0, FORGED4]`` as much as ``[fake#3]``."""
    allowed = set(context)

    def check(out) -> tuple[str, str]:
        answer = prose(out.answer, "answer", MAX_ANSWER_CHARS)
        if not cited_ids(answer):
            raise InvalidValue("the answer cites none of its chunks")
        _, outside = keep_citations(answer, allowed)
        if outside:
            raise InvalidValue(f"the answer cites ids it was not given: {outside[:5]}")
        return answer, _verdict(out.verdict)
    return check


def _verification(out) -> tuple[bool, list[str], str]:
    if not isinstance(out.grounded, bool):
        raise InvalidType(f"grounded is a {type(out.grounded).__name__}, not a bool")
    claims = out.unsupported_claims or []
    if not isinstance(claims, list):
        raise ReplyRejected(f"unsupported_claims is a {type(claims).__name__}, not a list")
    if len(claims) > MAX_IDS:
        raise ReplyRejected(f"unsupported_claims has {len(claims):,} items; the cap is {MAX_IDS}")
    claims = [prose(c, "an unsupported claim", MAX_SHORT_CHARS) for c in claims if isinstance(c, str)]
    missing = prose(out.missing_evidence, "missing_evidence", MAX_SHORT_CHARS) if out.missing_evidence else ""
    return out.grounded, [c for c in claims if c], missing


# -- the extractive answer ---------------------------------------------------------------------

# a first sentence: at least 20 characters before . ! ? and a space (so "e.g. " is not one), or a CJK stop
_FIRST_SENTENCE = re.compile(r"^(?:.{20,300}?[.!?](?=\s|$)|.{1,300}?[。！？])", re.S)
_END = ".!?。！？"


_BRACKETS = str.maketrans("", "", "[]()")


def _uncited(text: str) -> str:
    """Quoted text that cites nothing: a chunk's own ``[123#0]`` or ``(123#0)`` is a document's words,
    not a citation of the program, so when the text holds one its brackets are removed (the words stay;
    ids are read in brackets only)."""
    return text.translate(_BRACKETS) if cited_ids(text) else text


def extractive_answer(chunks: list[ScoredChunk], n: int = EXTRACTIVE_CHUNKS) -> str:
    """The answer without an LM: the leading sentence of each of the first ``n`` chunks, each ending
    with its ``[chunk-id]`` (``"Statins lower LDL [100#0]. …"``); "" when the chunks have no text.

    The citations are the program's alone: the quoted sentence's own bracketed ids are neutralised
    (``_uncited``), and a chunk whose id would not read back as itself in brackets is not quoted, so
    ``cited_ids`` of the answer are exactly the ids appended, all of them the given chunks'. A chunk
    whose id is outside the citation grammar (``metrics.citations.is_citable``) is not quoted."""
    parts = []
    for chunk in chunks[:n]:
        text = " ".join(_text(chunk).split())
        if not text or not is_citable(chunk.id):
            continue
        match = _FIRST_SENTENCE.match(text)
        sentence = match.group(0) if match else text[:300] + ("…" if len(text) > 300 else "")
        body, end = (sentence[:-1], sentence[-1]) if sentence[-1] in _END else (sentence, ".")
        body = _uncited(body).rstrip()
        parts.append(f"{body} {render_citation([chunk.id])}{end}")
    return " ".join(parts)


def _text(chunk: ScoredChunk) -> str:
    return str(chunk.metadata.get("text") or "")


def format_chunks(chunks: list[ScoredChunk]) -> str:
    return "\n\n".join(f"[{c.id}] {_text(c)}" for c in chunks)


def _cited_chunks(answer: str, evidence: list[ScoredChunk]) -> list[ScoredChunk]:
    """The chunks the answer cites; all of the evidence when it cites none (so verify still sees it)."""
    cited = set(cited_ids(answer))
    return [c for c in evidence if c.id in cited] or evidence


def _search_outputs(chunks: list[ScoredChunk]) -> dict:
    return {"ids": [c.id for c in chunks], "scores": [c.score for c in chunks],
            "doc_ids": [c.doc_id for c in chunks]}


def _verdict(value) -> str:
    word = str(value or "").strip().lower().split()
    return word[0].strip(".,;:!") if word and word[0].strip(".,;:!") in ("yes", "no", "maybe") else ""
