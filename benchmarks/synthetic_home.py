"""A home of any size, made from a bundled one: the scale benchmarks and tests measure on it.

    python benchmarks/synthetic_home.py home_large 5000 /tmp/home_5000

Copy 0 is the bundled home itself (its queries stay meaningful); copy n >= 1 is a new wing of the
building: new device and room ids, rooms renamed ``"{n}栋{room}"`` (or ``"Wing {n} {room}"`` in an
English home), and labels suffixed with a code word of their own (``"玄关筒灯1 kab"``), so every
copy adds names the index has not seen, as real buildings do, instead of repeating the same ones.
A home smaller than the bundled one is its first devices.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

BUNDLED = Path(__file__).resolve().parents[1] / "tracerag" / "datasets" / "data" / "smarthome"
_NAMESPACE = uuid.UUID("6f1c0b8e-2b9e-4f57-9c3f-1d1f4b1e5a10")


def code_word(n: int) -> str:
    """A letters-only word per copy ("kab", "kac", ...): one token, never an ordinal or a real word."""
    letters = ""
    while True:
        n, r = divmod(n, 26)
        letters = chr(97 + r) + letters
        if n == 0:
            return "k" + letters.rjust(2, "a")


def _new_id(*parts: object) -> str:
    return str(uuid.uuid5(_NAMESPACE, "/".join(map(str, parts))))


def replicate_home(source: str | Path, destination: str | Path, devices: int) -> Path:
    """Write a home of exactly ``devices`` devices to ``destination`` (see the module docstring)."""
    source = Path(source) if Path(source).is_dir() else BUNDLED / str(source)
    destination = Path(destination)
    destination.mkdir(parents=True, exist_ok=True)
    base_devices = json.loads((source / "devices.json").read_text(encoding="utf-8"))["items"]
    base_rooms = json.loads((source / "rooms.json").read_text(encoding="utf-8"))["items"]
    english = all(room["name"].isascii() for room in base_rooms)
    rooms, items = [], []
    copy = 0
    while len(items) < devices:
        room_ids = {}
        for room in base_rooms:
            room_ids[room["roomId"]] = room["roomId"] if copy == 0 else _new_id("room", copy, room["roomId"])
            name = room["name"] if copy == 0 else (f"Wing {copy} {room['name']}" if english
                                                   else f"{copy}栋{room['name']}")
            rooms.append({**room, "roomId": room_ids[room["roomId"]], "name": name})
        for device in base_devices[: devices - len(items)]:
            if copy:
                device = {**device, "deviceId": _new_id("device", copy, device["deviceId"]),
                          "label": f"{device.get('label') or device.get('name', '')} {code_word(copy)}",
                          "roomId": room_ids.get(device.get("roomId"), device.get("roomId"))}
            items.append(device)
        copy += 1
    (destination / "devices.json").write_text(json.dumps({"items": items}, ensure_ascii=False, indent=2),
                                              encoding="utf-8")
    (destination / "rooms.json").write_text(json.dumps({"items": rooms}, ensure_ascii=False, indent=2),
                                            encoding="utf-8")
    (destination / "spec.jsonl").write_bytes((source / "spec.jsonl").read_bytes())
    return destination


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    print(replicate_home(sys.argv[1], sys.argv[3], int(sys.argv[2])))
