"""What ExperienceRetrieval returns: the fields of its prediction, declared once. The program builds its
prediction through this model, the service answers it (``POST /v1/experience``, the MCP tool
``retrieve_experience``) and the evaluation reads it."""

from __future__ import annotations

from ..program_result import ProgramResult


class ExperienceResult(ProgramResult):
    experience: str
    """The distilled experience ("" when nothing fits or retrieval failed)."""
    section: str
    """The experience as a section ready to paste into an agent's prompt ("" without experience)."""
    task_ids: list[list[str]]
    """Per round, the task ids handed to the summary (after rerank)."""
    retrieved_task_ids: list[list[str]]
    """Per round, the task ids retrieved (before ``top_n``)."""
    used_task_ids: list[str]
    """The tasks the experience draws on."""
    queries: list[list[str]]
    """Per round, the queries searched."""
    rounds: int
    """Retrieval rounds run."""
    lm_calls: int
    """LM calls made."""
    hint: str | None
    """lm_failed when an LM stage fell back, empty_input when the task says nothing, else None."""
    lm_fallbacks: list[str]
    """The LM stages that fell back to their no-LM result: rewrite, summarize, check."""
    lm_errors: list[str]
    """What went wrong at each of them, one line each."""
    error: str | None
    """A failure outside the LM stages (the embedder, the bank): no experience, the agent runs on."""
    lm_skipped: list[str]
    """The LM stages not called because the task says nothing."""
