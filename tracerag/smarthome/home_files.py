"""Writing a pulled home as a home directory: devices.json, rooms.json, spec.jsonl and source.json.

The files are the documented formats (README "Data formats"), so ``Home.load`` reads a pulled home
like a hand-written one. A hand-written ``spec.jsonl`` already in the directory is merged, never
overwritten: a command description (or a value's description) written by hand wins over the fetched
one, and a profile or command only the old file has is kept as it was. ``source.json`` records where
the home came from, so execution can find the same API again; the home reader ignores it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..data_files.durable import write_durably
from ..data_files.read_report import FileProblem, NumberTooLong, load_json, read_regular
from ..home_commands.file_fields import HomeDataError, iter_jsonl

SOURCE_FILE = "source.json"


@dataclass
class WriteSummary:
    """What a pull wrote: counts, and how many hand-written descriptions the merge kept."""

    directory: Path
    devices: int
    rooms: int
    profiles: int
    commands: int
    kept_descriptions: int = 0
    kept_profiles: int = 0
    skipped: int = 0  # items of the source that map to nothing the home can hold (e.g. a diagnostic sensor)

    def line(self) -> str:
        merged = f"; kept {self.kept_descriptions} hand-written description(s)" if self.kept_descriptions else ""
        old = f" and {self.kept_profiles} profile(s) only the old spec.jsonl had" if self.kept_profiles else ""
        skipped = f"; skipped {self.skipped} item(s) with no device category or command" if self.skipped else ""
        return (f"wrote {self.directory}: {self.devices} devices, {self.rooms} rooms, {self.profiles} profiles, "
                f"{self.commands} commands{merged}{old}{skipped}")


def write_home(directory: str | Path, devices: list[dict], rooms: list[dict], profiles: list[dict],
               source: dict, *, skipped: int = 0) -> WriteSummary:
    """Write the home files into ``directory`` (created if needed), merging an existing spec.jsonl.

    ``devices`` and ``rooms`` are the ``items`` of the GET responses; ``profiles`` are spec lines
    ``{"profileId", "capabilities": [...]}``. Each file is written to a temporary name and renamed, so
    a failed pull never leaves a half-written home."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    profiles, kept, kept_profiles = merge_spec(directory / "spec.jsonl", profiles)
    _write(directory / "spec.jsonl", "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in profiles))
    _write(directory / "rooms.json", json.dumps({"items": rooms}, ensure_ascii=False, indent=1) + "\n")
    _write(directory / "devices.json", json.dumps({"items": devices}, ensure_ascii=False, indent=1) + "\n")
    _write(directory / SOURCE_FILE, json.dumps(source, ensure_ascii=False, indent=1) + "\n")
    return WriteSummary(directory, len(devices), len(rooms), len(profiles),
                        sum(len(p["capabilities"]) for p in profiles), kept, kept_profiles, skipped)


def read_source(directory: str | Path) -> dict | None:
    """The ``source.json`` a pull wrote into a home directory, or None."""
    path = Path(directory) / SOURCE_FILE
    if not path.is_file():
        return None
    try:
        return load_json(read_regular(path))
    except json.JSONDecodeError as exc:
        raise HomeDataError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    except NumberTooLong as exc:
        raise HomeDataError(f"{path}:{exc.line or 1}: {exc}") from None
    except FileProblem as exc:
        raise HomeDataError(str(exc)) from None


def merge_spec(path: Path, fetched: list[dict]) -> tuple[list[dict], int, int]:
    """(merged profiles, descriptions kept from the old file, profiles kept that only the old file has).

    For each command the fetched entry gives the shape (type, range, values); a description the old
    file has for the same profile and command id wins, as does an old value description."""
    if not path.is_file():
        return fetched, 0, 0
    old: dict[str, dict] = {}
    for _, row in iter_jsonl(path):
        if isinstance(row, dict) and isinstance(row.get("profileId"), str):
            old[row["profileId"]] = row
    kept = 0
    merged = []
    for profile in fetched:
        previous = old.pop(profile["profileId"], None)
        if previous is None:
            merged.append(profile)
            continue
        old_commands = {c.get("id"): c for c in previous.get("capabilities") or [] if isinstance(c, dict)}
        commands = []
        for command in profile["capabilities"]:
            hand = old_commands.pop(command["id"], None)
            if hand is not None:
                command, n = _merge_command(command, hand)
                kept += n
            commands.append(command)
        commands.extend(old_commands.values())  # commands only the hand-written file lists
        merged.append({**previous, **profile, "capabilities": commands})
    merged.extend(old.values())  # profiles only the hand-written file has
    return merged, kept, len(old)


def _merge_command(fetched: dict, hand: dict) -> tuple[dict, int]:
    command, kept = dict(fetched), 0
    description = hand.get("description")
    if isinstance(description, str) and description.strip():
        kept += description != fetched.get("description")
        command["description"] = description
    hand_values = {str(v.get("value")): v.get("description") for v in hand.get("value_list") or []
                   if isinstance(v, dict) and isinstance(v.get("description"), str) and v.get("description")}
    if hand_values and command.get("value_list"):
        values = []
        for v in command["value_list"]:
            text = hand_values.get(str(v.get("value")))
            if text and text != v.get("description"):
                kept += 1
                v = {**v, "description": text}
            values.append(v)
        command["value_list"] = values
    return command, kept


def _write(path: Path, text: str) -> None:
    write_durably(path, text)
