"""What a SearchAgent run leaves behind: typed records, and their two exports.

- JSONL, one trajectory a line: the ``interleaved_text`` (think, calls, real tool outputs, answer) is
  what a fine-tuning set needs; the other fields let a data pipeline filter lines.
- ``tasks/<task_id>/trace.json`` in the ExperienceRetrieval trace format (README "Trace format"), so
  successful runs grow the memory bank that ``tracerag build-bank --append`` indexes.

A tool's text in an export is escaped like a tool output (``protocol_writing.escape_tool_text``): the
interleaved text and answer already are, and a trace's observation (a tool's error, the result ids)
is escaped when written. ``tool_calls[].result`` keeps the snippets as the tool returned them (data
in JSON fields, never read as protocol).

Each call in ``interleaved_text`` is written by ``protocol_writing.format_call``, which ``parse_reply`` reads
back exactly: the call a fine-tuning line shows is the call in ``tool_calls`` (``ToolCallRecord.call``)
and the call the tool ran, whatever characters its name, parameters or query hold.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, computed_field

from ..data_files.durable import write_durably
from ..errors import InvalidValue
from .protocol_writing import ToolCall, escape_tool_text

__all__ = ["ToolCallRecord", "Trajectory", "write_jsonl", "write_traces"]

# Why a run ended.
STOP_REASONS = ("answered", "no_action", "tool_limit", "max_steps", "lm_error", "invalid_answer", "no_lm")


class ToolCallRecord(BaseModel):
    """One call the model asked for: executed (``result`` holds the snippets) or refused (``error``)."""

    tool: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    query: str = ""
    thought: str = ""  # the <think> text of the reply that made the call
    result: list[dict[str, Any]] = Field(default_factory=list)  # the snippets the tool returned
    error: str | None = None
    executed: bool = True  # False: refused by the loop limits, never sent to the tool
    timestamp: str = ""  # ISO 8601, UTC
    duration_ms: float = 0.0

    @property
    def ids(self) -> list[str]:
        return [str(s.get("id")) for s in self.result if s.get("id") is not None]

    @property
    def call(self) -> ToolCall:
        """The call as the model wrote it and the tool received it."""
        return ToolCall(self.tool, dict(self.parameters), self.query)


class Trajectory(BaseModel):
    question: str
    interleaved_text: str = ""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    final_answer: str | None = None  # the raw inner text of <answer>, cites kept
    total_tool_calls: int = 0  # calls executed (refused calls are in tool_calls with executed=False)
    tools_used: list[str] = Field(default_factory=list)
    ids_cited: list[str] = Field(default_factory=list)
    hallucinated_outputs: int = 0  # <tool_output> blocks the model wrote itself (stripped)
    stop_reason: str = "answered"
    reasoning: str = ""  # the <think> text of the answering reply
    steps: int = 0  # LM calls made by the step policy
    truncated: int = 0  # replies the LM's token limit cut inside their call (the call did not run)
    markup_removed: int = 0  # markup removed from executed queries and parameters (the words around it kept)
    dropped_citations: list[str] = Field(default_factory=list)  # ids the answer cited that no tool returned,
    #                                                              taken out of it (``cite_tags.keep_cited``)

    @property
    def returned_ids(self) -> list[str]:
        """Every snippet id a tool returned in this run, first appearance first."""
        return list(dict.fromkeys(i for call in self.tool_calls for i in call.ids))

    @computed_field
    @property
    def invalid_citations(self) -> list[str]:
        """The ids the answer cited that no tool returned (dropped from it, or still in ``ids_cited``): written
        next to them in every export (a JSONL line, a report row), so a fine-tuning set never takes an invented
        id for a citation."""
        returned = set(self.returned_ids)
        return list(dict.fromkeys([*self.dropped_citations, *(i for i in self.ids_cited if i not in returned)]))

    @property
    def succeeded(self) -> bool:
        """Answered, with at least one citation and none the tools did not return."""
        return self.stop_reason == "answered" and bool(self.ids_cited) and not self.invalid_citations

    def to_trace(self, task_id: str, *, is_correct: bool | None = None, sub_task: str = "") -> dict[str, Any]:
        """The ExperienceRetrieval trace of this run; ``is_correct`` defaults to :attr:`succeeded`."""
        steps = [{"thought": call.thought, "tool": call.tool, "tool_input": call.query,
                  "observation": _observation(call)} for call in self.tool_calls]
        return {"task_id": task_id, "question": self.question, "sub_task": sub_task, "images": [],
                "tools": self.tools_used, "steps": steps, "reasoning": self.reasoning,
                "final_answer": self.final_answer or "",
                "is_correct": self.succeeded if is_correct is None else is_correct,
                "ids_cited": self.ids_cited, "stop_reason": self.stop_reason}


def _observation(call: ToolCallRecord) -> str:
    """A step's observation in a trace: the tool's error or its result ids, escaped like a tool output
    (a tool's text is data, never markup)."""
    if call.error:
        return f"error: {escape_tool_text(call.error)}"
    return f"{len(call.result)} results: " + ", ".join(escape_tool_text(i) for i in call.ids)


def write_jsonl(trajectories: Iterable[tuple[str, Trajectory]], path: str | Path) -> int:
    """Write ``(id, trajectory)`` pairs one JSON object a line; returns the number written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"id": task_id, **trajectory.model_dump()}, ensure_ascii=False) + "\n"
             for task_id, trajectory in trajectories]
    write_durably(path, "".join(lines))
    return len(lines)


def write_traces(traces: Iterable[dict[str, Any]], directory: str | Path) -> int:
    """Write trace dicts (from :meth:`Trajectory.to_trace`) as ``<directory>/tasks/<task_id>/trace.json``.

    Each file is written to a temporary name and renamed, so a reader never sees half a trace; an
    existing trace with the same task_id is replaced. Returns the number written.
    """
    root = Path(directory) / "tasks"
    n = 0
    for trace in traces:
        task_id = str(trace["task_id"])
        if not task_id or "/" in task_id or task_id.startswith("."):
            raise InvalidValue(f"trace task_id {task_id!r} cannot name a directory")
        target = root / task_id / "trace.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        write_durably(target, json.dumps(trace, ensure_ascii=False, indent=2))
        n += 1
    return n
