"""Experience evaluation data: a traces directory plus held-out new tasks (`queries.jsonl`).

Each query line is ``{"id", "question", "sub_task"?, "images"?, "caption"?, "family"?,
"relevant_task_ids": [...]}``. Splits are the same stable hash of the id as for the smart-home data.

The reader is liberal like the trace reader: ``images`` or ``relevant_task_ids`` given as one string,
an id or caption given as a number, a UTF-8 BOM and extra fields are accepted (each normalisation
counted in a ``ReadReport``); a line it cannot understand is skipped with ``file:line: field: what
was expected``, and the load fails (``DataSetShrunk``) when more than ``max_skipped`` of the lines
were skipped (default 0: any unreadable line fails, naming it) or nothing usable is left.

Labels that would corrupt a metric are errors naming the line, whatever ``max_skipped`` allows: an id
given twice (both lines named) and, when the traces the queries are scored against are known, a
relevant task id that is not one of them (a relevant trace no retriever can ever return).
"""

from __future__ import annotations

import json
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy

from ..data_files.read_report import (
    NumberTooLong,
    ReadReport,
    Unreadable,
    load_json,
    not_finite,
    read_regular,
    text_problem,
)
from ..errors import DataFileError, InvalidValue
from .smarthome import SPLITS, resolve_dataset, split_of

__all__ = ["ExperienceDataError", "ExperienceQuery", "load_experience_queries"]


class ExperienceDataError(DataFileError):
    """Experience queries that cannot be read; the message names the file, the line and the field."""


@dataclass(frozen=True)
class ExperienceQuery:
    id: str
    question: str
    relevant_task_ids: tuple[str, ...]
    sub_task: str | None = None
    images: tuple[str, ...] = ()
    caption: str | None = None
    family: str | None = None

    @property
    def split(self) -> str:
        return split_of(self.id)

    def to_example(self, base: Path | None = None) -> dspy.Example:
        """Images become paths under the dataset directory (``base``) so the program can read them; one
        that a link leads out of the directory is left out (a dataset names files inside itself only)."""
        root = base.resolve() if base else None
        images = [str(base / p) for p in self.images if (base / p).resolve().is_relative_to(root)] if base \
            else list(self.images)
        return dspy.Example(id=self.id, question=self.question, images=images, caption=self.caption,
                            sub_task=self.sub_task, family=self.family,
                            relevant_task_ids=list(self.relevant_task_ids)
                            ).with_inputs("question", "images", "caption", "sub_task")


def _got(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _text(row: dict, key: str, kinds: list[str], required: bool = False) -> str | None:
    value = row.get(key)
    if not_finite(value):
        raise Unreadable("wrong type", f"{key}: expected a string, got {not_finite(value)}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        kinds.append(f"{key} as a number")
        value = str(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise Unreadable("missing field", f"{key}: expected a non-empty string, "
                              + ("the field is missing" if value is None else "got an empty one"))
        return None
    if not isinstance(value, str):
        raise Unreadable("wrong type", f"{key}: expected a string, got {_got(value)}")
    return value


def _strings(row: dict, key: str, kinds: list[str], required: bool = False) -> list[str]:
    value = row.get(key)
    if value is None and not required:
        return []
    if isinstance(value, str):
        kinds.append(f"{key} as one string")
        value = [value]
    if not isinstance(value, list):
        if value is None:
            raise Unreadable("missing field", f"{key}: expected a list of strings, the field is missing")
        raise Unreadable("wrong type", f"{key}: expected a list of strings, got {_got(value)}")
    out = []
    for i, item in enumerate(value):
        if isinstance(item, int) and not isinstance(item, bool):
            kinds.append(f"{key} as numbers")
            item = str(item)
        if not isinstance(item, str):
            raise Unreadable("wrong type", f"{key}[{i}]: expected a string, got {_got(item)}")
        out.append(item)
    return out


def _inside(paths: list[str], kinds: list[str]) -> list[str]:
    """Image paths relative to the dataset; an absolute one or one climbing out with ``..`` is dropped
    (and counted), so a query can never hand a file from elsewhere to the LM."""
    inside = [p for p in paths if not Path(p).is_absolute() and ".." not in Path(p).parts]
    if len(inside) < len(paths):
        kinds.append("image path outside the dataset dropped")
    return inside


def _query(row: Any) -> tuple[ExperienceQuery, list[str]]:
    if not isinstance(row, dict):
        raise Unreadable("not a JSON object", f"expected a JSON object (one query), got {_got(row)}")
    for key, value in row.items():
        problem = text_problem(value)
        if problem:
            raise Unreadable("lone surrogate", f"{key}: {problem}")
    kinds: list[str] = []
    query = ExperienceQuery(_text(row, "id", kinds, required=True), _text(row, "question", kinds, required=True),
                            tuple(_strings(row, "relevant_task_ids", kinds, required=True)),
                            _text(row, "sub_task", kinds), tuple(_inside(_strings(row, "images", kinds), kinds)),
                            _text(row, "caption", kinds), _text(row, "family", kinds))
    return query, kinds


def load_experience_queries(name_or_path: str | Path, split: str | None = None, *, max_skipped: float = 0.0,
                            report: ReadReport | None = None,
                            task_ids: Container[str] | None = None) -> list[ExperienceQuery]:
    """Parse ``queries.jsonl`` of an experience dataset (the queries of ``split``, else all).

    Each line is read liberally; an unreadable line is skipped into ``report`` (``file:line: field:
    what was expected``), and ``DataSetShrunk`` is raised when more than ``max_skipped`` of the lines
    were skipped or none is usable. A file that is missing, not a regular file or too large is a
    ValueError naming it. A repeated id, and with ``task_ids`` (the tasks the queries are scored against,
    e.g. a bank) a relevant task id not among them, is a ExperienceDataError naming the line."""
    if split is not None and split not in SPLITS:
        raise InvalidValue(f"unknown split {split!r}; choose from {list(SPLITS)}")
    path = resolve_dataset(name_or_path) / "queries.jsonl"
    if not path.exists() and not path.is_symlink():
        raise ExperienceDataError(f"{path}: file is missing")
    report = report if report is not None else ReadReport("queries")
    text = read_regular(path, report=report)
    queries, first_line = [], {}
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        report.read += 1
        try:
            try:
                row = load_json(line)
            except json.JSONDecodeError as exc:
                raise Unreadable("not JSON", f"invalid JSON ({exc.msg} at column {exc.colno})") from None
            except NumberTooLong as exc:
                raise Unreadable("number too long", str(exc)) from None
            except RecursionError:
                raise Unreadable("not JSON", "invalid JSON (nested too deeply)") from None
            query, kinds = _query(row)
        except Unreadable as exc:
            report.skip(where, exc.reason, str(exc))
            continue
        if query.id in first_line:
            raise ExperienceDataError(f"{where}: id {query.id!r} repeats line {first_line[query.id]}")
        first_line[query.id] = lineno
        unknown = [i for i, t in enumerate(query.relevant_task_ids) if task_ids is not None and t not in task_ids]
        if unknown:
            raise ExperienceDataError(f"{where}: field 'relevant_task_ids[{unknown[0]}]': "
                                f"{query.relevant_task_ids[unknown[0]]!r} is not a task of the traces")
        for kind in dict.fromkeys(kinds):
            report.normalise(kind)
        if split is None or query.split == split:
            queries.append(query)
    report.check(max_skipped, str(path))
    return queries
