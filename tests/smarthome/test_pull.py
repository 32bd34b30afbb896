"""Pulling a home from the SmartThings and Home Assistant stand-ins (tests/smarthome/smarthome_fakes.py)."""

from __future__ import annotations

import json
import shutil

import pytest
from smarthome_fakes import BUNDLED, TOKEN, FakeHomeAssistant, FakeSmartThings, queries

from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex
from tracerag.smarthome.homeassistant import HomeAssistantError, category, pull_homeassistant, room_name
from tracerag.smarthome.smartthings import SmartThingsError, capability_commands, pull_smartthings


def _hits(home: Home, embedder, cases: list[dict], entity_of: dict | None = None) -> list[str]:
    """The queries whose expected device (any of them) is in the top 10, parsed without an LM."""
    program = CommandRetrieval(CommandIndex(home, embedder), ir_source="none")
    found = []
    for case in cases:
        expected = {(entity_of or {}).get(e["device_id"], e["device_id"]) for e in case["expected"]}
        if expected & {c.device_id for c in program(query=case["query"]).candidates[:10]}:
            found.append(case["query"])
    return found


# ---------------------------------------------------------------------------------------------
# SmartThings

def test_smartthings_pull_pages_retries_and_writes_a_home_queries_still_work(tmp_path, embedder):
    with FakeSmartThings("home_medium", page_size=25, no_strings=("windowShade",)) as fake:
        summary = pull_smartthings(fake.location_id, tmp_path, token=TOKEN, base_url=fake.url, locale="zh-CN")
        gets = [path for method, path, _ in fake.requests if method == "GET"]
    home = Home.load(tmp_path)
    assert summary.devices == len(home.devices) == 61 and summary.rooms == len(home.rooms) == 11
    assert home.warnings == [] and home.report.summary() == "read 61 devices, kept 61"
    # three pages, the second one asked twice (503, then success); rooms twice (429 + Retry-After)
    device_pages = [p for p in gets if p.startswith("/v1/devices")]
    assert len(device_pages) == 4 and sum("page=2" in p for p in device_pages) == 2
    assert sum("/rooms" in p for p in gets) == 2
    # each capability definition once, and its strings once
    definitions = [p for p in gets if p.startswith("/v1/capabilities/") and "/i18n/" not in p]
    assert len(definitions) == len(set(definitions)) == len({p for p in gets if "/i18n/zh-CN" in p})
    assert json.loads((tmp_path / "source.json").read_text())["source"] == "smartthings"
    # the files are the GET shapes
    assert json.loads((tmp_path / "devices.json").read_text())["items"][0]["deviceId"]
    # localized descriptions where the API has them, generated ones where it has none
    light = next(d for d in home.devices if d.category == "Light" and d.command("main-switch-on"))
    assert not light.command("main-switch-on").description.isascii()
    shade = next(d for d in home.devices if d.command("main-windowShade-open"))
    assert shade.command("main-windowShade-open").description == "window shade: open"
    level = light.command("main-switchLevel-setLevel")
    assert level is None or dict(level.value_range) == {"min": 0, "max": 100, "unit": "%"}
    # bundled queries still find their device in the pulled home (descriptions come per capability
    # from the API, not per profile as in the hand-written spec)
    cases = [q for q in queries("home_medium") if q.get("quantifier") == "one"][:40]
    bundled = _hits(Home.load(BUNDLED / "home_medium"), embedder, cases)
    pulled = _hits(home, embedder, cases)
    assert len(pulled) >= len(bundled) - 2 and len(pulled) >= 0.9 * len(cases)


def test_smartthings_pull_keeps_hand_written_descriptions(tmp_path):
    shutil.copy(BUNDLED / "home_medium" / "spec.jsonl", tmp_path / "spec.jsonl")
    hand = {json.loads(line)["profileId"]: json.loads(line)
            for line in (tmp_path / "spec.jsonl").read_text(encoding="utf-8").splitlines()}
    with (tmp_path / "spec.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps({"profileId": "hand-only", "capabilities": [
            {"id": "main-switch-on", "description": "wake the old lamp", "type": None, "value_range": None}]}) + "\n")
    with FakeSmartThings("home_medium", flaky=False) as fake:
        summary = pull_smartthings(fake.location_id, tmp_path, token=TOKEN, base_url=fake.url, locale="zh-CN")
    assert summary.kept_descriptions > 0 and summary.kept_profiles == 1
    assert f"kept {summary.kept_descriptions} hand-written description(s)" in summary.line()
    merged = Home.load(tmp_path)
    for device in merged.devices:
        for entry in hand[device.profile_id]["capabilities"]:
            assert device.command(entry["id"]).description == entry["description"]
    spec = (tmp_path / "spec.jsonl").read_text(encoding="utf-8")
    assert "wake the old lamp" in spec


def test_smartthings_token_without_scope_is_one_line_naming_endpoint_and_scope(tmp_path):
    with FakeSmartThings(forbidden=("/v1/devices",)) as fake:
        with pytest.raises(SmartThingsError) as err:
            pull_smartthings(fake.location_id, tmp_path / "home", token=TOKEN, base_url=fake.url)
        with pytest.raises(SmartThingsError, match="HTTP 401: the token was rejected"):
            pull_smartthings(fake.location_id, tmp_path / "home", token="wrong", base_url=fake.url)
    message = str(err.value)
    assert "\n" not in message and "GET /v1/devices" in message and "r:devices:*" in message
    assert "403" in message and not (tmp_path / "home").exists()


def test_smartthings_without_token_says_which_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("SMARTTHINGS_TOKEN", raising=False)
    with pytest.raises(SmartThingsError, match="SMARTTHINGS_TOKEN"):
        pull_smartthings("loc", tmp_path, base_url="http://127.0.0.1:9")


def test_capability_definition_in_the_list_shape_becomes_spec_entries():
    definition = {"id": "switchLevel", "name": "Switch Level", "commands": [{"name": "setLevel", "arguments": [
        {"name": "level", "optional": False, "schema": {"type": "integer", "minimum": 0, "maximum": 100}},
        {"name": "rate", "optional": True, "schema": {"type": "integer"}}]}],
        "attributes": [{"name": "level", "setter": "setLevel", "units": ["%"]}]}
    assert capability_commands("switchLevel", definition) == [
        {"id": "main-switchLevel-setLevel", "description": "set level", "type": "integer",
         "value_range": {"min": 0, "max": 100, "unit": "%"}}]
    modes = {"id": "airConditionerMode", "name": "Air Conditioner Mode", "commands": {"setAirConditionerMode": {
        "arguments": [{"name": "mode", "schema": {"type": "string", "enum": ["cool", "heat"]}}]}}}
    strings = {"commands": {"setAirConditionerMode": {"label": "Set mode", "arguments": {"mode": {"i18n": {
        "value": {"cool": {"label": "Cool"}}}}}}}}
    [entry] = capability_commands("airConditionerMode", modes, strings)
    assert entry["description"] == "Set mode"
    assert entry["value_list"] == [{"value": "cool", "description": "Cool"}, {"value": "heat", "description": "heat"}]


# ---------------------------------------------------------------------------------------------
# Home Assistant

@pytest.fixture(scope="module")
def ha_pull(tmp_path_factory):
    out = tmp_path_factory.mktemp("ha")
    with FakeHomeAssistant("home_en") as fake:
        summary = pull_homeassistant(fake.url, out, token=TOKEN)
        return out, summary, fake.home, list(fake.requests)


def test_homeassistant_pull_maps_entities_areas_and_floors(ha_pull, embedder):
    out, summary, ha, requests = ha_pull
    home = Home.load(out)
    assert home.warnings == [] and summary.skipped == 3  # a diagnostic sensor, the sun, an automation
    assert ("GET", "/api/websocket", None) in requests and ("GET", "/api/states", None) in requests
    by_id = {d.device_id: d for d in home.devices}
    assert by_id["light.chandelier"].category == "Light" and by_id["light.chandelier"].room == "Dining Room"
    assert by_id["cover.garage_door"].category == "GarageDoor"
    assert by_id["climate.window_ac"].category == "AirConditioner"
    assert by_id["climate.thermostat"].category == "Thermostat"
    assert by_id["media_player.living_room_tv"].category == "Television"
    assert by_id["switch.coffee_maker"].category == "SmartPlug"
    temperature = by_id["climate.thermostat"].command("main-climate-set_temperature")
    assert dict(temperature.value_range) == {"min": 45, "max": 90, "unit": "F"}
    modes = by_id["climate.window_ac"].command("main-climate-set_hvac_mode")
    assert [v.value for v in modes.value_list] == ["off", "cool", "dry", "fan_only", "auto"]
    assert by_id["light.garage_light"].command("main-light-set_brightness") is None  # an on/off light
    # rooms: area names, the floor recorded; one name on two floors gets its floor in front
    rooms = {r["roomId"]: r for r in json.loads((out / "rooms.json").read_text())["items"]}
    assert rooms["kitchen"]["name"] == "Kitchen" and rooms["kitchen"]["floor"] == "First Floor"
    assert rooms["office"]["floor"] == "Second Floor" and rooms["office"]["level"] == 2
    assert {rooms["guest_room_1"]["name"], rooms["guest_room_2"]["name"]} == \
        {"First Floor Guest Room", "Second Floor Guest Room"}
    # the service each command calls is in the spec line
    spec = [json.loads(line) for line in (out / "spec.jsonl").read_text().splitlines()]
    entry = next(c for p in spec for c in p["capabilities"] if c["id"] == "main-light-set_brightness")
    assert entry["service"] == "light.turn_on" and entry["field"] == "brightness_pct"


def test_homeassistant_floor_is_said_with_the_room(ha_pull, embedder):
    out, _, _, _ = ha_pull
    index = CommandIndex(Home.load(out), embedder)
    assert index.names.mentioned_rooms("turn on the guest room lights") == ["First Floor Guest Room",
                                                                      "Second Floor Guest Room"]
    assert index.names.mentioned_rooms("turn on the second floor guest room light") == ["Second Floor Guest Room"]
    assert index.names.mentioned_rooms("switch off the kitchen lights") == ["Kitchen"]


def test_homeassistant_bundled_queries_find_their_device(ha_pull, embedder):
    out, _, ha, _ = ha_pull
    entity_of = ha["entity_of"]
    cases = [q for q in queries("home_en") if q.get("quantifier") == "one"
             and all(e["device_id"] in entity_of for e in q["expected"])][:40]
    bundled = _hits(Home.load(BUNDLED / "home_en"), embedder, cases)
    pulled = _hits(Home.load(out), embedder, cases, entity_of)
    # a device is offered only for what it can do: Home Assistant's light has no colour command here, the fake's
    # blinds no tilt and its humidifier no modes, so those three asks find nothing in the pulled home
    assert len(pulled) >= len(bundled) - 3 and len(pulled) >= 0.9 * len(cases)


def test_homeassistant_without_floors_and_errors(tmp_path):
    with FakeHomeAssistant("home_en", floors=False) as fake:
        pull_homeassistant(fake.url, tmp_path / "old", token=TOKEN)
        with pytest.raises(HomeAssistantError, match="rejected the token") as err:
            pull_homeassistant(fake.url, tmp_path / "bad", token="wrong")
        assert "\n" not in str(err.value)
        fake.admin = False
        with pytest.raises(HomeAssistantError, match="administrator"):
            pull_homeassistant(fake.url, tmp_path / "user", token=TOKEN)
    rooms = json.loads((tmp_path / "old" / "rooms.json").read_text())["items"]
    assert all(r["floor"] is None for r in rooms) and "Guest Room" in {r["name"] for r in rooms}
    assert not (tmp_path / "bad").exists()


def test_categories_and_room_names():
    assert category("cover", "garage", {}) == "GarageDoor" and category("cover", "shutter", {}) == "Blind"
    assert category("media_player", None, {}) == "NetworkAudio" and category("sensor", "power", {}) is None
    assert category("climate", None, {"hvac_modes": ["off", "heat", "cool"]}) == "Thermostat"
    assert room_name("一楼", "客厅") == "一楼客厅" and room_name("First Floor", "Living Room") == \
        "First Floor Living Room"
