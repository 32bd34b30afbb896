"""What TraceablePlanner returns: the fields of its prediction, declared once. The program builds its prediction
through this model, the service answers it (``POST /v1/plan``, the MCP tool ``plan``) and the evaluation reads
it."""

from __future__ import annotations

from typing import Any

from ..program_result import ProgramResult
from ..signatures.planner import Plan


class PlanResult(ProgramResult):
    plan: Plan | None
    """The structured plan; None without an LM or when the LM failed."""
    bullets_used: list[str]
    """The playbook bullets the plan used (given ids only)."""
    templates_used: list[str]
    """The templates the plan used (given ids only)."""
    hallucinated_ids: list[str]
    """Ids the plan cites that it was never given."""
    retrieved_bullet_ids: list[str]
    """The bullets shown to the LM."""
    retrieved_template_ids: list[str]
    """The templates shown to the LM."""
    lm_calls: int
    """LM calls made."""
    error: str | None
    """Why there is no plan, in one line, or None."""
    hint: str | None
    """no_lm, lm_failed or empty_input when there is no plan, else None."""
    lm_fallbacks: list[str]
    """The LM stages that fell back to their no-LM result: generate."""
    metadata: dict[str, Any]
    """Which bullets and passages produced the plan: retrieved and used ids, templates' previews, model, token
    usage, duration, LM calls."""
    lm_skipped: list[str]
    """The LM stages not called because the requirements say nothing."""
