"""What SearchAgent returns: the fields of its prediction, declared once. The program builds its prediction
through this model, the service answers it (``POST /v1/agent``, the MCP tool ``research``) and the evaluation
reads it."""

from __future__ import annotations

from ..program_result import ProgramResult
from ..tools.trajectory import Trajectory


class AgentResult(ProgramResult):
    trajectory: Trajectory
    """The whole run: the interleaved replies, tool calls and tool outputs, and the answer."""
    answer: str | None
    """The cited answer, or None."""
    ids_cited: list[str]
    """The ids the answer cites (all returned by a tool)."""
    returned_ids: list[str]
    """Every id the tools returned."""
    stop_reason: str
    """Why the run ended: answered, no_lm, lm_error, invalid_answer, no_action, max_steps, tool_limit."""
    tool_calls: int
    """Tool calls made."""
    hallucinated_outputs: int
    """Tool outputs the model wrote itself instead of calling the tool."""
    hint: str | None
    """no_lm, lm_failed (the extractive answer stands in) or empty_input, else None."""
    lm_fallbacks: list[str]
    """``["step"]`` when the LM left the run without an answer, else ``[]``."""
    lm_errors: list[str]
    """What went wrong, one line each."""
    lm_calls: int
    """Policy calls made, at most ``max_steps``."""
    ms: float
    """How long the run took, in milliseconds."""
    invalid_cited_ids: list[str]
    """Ids the model cited that no tool returned: dropped from the answer."""
    lm_skipped: list[str]
    """The LM stages not called because the question says nothing."""
