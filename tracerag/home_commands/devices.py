"""What a home holds: devices, and the commands each accepts.

``Device``, ``CommandSpec`` and ``ValueOption`` are plain frozen values: the home readers build them
(``spec_file``, ``device_files``), ``Home`` holds them, and everything that ranks, checks or sends a command
reads them. They know nothing of files.
"""

from __future__ import annotations

from dataclasses import dataclass


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
    model: str = ""  # the device's own name beside its label (SmartThings "name": "Smart Safe Lock"), "" for none

    def command(self, command_id: str) -> CommandSpec | None:
        return next((c for c in self.commands if c.id == command_id), None)
