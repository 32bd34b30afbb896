"""Stand-ins for the SmartThings and Home Assistant APIs on 127.0.0.1 (stdlib http.server in a thread).

Both serve a realistic home derived from a bundled one and record every request, so tests can assert
exactly what a pull fetched and what an execution sent. Faults are switched on per instance:

- SmartThings: paging (``page_size``), a 429 with Retry-After on the first rooms request, a 503 before
  the second devices page, capability definitions without localized strings, a 403 on chosen paths,
  command failures (``failing``: HTTP 500; ``rejecting``: a FAILED result) and vanished devices (404);
- Home Assistant: the WebSocket API (handshake and text frames implemented here with the stdlib), the
  registries with areas on two floors, ``GET /api/states``, service calls that fail for chosen
  entities (``failing``: 500; ``vanished``: 400 naming the missing entity, as HA answers).

``latency`` (seconds) delays every HTTP answer, to measure execution as over a real network.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

BUNDLED = Path(__file__).parents[2] / "tracerag" / "datasets" / "data" / "smarthome"
TOKEN = "test-token"


def load_bundled(name: str) -> tuple[list[dict], list[dict], dict[str, list[dict]]]:
    home = BUNDLED / name
    devices = json.loads((home / "devices.json").read_text(encoding="utf-8"))["items"]
    rooms = json.loads((home / "rooms.json").read_text(encoding="utf-8"))["items"]
    spec = {}
    for line in (home / "spec.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            spec[row["profileId"]] = row["capabilities"]
    return devices, rooms, spec


def queries(name: str) -> list[dict]:
    return [json.loads(line) for line in (BUNDLED / name / "queries.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]


class _Server:
    """A ThreadingHTTPServer on 127.0.0.1 running in a daemon thread; records requests."""

    def __init__(self, handler_class) -> None:
        owner = self

        class Handler(handler_class):
            fake = owner

            def log_message(self, *args):  # quiet
                pass

        self.requests: list[tuple[str, str, object]] = []
        self.lock = threading.Lock()
        self.latency = 0.0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def record(self, method: str, path: str, body=None) -> None:
        with self.lock:
            self.requests.append((method, path, body))

    def posts(self) -> list[tuple[str, object]]:
        return [(path, body) for method, path, body in self.requests if method == "POST"]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1  # headers and body leave in one write (no delayed-ACK stall per request)
    fake: _Server

    def send_json(self, status: int, payload, headers: dict | None = None) -> None:
        if self.fake.latency:
            time.sleep(self.fake.latency)
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n)) if n else None

    def authorised(self) -> bool:
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self.send_json(401, {"error": {"code": "Unauthorized"}})
            return False
        return True


# ---------------------------------------------------------------------------------------------
# SmartThings

def capability_definitions(devices: list[dict], spec: dict[str, list[dict]]) -> dict[str, dict]:
    """API-shaped capability definitions (commands keyed by name) for every capability the devices use,
    rebuilt from the bundled spec's commands; plus {id: {command: description}} as localized strings."""
    commands: dict[str, dict[str, dict]] = {}
    for device in devices:
        for cap in device["components"][0]["capabilities"]:
            commands.setdefault(cap["id"], {})
    for entries in spec.values():
        for entry in entries:
            _, capability, command = entry["id"].split("-", 2)
            if command in commands.setdefault(capability, {}):
                continue
            arguments = []
            if entry.get("type"):
                schema = {"type": entry["type"]}
                value_range = entry.get("value_range") or {}
                if "min" in value_range:
                    schema["minimum"] = value_range["min"]
                if "max" in value_range:
                    schema["maximum"] = value_range["max"]
                if entry.get("value_list"):
                    schema["enum"] = [v["value"] for v in entry["value_list"]]
                arguments = [{"name": "value", "optional": False, "schema": schema}]
            commands[capability][command] = {"name": command, "arguments": arguments, "_entry": entry}
    definitions = {}
    for capability, cmds in commands.items():
        attributes = {}
        for name, cmd in cmds.items():
            unit = (cmd["_entry"].get("value_range") or {}).get("unit")
            if unit:
                attributes[f"{name}Value"] = {"schema": {"type": "object", "properties": {
                    "value": {"type": "number"}, "unit": {"type": "string", "enum": [unit], "default": unit}}},
                    "setter": name}
        definitions[capability] = {
            "id": capability, "version": 1, "status": "live",
            "name": " ".join(w.title() for w in re.findall(r"[A-Z]?[a-z]+", capability.split(".")[-1])),
            "attributes": attributes,
            "commands": {n: {"name": n, "arguments": c["arguments"]} for n, c in cmds.items()},
            "_strings": {"tag": "zh-CN", "label": capability, "commands": {
                n: {"label": c["_entry"]["description"], "arguments": {"value": {"i18n": {"value": {
                    v["value"]: {"label": v.get("description") or v["value"]}
                    for v in c["_entry"].get("value_list") or []}}}}} for n, c in cmds.items()}},
        }
    return definitions


class FakeSmartThings(_Server):
    def __init__(self, home: str = "home_medium", *, page_size: int = 25, no_strings: tuple = (),
                 forbidden: tuple = (), flaky: bool = True) -> None:
        super().__init__(_SmartThingsHandler)
        self.devices, self.rooms, spec = load_bundled(home)
        self.location_id = self.devices[0]["locationId"]
        self.definitions = capability_definitions(self.devices, spec)
        self.page_size, self.no_strings, self.forbidden, self.flaky = page_size, set(no_strings), forbidden, flaky
        self.failing: set[str] = set()  # device ids whose commands answer HTTP 500
        self.rejecting: set[str] = set()  # device ids whose commands answer a FAILED result
        self.vanished: set[str] = set()  # device ids that answer 404
        self._faulted: set[str] = set()

    def fault_once(self, key: str) -> bool:
        with self.lock:
            if not self.flaky or key in self._faulted:
                return False
            self._faulted.add(key)
            return True


class _SmartThingsHandler(_Handler):
    fake: FakeSmartThings

    def do_GET(self):  # noqa: N802
        fake = self.fake
        parts = urlsplit(self.path)
        fake.record("GET", self.path)
        if not self.authorised():
            return
        if any(parts.path.startswith(p) for p in fake.forbidden):
            return self.send_json(403, {"error": {"code": "Forbidden", "message": "insufficient scope"}})
        query = parse_qs(parts.query)
        if parts.path == "/v1/devices":
            page = int(query.get("page", ["1"])[0])
            if page == 2 and fake.fault_once("devices-503"):
                return self.send_json(503, {"error": "try again"})
            items = [d for d in fake.devices if d["locationId"] == query.get("locationId", [""])[0]]
            start = (page - 1) * fake.page_size
            out = {"items": items[start:start + fake.page_size], "_links": {}}
            if start + fake.page_size < len(items):
                out["_links"]["next"] = {"href": f"{fake.url}/v1/devices?locationId={fake.location_id}&page={page + 1}"}
            return self.send_json(200, out)
        match = re.fullmatch(r"/v1/locations/([^/]+)/rooms", parts.path)
        if match:
            if fake.fault_once("rooms-429"):
                return self.send_json(429, {"error": "slow down"}, {"Retry-After": "0.2"})
            return self.send_json(200, {"items": [r for r in fake.rooms if r["locationId"] == match.group(1)]})
        match = re.fullmatch(r"/v1/capabilities/([^/]+)/(\d+)(/i18n/([^/]+))?", parts.path)
        if match:
            definition = fake.definitions.get(match.group(1))
            if definition is None or match.group(2) != "1":
                return self.send_json(404, {"error": "no such capability"})
            if match.group(3):
                if match.group(1) in fake.no_strings:
                    return self.send_json(404, {"error": "no strings"})
                return self.send_json(200, definition["_strings"])
            return self.send_json(200, {k: v for k, v in definition.items() if not k.startswith("_")})
        self.send_json(404, {"error": f"no route {parts.path}"})

    def do_POST(self):  # noqa: N802
        fake = self.fake
        body = self.body()
        fake.record("POST", self.path, body)
        if not self.authorised():
            return
        match = re.fullmatch(r"/v1/devices/([^/]+)/commands", self.path)
        if not match:
            return self.send_json(404, {"error": "no route"})
        device_id = match.group(1)
        if device_id in fake.vanished or not any(d["deviceId"] == device_id for d in fake.devices):
            return self.send_json(404, {"error": {"code": "NotFoundError", "message": "device not found"}})
        if device_id in fake.failing:
            return self.send_json(500, {"error": {"code": "InternalError"}})
        status = "FAILED" if device_id in fake.rejecting else "ACCEPTED"
        self.send_json(200, {"results": [{"id": f"cmd-{len(fake.requests)}", "status": status}]})


# ---------------------------------------------------------------------------------------------
# Home Assistant

_DOMAIN = {  # SmartThings category -> (domain, device_class, attributes)
    "Light": ("light", None, {}),
    "Switch": ("switch", None, {}),
    "SmartPlug": ("switch", "outlet", {}),
    "Aroma": ("switch", None, {}),
    "AirConditioner": ("climate", None, {"hvac_modes": ["off", "cool", "dry", "fan_only", "auto"], "min_temp": 16,
                                         "max_temp": 30, "fan_modes": ["low", "medium", "high", "auto"],
                                         "supported_features": 1 | 8 | 128 | 256}),
    "Thermostat": ("climate", None, {"hvac_modes": ["off", "heat", "cool", "heat_cool"], "min_temp": 45,
                                     "max_temp": 90, "supported_features": 1 | 128 | 256}),
    "AirPurifier": ("fan", None, {"supported_features": 1 | 8 | 16 | 32, "preset_modes": ["auto", "sleep"]}),
    "Fan": ("fan", None, {"supported_features": 1 | 2 | 16 | 32}),
    "Blind": ("cover", "curtain", {"supported_features": 1 | 2 | 4 | 8}),
    "GarageDoor": ("cover", "garage", {"supported_features": 1 | 2}),
    "Lock": ("lock", None, {}),
    "Television": ("media_player", "tv", {"supported_features": 1 | 4 | 8 | 128 | 256 | 1024 | 2048 | 16384,
                                          "source_list": ["HDMI 1", "HDMI 2", "TV", "Netflix"]}),
    "NetworkAudio": ("media_player", "speaker", {"supported_features": 1 | 4 | 8 | 16 | 32 | 1024 | 4096 | 16384}),
    "RobotCleaner": ("vacuum", None, {"supported_features": 4 | 8 | 16 | 32 | 8192,
                                      "fan_speed_list": ["quiet", "standard", "turbo"]}),
    "Humidifier": ("humidifier", None, {"min_humidity": 30, "max_humidity": 80, "supported_features": 0}),
    "MotionSensor": ("binary_sensor", "motion", {}),
    "TempHumiditySensor": ("sensor", "temperature", {"unit_of_measurement": "°C"}),
}
SECOND_FLOOR = {"Master Bedroom", "Kids Room", "Office", "Laundry Room"}


def _slug(text: str) -> str:
    """An ASCII id from a name, as HA makes them ("Living Room" -> "living_room"; a Chinese name, which HA
    transliterates, gets a stable hash here)."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "x" + hashlib.md5(text.encode()).hexdigest()[:8]


def homeassistant_home(name: str = "home_en") -> dict:
    """Registries and states for a bundled home, and the bundled device id -> entity id map."""
    devices, rooms, spec = load_bundled(name)
    floors = [{"floor_id": "first_floor", "name": "First Floor", "level": 1},
              {"floor_id": "second_floor", "name": "Second Floor", "level": 2}]
    areas = [{"area_id": _slug(r["name"]), "name": r["name"],
              "floor_id": "second_floor" if r["name"] in SECOND_FLOOR else "first_floor"} for r in rooms]
    area_of_room = {r["roomId"]: _slug(r["name"]) for r in rooms}
    ha_devices, entities, states, entity_of = [], [], [], {}
    for device in devices:
        category = (device["components"][0].get("categories") or [{}])[0].get("name", "")
        mapped = _DOMAIN.get(category)
        if mapped is None:
            continue
        domain, device_class, attributes = mapped
        attributes = {**attributes, "friendly_name": device["label"]}
        commands = {e["id"].split("-", 2)[2] for e in spec[device["profile"]["id"]]}
        if domain == "light":
            attributes["supported_color_modes"] = ["color_temp"] if "setColorTemperature" in commands else \
                ["brightness"] if "setLevel" in commands else ["onoff"]
            attributes.update(min_color_temp_kelvin=2700, max_color_temp_kelvin=6500)
        entity_id = f"{domain}.{_slug(device['label'])}"
        while entity_id in entity_of.values():
            entity_id += "_2"
        entity_of[device["deviceId"]] = entity_id
        ha_device_id = hashlib.md5(device["deviceId"].encode()).hexdigest()
        ha_devices.append({"id": ha_device_id, "name": device["label"], "name_by_user": None,
                           "area_id": area_of_room.get(device.get("roomId")), "manufacturer": "Acme"})
        entities.append({"entity_id": entity_id, "device_id": ha_device_id, "area_id": None, "platform": "demo",
                         "name": None, "original_name": None, "device_class": None,
                         "original_device_class": device_class, "disabled_by": None, "hidden_by": None,
                         "entity_category": None})
        states.append({"entity_id": entity_id, "state": "off", "attributes": attributes})
    # one area name on both floors (a guest room up and down), each with a light
    for floor in floors:
        area_id = f"guest_room_{floor['level']}"
        areas.append({"area_id": area_id, "name": "Guest Room", "floor_id": floor["floor_id"]})
        entity_id = f"light.guest_room_{floor['level']}"
        entities.append({"entity_id": entity_id, "device_id": None, "area_id": area_id, "platform": "demo",
                         "entity_category": None, "disabled_by": None, "hidden_by": None})
        states.append({"entity_id": entity_id, "state": "off", "attributes": {
            "friendly_name": f"Guest Room Light {floor['level']}", "supported_color_modes": ["brightness"]}})
    # what a real instance also has: diagnostics, hidden helpers, things that are no device
    entities.append({"entity_id": "sensor.hub_signal", "device_id": None, "area_id": None, "platform": "demo",
                     "entity_category": "diagnostic", "disabled_by": None, "hidden_by": None})
    states += [{"entity_id": "sensor.hub_signal", "state": "-60", "attributes": {"device_class": "signal_strength"}},
               {"entity_id": "sun.sun", "state": "above_horizon", "attributes": {"friendly_name": "Sun"}},
               {"entity_id": "automation.night", "state": "on", "attributes": {"friendly_name": "Night"}}]
    return {"area": areas, "floor": floors, "device": ha_devices, "entity": entities, "states": states,
            "entity_of": entity_of}


def _ws_frame(payload: bytes, opcode: int = 0x1) -> bytes:
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([n])
    elif n < 2**16:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return head + payload


def _ws_read(rfile) -> tuple[int, bytes]:
    b0, b1 = rfile.read(2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", rfile.read(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", rfile.read(8))[0]
    mask = rfile.read(4) if b1 & 0x80 else b"\0\0\0\0"
    data = rfile.read(n)
    return b0 & 0x0F, bytes(b ^ mask[i % 4] for i, b in enumerate(data))


class FakeHomeAssistant(_Server):
    def __init__(self, home: str = "home_en", *, floors: bool = True) -> None:
        super().__init__(_HomeAssistantHandler)
        self.home = homeassistant_home(home)
        if not floors:
            self.home["floor"] = None  # an instance before 2024.4: unknown_command
        self.failing: set[str] = set()  # entity ids whose service calls answer 500
        self.vanished: set[str] = set()  # entity ids HA no longer has: 400 for a call naming them
        self.admin = True


class _HomeAssistantHandler(_Handler):
    fake: FakeHomeAssistant

    def do_GET(self):  # noqa: N802
        fake = self.fake
        fake.record("GET", self.path)
        if self.path == "/api/websocket":
            return self.websocket()
        if not self.authorised():
            return
        if self.path == "/api/states":
            return self.send_json(200, fake.home["states"])
        self.send_json(404, {"message": "not found"})

    def do_POST(self):  # noqa: N802
        fake = self.fake
        body = self.body()
        fake.record("POST", self.path, body)
        if not self.authorised():
            return
        if not re.fullmatch(r"/api/services/\w+/\w+", self.path):
            return self.send_json(404, {"message": "not found"})
        ids = body.get("entity_id") or []
        ids = [ids] if isinstance(ids, str) else ids
        missing = [e for e in ids if e in fake.vanished]
        if missing:
            return self.send_json(400, {"message": f"Referenced entities {', '.join(missing)} are missing"})
        if any(e in fake.failing for e in ids):
            return self.send_json(500, {"message": "Internal Server Error"})
        self.send_json(200, [{"entity_id": e, "state": "on", "attributes": {}} for e in ids])

    def websocket(self) -> None:
        key = self.headers.get("Sec-WebSocket-Key", "")
        accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
        self.wfile.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
        self.close_connection = True

        def send(message):
            self.wfile.write(_ws_frame(json.dumps(message).encode()))
            self.wfile.flush()

        send({"type": "auth_required", "ha_version": "2025.1.0"})
        authed = False
        while True:
            opcode, data = _ws_read(self.rfile)
            if opcode == 0x8:
                self.wfile.write(_ws_frame(data[:2], 0x8))
                self.wfile.flush()
                return
            message = json.loads(data)
            if not authed:
                if message.get("access_token") != TOKEN:
                    send({"type": "auth_invalid", "message": "Invalid access token or password"})
                    return
                authed = True
                send({"type": "auth_ok", "ha_version": "2025.1.0"})
                continue
            match = re.fullmatch(r"config/(\w+)_registry/list", message.get("type", ""))
            result = self.fake.home.get(match.group(1)) if match else None
            if result is None:
                send({"id": message["id"], "type": "result", "success": False,
                      "error": {"code": "unknown_command", "message": "Unknown command."}})
            elif not self.fake.admin:
                send({"id": message["id"], "type": "result", "success": False,
                      "error": {"code": "unauthorized", "message": "Unauthorized"}})
            else:
                # a big answer goes in two fragments, as any server may send it
                payload = json.dumps({"id": message["id"], "type": "result", "success": True,
                                      "result": result}).encode()
                half = len(payload) // 2
                self.wfile.write(bytes([0x01]) + _ws_frame(payload[:half])[1:])  # FIN=0, text
                self.wfile.write(bytes([0x80]) + _ws_frame(payload[half:])[1:])  # FIN=1, continuation
                self.wfile.flush()
