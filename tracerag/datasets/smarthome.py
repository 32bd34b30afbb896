"""Smart-home evaluation data: homes plus labelled queries (`queries.jsonl`).

A dataset is a home directory, or a directory of home directories. The bundled one is package data,
so a plain `pip install` can evaluate. Splits are a stable hash of the query id, so they never
change when queries are added and a user's own data gets them for free.

`queries.jsonl` is read liberally: a UTF-8 BOM, extra fields, an `id` or `device_id` given as a number,
`expected` given as one object and `command_id` given as a string or a list of alternatives are all
understood (normalisations are counted in a `ReadReport`). A line that cannot be understood is skipped
and counted with `file:line: field: what was expected`; the caller decides how much skipping is too much
(`ReadReport.check`). A duplicate `id` is an error: two labels for one case.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import dspy
from pydantic import ValidationError

from ..retrievers.home import MAX_FILE_BYTES, Home, HomeDataError
from ..retrievers.jsonl import iter_json_lines
from ..retrievers.read_report import ReadReport, text_problem
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
    if os.path.lexists(dataset / "devices.json"):  # a FIFO or directory there is reported by Home.load
        return [dataset]
    homes = sorted(p for p in dataset.iterdir() if os.path.lexists(p / "devices.json"))
    if not homes:
        raise HomeDataError(f"{dataset}: no devices.json here or in any subdirectory")
    return homes


class _Skip(Exception):
    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


def load_queries(path: Path, home: str, report: ReadReport | None = None) -> list[LabelledQuery]:
    """Parse queries.jsonl. A line that cannot be understood is counted in ``report`` as skipped, naming
    file, line and field; without a report, any skipped line is an error (``DataSetShrunk``)."""
    own = report is None
    report = ReadReport("queries") if own else report
    queries, seen = [], set()
    for where, row in iter_json_lines(path, HomeDataError, report=report, skip_bad_lines=True,
                                      max_bytes=MAX_FILE_BYTES):
        try:
            query = _query(row, home, report)
        except _Skip as skip:
            report.skip(where, skip.reason, skip.detail)
            continue
        if query.id in seen:
            raise HomeDataError(f"{where}: field 'id' {query.id!r} appears twice")
        seen.add(query.id)
        queries.append(query)
    if own:
        report.check(0.0, str(path))
    return queries


def _query(row: dict, home: str, report: ReadReport) -> LabelledQuery:
    query_id = _text(row, "id", "a string", report)
    text = _text(row, "query", "the utterance as a string", report)
    expected = row.get("expected")
    if isinstance(expected, dict):
        report.normalise("expected as one object")
        expected = [expected]
    if not isinstance(expected, list):
        raise _Skip("bad expected", f"field 'expected': expected a list of {{\"device_id\", \"command_id\"}}, "
                                    f"got {_kind(expected)}")
    targets = []
    for i, target in enumerate(expected):
        field = f"expected[{i}]"
        if not isinstance(target, dict):
            raise _Skip("bad expected", f"field '{field}': expected {{\"device_id\", \"command_id\"}}, "
                                        f"got {_kind(target)}")
        device_id = _text(target, "device_id", "a device id string", report, field=f"{field}.device_id",
                          reason="bad expected")
        command = target.get("command_id")
        commands = (command,) if isinstance(command, str) else tuple(command) if isinstance(command, list) else ()
        if not commands or not all(isinstance(c, str) and c and not text_problem(c) for c in commands):
            raise _Skip("bad expected", f"field '{field}.command_id': expected a command id string or a "
                                        f"non-empty list of them, got {_kind(command)}")
        targets.append(Target(device_id, commands))
    quantifier = row.get("quantifier")
    if quantifier is not None and not (isinstance(quantifier, str) and not text_problem(quantifier)):
        raise _Skip("bad quantifier", f"field 'quantifier': expected a string or null, got {_kind(quantifier)}")
    ir = row.get("ir")
    if ir is not None and not (isinstance(ir, dict) and not text_problem(ir)):
        raise _Skip("bad ir", f"field 'ir': expected a QueryIR object or null, got {_kind(ir)}")
    return LabelledQuery(query_id, home, text, tuple(targets), quantifier, ir)


def _text(row: dict, key: str, expected: str, report: ReadReport, *, field: str | None = None,
          reason: str | None = None) -> str:
    value, field, reason = row.get(key), field or key, reason or f"bad {key}"
    if isinstance(value, int) and not isinstance(value, bool):
        report.normalise(f"{field.split('.')[-1]} as a number")
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        got = "an empty string" if isinstance(value, str) else _kind(value)
        raise _Skip(reason, f"field {field!r}: expected {expected}, got {got}")
    problem = text_problem(value)
    if problem:
        raise _Skip(reason, f"field {field!r} {problem}")
    return value


def _kind(value) -> str:
    return {type(None): "nothing", bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def load_dataset(name_or_path: str | Path, split: str | None = None,
                 report: ReadReport | None = None) -> dict[Path, list[LabelledQuery]]:
    """Home directory -> its labelled queries (optionally one split).

    With a ``report``, skipped query lines are counted there and the caller checks it (the CLI prints
    ``report.summary()`` and fails above ``--max-skipped``); without one, any skipped line is an error."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {list(SPLITS)}")
    own = report is None
    report = ReadReport("queries") if own else report
    out = {}
    dataset = resolve_dataset(name_or_path)
    for home in home_dirs(dataset):
        path = home / "queries.jsonl"
        queries = load_queries(path, home.name, report) if os.path.lexists(path) else []
        out[home] = [q for q in queries if split is None or q.split == split]
    if own:
        report.check(0.0, str(dataset))
    return out


def drop_unknown_targets(queries_by_home: dict[Path, list[LabelledQuery]], homes: Mapping[str, Home],
                         report: ReadReport) -> dict[Path, list[LabelledQuery]]:
    """The queries whose expected devices all exist in their home; the others are counted as skipped in
    ``report`` (a label naming a device the home does not have cannot be scored)."""
    out = {}
    for home_dir, queries in queries_by_home.items():
        kept = []
        for q in queries:
            home = homes.get(q.home)
            known = {d.device_id for d in home.devices} if home is not None else None
            missing = [t.device_id for t in q.expected if known is not None and t.device_id not in known]
            if missing:
                report.skip(f"{home_dir / 'queries.jsonl'}: id {q.id!r}", "unknown device",
                            f"field 'expected.device_id': {missing[0]!r} is not a device of home {q.home!r}")
            else:
                kept.append(q)
        out[home_dir] = kept
    return out
