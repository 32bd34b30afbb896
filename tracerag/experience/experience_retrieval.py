"""ExperienceRetrieval: a new agent task -> short experience distilled from similar solved tasks.

Each round is independent: rewrite the task into queries (LM) -> embed all queries in one call ->
search the bank -> dedupe by task_id (best score; the raw task's hits ahead of what only a rewrite
found) -> rerank -> top_n -> summarise (LM) -> and, only when several rounds are allowed, check
sufficiency (LM); an insufficient round feeds its experience and gap into the next round's rewrite.
The last round's experience is the answer.

The three LM stages (``rewrite``, ``summarize``, ``check``) are guarded steps (``guarded_step.Stages``):
each uses its predictor's own LM, and an LM failure at any stage is never worse than having no LM.

- no LM configured: the raw task is the query, and the experience is extractive (the retrieved
  traces' own strategy lines, ``extractive_experience``), so retrieval still helps;
- ``rewrite`` fails, returns garbage or the wrong types: that round searches with the raw task;
- ``summarize`` fails, or its reply is over a cap or draws only on task ids it was not offered
  (``reply_limits``): the extractive experience of the same selected candidates (its ids are the
  used ids);
- ``check`` fails: the current experience is accepted;
- the reranker fails: retrieval-score order.

So an endpoint that is down or answers garbage gives exactly the no-LM result (same queries, ranked
ids, experience text and used ids), marked ``hint="lm_failed"`` with the stages in ``lm_fallbacks``.
Anything else that fails (the embedder, the bank) gives an empty experience, ``error`` set and a
warning: the calling agent never sees an exception.

LM-call budget per task: a rewrite and a summary per round and a check between rounds, so at most
``3 * max_retrieval_rounds - 1`` calls (2 with the default single round); ``lm_calls`` counts the
calls actually made (a stage the circuit breaker skips costs none).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import dspy
from pydantic import BaseModel, ConfigDict, Field

from ..documents.rerankers import LocalReranker, Reranker
from ..embedding.awaited_rows import with_embeddings
from ..errors import InvalidValue
from ..lm.calls import lm_of
from ..lm.reply_limits import (
    MAX_IDS,
    MAX_QUERY_CHARS,
    MAX_SHORT_CHARS,
    MAX_SUMMARY_CHARS,
    ReplyRejected,
    given_ids,
    prose,
)
from ..memory.traces import query_text
from ..programs.guarded_step import Pipeline, Stages, lm_step, work
from ..programs.spans import EXPERIENCE_SEARCH
from ..stores.cosine_bank import CosineBank
from ..stores.stores import store_and_embedder
from ..stores.vector_store import StoreError, StoreHit, VectorStore, parse_store_uri
from .result import ExperienceResult
from .signatures import CheckSufficiency, RewriteQuery, SummarizeExperience

__all__ = ["ExperienceConfig", "ExperienceRetrieval", "render_experience_section"]

logger = logging.getLogger(__name__)

SECTION_TEMPLATE = """## Experience from Similar Tasks
The following experience is derived from similar previously solved tasks.
Use it as reference, not as strict rules.

{experience}
"""


def render_experience_section(experience: str, template: str = SECTION_TEMPLATE) -> str:
    """The system-prompt section for an agent; empty when there is no experience (nothing to render)."""
    experience = (experience or "").strip()
    return template.format(experience=experience) if experience else ""


class ExperienceConfig(BaseModel):
    """The program's switches. ``enable=False`` (the default) builds nothing and returns no experience,
    so an agent can ship the integration dark and turn it on by configuration."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    enable: bool = False
    """False: build nothing and return no experience (ship the integration dark)."""
    enable_query_rewrite: bool = True
    """False: the raw task is the query."""
    enable_rerank: bool = True
    """False: retrieval-score order."""
    enable_summary: bool = True
    """False: extractive experience, no LM call."""
    max_retrieval_rounds: int = Field(1, ge=1, le=5)
    """Retrieval rounds at most (a round rewrites the query from what the last found)."""
    min_score: float = Field(0.1, ge=-1.0, le=1.0)
    """Cosine floor per hit."""
    top_k: int = Field(10, ge=1, le=1000)
    """Hits kept per text query."""
    top_n: int = Field(5, ge=1, le=50)
    """Candidates handed to the summary."""


@dataclass(frozen=True)
class Candidate:
    task_id: str
    retrieval_score: float
    rerank_score: float | None
    meta: dict[str, Any]
    by_task: bool = True
    """Found by the raw task's own query (False: only by a rewritten one, ranked after all of the raw task's)."""


@dataclass(frozen=True)
class Round:
    queries: list[str]
    caption: str
    retrieved: list[str]  # task_ids after dedupe, retrieval order
    selected: list[str]  # the top_n after rerank, handed to the summary
    experience: str
    used: list[str]
    sufficient: bool | None = None
    gap: str = ""


class ExperienceRetrieval(dspy.Module):
    """Retrieve experience from a trace store for a new task.

    ``bank`` is where the traces are: a :class:`~tracerag.stores.vector_store.VectorStore` (a numpy
    bank or Milvus, see ``open_store``), a CosineBank built by ``build_experience_bank``, or a store URI /
    bank directory. ``embedder`` must be the one the store was built with (default: a CosineBank's own,
    else the configured one). All retrieval goes through the store protocol. ``reranker`` is a rerank
    service client (``make_reranker("http://…/v1")``); without one, ``enable_rerank`` uses the local
    fallback (dense + lexical blend over the embedder).
    """

    def __init__(self, bank: VectorStore | CosineBank | str | Path | None = None,
                 config: ExperienceConfig | dict | None = None, *, reranker: Reranker | None = None, embedder=None):
        super().__init__()
        self.config = config if isinstance(config, ExperienceConfig) else ExperienceConfig(**(config or {}))
        self.store: VectorStore | None = None
        self.embedder = None
        self.reranker = reranker
        if not self.config.enable:
            return  # dark launch: no bank loaded, no predictors built
        if bank is None:
            raise InvalidValue("ExperienceRetrieval(enable=True) needs a bank: a VectorStore, CosineBank or store URI")
        _check_bank_built(bank)
        if embedder is None and not isinstance(bank, CosineBank):
            from ..config import get_embedder

            embedder = get_embedder()
        self.store, self.embedder = store_and_embedder(bank, embedder)
        if self.reranker is None and self.config.enable_rerank:
            self.reranker = LocalReranker(self.embedder)
        self.rewrite = dspy.Predict(RewriteQuery)
        self.summarize = dspy.Predict(SummarizeExperience)
        self.check = dspy.Predict(CheckSufficiency)

    # -- the pipeline ----------------------------------------------------------------------------

    def forward(self, question: str, images: Sequence[Any] | None = None, caption: str | None = None,
                sub_task: str | None = None) -> dspy.Prediction:
        """Distil experience for a new agent task from the solved tasks most like it.

        Args:
            question: the new task's question.
            images: the task's images (paths, bytes or data URLs), captioned when there is no ``caption``.
            caption: a description of the images, used instead of captioning them.
            sub_task: the task type, when known (it narrows the search).

        Returns:
            A ``dspy.Prediction`` with the fields of :class:`~tracerag.experience.result.ExperienceResult`:
            ``experience`` (the distilled text), ``section`` (ready to paste into an agent's prompt),
            ``used_task_ids`` (the traces it drew on), the ids and queries of each round, the LM's outcome and
            ``error``.

        Example:
            >>> program = tracerag.build("experience")
            >>> program(question="What is the total on this receipt?").used_task_ids[:2]
        """
        stages = _stages(question, images, caption, sub_task)
        return stages.run(self._pipeline(question, images, caption, sub_task, stages))

    async def aforward(self, question: str, images: Sequence[Any] | None = None, caption: str | None = None,
                       sub_task: str | None = None) -> dspy.Prediction:
        """``forward`` for ``await program.acall(...)``: LM stages through the LM's async path, the bank
        search and image reading in a worker thread, a remote embedder's and reranker's calls awaited
        natively (``aembed``, ``arerank``: no thread waits for them); the same prediction."""
        stages = _stages(question, images, caption, sub_task)
        return await stages.arun(self._pipeline(question, images, caption, sub_task, stages))

    def _pipeline(self, question: str, images, caption, sub_task, stages: Stages) -> Pipeline:
        if not self.config.enable:
            return _prediction([], stages)
        rounds: list[Round] = []
        try:
            yield from self._run(question, list(images or []), caption or "", sub_task or "", rounds, stages)
            return _prediction(rounds, stages)
        except Exception as exc:  # the documented contract: the agent runs on without experience
            logger.warning("experience retrieval failed (%s: %s); continuing without experience",
                           type(exc).__name__, exc)
            return _prediction(rounds, stages, error=f"{type(exc).__name__}: {exc}")

    def _run(self, question: str, images: list, caption: str, sub_task: str, rounds: list[Round],
             stages: Stages) -> Pipeline:
        cfg = self.config
        rewrite = cfg.enable_query_rewrite and lm_of(self.rewrite) is not None
        summarize = cfg.enable_summary and lm_of(self.summarize) is not None
        check = lm_of(self.check) is not None
        search_context = ""
        for number in range(1, cfg.max_retrieval_rounds + 1):
            queries, round_caption = [query_text(question, caption, sub_task)], caption
            if rewrite:
                queries, round_caption = yield from self._rewrite(question, images, caption, sub_task,
                                                                  search_context)
            rerank_query = f"{question}\n{round_caption}".strip()
            candidates, reranked = yield work(
                self._search, queries, rerank_query, afn=self._asearch, span=EXPERIENCE_SEARCH, outputs=_search_outputs,
                inputs={"queries": queries, "k": cfg.top_k, "min_score": cfg.min_score,
                        "rerank_query": rerank_query if self._reranks() else None})
            selected = reranked[: cfg.top_n]
            if not selected:
                experience, used = "", []
            elif summarize:
                experience, used = yield from self._summarize(question, round_caption, selected)
            else:
                experience, used = extractive_experience(selected)
            round_ = Round(queries, round_caption, [c.task_id for c in candidates], [c.task_id for c in selected],
                           experience, used)
            if number == cfg.max_retrieval_rounds or not (check and experience):
                rounds.append(round_)
                return
            sufficient, gap = yield from self._check(question, experience)
            rounds.append(replace(round_, sufficient=sufficient, gap=gap))
            if sufficient:
                return
            search_context = f"{experience}\nGap: {gap}"

    def _rewrite(self, question: str, images: list, caption: str, sub_task: str, search_context: str) -> Pipeline:
        """The raw task plus up to five rewritten queries, and the caption; on failure the raw task
        alone and the given caption (what the no-LM path searches with)."""
        raw = query_text(question, caption, sub_task)
        out = yield lm_step("rewrite", self.rewrite, check=_rewritten, fallback="searching with the raw task",
                            question=question, images=(yield work(_as_images, images)), known_caption=caption,
                            search_context=search_context)
        if out is None:
            return [raw], caption
        queries, image_caption = out
        # the raw task stays the first query: its hits keep their places (_retrieve)
        return [raw, *queries], (caption or image_caption)

    def _search(self, queries: list[str], rerank_query: str) -> tuple[list[Candidate], list[Candidate]]:
        """The bank search and the rerank of one round: (candidates in retrieval order, reranked)."""
        candidates = self._retrieve(queries)
        return candidates, self._rerank(rerank_query, candidates)

    async def _asearch(self, queries: list[str], rerank_query: str) -> tuple[list[Candidate], list[Candidate]]:
        """``_search`` on the event loop: the query rows awaited (``with_embeddings``), the store search in
        a worker thread, the rerank awaited through ``arerank`` when the reranker has one."""
        candidates = await with_embeddings(self.embedder, queries, self._retrieve, queries)
        if not self._rerank_wanted(candidates):
            return candidates, candidates
        arerank = getattr(self.reranker, "arerank", None)
        if arerank is None:
            return candidates, await asyncio.to_thread(self._rerank, rerank_query, candidates)
        try:
            return candidates, _reordered(candidates, await arerank(rerank_query, _documents(candidates)))
        except Exception as exc:
            return candidates, _rerank_failed(exc, candidates)

    def _reranks(self) -> bool:
        return self.config.enable_rerank and self.reranker is not None

    def _retrieve(self, queries: list[str]) -> list[Candidate]:
        """One embedding call for all queries, one store search. The raw task's hits come first, exactly as
        without a rewrite (best score per task_id, ties to the store's rank); what only the rewritten
        queries found follows, by its best score. So a rewrite adds tasks and never displaces the raw
        task's own: with the LM the selection is never worse than without it."""
        vectors = self.embedder.embed(queries)
        per_query = list(self.store.search(vectors, k=self.config.top_k, min_score=self.config.min_score))
        by_task = _best_per_task(per_query[:1])
        found = {hit.id for hit in by_task}
        return ([Candidate(h.id, h.score, None, h.metadata) for h in by_task]
                + [Candidate(h.id, h.score, None, h.metadata, by_task=False)
                   for h in _best_per_task(per_query[1:]) if h.id not in found])

    # -- what it runs on (for callers; retrieval itself uses only the store protocol) ------------

    def stored_ids(self) -> set[str]:
        """Every task_id in the store (one scan)."""
        if self.store is None:
            return set()
        return {x for batch in self.store.scan(4096) for x in batch.ids}

    def stored_metadata(self, task_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """task_id -> stored metadata (reasoning, steps, index text, caption) for those present."""
        if self.store is None:
            return {}
        return {row.id: row.metadata for row in self.store.get(list(task_ids))}

    def _rerank_wanted(self, candidates: list[Candidate]) -> bool:
        return self.config.enable_rerank and len(candidates) > 1

    def _rerank(self, query: str, candidates: list[Candidate]) -> list[Candidate]:
        if not self._rerank_wanted(candidates):
            return candidates
        try:
            return _reordered(candidates, self.reranker.rerank(query, _documents(candidates)))
        except Exception as exc:
            return _rerank_failed(exc, candidates)

    def _summarize(self, question: str, caption: str, selected: list[Candidate]) -> Pipeline:
        """The LM's experience and the offered ids it drew on; on failure the extractive experience of
        the same candidates (what the no-LM path gives)."""
        out = yield lm_step("summarize", self.summarize, check=_summary({c.task_id for c in selected}),
                            fallback="using the extractive experience", question=question, image_caption=caption,
                            candidates=format_candidates(selected))
        if out is None:
            return extractive_experience(selected)
        experience, used = out
        return experience, used if experience else []

    def _check(self, question: str, experience: str) -> Pipeline:
        """(sufficient, gap); on failure the experience is accepted."""
        out = yield lm_step("check", self.check, check=_verdict, fallback="accepting the experience",
                            question=question, experience=experience)
        return out if out is not None else (True, "")


def _check_bank_built(bank) -> None:
    """A bank directory that holds no bank yet is one line saying how to build it (a program only reads
    its bank: creating an empty one here would hide a wrong path behind "no experience")."""
    if not isinstance(bank, str | Path):
        return
    target = parse_store_uri(bank)
    if target.backend == "numpy" and not (Path(target.location) / "manifest.json").exists():
        raise StoreError(f"{target.location}: no experience bank here; build one from your agent's traces with "
                         f"`tracerag build-bank --traces runs/ --bank {target.location}`")


def _stages(question: str, images, caption: str | None, sub_task: str | None) -> Stages:
    """The task's stages: a task of no words and no images says nothing, so no stage calls the LM."""
    return Stages(subject=None if images else " ".join((question or "", caption or "", sub_task or "")))


def _documents(candidates: list[Candidate]) -> list[str]:
    return [c.meta.get("index_text", c.task_id) for c in candidates]


def _best_per_task(per_query: list[list[StoreHit]]) -> list[StoreHit]:
    """The best-scoring hit of each task_id over these queries' hits (ties: the hit seen first, i.e. the
    earlier query, then the store's rank)."""
    best: dict[str, tuple[StoreHit, int]] = {}
    seen = 0
    for hits in per_query:
        for hit in hits:
            if hit.id not in best or hit.score > best[hit.id][0].score:
                best[hit.id] = (hit, best[hit.id][1] if hit.id in best else seen)
            seen += 1
    return [hit for hit, _ in sorted(best.values(), key=lambda pair: (-pair[0].score, pair[1]))]


def _reordered(candidates: list[Candidate], order: list[tuple[int, float]]) -> list[Candidate]:
    """The reranker's order within each tier: the raw task's hits first, then what only a rewrite found
    (the reranker scores each document on its own, so the first tier is ordered as without a rewrite)."""
    ranked = [replace(candidates[i], rerank_score=score) for i, score in order]
    return sorted(ranked, key=lambda c: not c.by_task)


def _rerank_failed(exc: Exception, candidates: list[Candidate]) -> list[Candidate]:
    logger.warning("reranker failed (%s: %s); keeping retrieval order", type(exc).__name__, exc)
    return candidates


def _search_outputs(result: tuple[list[Candidate], list[Candidate]]) -> dict[str, Any]:
    candidates, reranked = result
    return {"ids": [c.task_id for c in candidates], "scores": [c.retrieval_score for c in candidates],
            "reranked_ids": [c.task_id for c in reranked],
            "rerank_scores": [c.rerank_score for c in reranked]}


def _strings(value, name: str) -> list[str]:
    """A reply's list of strings (None: empty); another type, a non-string item or more than ``MAX_IDS``
    items reject the reply."""
    items = [] if value is None else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ReplyRejected(f"{name} is not a list of strings")
    if len(items) > MAX_IDS:
        raise ReplyRejected(f"{name} has {len(items):,} items; the cap is {MAX_IDS}")
    return items


def _rewritten(out) -> tuple[list[str], str]:
    """Up to five non-empty queries (each at most ``MAX_QUERY_CHARS``) and a caption; a reply of the wrong
    types, over a cap or without a usable query raises (fallback)."""
    queries = [q for q in (prose(q, "a text query", MAX_QUERY_CHARS) for q in _strings(out.text_queries,
                                                                                       "text_queries")) if q][:5]
    if not queries:
        raise ReplyRejected("RewriteQuery returned no text_queries")
    caption = prose(out.image_caption, "image_caption", MAX_SHORT_CHARS) if out.image_caption is not None else ""
    return queries, caption


def _summary(offered: set[str]):
    """(experience, the offered ids it draws on); a reply of the wrong types, an experience over
    ``MAX_SUMMARY_CHARS`` or ids none of which were offered raise (fallback); an offered id list with a
    few unknown ids keeps the offered ones. An empty experience is the model saying nothing fits, not a
    failure."""
    def check(out) -> tuple[str, list[str]]:
        experience = prose(out.experience, "experience", MAX_SUMMARY_CHARS)
        return experience, given_ids(_strings(out.task_ids, "task_ids"), offered, "task_ids")
    return check


def _verdict(out) -> tuple[bool, str]:
    if not isinstance(out.sufficient, bool):
        raise ReplyRejected(f"sufficient is a {type(out.sufficient).__name__}, not a bool")
    return out.sufficient, prose(out.gap, "gap", MAX_SHORT_CHARS) if out.gap is not None else ""


def _prediction(rounds: list[Round], stages: Stages, *, error: str | None = None) -> dspy.Prediction:
    failed = error is not None
    last = rounds[-1] if rounds and not failed else None
    experience = last.experience if last else ""
    return ExperienceResult.prediction(
        experience=experience,
        section=render_experience_section(experience),
        task_ids=[r.selected for r in rounds],  # per round, after rerank
        retrieved_task_ids=[r.retrieved for r in rounds],  # per round, before top_n
        used_task_ids=last.used if last else [],
        queries=[r.queries for r in rounds],
        rounds=len(rounds),
        lm_calls=stages.calls,
        hint=stages.hint,  # "lm_failed" when any LM stage fell back; "empty_input": the task said nothing
        lm_fallbacks=stages.fallbacks,  # the stages that did: rewrite, summarize, check
        lm_skipped=stages.skipped,  # the stages not called: the task said nothing
        lm_errors=stages.errors,
        error=error,  # a failure outside the LM stages (embedder, bank)
    )


_UNREADABLE: set[str] = set()  # images already warned about (a run meets the same ones again)


def _as_images(images: list) -> list[dspy.Image]:
    """Paths and URLs become dspy.Image; an unreadable one is dropped with a warning (once per image,
    not once per call), not fatal."""
    out = []
    for image in images:
        try:
            if isinstance(image, dspy.Image):
                out.append(image)
            elif isinstance(image, str) and re.match(r"^(https?|gs|data):", image):
                out.append(dspy.Image(image))
            else:
                out.append(dspy.Image.from_path(str(image)))
        except Exception as exc:
            if str(image) not in _UNREADABLE and len(_UNREADABLE) < 10_000:
                _UNREADABLE.add(str(image))
                logger.warning("cannot read image %s (%s); rewriting without it", image, str(exc).splitlines()[0])
    return out


def format_candidates(selected: list[Candidate]) -> str:
    """The summary's view of each candidate: the task, the tool chain, the steps' thoughts, the lesson."""
    blocks = []
    for c in selected:
        m = c.meta
        lines = [f"[{c.task_id}] {m.get('question', '')}"]
        if m.get("sub_task"):
            lines.append(f"Task: {m['sub_task']}")
        if m.get("tools"):
            lines.append(f"Tools (in order): {', '.join(m['tools'])}")
        lines += [f"- {s.get('tool', '')}: {s.get('thought', '')}" for s in m.get("steps", [])]
        if m.get("reasoning"):
            lines.append(f"Reasoning: {m['reasoning']}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def extractive_experience(selected: list[Candidate], limit: int = 3) -> tuple[str, list[str]]:
    """No-LM experience: the best few traces' task type, tool chain and strategy sentence, as bullets.
    Traces that teach the same thing are one bullet, saying how many solved tasks it comes from."""
    lines: dict[str, int] = {}  # bullet -> how many of the traces give it, in rank order
    used = []
    for c in selected[:limit]:
        m = c.meta
        strategy = re.split(r"(?<=[.!?])\s", (m.get("reasoning") or "").strip(), maxsplit=1)[0]
        what = m.get("sub_task") or m.get("question", "")
        tools = " -> ".join(m.get("tools", []))
        line = f"- For a similar task ({what})"
        line += f", the tools used were {tools}." if tools else "."
        if strategy:
            line += f" {strategy}"
        lines[line] = lines.get(line, 0) + 1
        used.append(c.task_id)
    return "\n".join(line if n == 1 else f"{line} ({n} solved tasks)" for line, n in lines.items()), used
