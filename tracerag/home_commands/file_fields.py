"""What every reader of a home's files shares: the error, the limits, and the field and item readers.

The readers (``spec_file`` for spec.jsonl, ``device_files`` for rooms.json and devices.json) are liberal in
what real files look like and strict about what they cannot understand:

- shapes a little off the documented format are normalised and counted in ``Home.report`` (a
  ``ReadReport``): a UTF-8 BOM, ``items`` given as a bare list, ids given as numbers, ``categories``
  given as a string or a list of strings, a component or capability given as a string id, a spec
  ``type`` given as a list, ``value_list`` items given as plain values, numbers given as strings in
  ``value_range`` (or the range as ``[min, max]``); extra fields are ignored;
- what cannot be understood is a ``HomeDataError`` naming ``file:line: field: what was expected``, at
  load time, never at query time; so is NaN or ±Infinity where an id, label, name or value is read (no
  device is named "nan"), and an integer longer than Python converts (4,300 digits) anywhere in a file;
- an id given twice (a ``profileId`` in spec.jsonl, a command id within one profile, a ``roomId``, a
  ``deviceId``) is a ``HomeDataError`` naming both places (``FirstSeen``): the later one would silently
  replace or shadow the earlier one and change what is indexed.

Only regular files are opened (a FIFO never blocks), each up to ``MAX_FILE_BYTES``. Each file is parsed
once; an item's line is needed only to name it, so lines are found on demand (``Items.line``).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..data_files.jsonl import iter_json_lines
from ..data_files.read_report import (
    DEFAULT_MAX_BYTES,
    FileProblem,
    NumberTooLong,
    ReadReport,
    load_json,
    may_hold_lone_surrogate,
    not_finite,
    read_regular,
    text_problem,
)
from ..errors import DataFileError

MAIN_COMPONENT = "main"  # the component whose commands a home's devices are indexed by
MAX_FILE_BYTES = DEFAULT_MAX_BYTES  # one home file


class HomeDataError(DataFileError):
    """Input that cannot be read; the message names file, line and field."""


def iter_jsonl(path: Path):
    """Yield ("file:line", object) for each non-blank line; a broken line is a HomeDataError naming it."""
    return iter_json_lines(path, HomeDataError)


def json_lines(path: Path, report: ReadReport):
    """``iter_jsonl`` within ``MAX_FILE_BYTES``, counting what reading the lines normalised in ``report``."""
    return iter_json_lines(path, HomeDataError, report=report, max_bytes=MAX_FILE_BYTES)


# ---------------------------------------------------------------------------------------------
# Field readers: each returns the normalised value or raises HomeDataError naming where and what.

class Fields:
    """Reads the fields of one file's items, counting normalisations as "<file>: <kind>"."""

    def __init__(self, path: Path, report: ReadReport):
        self.path, self.report = path, report
        self.warnings: list[str] = []  # recoverable problems, logged where the home is loaded

    def normalise(self, kind: str) -> None:
        self.report.normalise(f"{self.path.name}: {kind}")

    def text(self, obj: dict, key: str, where: str, *, required: bool = True, cap: int | None = None,
             expected: str = "a string") -> str | None:
        """A string field; a number becomes its text, a longer text is cut at ``cap``."""
        value = obj.get(key)
        if type(value) is str and plain_text(value, cap):
            return value  # the common case: nothing to normalise
        if value is None or value == "":
            if required:
                raise HomeDataError(f"{where}: field {key!r} is missing; expected {expected}")
            return None
        if not_finite(value):
            raise HomeDataError(f"{where}: field {key!r}: expected {expected}, got {not_finite(value)}")
        if isinstance(value, int | float) and not isinstance(value, bool):
            self.normalise(f"{key} as a number")
            value = str(value)
        if not isinstance(value, str):
            raise HomeDataError(f"{where}: field {key!r}: expected {expected}, got {kind_of(value)}")
        problem = text_problem(value)
        if problem:
            raise HomeDataError(f"{where}: field {key!r} {problem}")
        if cap is not None and len(value) > cap:
            self.normalise(f"{key} over {cap} characters cut")
            value = value[:cap]
        return value

    def items(self, obj: dict, key: str, where: str, *, expected: str) -> list:
        """A list field: null is empty, one object or one string becomes a list of one (a string is
        counted by the caller, as for a string inside the list)."""
        value = obj.get(key)
        if value is None:
            return []
        if isinstance(value, dict):
            self.normalise(f"{key} as one object")
        if isinstance(value, dict | str):
            return [value]
        if not isinstance(value, list):
            raise HomeDataError(f"{where}: field {key!r}: expected {expected}, got {kind_of(value)}")
        return value


def kind_of(value) -> str:
    return {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)

def plain_text(value, cap: int | None = None, *, required: bool = True) -> bool:
    """True when ``Fields.text`` would take ``value`` as it is: a string within ``cap`` that UTF-8 can
    store, or (when not required) nothing."""
    if value is None or value == "":
        return not required
    return type(value) is str and (cap is None or len(value) <= cap) and (value.isascii() or not text_problem(value))



class FirstSeen:
    """The item each id was first seen in, so a repeated id is an error naming both places."""

    def __init__(self, key: str, items: Items):
        self.key, self.items, self.first = key, items, {}

    def add(self, value: str, i: int) -> None:
        first = self.first.setdefault(value, i)
        if first != i:
            raise HomeDataError(f"{self.items.where(i)}: {self.key} {value!r} repeats line "
                                f"{self.items.line(first)} (items[{first}])")


class Items:
    """The elements of a file's top-level "items" array (or of a bare list), parsed once with
    ``json.loads``; the line an element starts on is found only when asked for."""

    def __init__(self, path: Path, text: str, items: list):
        self.path, self.text, self.items = path, text, items
        self.no_surrogate_escape = not may_hold_lone_surrogate(text)
        self._lines: list[int] = []
        self._scan = None

    @classmethod
    def read(cls, path: Path, fields: Fields, *, empty_ok: bool) -> Items:
        try:
            text = read_regular(path, MAX_FILE_BYTES, report=fields)  # counts a stripped BOM
        except FileProblem as exc:
            raise HomeDataError(str(exc)) from None
        if not text.strip():
            if empty_ok:
                fields.normalise("empty file")
                return cls(path, "", [])
            raise HomeDataError(f"{path}:1: file is empty; expected {{\"items\": [...]}}")
        try:
            doc = load_json(text)
        except json.JSONDecodeError as e:
            raise HomeDataError(f"{path}:{e.lineno}: invalid JSON ({e.msg})") from None
        except NumberTooLong as e:
            raise HomeDataError(f"{path}:{e.line or 1}: {e}") from None
        except RecursionError:
            raise HomeDataError(f"{path}:1: invalid JSON (nested too deeply)") from None
        if isinstance(doc, list):
            fields.normalise("items as a bare list")
            return cls(path, text, doc)
        if not isinstance(doc, dict):
            raise HomeDataError(f"{path}:1: expected an object {{\"items\": [...]}}, got {kind_of(doc)}")
        if not isinstance(doc.get("items"), list):
            raise HomeDataError(f"{path}:1: field 'items' is missing or not a list; expected {{\"items\": [...]}}")
        return cls(path, text, doc["items"])

    def objects(self):
        """Yield (index, item); an item that is not an object is an error naming its line."""
        for i, item in enumerate(self.items):
            if not isinstance(item, dict):
                raise HomeDataError(f"{self.path}:{self.line(i)}: items: expected an object, got {kind_of(item)}")
            yield i, item

    def surrogate_free(self, item: dict) -> bool:
        """True when no string in ``item`` holds a lone surrogate; checked per item only when the file
        has an escape that could make one."""
        return self.no_surrogate_escape or text_problem(item) is None

    def where(self, i: int) -> str:
        return f"{self.path}:{self.line(i)}: items[{i}]"

    def line(self, i: int) -> int:
        """The 1-based line item ``i`` starts on."""
        if self._scan is None:
            self._scan = _item_lines(self.text)
        while len(self._lines) <= i:
            self._lines.append(next(self._scan))
        return self._lines[i]


def _item_lines(text: str):
    """Yield the 1-based line each element of the items array starts on (the text is valid JSON)."""
    decoder, pos = json.JSONDecoder(), _array_start(text)
    line, counted = 1, 0
    while True:
        pos = _skip(text, pos, " \t\r\n,")
        if text[pos] == "]":
            return
        line += text.count("\n", counted, pos)
        counted = pos
        yield line
        _, pos = decoder.raw_decode(text, pos)


def _array_start(text: str) -> int:
    """Position just inside the top-level list, or inside the (last) "items" list of the top-level object
    (the one json.loads keeps). The text is known to be valid JSON."""
    decoder = json.JSONDecoder()
    pos = _skip(text, 0, " \t\r\n")
    if text[pos] == "[":
        return pos + 1
    pos, start = pos + 1, None
    while True:
        pos = _skip(text, pos, " \t\r\n,")
        if text[pos] == "}":
            return start
        key, pos = decoder.raw_decode(text, pos)
        pos = _skip(text, pos, " \t\r\n:")
        if key == "items":
            start = pos + 1
        _, pos = decoder.raw_decode(text, pos)


def _skip(text: str, pos: int, chars: str) -> int:
    while text[pos] in chars:
        pos += 1
    return pos
