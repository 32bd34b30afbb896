"""A smart home as the command index sees it: devices, rooms and the commands each device accepts.

Loads a SmartThings-shaped directory (`devices.json`, `rooms.json`, `spec.jsonl`). Broken input is
reported with the file, line and field; recoverable problems (a device whose profile has no spec
line) become counted warnings so one bad device never hides the rest of the home.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from .jsonl import iter_json_lines

logger = logging.getLogger(__name__)

MAIN_COMPONENT = "main"


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
    """Devices with their resolved commands; `warnings` lists what was skipped and why."""

    name: str
    devices: list[Device]
    rooms: list[str]
    warnings: list[str] = field(default_factory=list)

    def device(self, device_id: str) -> Device:
        return self._by_id[device_id]

    @cached_property
    def _by_id(self) -> dict[str, Device]:
        return {d.device_id: d for d in self.devices}

    @property
    def categories(self) -> set[str]:
        return {d.category for d in self.devices if d.category}

    @classmethod
    def load(cls, directory: str | Path) -> Home:
        directory = Path(directory)
        if not (directory / "devices.json").is_file():
            raise HomeDataError(f"{directory}: not a smart-home directory (devices.json is missing)")
        specs = load_spec(directory / "spec.jsonl")
        rooms = _load_rooms(directory / "rooms.json")
        devices, warnings = _load_devices(directory / "devices.json", rooms, specs)
        for w in warnings:
            logger.warning(w)
        return cls(directory.name, devices, sorted(set(rooms.values())), warnings)


def iter_jsonl(path: Path):
    """Yield ("file:line", object) for each non-blank line; a broken line is a HomeDataError naming it."""
    return iter_json_lines(path, HomeDataError)


def load_spec(path: Path) -> dict[str, tuple[CommandSpec, ...]]:
    """profileId -> its `main` commands. A malformed line is an error naming the line."""
    if not path.is_file():
        raise HomeDataError(f"{path}: file is missing")
    specs: dict[str, tuple[CommandSpec, ...]] = {}
    for where, row in iter_jsonl(path):
        profile_id = _require(row, "profileId", str, where)
        caps = _require(row, "capabilities", list, where)
        commands = []
        for i, cap in enumerate(caps):
            field_where = f"{where}: capabilities[{i}]"
            if not isinstance(cap, dict):
                raise HomeDataError(f"{field_where}: expected an object")
            command_id = _require(cap, "id", str, field_where)
            if not command_id.startswith(MAIN_COMPONENT + "-"):
                continue
            commands.append(_command(cap, command_id, f"{field_where} ({command_id})"))
        specs[profile_id] = tuple(commands)
    return specs


def _command(cap: dict, command_id: str, where: str) -> CommandSpec:
    description = _require(cap, "description", str, where)
    value_range = cap.get("value_range")
    if value_range is not None and not isinstance(value_range, dict):
        raise HomeDataError(f"{where}: field 'value_range' must be an object or null")
    options = []
    for j, v in enumerate(cap.get("value_list") or []):
        if not isinstance(v, dict) or "value" not in v:
            raise HomeDataError(f"{where}: value_list[{j}] needs a 'value'")
        options.append(ValueOption(str(v["value"]), str(v.get("description") or v["value"])))
    return CommandSpec(
        id=command_id,
        description=description,
        type=cap.get("type"),
        value_range=tuple(sorted(value_range.items())) if value_range else None,
        value_list=tuple(options),
    )


def _load_rooms(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    rooms = {}
    for i, (item, line) in enumerate(_items_with_lines(path, text)):
        where = f"{path}:{line}: items[{i}]"
        rooms[_require(item, "roomId", str, where)] = _require(item, "name", str, where)
    return rooms


def _load_devices(path: Path, rooms: dict[str, str], specs: dict[str, tuple[CommandSpec, ...]]):
    text = path.read_text(encoding="utf-8")
    devices, warnings, seen = [], [], set()
    for i, (item, line) in enumerate(_items_with_lines(path, text)):
        where = f"{path}:{line}: items[{i}]"
        device_id = _require(item, "deviceId", str, where)
        if device_id in seen:
            raise HomeDataError(f"{where}: field 'deviceId' {device_id!r} appears twice")
        seen.add(device_id)
        label = item.get("label") or item.get("name")
        if not isinstance(label, str) or not label.strip():
            raise HomeDataError(f"{where}: field 'label' (or 'name') is missing")
        profile = _require(item, "profile", dict, where)
        profile_id = _require(profile, "id", str, f"{where}.profile")
        main = next((c for c in item.get("components") or [] if c.get("id") == MAIN_COMPONENT), None)
        if main is None:
            raise HomeDataError(f"{where}: field 'components' has no 'main' component")
        categories = [c.get("name") for c in main.get("categories") or [] if c.get("name")]
        room_id = item.get("roomId")
        if room_id and room_id not in rooms:
            warnings.append(f"{where}: roomId {room_id!r} is not in rooms.json; device kept without a room")
        commands = specs.get(profile_id)
        if commands is None:
            warnings.append(
                f"{where}: profile.id {profile_id!r} of device {label!r} has no line in spec.jsonl; "
                "device kept but has no commands"
            )
            commands = ()
        devices.append(Device(device_id, label.strip(), rooms.get(room_id or "", ""),
                              categories[0] if categories else "", profile_id, commands))
    return devices, warnings


def _items_with_lines(path: Path, text: str):
    """Yield (item, 1-based line) for each element of the top-level "items" array."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise HomeDataError(f"{path}:{e.lineno}: invalid JSON ({e.msg})") from None
    items = doc.get("items") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise HomeDataError(f"{path}:1: field 'items' is missing or not a list")
    decoder, pos = json.JSONDecoder(), text.index("[", text.index('"items"')) + 1
    for item in items:
        while text[pos] in " \t\r\n,":
            pos += 1
        line = text.count("\n", 0, pos) + 1
        _, pos = decoder.raw_decode(text, pos)
        if not isinstance(item, dict):
            raise HomeDataError(f"{path}:{line}: expected an object in 'items'")
        yield item, line


def _require(obj: dict, key: str, kind: type, where: str):
    value = obj.get(key)
    if value is None:
        raise HomeDataError(f"{where}: field {key!r} is missing")
    if not isinstance(value, kind):
        raise HomeDataError(f"{where}: field {key!r} must be {kind.__name__}, got {type(value).__name__}")
    return value
