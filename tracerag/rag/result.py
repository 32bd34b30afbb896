"""What SelfReflectiveRAG returns: the fields of its prediction, declared once. The program builds its prediction
through this model, the service answers it (``POST /v1/rag``, the MCP tool ``answer_with_citations``) and the
evaluation reads it."""

from __future__ import annotations

from typing import Any

from ..program_result import ProgramResult


class RAGResult(ProgramResult):
    answer: str
    """The answer, citing ``[chunk-id]``s it was given as context."""
    verdict: str
    """yes, no or maybe; "" when nothing was decided."""
    grounded: bool | None
    """True: verified against the context; False: unsupported; None: not verified."""
    hint: str | None
    """Why the answer is not a verified one (``tracerag.hints.Hint``), or None."""
    retrieved_ids: list[str]
    """Every chunk retrieved, first seen first."""
    retrieved_per_round: list[list[str]]
    """The chunks retrieved, per round."""
    kept_ids: list[str]
    """The chunks graded relevant."""
    context_ids: list[str]
    """The chunks handed to the answer."""
    cited_ids: list[str]
    """The chunks the answer cites (all among ``context_ids``)."""
    invalid_cited_ids: list[str]
    """Citations of chunks the answer was not given, removed from it."""
    grades: dict[str, dict[str, Any]]
    """Each graded chunk's grade."""
    unsupported_claims: list[str]
    """The claims the groundedness check found no support for."""
    queries: list[str]
    """The queries searched, per round."""
    rounds: int
    """Retrieval rounds run."""
    lm_calls: int
    """LM calls made."""
    lm_fallbacks: list[str]
    """The LM stages that fell back to their no-LM result: grade, refine, answer, verify, regenerate."""
    lm_errors: list[str]
    """What went wrong at each of them, one line each."""
    regraded: int
    """Chunks graded a second time because their first grade was malformed."""
    seconds: float
    """How long the call took."""
    chunk_doc_ids: dict[str, str]
    """The document of each chunk retrieved."""
    context_texts: dict[str, str]
    """The text of each chunk handed to the answer."""
    lm_skipped: list[str]
    """The LM stages not called because the question says nothing."""
