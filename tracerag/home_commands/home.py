"""A smart home as the command index sees it: devices, rooms and the commands each device accepts.

Loads a SmartThings-shaped directory (`devices.json`, `rooms.json`, `spec.jsonl`, and an optional
``policy.json``: ``home_policy``, what the home marks sensitive or never to act on). The files are read by
``spec_file`` and ``device_files`` (what they normalise, cut and refuse: ``file_fields``); reading is linear
in the files' size, about 1.2-1.7x ``json.loads`` of them. What a home holds are the values of ``devices``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..data_files.read_report import ReadReport
from .device_files import load_devices, load_rooms
from .devices import Device
from .file_fields import HomeDataError
from .home_policy import HomePolicy, load_policy
from .spec_file import load_spec
from .value_ranges import unit_family

logger = logging.getLogger(__name__)


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

    @cached_property
    def temperature_scale(self) -> str | None:
        """"celsius" or "fahrenheit" where every temperature range the home's commands state is in that scale (a
        US home's oven with no range is set in °F), else None."""
        stated = {unit_family(dict(c.value_range or ()).get("unit")) for d in self.devices for c in d.commands}
        scales = stated & {"celsius", "fahrenheit"}
        return scales.pop() if len(scales) == 1 else None

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
        rooms = load_rooms(directory / "rooms.json", report, floors)
        devices, warnings = load_devices(devices_path, rooms, specs, report)
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
