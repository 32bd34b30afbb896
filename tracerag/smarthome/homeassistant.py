"""Pull a home from Home Assistant into a home directory, mapped onto the SmartThings shapes.

With a long-lived access token (env ``HA_TOKEN``) and the instance's URL:

- areas, floors, devices and entities from the registries over the WebSocket API (``/api/websocket``:
  ``auth``, then ``config/area_registry/list``, ``config/floor_registry/list`` (absent before HA
  2024.4: no floors), ``config/device_registry/list``, ``config/entity_registry/list``);
- states over REST (``GET /api/states``): what each entity supports (``supported_features``, colour
  modes, HVAC modes, source lists, …).

Mapping (one home "device" per controllable entity; ``deviceId`` is the entity id, so execution calls
the entity directly):

- the category comes from the entity's domain and device_class (``CATEGORY_RULES``): light → Light,
  switch → Switch (outlet → SmartPlug), climate → AirConditioner when it cools without heating, else
  Thermostat, cover → GarageDoor / Door / Blind, lock → Lock, fan → Fan, media_player → Television (tv)
  or NetworkAudio, vacuum → RobotCleaner, humidifier → Humidifier / Dehumidifier, water_heater,
  valve, camera, and motion/occupancy/door/window binary sensors and temperature/humidity sensors;
  entities of other domains, hidden, disabled, and config/diagnostic entities are skipped (counted);
- the commands are the domain's services the entity supports (``COMMANDS``), written as spec lines
  ``main-<domain>-<command>`` with English descriptions, the HA ``service`` and the service-data
  ``field`` that carries the argument (extra fields the home reader ignores); entities with the same
  commands share one profile;
- areas are rooms, named as the area (what people call the room), and rooms.json records ``area``,
  ``floorId``, ``floor`` and ``level`` per room. The command index matches a room by its full name or
  a trailing run of two or more of its words (one or more characters in Chinese), so a floor can only
  be said as part of a room's name: when one area name is used on two floors ("Guest Room" upstairs
  and downstairs) and the floor can go in front without losing the area's own name as a trailing run
  (two or more words, or Chinese), the rooms are named "<floor> <area>" ("First Floor Guest Room",
  "一楼客厅"): "guest room" then means both and "first floor guest room" the one. A single-word area
  ("Kitchen") keeps its name on every floor: prefixed, "kitchen" alone would no longer name it.
  A whole floor is a scope too: the index reads each room's recorded ``floor`` and lets the floor's
  name stand for all its rooms ("all lights on the first floor", "除了二楼").
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from ..errors import TraceragError
from .home_files import WriteSummary, write_home
from .rest import ApiError, RestClient
from .websocket import WebSocket, WebSocketError

logger = logging.getLogger(__name__)

TOKEN_ENV = "HA_TOKEN"
TOKEN_HELP = "create a long-lived access token on your Home Assistant profile page (Security tab)"


class HomeAssistantError(TraceragError, RuntimeError):
    """A pull or a service call that cannot go on; the message is one line."""


@dataclass(frozen=True)
class Command:
    """One command an entity of a domain can take: a service, and the service-data field of its argument."""

    domain: str
    name: str  # the command part of the id: main-<domain>-<name>
    service: str  # the HA service of the domain, e.g. "turn_on"
    description: str
    field: str | None = None  # service data key for the argument
    type: str | None = None
    value_range: tuple | None = None  # (min, max, unit), or attribute names for min/max
    values_from: str | None = None  # state attribute listing the accepted values (hvac_modes, source_list…)
    feature: int = 0  # supported_features bit the entity must have (0: every entity of the domain)
    scale: float = 1.0  # argument multiplier: volume is said in % and sent as 0..1

    @property
    def id(self) -> str:
        return f"main-{self.domain}-{self.name}"


def _c(domain, name, service, description, **kw) -> Command:
    return Command(domain, name, service, description, **kw)


_PCT = (0, 100, "%")
COMMANDS: dict[str, tuple[Command, ...]] = {
    "light": (
        _c("light", "turn_on", "turn_on", "turn on the light"),
        _c("light", "turn_off", "turn_off", "turn off the light"),
        _c("light", "set_brightness", "turn_on", "set light brightness level", field="brightness_pct",
           type="integer", value_range=_PCT),
        _c("light", "set_color_temp", "turn_on", "set light color temperature", field="color_temp_kelvin",
           type="integer", value_range=("min_color_temp_kelvin", "max_color_temp_kelvin", "K")),
        _c("light", "set_effect", "turn_on", "set light effect", field="effect", type="string",
           values_from="effect_list"),
    ),
    "switch": (
        _c("switch", "turn_on", "turn_on", "switch on power"),
        _c("switch", "turn_off", "turn_off", "switch off power"),
    ),
    "fan": (
        _c("fan", "turn_on", "turn_on", "turn on the fan"),
        _c("fan", "turn_off", "turn_off", "turn off the fan"),
        _c("fan", "set_percentage", "set_percentage", "set fan speed", field="percentage", type="integer",
           value_range=_PCT, feature=1),
        _c("fan", "oscillate", "oscillate", "fan oscillation swing", field="oscillating", type="boolean",
           feature=2),
        _c("fan", "set_preset_mode", "set_preset_mode", "set fan mode", field="preset_mode", type="string",
           values_from="preset_modes", feature=8),
    ),
    "climate": (
        _c("climate", "turn_on", "turn_on", "turn on"),
        _c("climate", "turn_off", "turn_off", "turn off"),
        _c("climate", "set_temperature", "set_temperature", "set target temperature", field="temperature",
           type="number", value_range=("min_temp", "max_temp", None), feature=1),
        _c("climate", "set_hvac_mode", "set_hvac_mode", "set operating mode", field="hvac_mode", type="string",
           values_from="hvac_modes"),
        _c("climate", "set_fan_mode", "set_fan_mode", "set fan speed", field="fan_mode", type="string",
           values_from="fan_modes", feature=8),
        _c("climate", "set_swing_mode", "set_swing_mode", "set air swing", field="swing_mode", type="string",
           values_from="swing_modes", feature=32),
    ),
    "cover": (
        _c("cover", "open_cover", "open_cover", "open", feature=1),
        _c("cover", "close_cover", "close_cover", "close", feature=2),
        _c("cover", "stop_cover", "stop_cover", "stop moving", feature=8),
        _c("cover", "set_cover_position", "set_cover_position", "set open position", field="position",
           type="integer", value_range=_PCT, feature=4),
        _c("cover", "set_cover_tilt_position", "set_cover_tilt_position", "set slat tilt angle",
           field="tilt_position", type="integer", value_range=_PCT, feature=128),
    ),
    "lock": (
        _c("lock", "lock", "lock", "lock the door"),
        _c("lock", "unlock", "unlock", "unlock the door"),
    ),
    "media_player": (
        _c("media_player", "turn_on", "turn_on", "power on", feature=128),
        _c("media_player", "turn_off", "turn_off", "power off", feature=256),
        _c("media_player", "media_play", "media_play", "play", feature=16384),
        _c("media_player", "media_pause", "media_pause", "pause playback", feature=1),
        _c("media_player", "media_stop", "media_stop", "stop playback", feature=4096),
        _c("media_player", "media_next_track", "media_next_track", "next track", feature=32),
        _c("media_player", "media_previous_track", "media_previous_track", "previous track", feature=16),
        _c("media_player", "volume_set", "volume_set", "set volume", field="volume_level", type="integer",
           value_range=_PCT, feature=4, scale=0.01),
        _c("media_player", "volume_up", "volume_up", "volume up louder", feature=1024),
        _c("media_player", "volume_down", "volume_down", "volume down quieter", feature=1024),
        _c("media_player", "mute", "volume_mute", "mute sound", field="is_volume_muted", type="boolean",
           feature=8),
        _c("media_player", "select_source", "select_source", "set input source", field="source",
           type="string", values_from="source_list", feature=2048),
    ),
    "vacuum": (
        _c("vacuum", "start", "start", "start cleaning", feature=8192),
        _c("vacuum", "pause", "pause", "pause cleaning", feature=4),
        _c("vacuum", "stop", "stop", "stop cleaning", feature=8),
        _c("vacuum", "return_to_base", "return_to_base", "return to dock and charge", feature=16),
        _c("vacuum", "set_fan_speed", "set_fan_speed", "set suction power", field="fan_speed", type="string",
           values_from="fan_speed_list", feature=32),
    ),
    "humidifier": (
        _c("humidifier", "turn_on", "turn_on", "turn on"),
        _c("humidifier", "turn_off", "turn_off", "turn off"),
        _c("humidifier", "set_humidity", "set_humidity", "set target humidity", field="humidity",
           type="integer", value_range=("min_humidity", "max_humidity", "%")),
        _c("humidifier", "set_mode", "set_mode", "set mode", field="mode", type="string",
           values_from="available_modes", feature=1),
    ),
    "water_heater": (
        _c("water_heater", "set_temperature", "set_temperature", "set water temperature", field="temperature",
           type="number", value_range=("min_temp", "max_temp", None), feature=1),
        _c("water_heater", "set_operation_mode", "set_operation_mode", "set operation mode",
           field="operation_mode", type="string", values_from="operation_list", feature=2),
    ),
    "valve": (
        _c("valve", "open_valve", "open_valve", "open the valve", feature=1),
        _c("valve", "close_valve", "close_valve", "close the valve", feature=2),
    ),
}
COMMAND_BY_ID = {c.id: c for commands in COMMANDS.values() for c in commands}

CATEGORY_RULES: dict[str, dict[str | None, str]] = {  # domain -> device_class -> category (None: default)
    "light": {None: "Light"},
    "switch": {"outlet": "SmartPlug", None: "Switch"},
    "fan": {None: "Fan"},
    "lock": {None: "Lock"},
    "vacuum": {None: "RobotCleaner"},
    "cover": {"garage": "GarageDoor", "door": "Door", "gate": "Door", None: "Blind"},
    "media_player": {"tv": "Television", "speaker": "NetworkAudio", "receiver": "NetworkAudio",
                     None: "NetworkAudio"},
    "humidifier": {"dehumidifier": "Dehumidifier", None: "Humidifier"},
    "water_heater": {None: "WaterHeater"},
    "valve": {None: "WaterValve"},
    "camera": {None: "Camera"},
    "binary_sensor": {"motion": "MotionSensor", "occupancy": "MotionSensor", "presence": "MotionSensor",
                      "door": "ContactSensor", "window": "ContactSensor", "opening": "ContactSensor",
                      "garage_door": "ContactSensor"},
    "sensor": {"temperature": "TempHumiditySensor", "humidity": "TempHumiditySensor"},
}
_REGISTRIES = ("area", "floor", "device", "entity")


def category(domain: str, device_class: str | None, attributes: dict) -> str | None:
    """The SmartThings category of an entity, or None when it maps to none."""
    if domain == "climate":
        modes = set(attributes.get("hvac_modes") or ())
        return "AirConditioner" if ("cool" in modes and "heat" not in modes) or "dry" in modes else "Thermostat"
    rules = CATEGORY_RULES.get(domain)
    if rules is None:
        return None
    return rules.get(device_class, rules.get(None))


def entity_commands(domain: str, attributes: dict) -> list[dict]:
    """The spec entries of an entity: its domain's commands that its supported_features allow."""
    features = attributes.get("supported_features")
    entries = []
    for command in COMMANDS.get(domain, ()):
        if command.feature and isinstance(features, int) and not features & command.feature:
            continue
        if domain == "light" and command.field in ("brightness_pct", "color_temp_kelvin", "effect"):
            modes = set(attributes.get("supported_color_modes") or ())
            if command.field == "brightness_pct" and modes and modes <= {"onoff"}:
                continue
            if command.field == "color_temp_kelvin" and "color_temp" not in modes:
                continue
            if command.field == "effect" and not attributes.get("effect_list"):
                continue
        entry = {"id": command.id, "description": command.description, "type": command.type,
                 "value_range": _range(command, attributes), "service": f"{domain}.{command.service}"}
        if command.field:
            entry["field"] = command.field
        if command.values_from:
            values = attributes.get(command.values_from)
            if not isinstance(values, list) or not values:
                continue
            entry["value_list"] = [{"value": str(v), "description": str(v).replace("_", " ")} for v in values]
        entries.append(entry)
    return entries


def _range(command: Command, attributes: dict) -> dict | None:
    if command.value_range is None:
        return None
    low, high, unit = command.value_range
    low = attributes.get(low, None) if isinstance(low, str) else low
    high = attributes.get(high, None) if isinstance(high, str) else high
    if command.field == "color_temp_kelvin":
        low, high = low or 2000, high or 6500
    if not isinstance(low, int | float) or not isinstance(high, int | float):
        return None
    if unit is None:  # a temperature: HA states do not carry the unit; the range tells it
        unit = "F" if high > 50 else "C"
    return {"min": low, "max": high, "unit": unit}


class HomeAssistantClient:
    """Registries over the WebSocket API and states over REST."""

    def __init__(self, url: str, token: str | None = None, **rest) -> None:
        token = token or os.environ.get(TOKEN_ENV)
        if not token:
            raise HomeAssistantError(f"no Home Assistant token: {TOKEN_HELP} and set {TOKEN_ENV}")
        self.url = url.rstrip("/")
        self._token = token
        self.deadline = rest.get("deadline", 60.0)
        self.rest = RestClient(self.url, token, **rest)

    def close(self) -> None:
        self.rest.close()

    @property
    def websocket_url(self) -> str:
        parts = urlsplit(self.url)
        scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
        return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/") + "/api/websocket", "", ""))

    def registries(self) -> dict[str, list[dict]]:
        """{"area": [...], "floor": [...], "device": [...], "entity": [...]} from one WebSocket session."""
        try:
            with WebSocket(self.websocket_url, deadline=self.deadline) as ws:
                first = ws.recv_json()
                if not isinstance(first, dict) or first.get("type") != "auth_required":
                    raise HomeAssistantError(f"{self.websocket_url}: expected auth_required, got {first!r:.120}")
                ws.send_json({"type": "auth", "access_token": self._token})
                answer = ws.recv_json()
                if not isinstance(answer, dict) or answer.get("type") != "auth_ok":
                    raise HomeAssistantError(f"Home Assistant {self.websocket_url} rejected the token "
                                             f"({(answer or {}).get('message', answer)}); {TOKEN_HELP}")
                out = {}
                for i, name in enumerate(_REGISTRIES, start=1):
                    ws.send_json({"id": i, "type": f"config/{name}_registry/list"})
                    out[name] = self._result(ws, i, name)
                return out
        except WebSocketError as exc:
            raise HomeAssistantError(f"Home Assistant WebSocket API: {exc}") from None

    def _result(self, ws: WebSocket, message_id: int, name: str) -> list[dict]:
        while True:
            message = ws.recv_json()
            if isinstance(message, dict) and message.get("id") == message_id and message.get("type") == "result":
                break
        if message.get("success"):
            result = message.get("result")
            return result if isinstance(result, list) else []
        error = message.get("error") or {}
        if name == "floor" and error.get("code") == "unknown_command":
            return []  # Home Assistant before 2024.4 has no floors
        if error.get("code") == "unauthorized":
            raise HomeAssistantError(f"Home Assistant config/{name}_registry/list answered unauthorized: the "
                                     "registries need the token of an administrator user")
        raise HomeAssistantError(f"Home Assistant config/{name}_registry/list failed: "
                                 f"{error.get('code')}: {error.get('message')}")

    def states(self) -> list[dict]:
        try:
            states = self.rest.get("/api/states")
        except ApiError as exc:
            if exc.status in (401, 403):
                raise HomeAssistantError(f"Home Assistant GET /api/states answered HTTP {exc.status}: the "
                                         f"token was rejected; {TOKEN_HELP} and set {TOKEN_ENV}") from None
            raise HomeAssistantError(f"Home Assistant: {exc}") from None
        if not isinstance(states, list):
            raise HomeAssistantError("Home Assistant GET /api/states: expected a list of states")
        return states


def pull_homeassistant(url: str, out: str | Path, *, token: str | None = None, **rest) -> WriteSummary:
    """Fetch the registries and states and write them as a home directory."""
    client = HomeAssistantClient(url, token, **rest)
    try:
        registries = client.registries()
        states = client.states()
    finally:
        client.close()
    devices, rooms, profiles, skipped = map_home(registries, states)
    return write_home(out, devices, rooms, profiles, {"source": "homeassistant", "url": client.url},
                      skipped=skipped)


def map_home(registries: dict[str, list[dict]], states: list[dict]) -> tuple[list, list, list, int]:
    """(devices.json items, rooms.json items, spec lines, entities skipped) from HA registries and states."""
    rooms = _rooms(registries.get("area") or [], registries.get("floor") or [])
    room_ids = {r["roomId"] for r in rooms}
    ha_devices = {d.get("id"): d for d in registries.get("device") or [] if isinstance(d, dict)}
    entries = {e.get("entity_id"): e for e in registries.get("entity") or [] if isinstance(e, dict)}
    devices, profiles, skipped = [], {}, 0
    for state in states:
        entity_id = state.get("entity_id") if isinstance(state, dict) else None
        if not isinstance(entity_id, str) or "." not in entity_id:
            continue
        domain = entity_id.split(".", 1)[0]
        entry = entries.get(entity_id) or {}
        attributes = state.get("attributes") if isinstance(state.get("attributes"), dict) else {}
        if entry.get("disabled_by") or entry.get("hidden_by") or entry.get("entity_category"):
            skipped += 1
            continue
        device_class = entry.get("device_class") or entry.get("original_device_class") or \
            attributes.get("device_class")
        kind = category(domain, device_class, attributes)
        commands = entity_commands(domain, attributes)
        if kind is None and not commands:
            skipped += 1
            continue
        ha_device = ha_devices.get(entry.get("device_id")) or {}
        area = entry.get("area_id") or ha_device.get("area_id")
        label = attributes.get("friendly_name") or entry.get("name") or entry.get("original_name") or \
            ha_device.get("name_by_user") or ha_device.get("name") or entity_id
        profile_id = "ha-" + domain + "-" + hashlib.sha1(
            json.dumps(commands, sort_keys=True).encode()).hexdigest()[:10]
        profiles.setdefault(profile_id, commands)
        device = {
            "deviceId": entity_id, "name": entity_id, "label": str(label),
            "components": [{"id": "main", "capabilities": [{"id": domain, "version": 1}],
                            "categories": [{"name": kind}] if kind else []}],
            "profile": {"id": profile_id},
            "homeassistant": {"entity_id": entity_id, "device_id": entry.get("device_id"), "domain": domain,
                              "device_class": device_class, "platform": entry.get("platform")},
        }
        if area in room_ids:
            device["roomId"] = area
        devices.append(device)
    return devices, rooms, [{"profileId": p, "capabilities": c} for p, c in profiles.items()], skipped


def _rooms(areas: list[dict], floors: list[dict]) -> list[dict]:
    from ..home_commands.text_match import tokens

    floor_of = {f.get("floor_id"): f for f in floors if isinstance(f, dict)}
    areas = [a for a in areas if isinstance(a, dict) and a.get("area_id") and isinstance(a.get("name"), str)
             and a["name"].strip()]
    floors_named: dict[str, set] = {}
    for area in areas:
        floors_named.setdefault(area["name"].strip().lower(), set()).add(area.get("floor_id"))
    rooms = []
    for area in areas:
        floor = floor_of.get(area.get("floor_id")) or {}
        name = area["name"].strip()
        repeated = len(floors_named[name.lower()]) > 1
        if repeated and floor.get("name") and (len(tokens(name)) >= 2 or _CJK_END.search(name)):
            name = room_name(floor["name"], name)
        rooms.append({"roomId": area["area_id"], "name": name, "area": area["name"],
                      "floorId": floor.get("floor_id"), "floor": floor.get("name"), "level": floor.get("level")})
    return rooms


_CJK_END = re.compile(r"[\u3400-\u9fff]$")


def room_name(floor: str, area: str) -> str:
    """"First Floor" + "Living Room" -> "First Floor Living Room"; "一楼" + "客厅" -> "一楼客厅"; an area
    whose name already says its floor keeps it."""
    floor = floor.strip()
    if floor.lower() in area.lower():
        return area
    joiner = "" if _CJK_END.search(floor) and re.match(r"[\u3400-\u9fff]", area) else " "
    return f"{floor}{joiner}{area}"
