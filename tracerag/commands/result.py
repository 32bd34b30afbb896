"""What CommandRetrieval returns: the fields of its prediction, declared once. The program builds its prediction
through this model, the service answers it (``POST /v1/commands``, the MCP tool ``find_smart_home_command``) and
the evaluation reads it."""

from __future__ import annotations

from ..home_commands.command_results import BulkPlan, Candidate, Withheld
from ..program_result import ProgramResult
from ..signatures.query_ir import QueryIR


class CommandsResult(ProgramResult):
    candidates: list[Candidate]
    """The (device, command) candidates, best first, at most ``k``."""
    bulk: BulkPlan | None
    """The plan over every device an all/except utterance names, or None."""
    ir: QueryIR
    """The parse the search used."""
    parse_source: str
    """Where the parse came from: lm, rules, rules_fallback, gold; none when nothing was read."""
    hint: str | None
    """Why the answer is empty or needs the user (``tracerag.hints.Hint``), or None."""
    withheld: list[Withheld]
    """The commands the safety rules or the home's policy held back, and why."""
    unresolved: list[str] = []
    """The floors or rooms the utterance says that the home does not have."""
    unanswered: str = ""
    """Where the utterance makes several requests, the ones after the first (the one answered)."""
    lm_overruled: list[str]
    """The checks against the utterance and the home that overruled the LM's parse."""
    lm_parse: QueryIR | None
    """The parse as the LM gave it, or None."""
    lm_fallbacks: list[str]
    """The LM stages that fell back to their no-LM result: parse, arbitrate."""
    lm_errors: list[str]
    """What went wrong at each of them, one line each."""
    lm_calls: int
    """LM calls made."""
    home: str
    """The home searched."""
