"""ExperienceRetrieval: a new agent task -> short experience distilled from similar solved tasks.

Each round is independent: rewrite the task into queries (LM) -> embed all queries in one call ->
search the bank -> dedupe by task_id (best score) -> rerank -> top_n -> summarise (LM) -> and, only
when several rounds are allowed, check sufficiency (LM); an insufficient round feeds its experience
and gap into the next round's rewrite. The last round's experience is the answer.

Failure paths (the calling agent never sees an error):
- no LM configured: the raw task is the query, and the experience is extractive (the retrieved
  traces' own strategy lines), so retrieval still helps;
- RewriteQuery fails or returns garbage: that round searches with the raw task;
- the reranker fails: retrieval-score order;
- CheckSufficiency fails: the current experience is accepted;
- anything else (SummarizeExperience, the embedder, the bank): empty experience and a warning.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import dspy
from pydantic import BaseModel, ConfigDict, Field

from ..retrievers.cosine_bank import CosineBank, Hit
from ..retrievers.rerankers import LocalReranker, Reranker
from ..retrievers.traces import query_text
from ..signatures.experience import CheckSufficiency, RewriteQuery, SummarizeExperience

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

    model_config = ConfigDict(extra="forbid")

    enable: bool = False
    enable_query_rewrite: bool = True  # False: the raw task is the query
    enable_rerank: bool = True  # False: retrieval-score order
    enable_summary: bool = True  # False: extractive experience, no LM call
    max_retrieval_rounds: int = Field(1, ge=1, le=5)
    min_score: float = Field(0.1, ge=-1.0, le=1.0)  # cosine floor per hit
    top_k: int = Field(10, ge=1, le=1000)  # hits kept per text query
    top_n: int = Field(5, ge=1, le=50)  # candidates handed to the summary


@dataclass(frozen=True)
class Candidate:
    task_id: str
    retrieval_score: float
    rerank_score: float | None
    meta: dict[str, Any]


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
    """Retrieve experience from a trace bank for a new task.

    ``bank`` is a CosineBank built by ``build_experience_bank`` (or its directory) and must carry an
    embedder. ``reranker`` is a rerank service client (``make_reranker("http://…/v1")``); without one,
    ``enable_rerank`` uses the local fallback (dense + lexical blend over the bank's embedder).
    """

    def __init__(self, bank: CosineBank | str | Path | None = None, config: ExperienceConfig | dict | None = None,
                 *, reranker: Reranker | None = None, embedder=None):
        super().__init__()
        self.config = config if isinstance(config, ExperienceConfig) else ExperienceConfig(**(config or {}))
        self.bank: CosineBank | None = None
        self.reranker = reranker
        if not self.config.enable:
            return  # dark launch: no bank loaded, no predictors built
        if bank is None:
            raise ValueError("ExperienceRetrieval(enable=True) needs a bank (a CosineBank or its directory)")
        if not isinstance(bank, CosineBank):
            from ..config import get_embedder

            bank = CosineBank.load(bank, embedder or get_embedder())
        if bank.embedder is None:
            raise ValueError(f"{bank.directory}: the bank was loaded without an embedder; queries cannot be embedded")
        self.bank = bank
        if self.reranker is None and self.config.enable_rerank:
            self.reranker = LocalReranker(bank.embedder)
        self.rewrite = dspy.Predict(RewriteQuery)
        self.summarize = dspy.Predict(SummarizeExperience)
        self.check = dspy.Predict(CheckSufficiency)

    # -- the pipeline ----------------------------------------------------------------------------

    def forward(self, question: str, images: Sequence[Any] | None = None, caption: str | None = None,
                sub_task: str | None = None) -> dspy.Prediction:
        if not self.config.enable:
            return _prediction([], lm_calls=0)
        rounds: list[Round] = []
        calls = [0]
        try:
            self._run(question, list(images or []), caption or "", sub_task or "", rounds, calls)
            return _prediction(rounds, lm_calls=calls[0])
        except Exception as exc:  # the documented contract: the agent runs on without experience
            logger.warning("experience retrieval failed (%s: %s); continuing without experience",
                           type(exc).__name__, exc)
            return _prediction(rounds, lm_calls=calls[0], error=f"{type(exc).__name__}: {exc}")

    def _run(self, question: str, images: list, caption: str, sub_task: str, rounds: list[Round],
             calls: list[int]) -> None:
        cfg = self.config
        has_lm = dspy.settings.lm is not None
        search_context = ""
        for number in range(1, cfg.max_retrieval_rounds + 1):
            queries, round_caption = [query_text(question, caption, sub_task)], caption
            if cfg.enable_query_rewrite and has_lm:
                calls[0] += 1
                queries, round_caption = self._rewrite(question, images, caption, sub_task, search_context)
            candidates = self._retrieve(queries)
            selected = self._rerank(question, round_caption, candidates)[: cfg.top_n]
            if not selected:
                experience, used = "", []
            elif cfg.enable_summary and has_lm:
                calls[0] += 1
                experience, used = self._summarize(question, round_caption, selected)
            else:
                experience, used = extractive_experience(selected)
            round_ = Round(queries, round_caption, [c.task_id for c in candidates], [c.task_id for c in selected],
                           experience, used)
            if number == cfg.max_retrieval_rounds or not (has_lm and experience):
                rounds.append(round_)
                return
            calls[0] += 1
            sufficient, gap = self._check(question, experience)
            rounds.append(replace(round_, sufficient=sufficient, gap=gap))
            if sufficient:
                return
            search_context = f"{experience}\nGap: {gap}"

    def _rewrite(self, question: str, images: list, caption: str, sub_task: str,
                 search_context: str) -> tuple[list[str], str]:
        raw = query_text(question, caption, sub_task)
        try:
            out = self.rewrite(question=question, images=_as_images(images), known_caption=caption,
                               search_context=search_context)
            queries = [q.strip() for q in (out.text_queries or []) if isinstance(q, str) and q.strip()][:5]
            if not queries:
                raise ValueError("no text_queries")
            # the raw task stays a query: a rewrite can only add recall, never lose the literal task
            return [raw, *queries], (caption or (out.image_caption or "").strip())
        except Exception as exc:
            logger.warning("RewriteQuery failed (%s: %s); searching with the raw task", type(exc).__name__, exc)
            return [raw], caption

    def _retrieve(self, queries: list[str]) -> list[Candidate]:
        """One embedding call for all queries, one search, best retrieval score per task_id."""
        best: dict[str, Hit] = {}
        for hits in self.bank.search_texts(queries, k=self.config.top_k, min_score=self.config.min_score):
            for hit in hits:
                if hit.id not in best or hit.score > best[hit.id].score:
                    best[hit.id] = hit
        ordered = sorted(best.values(), key=lambda h: (-h.score, h.row))
        return [Candidate(h.id, h.score, None, h.metadata) for h in ordered]

    def _rerank(self, question: str, caption: str, candidates: list[Candidate]) -> list[Candidate]:
        if not (self.config.enable_rerank and len(candidates) > 1):
            return candidates
        query = f"{question}\n{caption}".strip()
        try:
            order = self.reranker.rerank(query, [c.meta.get("index_text", c.task_id) for c in candidates])
            return [Candidate(candidates[i].task_id, candidates[i].retrieval_score, score, candidates[i].meta)
                    for i, score in order]
        except Exception as exc:
            logger.warning("reranker failed (%s: %s); keeping retrieval order", type(exc).__name__, exc)
            return candidates

    def _summarize(self, question: str, caption: str, selected: list[Candidate]) -> tuple[str, list[str]]:
        out = self.summarize(question=question, image_caption=caption, candidates=format_candidates(selected))
        experience = (out.experience or "").strip()
        offered = {c.task_id for c in selected}
        used = [t for t in dict.fromkeys(out.task_ids or []) if t in offered]  # never report an unseen id
        return experience, used if experience else []

    def _check(self, question: str, experience: str) -> tuple[bool, str]:
        try:
            out = self.check(question=question, experience=experience)
            return bool(out.sufficient), (out.gap or "").strip()
        except Exception as exc:
            logger.warning("CheckSufficiency failed (%s: %s); accepting the experience", type(exc).__name__, exc)
            return True, ""


def _prediction(rounds: list[Round], *, lm_calls: int, error: str | None = None) -> dspy.Prediction:
    failed = error is not None
    last = rounds[-1] if rounds and not failed else None
    experience = last.experience if last else ""
    return dspy.Prediction(
        experience=experience,
        section=render_experience_section(experience),
        task_ids=[r.selected for r in rounds],  # per round, after rerank
        retrieved_task_ids=[r.retrieved for r in rounds],  # per round, before top_n
        used_task_ids=last.used if last else [],
        queries=[r.queries for r in rounds],
        rounds=len(rounds),
        lm_calls=lm_calls,
        error=error,
    )


def _as_images(images: list) -> list[dspy.Image]:
    """Paths and URLs become dspy.Image; an unreadable one is dropped with a warning, not fatal."""
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
            logger.warning("cannot read image %s (%s); rewriting without it", image, exc)
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
    """No-LM experience: the best few traces' task type, tool chain and strategy sentence, as bullets."""
    lines, used = [], []
    for c in selected[:limit]:
        m = c.meta
        strategy = re.split(r"(?<=[.!?])\s", (m.get("reasoning") or "").strip(), maxsplit=1)[0]
        what = m.get("sub_task") or m.get("question", "")
        tools = " -> ".join(m.get("tools", []))
        line = f"- For a similar task ({what})"
        line += f", the tools used were {tools}." if tools else "."
        if strategy:
            line += f" {strategy}"
        lines.append(line)
        used.append(c.task_id)
    return "\n".join(lines), used
