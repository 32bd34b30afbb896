"""Smart-home evaluation data: homes plus labelled queries (`queries.jsonl`).

A dataset is a home directory, or a directory of home directories. The bundled one is package data,
so a plain `pip install` can evaluate. Splits are a stable hash of the query id, so they never
change when queries are added and a user's own data gets them for free.

`queries.jsonl` is read liberally: a UTF-8 BOM, extra fields, an `id` or `device_id` given as a number,
`expected` given as one object and `command_id` given as a string or a list of alternatives are all
understood (normalisations are counted in a `ReadReport`). A line that cannot be understood is skipped
and counted with `file:line: field: what was expected`; the caller decides how much skipping is too much
(`ReadReport.check`).

Labels that would corrupt a metric are errors naming the line, whatever ``--max-skipped`` allows
(they are not unreadable lines, they are wrong ones): a duplicate `id` (two labels for one case, both
lines named), `expected: []`, a target naming a device the home does not have or a command (any
alternative) that device's profile does not have (a target no retriever can ever hit), and a gold `ir`
that is not a valid QueryIR as written (it is checked, never normalised, so `--ir gold` stays gold).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from ..data_files.bundled import BUNDLED_ROOT, resolve_dataset  # noqa: F401  (BUNDLED_ROOT: importable from here as before)
from ..data_files.jsonl import iter_json_lines
from ..data_files.read_report import ReadReport, Unreadable, not_finite, text_problem
from ..device_operations import OPERATIONS
from ..errors import InvalidValue
from ..home_commands.file_fields import MAX_FILE_BYTES, HomeDataError
from ..home_commands.home import Home
from ..signatures.query_ir import DEVICE_CATEGORIES, UNKNOWN_CATEGORY, QueryIR

QUERIES_FILE = "queries.jsonl"
HELDOUT_FILE = "heldout.jsonl"  # hand-written queries of the bundled homes, kept out of tuning
NEGATED_FILE = "negated.jsonl"  # hand-written negated commands ("别开厨房的灯"), home_large and home_en
SPLITS = {"train": (0, 40), "dev": (40, 60), "test": (60, 100)}  # percent buckets of the id hash

if TYPE_CHECKING:  # DSPy is imported by to_example: resolving and reading a home does not need it
    import dspy


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
    where: str = field(default="", compare=False, repr=False)  # "file:line" it was read from

    @property
    def split(self) -> str:
        return split_of(self.id)

    def to_example(self, rooms: Sequence[str] | None = None) -> dspy.Example:
        """Inputs ``query``, ``home``, ``ir`` (CommandRetrieval's call); the rest are labels.

        The example also carries what the parse step (ParseCommand) sees and should answer, so it can
        serve as that step's labelled demo: ``utterance`` (the query), ``rooms`` (the home's room names,
        when given) and ``ir``, the gold QueryIR with every field filled in (as written when it does not
        validate; None without one)."""
        import dspy

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


def home_dirs(dataset: Path) -> list[Path]:
    """The home directories of a dataset (itself when it is one home)."""
    if os.path.lexists(dataset / "devices.json"):  # a FIFO or directory there is reported by Home.load
        return [dataset]
    homes = sorted(p for p in dataset.iterdir() if os.path.lexists(p / "devices.json"))
    if not homes:
        raise HomeDataError(f"{dataset}: no devices.json here or in any subdirectory")
    return homes


class _Wrong(Exception):
    """A label that reads but would corrupt a metric: an error naming the line, never a skip."""


def load_queries(path: Path, home: str, report: ReadReport | None = None, *,
                 devices: Home | None = None) -> list[LabelledQuery]:
    """Parse queries.jsonl. A line that cannot be understood is counted in ``report`` as skipped, naming
    file, line and field; without a report, any skipped line is an error (``DataSetShrunk``). A wrong
    label (see the module docstring) is a HomeDataError naming the line; with ``devices`` (the home
    the queries are about), every target is checked against its devices and their commands."""
    own = report is None
    report = ReadReport("queries") if own else report
    queries, first_line = [], {}
    for where, row in iter_json_lines(path, HomeDataError, report=report, skip_bad_lines=True,
                                      max_bytes=MAX_FILE_BYTES):
        try:
            query = _query(row, home, report, where)
            if devices is not None:
                _check_targets(query, devices)
        except Unreadable as skip:
            report.skip(where, skip.reason, str(skip))
            continue
        except _Wrong as wrong:
            raise HomeDataError(f"{where}: {wrong}") from None
        if query.id in first_line:
            raise HomeDataError(f"{where}: id {query.id!r} repeats line {first_line[query.id]}")
        first_line[query.id] = where.rsplit(":", 1)[1]
        queries.append(query)
    if own:
        report.check(0.0, str(path))
    return queries


def _check_targets(query: LabelledQuery, home: Home) -> None:
    """Every target names a device of the home and, in each alternative, a command of that device."""
    for i, target in enumerate(query.expected):
        device = home.find(target.device_id)
        if device is None:
            raise _Wrong(f"field 'expected[{i}].device_id': {target.device_id!r} is not a device of home "
                         f"{home.name!r}")
        for command_id in target.command_ids:
            if device.command(command_id) is None:
                raise _Wrong(f"field 'expected[{i}].command_id': {command_id!r} is not a command of device "
                             f"{target.device_id!r} (profile {device.profile_id!r})")


_IR_TEXT = ("action", "name_hint")
_IR_ROOMS = ("scope_include", "scope_exclude")
_IR_CATEGORIES = frozenset((*DEVICE_CATEGORIES, UNKNOWN_CATEGORY))
_IR_QUANTIFIERS = ("one", "any", "all", "except")


# What null means in an optional field of a labelled IR (exports write null for "not said").
_IR_NULL_MEANS = {"name_hint": "", "scope_include": [], "scope_exclude": [], "type_hint": UNKNOWN_CATEGORY}


def _gold_ir(ir) -> dict | None:
    """The gold IR as written when it is a valid QueryIR as is; anything QueryIR would have to
    normalise (as it does for an LM's parse) is a wrong label. Null in an optional field is its empty
    value (a null quantifier is the default)."""
    if ir is None:
        return None
    if not isinstance(ir, dict):
        raise _Wrong(f"field 'ir': expected a QueryIR object or null, got {_kind(ir)}")
    ir = {key: _IR_NULL_MEANS.get(key, value) if value is None else value for key, value in ir.items()
          if not (key in ("quantifier", "operation") and value is None)}
    for key, value in ir.items():
        name = f"ir.{key}"
        if key in _IR_TEXT:
            ok, expected = isinstance(value, str) and value == value.strip(), "a string without outer spaces"
        elif key in _IR_ROOMS:
            ok = isinstance(value, list) and all(isinstance(v, str) and v.strip() == v and v for v in value)
            expected = "a list of room names"
        elif key == "type_hint":
            ok, expected = value in _IR_CATEGORIES, f"a device category ({UNKNOWN_CATEGORY} when none)"
        elif key == "quantifier":
            ok, expected = value in _IR_QUANTIFIERS, f"one of {list(_IR_QUANTIFIERS)}"
        elif key == "operation":
            ok, expected = value in OPERATIONS, f"one of {list(OPERATIONS)}"
        else:
            raise _Wrong(f"field {name!r}: not a QueryIR field (expected {list(QueryIR.model_fields)})")
        if not ok:
            raise _Wrong(f"field {name!r}: expected {expected}, got {_shown(value)}")
        problem = text_problem(value)
        if problem:
            raise _Wrong(f"field {name!r} {problem}")
    return ir


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _query(row: dict, home: str, report: ReadReport, where: str = "") -> LabelledQuery:
    query_id = _text(row, "id", "a string", report)
    text = _text(row, "query", "the utterance as a string", report)
    expected = row.get("expected")
    if isinstance(expected, dict):
        report.normalise("expected as one object")
        expected = [expected]
    if not isinstance(expected, list):
        raise Unreadable("bad expected", f"field 'expected': expected a list of {{\"device_id\", \"command_id\"}}, "
                                    f"got {_kind(expected)}")
    if not expected:
        raise _Wrong("field 'expected' is empty; a labelled query needs at least one "
                     "{\"device_id\", \"command_id\"} (a query no target can satisfy scores nothing)")
    targets = []
    for i, target in enumerate(expected):
        name = f"expected[{i}]"
        if not isinstance(target, dict):
            raise Unreadable("bad expected", f"field '{name}': expected {{\"device_id\", \"command_id\"}}, "
                                        f"got {_kind(target)}")
        device_id = _text(target, "device_id", "a device id string", report, field=f"{name}.device_id",
                          reason="bad expected")
        command = target.get("command_id")
        commands = (command,) if isinstance(command, str) else tuple(command) if isinstance(command, list) else ()
        if not commands or not all(isinstance(c, str) and c and not text_problem(c) for c in commands):
            raise Unreadable("bad expected", f"field '{name}.command_id': expected a command id string or a "
                                        f"non-empty list of them, got {_kind(command)}")
        targets.append(Target(device_id, commands))
    quantifier = row.get("quantifier")
    if quantifier is not None and not (isinstance(quantifier, str) and not text_problem(quantifier)):
        raise Unreadable("bad quantifier", f"field 'quantifier': expected a string or null, got {_kind(quantifier)}")
    return LabelledQuery(query_id, home, text, tuple(targets), quantifier, _gold_ir(row.get("ir")), where)


def _text(row: dict, key: str, expected: str, report: ReadReport, *, field: str | None = None,
          reason: str | None = None) -> str:
    value, field, reason = row.get(key), field or key, reason or f"bad {key}"
    if isinstance(value, int) and not isinstance(value, bool):
        report.normalise(f"{field.split('.')[-1]} as a number")
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        got = "an empty string" if isinstance(value, str) else _kind(value)
        raise Unreadable(reason, f"field {field!r}: expected {expected}, got {got}")
    problem = text_problem(value)
    if problem:
        raise Unreadable(reason, f"field {field!r} {problem}")
    return value


def _kind(value) -> str:
    if not_finite(value):  # NaN / Infinity read by Python's JSON: named, so "got a number" does not mislead
        return not_finite(value)
    return {type(None): "nothing", bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def load_dataset(name_or_path: str | Path, split: str | None = None, report: ReadReport | None = None, *,
                 homes: Mapping[str, Home] | None = None,
                 queries_file: str = QUERIES_FILE) -> dict[Path, list[LabelledQuery]]:
    """Home directory -> its labelled queries (optionally one split).

    ``queries_file`` names the query file read in each home directory: ``queries.jsonl``, or another
    file of the same format such as the bundled homes' ``heldout.jsonl`` (queries written by hand,
    never used to tune the retriever) or ``negated.jsonl`` (negated commands: "don't turn on the
    kitchen lights" asks for them off); a home without the file has no queries.

    With a ``report``, skipped query lines are counted there and the caller checks it (the CLI prints
    ``report.summary()`` and fails above ``--max-skipped``); without one, any skipped line is an error.
    Every label (of every split) is checked against its home: ``homes`` (home name -> Home, e.g. the
    homes a program indexed) when given, else each home directory is read for it. A label naming a
    device or command the home does not have is a HomeDataError naming the line."""
    if split is not None and split not in SPLITS:
        raise InvalidValue(f"unknown split {split!r}; choose from {list(SPLITS)}")
    own = report is None
    report = ReadReport("queries") if own else report
    out = {}
    dataset = resolve_dataset(name_or_path)
    for home_dir in home_dirs(dataset):
        path = home_dir / queries_file
        if not os.path.lexists(path):
            out[home_dir] = []
            continue
        home = homes.get(home_dir.name) if homes is not None else None
        home = home if home is not None else Home.load(home_dir, log_warnings=False)
        queries = load_queries(path, home_dir.name, report, devices=home)
        out[home_dir] = [q for q in queries if split is None or q.split == split]
    if own:
        report.check(0.0, str(dataset))
    return out
