"""Solved agent traces: the on-disk format, a liberal loader, and the text a trace is indexed by.

A traces directory holds ``tasks/<task_id>/trace.json`` (README "Trace format"). Traces come from
agent runs and are written by other programs, in shapes a little off the documented one. The loader
normalises what it can understand (plain-string steps, tool dicts, one string for a list, ``"true"``
or ``1`` for true, a UTF-8 BOM) and counts each kind in a ``ReadReport``; a trace it cannot
understand is skipped with one ``file: field: what was expected`` line, never a traceback. Only
regular files are read (a FIFO or a directory named ``trace.json`` is skipped, never waited on),
each up to ``TRACE_MAX_BYTES``. Only ``is_correct: true`` traces are returned; a wrong solution is
not experience worth repeating (incorrect traces are counted, not skipped as unreadable).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data_files.read_report import (
    FileProblem,
    NumberTooLong,
    ReadReport,
    Unreadable,
    load_json,
    not_finite,
    read_regular,
    text_problem,
)
from ..errors import FileMissing

__all__ = ["TRACE_MAX_BYTES", "Trace", "TraceLoad", "load_traces", "index_text", "query_text", "parse_trace"]

TRACE_MAX_BYTES = 16 * 1024 * 1024  # one trace.json; agent logs with inlined observations stay well below


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
        """The images under the trace's directory; one a link leads out of it is left out (a dataset
        names files inside itself only)."""
        base = (self.path.parent if self.path else Path()).resolve()
        return [base / p for p in self.images if (base / p).resolve().is_relative_to(base)]

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
    """The outcome of reading a traces directory: the usable traces, the incorrect ones counted, and
    the read report (files read, normalisations per kind, files skipped per reason with their lines)."""

    traces: list[Trace] = field(default_factory=list)
    incorrect: int = 0
    report: ReadReport = field(default_factory=lambda: ReadReport("traces"))

    @property
    def corrupt(self) -> list[str]:
        """``path: field: what was expected``, one per skipped file."""
        return self.report.problems

    @property
    def seen(self) -> int:
        return self.report.read


def _short(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _wrong(name: str, expected: str, value: Any) -> Unreadable:
    return Unreadable("wrong type", f"{name}: expected {expected}, got {_short(value)}")


def _not_a_number(name: str, value: float) -> Unreadable:
    return Unreadable("wrong type", f"{name}: expected a string, got {not_finite(value)} (not a value JSON has)")


_TRUE, _FALSE = {"true", "yes", "1"}, {"false", "no", "0"}
_STEP_FIELDS = ("thought", "tool", "tool_input", "observation")
_TOOL_NAME = 'a tool name (a string, {"name": …} or {"function": {"name": …}})'


def _tool_name(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        name = item.get("name")
        if name is None and isinstance(item.get("function"), dict):
            name = item["function"].get("name")
        if isinstance(name, str) and name.strip():
            return name
    return None


class _Reader:
    """Reads one raw trace object into a Trace, noting each normalisation it applies (once per kind)."""

    def __init__(self, raw: dict, path: Path | None):
        self.raw, self.path, self.kinds = raw, path, []

    def note(self, kind: str) -> None:
        if kind not in self.kinds:
            self.kinds.append(kind)

    def text(self, name: str, required: bool = False) -> str:
        value = self.raw.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                raise Unreadable("missing field", f"{name}: expected a non-empty string, the field is missing"
                                  if value is None else f"{name}: expected a non-empty string, got an empty one")
            return ""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise _wrong(name, "a string", value)
        if not_finite(value):
            raise _not_a_number(name, value)
        if not isinstance(value, str):
            self.note(f"{name} as a number")
            return str(value)
        return value.strip()

    def task_id(self) -> str:
        value = self.raw.get("task_id")
        if isinstance(value, int) and not isinstance(value, bool):
            self.note("task_id as a number")
            return str(value)
        if value is not None and not isinstance(value, str):
            raise _wrong("task_id", "a string", value)
        return self.text("task_id", required=True)

    def is_correct(self) -> bool:
        value = self.raw.get("is_correct")
        if isinstance(value, bool):
            return value
        if isinstance(value, int | float) and value in (0, 1):
            self.note("is_correct as 1/0")
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            self.note("is_correct as text")
            return value.strip().lower() in _TRUE
        if value is None:
            raise Unreadable("missing field", "is_correct: expected true or false, the field is missing")
        raise _wrong("is_correct", 'true or false (or 1/0, "true"/"false", "yes"/"no")', value)

    def string_list(self, name: str, expected: str, item_of=None) -> list[str]:
        value = self.raw.get(name)
        if value is None:
            return []
        if isinstance(value, str):
            self.note(f"{name} as one string")
            return [value] if value.strip() else []
        if not isinstance(value, list):
            raise _wrong(name, f"a list of {expected}", value)
        out = []
        for i, item in enumerate(value):
            got = item if isinstance(item, str) else item_of(item) if item_of else None
            if got is None:
                raise _wrong(f"{name}[{i}]", expected, item)
            if not isinstance(item, str):
                self.note(f"{name} as dicts")
            out.append(got)
        return out

    def caption(self) -> str | None:
        value = self.raw.get("caption")
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            self.note("caption as a list")
            value = " ".join(v.strip() for v in value if v.strip())
            return value or None
        return self.text("caption") or None

    def reasoning(self) -> str:
        value = self.raw.get("reasoning")
        if value is None:
            return ""
        if isinstance(value, list):
            if not all(isinstance(v, str) for v in value):
                bad = next(i for i, v in enumerate(value) if not isinstance(v, str))
                raise _wrong(f"reasoning[{bad}]", "a string", value[bad])
            self.note("reasoning as a list")
            return "\n".join(value)
        if not isinstance(value, str):
            raise _wrong("reasoning", "a string (or a list of strings)", value)
        return value

    def final_answer(self) -> str:
        value = self.raw.get("final_answer")
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if not_finite(value):
            raise _not_a_number("final_answer", value)
        self.note("final_answer as JSON")
        return json.dumps(value, ensure_ascii=False) if not isinstance(value, int | float) else str(value)

    def steps(self) -> list[dict[str, Any]]:
        value = self.raw.get("steps")
        if value is None:
            return []
        if isinstance(value, str):
            self.note("steps as one string")
            value = [value]
        if not isinstance(value, list):
            raise _wrong("steps", "a list of steps", value)
        steps = []
        for i, step in enumerate(value):
            if isinstance(step, str):
                if not isinstance(self.raw["steps"], str):
                    self.note("steps as strings")
                step = {"thought": step}
            elif not isinstance(step, dict):
                raise _wrong(f"steps[{i}]", 'a step ({"thought", "tool", "tool_input", "observation"}) or a string',
                             step)
            elif any(step.get(key) is None for key in _STEP_FIELDS):
                self.note("step fields defaulted")
            step = {**step, **{key: "" for key in _STEP_FIELDS if step.get(key) is None}}
            for key in ("thought", "tool"):
                got = step[key]
                if key == "tool" and not isinstance(got, str) and _tool_name(got) is not None:
                    self.note("steps' tool as a dict")
                    step[key] = _tool_name(got)
                elif not_finite(got):
                    raise _not_a_number(f"steps[{i}].{key}", got)
                elif isinstance(got, int | float) and not isinstance(got, bool):
                    self.note(f"steps' {key} as a number")
                    step[key] = str(got)
                elif not isinstance(got, str):
                    raise _wrong(f"steps[{i}].{key}", _TOOL_NAME if key == "tool" else "a string", got)
            steps.append(step)
        return steps

    def images(self) -> list[str]:
        """Image paths relative to the trace's directory; an absolute one or one climbing out with
        ``..`` is dropped (and counted): a trace names files inside its own folder only."""
        paths = self.string_list("images", "an image path (a string)")
        inside = [p for p in paths if not Path(p).is_absolute() and ".." not in Path(p).parts]
        if len(inside) < len(paths):
            self.note("image path outside the trace's folder dropped")
        return inside

    def trace(self) -> Trace:
        return Trace(task_id=self.task_id(), question=self.text("question", required=True),
                     sub_task=self.text("sub_task"), is_correct=self.is_correct(),
                     tools=tuple(self.string_list("tools", _TOOL_NAME, _tool_name)),
                     images=tuple(self.images()),
                     caption=self.caption(), steps=tuple(self.steps()), reasoning=self.reasoning(),
                     final_answer=self.final_answer(), path=self.path)


def parse_trace(raw: Any, path: Path | None = None) -> tuple[Trace, list[str]]:
    """One raw trace object -> (Trace, the normalisations applied). Raises ValueError with
    ``field: what was expected`` when the trace cannot be understood."""
    if not isinstance(raw, dict):
        kind = "null" if raw is None else "a list" if isinstance(raw, list) else f"a {type(raw).__name__}"
        raise Unreadable("not a JSON object", f"expected a JSON object (one trace), got {kind}")
    for name, value in raw.items():
        problem = text_problem(value)
        if problem:
            raise Unreadable("lone surrogate", f"{name}: {problem}")
    reader = _Reader(raw, path)
    return reader.trace(), reader.kinds


_FILE_REASONS = (("not a regular file", "not a regular file"), ("is a directory", "not a regular file"),
                 ("byte limit", "too large"), ("not UTF-8", "not UTF-8"), ("cannot be opened", "cannot be opened"),
                 ("file is missing", "file is missing"))


def _read_one(path: Path, max_bytes: int) -> tuple[Trace, list[str]]:
    seen = ReadReport()
    try:
        text = read_regular(path, max_bytes, report=seen)
    except FileProblem as exc:
        message = str(exc).removeprefix(f"{path}: ")
        if "byte limit" in message:
            message += " (a trace.json is capped at that size)"
        raise Unreadable(next((r for key, r in _FILE_REASONS if key in message), "cannot be read"), message) from None
    kinds = list(seen.normalised)
    if not text.strip():
        raise Unreadable("not JSON", "expected a JSON object (one trace), the file is empty")
    try:
        raw = load_json(text)
    except json.JSONDecodeError as exc:
        raise Unreadable("not JSON", f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except NumberTooLong as exc:
        raise Unreadable("number too long", f"{exc} (line {exc.line})" if exc.line else str(exc)) from None
    except RecursionError:
        raise Unreadable("not JSON", "invalid JSON (nested too deeply)") from None
    trace, more = parse_trace(raw, path)
    return trace, kinds + more


def tasks_dir(directory: str | Path) -> Path:
    """Accept the traces directory (holding ``tasks/``) or the ``tasks`` directory itself."""
    directory = Path(directory)
    if (directory / "tasks").is_dir():
        return directory / "tasks"
    if directory.is_dir() and any(directory.glob("*/trace.json")):
        return directory
    raise FileMissing(f"{directory}: no tasks/<task_id>/trace.json files here")


def _trace_files(tasks: Path) -> list[Path]:
    """Every ``<task_id>/trace.json`` entry, whatever it is (a dangling link is read, and reported, too)."""
    files = []
    for entry in tasks.iterdir():
        path = entry / "trace.json"
        if entry.is_dir() and os.path.lexists(path):
            files.append(path)
    return sorted(files)


def load_traces(directory: str | Path, max_bytes: int = TRACE_MAX_BYTES) -> TraceLoad:
    """Read every ``tasks/*/trace.json``; correct traces in path order, the incorrect ones counted.

    Common variants are normalised and counted per kind in ``.report``; a file that is not a regular
    file, is over ``max_bytes``, is not UTF-8 JSON, holds an integer longer than Python converts, lacks
    ``task_id``/``question``/``is_correct``, has a field of a type that cannot be normalised (NaN or
    Infinity as a text, say), holds a lone surrogate, or repeats a task_id is skipped
    and counted per reason, with its line (``path: field: what was expected``) in ``.report.problems``.
    """
    out = TraceLoad()
    seen: set[str] = set()
    for path in _trace_files(tasks_dir(directory)):
        out.report.read += 1
        try:
            trace, kinds = _read_one(path, max_bytes)
            if trace.task_id in seen:
                raise Unreadable("duplicate task_id",
                                  f"task_id: expected a new id, {trace.task_id!r} is already used by another trace")
        except Unreadable as exc:
            out.report.skip(str(path), exc.reason, str(exc))
            continue
        for kind in kinds:
            out.report.normalise(kind)
        seen.add(trace.task_id)
        if trace.is_correct:
            out.traces.append(trace)
        else:
            out.incorrect += 1
    return out
