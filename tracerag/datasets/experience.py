"""Experience evaluation data: a traces directory plus held-out new tasks (`queries.jsonl`).

Each query line is ``{"id", "question", "sub_task"?, "images"?, "caption"?, "family"?,
"relevant_task_ids": [...]}``. Splits are the same stable hash of the id as for the smart-home data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dspy

from ..retrievers.home import HomeDataError, iter_jsonl
from .smarthome import SPLITS, resolve_dataset, split_of

__all__ = ["ExperienceQuery", "load_experience_queries"]


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
        """Images become paths relative to the dataset directory (``base``) so the program can read them."""
        images = [str(base / p) if base else p for p in self.images]
        return dspy.Example(id=self.id, question=self.question, images=images, caption=self.caption,
                            sub_task=self.sub_task, family=self.family,
                            relevant_task_ids=list(self.relevant_task_ids)
                            ).with_inputs("question", "images", "caption", "sub_task")


def _optional(row: dict, key: str, kind: type, where: str):
    value = row.get(key)
    if value is not None and not isinstance(value, kind):
        raise HomeDataError(f"{where}: field {key!r} must be a {kind.__name__}")
    return value


def load_experience_queries(name_or_path: str | Path, split: str | None = None) -> list[ExperienceQuery]:
    """Parse ``queries.jsonl`` of an experience dataset; a broken line is an error naming file, line, field."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {list(SPLITS)}")
    path = resolve_dataset(name_or_path) / "queries.jsonl"
    if not path.is_file():
        raise HomeDataError(f"{path}: file is missing")
    queries, seen = [], set()
    for where, row in iter_jsonl(path):
        for key, kind in (("id", str), ("question", str), ("relevant_task_ids", list)):
            if not isinstance(row.get(key), kind):
                raise HomeDataError(f"{where}: field {key!r} is missing or not a {kind.__name__}")
        if row["id"] in seen:
            raise HomeDataError(f"{where}: field 'id' {row['id']!r} appears twice")
        seen.add(row["id"])
        relevant = row["relevant_task_ids"]
        if not all(isinstance(t, str) for t in relevant):
            raise HomeDataError(f"{where}: field 'relevant_task_ids' must be a list of strings")
        images = _optional(row, "images", list, where) or []
        query = ExperienceQuery(row["id"], row["question"], tuple(relevant), _optional(row, "sub_task", str, where),
                                tuple(str(p) for p in images), _optional(row, "caption", str, where),
                                _optional(row, "family", str, where))
        if split is None or query.split == split:
            queries.append(query)
    return queries
