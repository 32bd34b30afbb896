"""Reading rooms.json and devices.json: the rooms (and floors) of a home, and its devices with their commands.

Labels and room names are cut at ``LABEL_MAX`` characters at load (a 1 MB label would otherwise stall
indexing, whose name runs grow with the square of a name's length). Recoverable problems (a device whose
profile has no spec line, a room id that is not in rooms.json) become counted warnings, so one bad device
never hides the rest of the home.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..data_files.read_report import ReadReport, text_problem
from ..device_categories import known_category
from .devices import CommandSpec, Device
from .file_fields import MAIN_COMPONENT, Fields, FirstSeen, HomeDataError, Items, kind_of

LABEL_MAX = 200  # characters of a device label or a room name; longer ones are cut (and counted)


# Each file is parsed once. An item in exactly the documented shape (nothing to normalise, every text
# within its cap) is read by one direct check, ``_plain_room`` / ``_plain_device``; anything else goes
# through the field readers (``file_fields``), which normalise, count and name what is wrong, so both
# ways give the same result. An item's line is needed only to name it (an error, a warning, a repeated
# id), so lines are found on demand, scanning the text once as far as the item named (``Items.line``).

def load_rooms(path: Path, report: ReadReport, floors: dict[str, str]) -> dict[str, str]:
    """roomId -> room name; ``floors`` gains room name -> floor name for rooms carrying an optional
    ``"floor"`` string (Home Assistant homes: `tracerag home pull homeassistant` writes it)."""
    if not os.path.lexists(path):
        return {}
    fields = Fields(path, report)
    items = Items.read(path, fields, empty_ok=True)
    rooms, seen = {}, FirstSeen("roomId", items)
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


def load_devices(path: Path, rooms: dict[str, str], specs: dict[str, tuple[CommandSpec, ...]],
                  report: ReadReport):
    fields = Fields(path, report)
    items = Items.read(path, fields, empty_ok=False)
    devices, warnings, seen = [], [], FirstSeen("deviceId", items)
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
        model = item.get("name")  # optional: what the device is, where the label is a nickname ("小金库")
        model = model.strip() if isinstance(model, str) and len(model) <= LABEL_MAX and model.strip() != label else ""
        devices.append(Device(device_id, label, rooms.get(room_id or "", ""), category, profile_id, commands, model))
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


def _read_device(item: dict, i: int, items: Items, fields: Fields, seen: FirstSeen):
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


def _profile_id(item: dict, where: str, fields: Fields) -> str:
    profile = item.get("profile")
    if isinstance(profile, str | int) and not isinstance(profile, bool):
        fields.normalise("profile as a string id")
        profile = {"id": profile}
    if not isinstance(profile, dict):
        raise HomeDataError(f"{where}: field 'profile' is missing; expected {{\"id\": <profileId>}}"
                            if profile is None else
                            f"{where}: field 'profile': expected {{\"id\": <profileId>}}, got {kind_of(profile)}")
    return fields.text(profile, "id", f"{where}.profile", expected="a profile id string")


def _main_component(item: dict, where: str, fields: Fields) -> dict:
    for _, component in _objects(item, "components", "id", where, fields, note="component as a string id",
                                 expected_list="a list of {\"id\", \"categories\", …}",
                                 expected_item="an object {\"id\", \"categories\", …}"):
        if component.get("id") == MAIN_COMPONENT:
            return component
    raise HomeDataError(f"{where}: field 'components' has no 'main' component")


def _categories(main: dict, where: str, fields: Fields) -> list[str]:
    names = []
    for j, category in _objects(main, "categories", "name", where, fields, note="category as a string",
                                expected_list="a list of {\"name\"}",
                                expected_item="{\"name\": …} or a category name"):
        name = fields.text(category, "name", f"{where}: categories[{j}]", required=False, cap=LABEL_MAX)
        if name and name.strip():
            names.append(name.strip())
    return names


def _capabilities(main: dict, where: str, fields: Fields) -> list[str]:
    """The main component's capability ids (checked, not indexed: commands come from spec.jsonl)."""
    return [fields.text(capability, "id", f"{where}: capabilities[{j}]", expected="a capability id")
            for j, capability in _objects(main, "capabilities", "id", where, fields,
                                          note="capability as a string id", expected_list="a list of {\"id\"}",
                                          expected_item="{\"id\": …} or a capability id")]


def _objects(obj: dict, key: str, name_key: str, where: str, fields: Fields, *, note: str, expected_list: str,
             expected_item: str):
    """Yield (index, object) for a list field whose items are objects, or bare strings naming one
    (``"Light"`` -> ``{name_key: "Light"}``, counted as ``note``); anything else is an error."""
    for j, value in enumerate(fields.items(obj, key, where, expected=expected_list)):
        if isinstance(value, str):
            fields.normalise(note)
            value = {name_key: value}
        if not isinstance(value, dict):
            raise HomeDataError(f"{where}: {key}[{j}]: expected {expected_item}, got {kind_of(value)}")
        yield j, value
