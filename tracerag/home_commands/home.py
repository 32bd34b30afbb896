"""A smart home as the command index sees it: devices, rooms and the commands each device accepts.

Loads a SmartThings-shaped directory (`devices.json`, `rooms.json`, `spec.jsonl`). The reader is
liberal in what real files look like and strict about what it cannot understand:

- shapes a little off the documented format are normalised and counted in ``Home.report`` (a
  ``ReadReport``): a UTF-8 BOM, ``items`` given as a bare list, ids given as numbers, ``categories``
  given as a string or a list of strings, a component or capability given as a string id, a spec
  ``type`` given as a list, ``value_list`` items given as plain values, numbers given as strings in
  ``value_range`` (or the range as ``[min, max]``); extra fields are ignored;
- free text that feeds the name index is cut at load: labels and room names at ``LABEL_MAX``
  characters, command and value descriptions at ``DESCRIPTION_MAX`` (a 1 MB label would otherwise
  stall indexing, whose name runs grow with the square of a name's length); a command's ``value_list``
  is read up to ``MAX_VALUES_PER_COMMAND`` values, the rest skipped with a warning naming the line, the
  command and how many (no real capability lists that many; each value is a phrase of the command's
  document, its argument matching and the name index);
- what cannot be understood is a ``HomeDataError`` naming ``file:line: field: what was expected``, at
  load time, never at query time; so is a ``value_range`` that bounds nothing (NaN, ±Infinity, 1e400,
  a bound past ``MAX_BOUND``, a ``min`` above its ``max``): values are checked against it before they are sent;
  so is NaN or ±Infinity where an id, label, name or value is read (no device is named "nan"), and an
  integer longer than Python converts (4,300 digits) anywhere in a file;
- an optional ``policy.json`` (``home_policy``) adds what the home marks sensitive or never to act on;
- an id given twice (a ``profileId`` in spec.jsonl, a command id within one profile, a ``roomId``, a
  ``deviceId``) is a ``HomeDataError`` naming both places: the later one would silently replace or
  shadow the earlier one and change what is indexed;
- recoverable problems (a device whose profile has no spec line, a room id that is not in rooms.json)
  become counted warnings, so one bad device never hides the rest of the home.

Only regular files are opened (a FIFO never blocks), each up to ``MAX_FILE_BYTES``. Reading is linear
in the files' size, about 1.2-1.7x ``json.loads`` of them: each file is parsed once, an item already in
the documented shape is taken by one direct check, and lines are looked up only to name an item.
"""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass, field
from functools import cached_property
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
from ..device_categories import known_category
from .home_policy import HomePolicy, load_policy

logger = logging.getLogger(__name__)

MAIN_COMPONENT = "main"
LABEL_MAX = 200  # characters of a device label or a room name; longer ones are cut (and counted)
DESCRIPTION_MAX = 500  # characters of a command or value description
MAX_VALUES_PER_COMMAND = 1_000  # values of one command's value_list read; the rest are skipped with a warning
MAX_BOUND = 1e12  # a value_range bound past this (or NaN, Infinity) is an error: no device takes such values
MAX_FILE_BYTES = DEFAULT_MAX_BYTES  # one home file


class HomeDataError(ValueError):
    """Input that cannot be read; the message names file, line and field."""


@dataclass(frozen=True)
class ValueOption:
    value: str
    description: str


@dataclass(frozen=True)
class CommandSpec:
    """One command of a profile, e.g. `main-switchLevel-setLevel`."""

    id: str
    description: str
    type: str | None = None
    value_range: tuple[tuple[str, object], ...] | None = None
    value_list: tuple[ValueOption, ...] = ()

    @property
    def capability(self) -> str:
        parts = self.id.split("-")
        return parts[1] if len(parts) >= 3 else self.id

    @property
    def command(self) -> str:
        return self.id.rsplit("-", 1)[-1]

    @property
    def compatibility(self) -> tuple:
        """Argument shape: devices with equal shapes can take one batched call."""
        values = tuple(sorted(v.value for v in self.value_list))
        return (self.id, self.type, self.value_range, values)


@dataclass(frozen=True)
class Device:
    device_id: str
    label: str
    room: str  # room name, "" when the device has no room
    category: str  # first category of the main component, "" when none
    profile_id: str
    commands: tuple[CommandSpec, ...]

    def command(self, command_id: str) -> CommandSpec | None:
        return next((c for c in self.commands if c.id == command_id), None)


@dataclass
class Home:
    """Devices with their resolved commands; `warnings` lists what was skipped and why, `report` what
    reading normalised (``report.summary()`` is one line)."""

    name: str
    devices: list[Device]
    rooms: list[str]
    warnings: list[str] = field(default_factory=list)
    report: ReadReport = field(default_factory=lambda: ReadReport("devices"))
    floors: dict[str, str] = field(default_factory=dict)  # room -> the floor it is on, where rooms.json says
    policy: HomePolicy = field(default_factory=HomePolicy)  # policy.json: what the home marks sensitive

    def device(self, device_id: str) -> Device:
        return self._by_id[device_id]

    def find(self, device_id: str) -> Device | None:
        """The device with this id, or None."""
        return self._by_id.get(device_id)

    @cached_property
    def _by_id(self) -> dict[str, Device]:
        return {d.device_id: d for d in self.devices}

    @property
    def categories(self) -> set[str]:
        return {d.category for d in self.devices if d.category}

    @classmethod
    def load(cls, directory: str | Path, *, log_warnings: bool = True) -> Home:
        """Read a home directory, or a bundled home by the name the CLI's ``--dataset`` takes
        ("smarthome/home_small"); ``log_warnings=False`` when the caller reads it only to check labels
        against it (the warnings are logged where the home is indexed)."""
        directory = _home_directory(directory)
        devices_path = directory / "devices.json"
        if not os.path.lexists(devices_path):
            raise HomeDataError(f"{directory}: not a smart-home directory (devices.json is missing)"
                                f"{_homes_in(directory)}")
        report = ReadReport("devices")
        spec_warnings: list[str] = []
        specs = load_spec(directory / "spec.jsonl", report, spec_warnings)
        floors: dict[str, str] = {}
        rooms = _load_rooms(directory / "rooms.json", report, floors)
        devices, warnings = _load_devices(devices_path, rooms, specs, report)
        warnings = spec_warnings + warnings
        policy = load_policy(directory, {d.device_id for d in devices}, HomeDataError)
        warnings += policy.warnings
        for w in warnings if log_warnings else ():
            logger.warning(w)
        return cls(directory.name, devices, sorted(set(rooms.values())), warnings, report, floors, policy)


def _home_directory(directory: str | Path) -> Path:
    """The path itself when it exists, else the bundled dataset of that name (as ``--dataset`` reads it)."""
    path = Path(directory)
    if os.path.lexists(path):
        return path
    from ..data_files.bundled import resolve_dataset

    try:
        return resolve_dataset(directory)
    except FileNotFoundError as exc:
        raise HomeDataError(str(exc)) from None


def _homes_in(directory: Path) -> str:
    """"; it holds homes: a, b" for a directory of homes (Home.load reads one home), else ""."""
    try:
        homes = sorted(p.name for p in directory.iterdir() if os.path.lexists(p / "devices.json"))
    except OSError:
        return ""
    return f"; it holds homes, load one of them: {', '.join(homes)}" if homes else ""


def iter_jsonl(path: Path):
    """Yield ("file:line", object) for each non-blank line; a broken line is a HomeDataError naming it."""
    return iter_json_lines(path, HomeDataError)


# ---------------------------------------------------------------------------------------------
# Field readers: each returns the normalised value or raises HomeDataError naming where and what.

class _Fields:
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
        if type(value) is str and _plain_text(value, cap):
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
            raise HomeDataError(f"{where}: field {key!r}: expected {expected}, got {_kind(value)}")
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
            raise HomeDataError(f"{where}: field {key!r}: expected {expected}, got {_kind(value)}")
        return value


def _kind(value) -> str:
    return {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


# ---------------------------------------------------------------------------------------------
# spec.jsonl

def load_spec(path: Path, report: ReadReport | None = None,
              warnings: list[str] | None = None) -> dict[str, tuple[CommandSpec, ...]]:
    """profileId -> its `main` commands. A line that cannot be understood is an error naming the line;
    what was read only in part (a value_list over ``MAX_VALUES_PER_COMMAND``) is added to ``warnings``."""
    if not os.path.lexists(path):
        raise HomeDataError(f"{path}: file is missing")
    report = report if report is not None else ReadReport("devices")
    lines = ReadReport("spec lines")
    fields = _Fields(path, report)
    specs: dict[str, tuple[CommandSpec, ...]] = {}
    first_line: dict[str, str] = {}
    for where, row in iter_json_lines(path, HomeDataError, report=lines, max_bytes=MAX_FILE_BYTES):
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
                                f"({{\"id\", \"description\", …}}), got {_kind(caps)}")
        commands, positions = [], {}
        for i, cap in enumerate(caps):
            field_where = f"{where}: capabilities[{i}]"
            if not isinstance(cap, dict):
                raise HomeDataError(f"{field_where}: expected an object {{\"id\", \"description\", …}}, "
                                    f"got {_kind(cap)}")
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
    if not (_plain_text(description, DESCRIPTION_MAX) and plain_type):
        return None
    if value_range is not None:
        if type(value_range) is not dict:
            return None
        for key, v in value_range.items():
            if key in _NUMERIC_KEYS and v is not None:
                if type(v) not in (int, float) or not _bounded(v):
                    return None  # the full reader says why
            elif not (type(v) in (int, float, bool) or _plain_text(v, required=False)):
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
            if not (_plain_text(option.get("value"))
                    and _plain_text(option.get("description"), DESCRIPTION_MAX, required=False)):
                return None
        options = tuple(ValueOption(o["value"], o.get("description") or o["value"]) for o in value_list)
    return CommandSpec(command_id, description, type_name or None, value_range, options)


def _plain_text(value, cap: int | None = None, *, required: bool = True) -> bool:
    """True when ``_Fields.text`` would take ``value`` as it is: a string within ``cap`` that UTF-8 can
    store, or (when not required) nothing."""
    if value is None or value == "":
        return not required
    return type(value) is str and (cap is None or len(value) <= cap) and (value.isascii() or not text_problem(value))


def _command(cap: dict, command_id: str, where: str, fields: _Fields) -> CommandSpec:
    description = fields.text(cap, "description", where, cap=DESCRIPTION_MAX)
    return CommandSpec(id=command_id, description=description, type=_type(cap.get("type"), where, fields),
                       value_range=_value_range(cap.get("value_range"), where, fields),
                       value_list=_value_list(cap, where, fields))


# JSON schema's names for an argument's type. Exports also write what the command is ("command"): that
# says nothing of its argument, whose kind then comes from value_range / value_list.
ARGUMENT_TYPES = frozenset({"integer", "number", "string", "boolean", "object", "array"})


def _type(value, where: str, fields: _Fields) -> str | None:
    """A JSON-schema-like type name; a list (``["integer", "null"]``) becomes its first non-null name, and
    a name that is no argument type (``"command"``) reads as not stated."""
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        fields.normalise("type as a list")
        value = next((t for t in value if t != "null"), None)
    if value is not None and not isinstance(value, str):
        raise HomeDataError(f"{where}: field 'type': expected a type name string or null, got {_kind(value)}")
    if value and value.strip().lower() in ARGUMENT_TYPES:
        return value.strip().lower()
    if value:
        fields.normalise("type that is no argument type read as not stated")
    return None


_SCALARS = (str, int, float, bool, type(None))
_NUMERIC_KEYS = ("min", "max", "step")


def _value_range(value, where: str, fields: _Fields) -> tuple[tuple[str, object], ...] | None:
    """A sorted (key, value) tuple; numbers given as strings become numbers, ``[min, max]`` an object."""
    if value is None:
        return None
    if isinstance(value, list) and len(value) == 2 and all(_number(v) is not None for v in value):
        fields.normalise("value_range as [min, max]")
        value = {"min": value[0], "max": value[1]}
    if not isinstance(value, dict):
        raise HomeDataError(f"{where}: field 'value_range': expected an object {{\"min\", \"max\", \"unit\"}} "
                            f"or null, got {_kind(value)}")
    out = {}
    for key, v in value.items():
        if key in _NUMERIC_KEYS and v is not None:
            number = _number(v)
            if number is None:
                if not _number_like(v):
                    raise HomeDataError(f"{where}: field 'value_range.{key}': expected a number, got {_kind(v)}")
                raise HomeDataError(f"{where}: field 'value_range.{key}': expected a finite number of at most "
                                    f"{MAX_BOUND:g} in size, got {repr(v)[:24]}")
            if number is not v:
                fields.normalise("value_range number as a string")
            v = number
        elif not isinstance(v, _SCALARS):
            raise HomeDataError(f"{where}: field 'value_range.{key}': expected a number or a string, "
                                f"got {_kind(v)}")
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


def _value_list(cap: dict, where: str, fields: _Fields) -> tuple[ValueOption, ...]:
    """``[{"value", "description"}]``; a plain value (``"cool"``) becomes ``{"value": "cool"}``."""
    raw = cap.get("value_list")
    if raw is None:
        return ()
    if isinstance(raw, dict):
        fields.normalise("value_list as one object")
        raw = [raw]
    if not isinstance(raw, list):
        raise HomeDataError(f"{where}: field 'value_list': expected a list of {{\"value\", \"description\"}}, "
                            f"got {_kind(raw)}")
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
                                f"got {_kind(v) if not isinstance(v, dict) else 'an object without one'}")
        value = fields.text(v, "value", item_where, expected="a string")
        description = fields.text(v, "description", item_where, required=False, cap=DESCRIPTION_MAX)
        options.append(ValueOption(value, description or value))
    return tuple(options)


# ---------------------------------------------------------------------------------------------
# rooms.json and devices.json
#
# Each file is parsed once. An item in exactly the documented shape (nothing to normalise, every text
# within its cap) is read by one direct check, ``_plain_room`` / ``_plain_device``; anything else goes
# through the field readers above, which normalise, count and name what is wrong, so both ways give the
# same result. An item's line is needed only to name it (an error, a warning, a repeated id), so lines
# are found on demand, scanning the text once as far as the item named (``_Items.line``).

def _load_rooms(path: Path, report: ReadReport, floors: dict[str, str]) -> dict[str, str]:
    """roomId -> room name; ``floors`` gains room name -> floor name for rooms carrying an optional
    ``"floor"`` string (Home Assistant homes: `tracerag home pull homeassistant` writes it)."""
    if not os.path.lexists(path):
        return {}
    fields = _Fields(path, report)
    items = _Items.read(path, fields, empty_ok=True)
    rooms, seen = {}, _FirstSeen("roomId", items)
    for i, item in items.objects():
        plain = _plain_room(item) if items.surrogate_free(item) else None
        if plain is None:
            where = items.where(i)
            room_id = fields.text(item, "roomId", where, expected="a room id string")
            seen.add(room_id, i)
            name = fields.text(item, "name", where, cap=LABEL_MAX, expected="a room name string").strip()
        else:
            room_id, name = plain
            seen.add(room_id, i)
        rooms[room_id] = name
        floor = item.get("floor")
        if isinstance(floor, str) and floor.strip() and len(floor) <= LABEL_MAX and not text_problem(floor):
            floors[name] = floor.strip()
        elif floor not in (None, ""):
            fields.normalise("floor that is not a name ignored")
    return rooms


def _plain_room(item: dict) -> tuple[str, str] | None:
    """(roomId, name) of a room in the documented shape, else None."""
    room_id, name = item.get("roomId"), item.get("name")
    if type(room_id) is str and room_id and type(name) is str and name and len(name) <= LABEL_MAX:
        return room_id, name.strip()
    return None


def _load_devices(path: Path, rooms: dict[str, str], specs: dict[str, tuple[CommandSpec, ...]],
                  report: ReadReport):
    fields = _Fields(path, report)
    items = _Items.read(path, fields, empty_ok=False)
    devices, warnings, seen = [], [], _FirstSeen("deviceId", items)
    for i, item in items.objects():
        report.read += 1
        plain = _plain_device(item) if items.surrogate_free(item) else None
        if plain is None:
            device_id, label, profile_id, category, room_id = _read_device(item, i, items, fields, seen)
        else:
            device_id, label, profile_id, category, room_id = plain
            seen.add(device_id, i)
        if room_id and room_id not in rooms:
            warnings.append(f"{items.where(i)}: roomId {room_id!r} is not in rooms.json; device kept without a room")
        commands = specs.get(profile_id)
        if commands is None:
            warnings.append(
                f"{items.where(i)}: profile.id {profile_id!r} of device {label!r} has no line in spec.jsonl; "
                "device kept but has no commands"
            )
            commands = ()
        if category and known_category(category) != category:
            category = known_category(category)
            fields.normalise("category alias read as the project's name")
        devices.append(Device(device_id, label, rooms.get(room_id or "", ""), category, profile_id, commands))
    return devices, warnings


def _plain_device(item: dict) -> tuple[str, str, str, str, str | None] | None:
    """(deviceId, label, profile id, category, roomId) of a device in the documented shape, else None:
    what ``_read_device`` would return for it without normalising anything."""
    device_id, label, profile = item.get("deviceId"), item.get("label"), item.get("profile")
    components, room_id = item.get("components"), item.get("roomId")
    if not (type(device_id) is str and device_id and type(label) is str and len(label) <= LABEL_MAX
            and type(profile) is dict and type(components) is list and (room_id is None or type(room_id) is str)):
        return None
    label = label.strip()
    profile_id = profile.get("id")
    if not label or type(profile_id) is not str or not profile_id:
        return None
    main = None
    for component in components:
        if type(component) is not dict:
            return None
        if component.get("id") == MAIN_COMPONENT:
            main = component
            break
    if main is None:
        return None
    categories, capabilities = main.get("categories"), main.get("capabilities")
    category = ""
    if categories is not None:
        if type(categories) is not list:
            return None
        for entry in categories:
            if type(entry) is not dict:
                return None
            name = entry.get("name")
            if name is not None:
                if type(name) is not str or len(name) > LABEL_MAX:
                    return None
                category = category or name.strip()
    if capabilities is not None:
        if type(capabilities) is not list:
            return None
        for capability in capabilities:
            if type(capability) is not dict:
                return None
            capability_id = capability.get("id")
            if type(capability_id) is not str or not capability_id:
                return None
    return device_id, label, profile_id, category, room_id


def _read_device(item: dict, i: int, items: _Items, fields: _Fields, seen: _FirstSeen):
    """The liberal reading of one device: as ``_plain_device``, normalising what it can (counted) and
    raising a HomeDataError naming the item and field for what it cannot."""
    where = items.where(i)
    device_id = fields.text(item, "deviceId", where, expected="a device id string")
    seen.add(device_id, i)
    label = (fields.text(item, "label", where, required=False, cap=LABEL_MAX) or "").strip() or \
        (fields.text(item, "name", where, required=False, cap=LABEL_MAX) or "").strip()
    if not label:
        raise HomeDataError(f"{where}: field 'label' (or 'name') is missing; expected the device's name")
    profile_id = _profile_id(item, where, fields)
    main = _main_component(item, where, fields)
    categories = _categories(main, f"{where}: components[main]", fields)
    _capabilities(main, f"{where}: components[main]", fields)
    room_id = fields.text(item, "roomId", where, required=False, expected="a room id string")
    return device_id, label, profile_id, categories[0] if categories else "", room_id


def _profile_id(item: dict, where: str, fields: _Fields) -> str:
    profile = item.get("profile")
    if isinstance(profile, str | int) and not isinstance(profile, bool):
        fields.normalise("profile as a string id")
        profile = {"id": profile}
    if not isinstance(profile, dict):
        raise HomeDataError(f"{where}: field 'profile' is missing; expected {{\"id\": <profileId>}}"
                            if profile is None else
                            f"{where}: field 'profile': expected {{\"id\": <profileId>}}, got {_kind(profile)}")
    return fields.text(profile, "id", f"{where}.profile", expected="a profile id string")


def _main_component(item: dict, where: str, fields: _Fields) -> dict:
    for _, component in _objects(item, "components", "id", where, fields, note="component as a string id",
                                 expected_list="a list of {\"id\", \"categories\", …}",
                                 expected_item="an object {\"id\", \"categories\", …}"):
        if component.get("id") == MAIN_COMPONENT:
            return component
    raise HomeDataError(f"{where}: field 'components' has no 'main' component")


def _categories(main: dict, where: str, fields: _Fields) -> list[str]:
    names = []
    for j, category in _objects(main, "categories", "name", where, fields, note="category as a string",
                                expected_list="a list of {\"name\"}",
                                expected_item="{\"name\": …} or a category name"):
        name = fields.text(category, "name", f"{where}: categories[{j}]", required=False, cap=LABEL_MAX)
        if name and name.strip():
            names.append(name.strip())
    return names


def _capabilities(main: dict, where: str, fields: _Fields) -> list[str]:
    """The main component's capability ids (checked, not indexed: commands come from spec.jsonl)."""
    return [fields.text(capability, "id", f"{where}: capabilities[{j}]", expected="a capability id")
            for j, capability in _objects(main, "capabilities", "id", where, fields,
                                          note="capability as a string id", expected_list="a list of {\"id\"}",
                                          expected_item="{\"id\": …} or a capability id")]


def _objects(obj: dict, key: str, name_key: str, where: str, fields: _Fields, *, note: str, expected_list: str,
             expected_item: str):
    """Yield (index, object) for a list field whose items are objects, or bare strings naming one
    (``"Light"`` -> ``{name_key: "Light"}``, counted as ``note``); anything else is an error."""
    for j, value in enumerate(fields.items(obj, key, where, expected=expected_list)):
        if isinstance(value, str):
            fields.normalise(note)
            value = {name_key: value}
        if not isinstance(value, dict):
            raise HomeDataError(f"{where}: {key}[{j}]: expected {expected_item}, got {_kind(value)}")
        yield j, value


class _FirstSeen:
    """The item each id was first seen in, so a repeated id is an error naming both places."""

    def __init__(self, key: str, items: _Items):
        self.key, self.items, self.first = key, items, {}

    def add(self, value: str, i: int) -> None:
        first = self.first.setdefault(value, i)
        if first != i:
            raise HomeDataError(f"{self.items.where(i)}: {self.key} {value!r} repeats line "
                                f"{self.items.line(first)} (items[{first}])")


class _Items:
    """The elements of a file's top-level "items" array (or of a bare list), parsed once with
    ``json.loads``; the line an element starts on is found only when asked for."""

    def __init__(self, path: Path, text: str, items: list):
        self.path, self.text, self.items = path, text, items
        self.no_surrogate_escape = not may_hold_lone_surrogate(text)
        self._lines: list[int] = []
        self._scan = None

    @classmethod
    def read(cls, path: Path, fields: _Fields, *, empty_ok: bool) -> _Items:
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
            raise HomeDataError(f"{path}:1: expected an object {{\"items\": [...]}}, got {_kind(doc)}")
        if not isinstance(doc.get("items"), list):
            raise HomeDataError(f"{path}:1: field 'items' is missing or not a list; expected {{\"items\": [...]}}")
        return cls(path, text, doc["items"])

    def objects(self):
        """Yield (index, item); an item that is not an object is an error naming its line."""
        for i, item in enumerate(self.items):
            if not isinstance(item, dict):
                raise HomeDataError(f"{self.path}:{self.line(i)}: items: expected an object, got {_kind(item)}")
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

