"""Reading spec.jsonl: each profile's ``main`` commands, as ``CommandSpec`` values (``load_spec``).

Command and value descriptions are cut at ``DESCRIPTION_MAX`` characters at load (they feed the command
documents and the name index); a command's ``value_list`` is read up to ``MAX_VALUES_PER_COMMAND`` values,
the rest skipped with a warning naming the line, the command and how many (no real capability lists that
many; each value is a phrase of the command's document, its argument matching and the name index). A
``value_range`` that bounds nothing (NaN, ±Infinity, 1e400, a bound past ``MAX_BOUND``, a ``min`` above its
``max``) is a ``HomeDataError``: values are checked against it before they are sent. A line already in the
documented shape is taken by one direct check (``_plain_command``); anything else goes through the field
readers (``file_fields``), which normalise, count and name what is wrong, so both ways give the same result.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from ..data_files.read_report import ReadReport, not_finite, text_problem
from .devices import CommandSpec, ValueOption
from .file_fields import MAIN_COMPONENT, Fields, HomeDataError, json_lines, kind_of, plain_text

DESCRIPTION_MAX = 500  # characters of a command or value description
MAX_VALUES_PER_COMMAND = 1_000  # values of one command's value_list read; the rest are skipped with a warning
MAX_BOUND = 1e12  # a value_range bound past this (or NaN, Infinity) is an error: no device takes such values


def load_spec(path: Path, report: ReadReport | None = None,
              warnings: list[str] | None = None) -> dict[str, tuple[CommandSpec, ...]]:
    """profileId -> its `main` commands. A line that cannot be understood is an error naming the line;
    what was read only in part (a value_list over ``MAX_VALUES_PER_COMMAND``) is added to ``warnings``."""
    if not os.path.lexists(path):
        raise HomeDataError(f"{path}: file is missing")
    report = report if report is not None else ReadReport("devices")
    lines = ReadReport("spec lines")
    fields = Fields(path, report)
    specs: dict[str, tuple[CommandSpec, ...]] = {}
    first_line: dict[str, str] = {}
    for where, row in json_lines(path, lines):
        profile_id = fields.text(row, "profileId", where, expected="a profile id string")
        if profile_id in first_line:
            raise HomeDataError(f"{where}: profileId {profile_id!r} repeats line {first_line[profile_id]}")
        first_line[profile_id] = where.rsplit(":", 1)[1]
        caps = row.get("capabilities")
        if isinstance(caps, dict):
            fields.normalise("capabilities as one object")
            caps = [caps]
        if not isinstance(caps, list):
            raise HomeDataError(f"{where}: field 'capabilities': expected a list of commands "
                                f"({{\"id\", \"description\", …}}), got {kind_of(caps)}")
        commands, positions = [], {}
        for i, cap in enumerate(caps):
            field_where = f"{where}: capabilities[{i}]"
            if not isinstance(cap, dict):
                raise HomeDataError(f"{field_where}: expected an object {{\"id\", \"description\", …}}, "
                                    f"got {kind_of(cap)}")
            command_id = fields.text(cap, "id", field_where, expected="a command id like 'main-switch-on'")
            if command_id in positions:
                raise HomeDataError(f"{field_where}: command id {command_id!r} repeats "
                                    f"capabilities[{positions[command_id]}] of profile {profile_id!r}")
            positions[command_id] = i
            if not command_id.startswith(MAIN_COMPONENT + "-"):
                continue
            commands.append(_plain_command(cap, command_id)
                            or _command(cap, command_id, f"{field_where} ({command_id})", fields))
        specs[profile_id] = tuple(commands)
    for kind, n in lines.normalised.items():
        report.normalised[f"{path.name}: {kind}"] += n
    if warnings is not None:
        warnings.extend(fields.warnings)
    return specs


def _plain_command(cap: dict, command_id: str) -> CommandSpec | None:
    """The command, when it is in the documented shape (what ``_command`` would return for it without
    normalising anything), else None."""
    description, type_name = cap.get("description"), cap.get("type")
    value_range, value_list = cap.get("value_range"), cap.get("value_list")
    plain_type = type_name is None or (type(type_name) is str and type_name in ARGUMENT_TYPES)
    if not (plain_text(description, DESCRIPTION_MAX) and plain_type):
        return None
    if value_range is not None:
        if type(value_range) is not dict:
            return None
        for key, v in value_range.items():
            if key in _NUMERIC_KEYS and v is not None:
                if type(v) not in (int, float) or not _bounded(v):
                    return None  # the full reader says why
            elif not (type(v) in (int, float, bool) or plain_text(v, required=False)):
                return None
        if _bounds_problem(value_range):
            return None
        value_range = tuple(sorted(value_range.items())) or None
    options = ()
    if value_list is not None:
        if type(value_list) is not list or len(value_list) > MAX_VALUES_PER_COMMAND:
            return None
        for option in value_list:
            if type(option) is not dict:
                return None
            if not (plain_text(option.get("value"))
                    and plain_text(option.get("description"), DESCRIPTION_MAX, required=False)):
                return None
        options = tuple(ValueOption(o["value"], o.get("description") or o["value"]) for o in value_list)
    return CommandSpec(command_id, description, type_name or None, value_range, options)


def _command(cap: dict, command_id: str, where: str, fields: Fields) -> CommandSpec:
    description = fields.text(cap, "description", where, cap=DESCRIPTION_MAX)
    return CommandSpec(id=command_id, description=description, type=_type(cap.get("type"), where, fields),
                       value_range=_value_range(cap.get("value_range"), where, fields),
                       value_list=_value_list(cap, where, fields))


# JSON schema's names for an argument's type. Exports also write what the command is ("command"): that
# says nothing of its argument, whose kind then comes from value_range / value_list.
ARGUMENT_TYPES = frozenset({"integer", "number", "string", "boolean", "object", "array"})


def _type(value, where: str, fields: Fields) -> str | None:
    """A JSON-schema-like type name; a list (``["integer", "null"]``) becomes its first non-null name, and
    a name that is no argument type (``"command"``) reads as not stated."""
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        fields.normalise("type as a list")
        value = next((t for t in value if t != "null"), None)
    if value is not None and not isinstance(value, str):
        raise HomeDataError(f"{where}: field 'type': expected a type name string or null, got {kind_of(value)}")
    if value and value.strip().lower() in ARGUMENT_TYPES:
        return value.strip().lower()
    if value:
        fields.normalise("type that is no argument type read as not stated")
    return None


_SCALARS = (str, int, float, bool, type(None))
_NUMERIC_KEYS = ("min", "max", "step")


def _value_range(value, where: str, fields: Fields) -> tuple[tuple[str, object], ...] | None:
    """A sorted (key, value) tuple; numbers given as strings become numbers, ``[min, max]`` an object."""
    if value is None:
        return None
    if isinstance(value, list) and len(value) == 2 and all(_number(v) is not None for v in value):
        fields.normalise("value_range as [min, max]")
        value = {"min": value[0], "max": value[1]}
    if not isinstance(value, dict):
        raise HomeDataError(f"{where}: field 'value_range': expected an object {{\"min\", \"max\", \"unit\"}} "
                            f"or null, got {kind_of(value)}")
    out = {}
    for key, v in value.items():
        if key in _NUMERIC_KEYS and v is not None:
            number = _number(v)
            if number is None:
                if not _number_like(v):
                    raise HomeDataError(f"{where}: field 'value_range.{key}': expected a number, got {kind_of(v)}")
                raise HomeDataError(f"{where}: field 'value_range.{key}': expected a finite number of at most "
                                    f"{MAX_BOUND:g} in size, got {repr(v)[:24]}")
            if number is not v:
                fields.normalise("value_range number as a string")
            v = number
        elif not isinstance(v, _SCALARS):
            raise HomeDataError(f"{where}: field 'value_range.{key}': expected a number or a string, "
                                f"got {kind_of(v)}")
        elif isinstance(v, str) and text_problem(v):
            raise HomeDataError(f"{where}: field 'value_range.{key}' {text_problem(v)}")
        out[key] = v
    problem = _bounds_problem(out)
    if problem:
        raise HomeDataError(f"{where}: field 'value_range': {problem}")
    return tuple(sorted(out.items())) or None


def _bounds_problem(bounds: dict) -> str:
    """Why a range cannot bound a value (its min above its max), else "": a value is checked against it
    before it is sent."""
    low, high = bounds.get("min"), bounds.get("max")
    if isinstance(low, int | float) and isinstance(high, int | float) and low > high:
        return f"min {low!r} is above max {high!r}"
    return ""


def _number(value) -> int | float | None:
    """A bounded int or float as is (``_bounded``); a string holding one parsed; anything else None (NaN,
    ±Infinity and 1e400, which JSON readers turn into infinity, bound nothing)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value if _bounded(value) else None
    if isinstance(value, str):
        text = value.strip()
        for parse in (int, float):
            try:
                number = parse(text)
            except ValueError:
                continue
            return number if _bounded(number) else None
    return None


def _number_like(value) -> bool:
    """A number, or a string that reads as one (NaN and 1e400 included): refused for its size, not its type."""
    if isinstance(value, str):
        try:
            float(value.strip())
        except ValueError:
            return False
        return True
    return isinstance(value, int | float) and not isinstance(value, bool)


def _bounded(number: int | float) -> bool:
    """A range bound a value can be checked against: finite and at most ``MAX_BOUND`` in size."""
    return (math.isfinite(number) if isinstance(number, float) else True) and abs(number) <= MAX_BOUND


def _value_list(cap: dict, where: str, fields: Fields) -> tuple[ValueOption, ...]:
    """``[{"value", "description"}]``; a plain value (``"cool"``) becomes ``{"value": "cool"}``."""
    raw = cap.get("value_list")
    if raw is None:
        return ()
    if isinstance(raw, dict):
        fields.normalise("value_list as one object")
        raw = [raw]
    if not isinstance(raw, list):
        raise HomeDataError(f"{where}: field 'value_list': expected a list of {{\"value\", \"description\"}}, "
                            f"got {kind_of(raw)}")
    if len(raw) > MAX_VALUES_PER_COMMAND:
        fields.normalise(f"value_list over {MAX_VALUES_PER_COMMAND:,} values cut")
        fields.warnings.append(f"{where}: value_list has {len(raw):,} values; the first {MAX_VALUES_PER_COMMAND:,} "
                               f"are read, the other {len(raw) - MAX_VALUES_PER_COMMAND:,} skipped (they cannot "
                               "be named or sent)")
        raw = raw[:MAX_VALUES_PER_COMMAND]
    options = []
    for j, v in enumerate(raw):
        item_where = f"{where}: value_list[{j}]"
        if not_finite(v):
            raise HomeDataError(f"{item_where}: expected {{\"value\", \"description\"}} or a plain value, "
                                f"got {not_finite(v)}")
        if isinstance(v, str | int | float) and not isinstance(v, bool):
            fields.normalise("value_list item as a plain value")
            v = {"value": str(v)}
        if not isinstance(v, dict) or v.get("value") is None or v.get("value") == "":
            raise HomeDataError(f"{item_where}: expected {{\"value\", \"description\"}} with a 'value', "
                                f"got {kind_of(v) if not isinstance(v, dict) else 'an object without one'}")
        value = fields.text(v, "value", item_where, expected="a string")
        description = fields.text(v, "description", item_where, required=False, cap=DESCRIPTION_MAX)
        options.append(ValueOption(value, description or value))
    return tuple(options)
