"""Solved agent traces: the on-disk format, a tolerant loader, and the text a trace is indexed by.

A traces directory holds ``tasks/<task_id>/trace.json`` (README "Trace format"). Traces come from
agent runs and are written by other programs, so one broken file must not stop a bank build: the
loader skips it, logs a warning naming the file and field, and counts it. Only ``is_correct: true``
traces are returned; a wrong solution is not experience worth repeating.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Trace", "TraceLoad", "load_traces", "index_text", "query_text"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Trace:
    task_id: str
    question: str
    sub_task: str
    tools: tuple[str, ...]
    is_correct: bool
    images: tuple[str, ...] = ()
    caption: str | None = None
    steps: tuple[dict[str, Any], ...] = ()
    reasoning: str = ""
    final_answer: str = ""
    path: Path | None = None  # the trace.json it came from; images are relative to its directory

    def image_paths(self) -> list[Path]:
        base = self.path.parent if self.path else Path()
        return [base / p for p in self.images]

    def index_text(self, caption: str | None = None) -> str:
        return index_text(self.question, self.sub_task, self.tools, caption if caption is not None else self.caption)

    def bank_metadata(self, caption: str | None) -> dict[str, Any]:
        """What a bank row keeps, so the program can rerank and summarise without the traces directory."""
        return {"task_id": self.task_id, "question": self.question, "sub_task": self.sub_task,
                "tools": list(self.tools), "caption": caption, "index_text": self.index_text(caption),
                "reasoning": self.reasoning, "final_answer": self.final_answer,
                "steps": [{"thought": s.get("thought", ""), "tool": s.get("tool", "")} for s in self.steps]}


def index_text(question: str, sub_task: str, tools: tuple[str, ...] | list[str], caption: str | None) -> str:
    """``Image description: {caption}\\n{question}\\nTask: {sub_task}\\nTools (in order): {tools}``.

    Lines with nothing to say (no caption, no sub_task, no tools) are omitted rather than left empty.
    """
    lines = [f"Image description: {caption}"] if caption else []
    lines.append(question)
    if sub_task:
        lines.append(f"Task: {sub_task}")
    if tools:
        lines.append(f"Tools (in order): {', '.join(tools)}")
    return "\n".join(lines)


def query_text(question: str, caption: str | None = None, sub_task: str | None = None) -> str:
    """A new task rendered like an index text (minus tools, unknown before solving), for the no-LM path.

    Mirroring the document format matters: on the bundled data the bare question reaches hit@5 0.87
    on test, question + caption + sub_task 1.00 (BENCHMARKS.md).
    """
    return index_text(question, sub_task or "", (), caption)


@dataclass
class TraceLoad:
    """The outcome of reading a traces directory: the usable traces and what was left out, and why."""

    traces: list[Trace] = field(default_factory=list)
    incorrect: int = 0
    corrupt: list[str] = field(default_factory=list)  # "path: reason", one per skipped file

    @property
    def seen(self) -> int:
        return len(self.traces) + self.incorrect + len(self.corrupt)


class _Corrupt(ValueError):
    pass


def _field(raw: dict, name: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    if name not in raw or raw[name] is None:
        if default is ...:
            raise _Corrupt(f"field {name!r} is missing")
        return default
    value = raw[name]
    if not isinstance(value, kind) or (kind is str and not value.strip() and default is ...):
        raise _Corrupt(f"field {name!r} must be a {getattr(kind, '__name__', kind)}, got {value!r:.60}")
    return value


def _parse(raw: Any, path: Path) -> Trace:
    if not isinstance(raw, dict):
        raise _Corrupt("expected a JSON object")
    tools = _field(raw, "tools", list, [])
    images = _field(raw, "images", list, [])
    steps = _field(raw, "steps", list, [])
    for name, items, kind in (("tools", tools, str), ("images", images, str), ("steps", steps, dict)):
        for i, item in enumerate(items):
            if not isinstance(item, kind):
                raise _Corrupt(f"field {name!r}[{i}] must be a {kind.__name__}")
    is_correct = _field(raw, "is_correct", bool)
    return Trace(
        task_id=_field(raw, "task_id", str).strip(),
        question=_field(raw, "question", str).strip(),
        sub_task=_field(raw, "sub_task", str, "").strip(),
        tools=tuple(tools),
        is_correct=is_correct,
        images=tuple(images),
        caption=(_field(raw, "caption", str, "").strip() or None),
        steps=tuple(steps),
        reasoning=_field(raw, "reasoning", str, ""),
        final_answer=str(raw.get("final_answer", "")),
        path=path,
    )


def tasks_dir(directory: str | Path) -> Path:
    """Accept the traces directory (holding ``tasks/``) or the ``tasks`` directory itself."""
    directory = Path(directory)
    if (directory / "tasks").is_dir():
        return directory / "tasks"
    if directory.is_dir() and any(directory.glob("*/trace.json")):
        return directory
    raise FileNotFoundError(f"{directory}: no tasks/<task_id>/trace.json files here")


def load_traces(directory: str | Path) -> TraceLoad:
    """Read every ``tasks/*/trace.json``; correct traces in task-id order, the rest counted.

    A file that is not valid JSON, lacks a required field (task_id, question, is_correct) or has a
    field of the wrong type is skipped with a warning; a second trace with an already seen task_id too.
    """
    out = TraceLoad()
    seen: set[str] = set()
    for path in sorted(tasks_dir(directory).glob("*/trace.json")):
        try:
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise _Corrupt(f"invalid JSON ({e})") from None
            trace = _parse(raw, path)
            if trace.task_id in seen:
                raise _Corrupt(f"field 'task_id' {trace.task_id!r} already used by another trace")
        except _Corrupt as e:
            out.corrupt.append(f"{path}: {e}")
            logger.warning("skipping %s: %s", path, e)
            continue
        seen.add(trace.task_id)
        if trace.is_correct:
            out.traces.append(trace)
        else:
            out.incorrect += 1
    return out
