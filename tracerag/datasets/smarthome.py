"""Smart-home evaluation data: homes plus labelled queries (`queries.jsonl`).

A dataset is a home directory, or a directory of home directories. The bundled one is package data,
so a plain `pip install` can evaluate. Splits are a stable hash of the query id, so they never
change when queries are added and a user's own data gets them for free.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import dspy
from pydantic import ValidationError

from ..retrievers.home import HomeDataError, iter_jsonl
from ..signatures.query_ir import QueryIR

BUNDLED_ROOT = Path(__file__).parent / "data"
SPLITS = {"train": (0, 40), "dev": (40, 60), "test": (60, 100)}  # percent buckets of the id hash


@dataclass(frozen=True)
class Target:
    device_id: str
    command_ids: tuple[str, ...]  # acceptable alternatives


@dataclass(frozen=True)
class LabelledQuery:
    id: str
    home: str
    query: str
    expected: tuple[Target, ...]
    quantifier: str | None = None
    ir: dict | None = None

    @property
    def split(self) -> str:
        return split_of(self.id)

    def to_example(self, rooms: Sequence[str] | None = None) -> dspy.Example:
        """Inputs ``query``, ``home``, ``ir`` (CommandRetrieval's call); the rest are labels.

        The example also carries what the parse step (ParseCommand) sees and should answer, so it can
        serve as that step's labelled demo: ``utterance`` (the query), ``rooms`` (the home's room names,
        when given) and ``ir``, the gold QueryIR with every field filled in (as written when it does not
        validate; None without one)."""
        fields = {"utterance": self.query} | ({"rooms": list(rooms)} if rooms is not None else {})
        return dspy.Example(id=self.id, query=self.query, home=self.home, expected=list(self.expected),
                            quantifier=self.quantifier, ir=_full_ir(self.ir), **fields
                            ).with_inputs("query", "home", "ir")


def _full_ir(ir: dict | None) -> dict | None:
    """The gold IR with the defaults of the fields it leaves out; unchanged when it does not validate."""
    if ir is None:
        return None
    try:
        return QueryIR.model_validate(ir).model_dump()
    except ValidationError:
        return ir


def split_of(query_id: str) -> str:
    bucket = int(hashlib.sha256(query_id.encode()).hexdigest(), 16) % 100
    return next(name for name, (lo, hi) in SPLITS.items() if lo <= bucket < hi)


def resolve_dataset(name_or_path: str | Path) -> Path:
    """A path, or the name of a bundled dataset ("smarthome", "smarthome/home_large")."""
    path = Path(name_or_path)
    if path.exists():
        return path
    bundled = BUNDLED_ROOT / str(name_or_path)
    if bundled.exists():
        return bundled
    names = sorted(p.name for p in BUNDLED_ROOT.iterdir() if p.is_dir()) if BUNDLED_ROOT.exists() else []
    raise FileNotFoundError(f"dataset {name_or_path!r} is neither a directory nor a bundled dataset {names}")


def home_dirs(dataset: Path) -> list[Path]:
    """The home directories of a dataset (itself when it is one home)."""
    if (dataset / "devices.json").is_file():
        return [dataset]
    homes = sorted(p for p in dataset.iterdir() if (p / "devices.json").is_file())
    if not homes:
        raise HomeDataError(f"{dataset}: no devices.json here or in any subdirectory")
    return homes


def load_queries(path: Path, home: str) -> list[LabelledQuery]:
    """Parse queries.jsonl; a broken line is an error naming file, line and field."""
    queries, seen = [], set()
    for where, row in iter_jsonl(path):
        for key, kind in (("id", str), ("query", str), ("expected", list)):
            if not isinstance(row.get(key), kind):
                raise HomeDataError(f"{where}: field {key!r} is missing or not a {kind.__name__}")
        if row["id"] in seen:
            raise HomeDataError(f"{where}: field 'id' {row['id']!r} appears twice")
        seen.add(row["id"])
        targets = []
        for i, t in enumerate(row["expected"]):
            command = t.get("command_id") if isinstance(t, dict) else None
            if not isinstance(t, dict) or not isinstance(t.get("device_id"), str) or not command:
                raise HomeDataError(f"{where}: expected[{i}] needs 'device_id' and 'command_id'")
            targets.append(Target(t["device_id"], tuple(command) if isinstance(command, list) else (command,)))
        queries.append(LabelledQuery(row["id"], home, row["query"], tuple(targets), row.get("quantifier"),
                                     row.get("ir")))
    return queries


def load_dataset(name_or_path: str | Path, split: str | None = None) -> dict[Path, list[LabelledQuery]]:
    """Home directory -> its labelled queries (optionally one split)."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {list(SPLITS)}")
    out = {}
    for home in home_dirs(resolve_dataset(name_or_path)):
        path = home / "queries.jsonl"
        queries = load_queries(path, home.name) if path.is_file() else []
        out[home] = [q for q in queries if split is None or q.split == split]
    return out
