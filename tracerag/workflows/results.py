"""What a workflow hands back to the front end that called it: the thing to show, what to print after it,
and the exit code; or a compiled program with its scores."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Outcome:
    """An evaluation's report (a dict) or a run's printable text, then the lines the front end prints after
    it (stdout), the notes it prints on stderr, and the exit code."""

    shown: Any
    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    code: int = 0


@dataclass
class Compiled:
    """A compiled program, the scores to record with it, and the store it searches (named in the summary)."""

    program: Any
    scores: dict
    store_uri: str | None = None
