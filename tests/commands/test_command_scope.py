"""What "every door", a floor, an exception and a place the home lacks refer to, without an LM.

"unlock every door" is no gate's or safe's lock; 一楼 (first floor) is not 负一楼 (the basement floor); a place
this home does not have (the hayloft, 阳光房) is asked about, never widened to every light.
"""

from __future__ import annotations

import pytest
from conftest import write_home

from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex

LOCK = [{"id": "main-lock-lock", "description": "lock", "type": None, "value_range": None},
        {"id": "main-lock-unlock", "description": "unlock", "type": None, "value_range": None}]
SWITCH = [{"id": "main-switch-on", "description": "turn on", "type": None, "value_range": None},
          {"id": "main-switch-off", "description": "turn off", "type": None, "value_range": None}]
SPECS = {"p-lock": LOCK, "p-switch": SWITCH}
ROOMS = {"r-entry": "一楼门厅", "r-living": "一楼客厅", "r-gym": "负一楼健身房", "r-yard": "Yard"}
DEVICES = [
    ("front-door", "Front Door", "r-entry", "Lock", "p-lock"),
    ("back-door", "Back Door", "r-entry", "Lock", "p-lock"),
    ("gate", "Front Gate", "r-yard", "Lock", "p-lock"),
    ("safe", "Gun Safe", "r-living", "Lock", "p-lock"),
    ("living-light", "客厅大灯", "r-living", "Light", "p-switch"),
    ("entry-light", "门厅吊灯", "r-entry", "Light", "p-switch"),
    ("gym-light", "健身房灯", "r-gym", "Light", "p-switch"),
    ("pump", "Well Pump", "r-yard", "SmartPlug", "p-switch"),
    ("freezer", "Chest Freezer", "r-yard", "SmartPlug", "p-switch"),
    ("kettle", "Kettle Plug", "r-yard", "SmartPlug", "p-switch"),
    ("porch", "Porch Light", "r-yard", "Light", "p-switch"),
    ("night", "Night Light", "r-yard", "Light", "p-switch"),
]


@pytest.fixture(scope="module")
def program(tmp_path_factory, embedder):
    home = Home.load(write_home(tmp_path_factory.mktemp("scope"), DEVICES, SPECS, ROOMS))
    return CommandRetrieval(CommandIndex(home, embedder), ir_source="none")


def acted_on(pred) -> set[tuple[str, str]]:
    top = {(c.device_id, c.command_id) for c in pred.candidates[:1]}
    return top | set(pred.bulk.targets if pred.bulk is not None else [])


def test_every_door_is_no_gate_nor_safe(program):
    pred = program(query="unlock every door except the back door")
    unlocked = {device for device, command in acted_on(pred) if command == "main-lock-unlock"}
    assert unlocked <= {"front-door"}


def test_locking_the_doors_leaves_the_safe_alone(program):
    pred = program(query="lock all the doors")
    assert pred.bulk is not None and "safe" not in {device for device, _ in pred.bulk.targets}


def test_the_first_floor_is_not_the_basement_floor(program):
    pred = program(query="一楼所有的灯都打开")
    assert pred.bulk is not None
    assert {device for device, _ in pred.bulk.targets} == {"living-light", "entry-light"}


@pytest.mark.parametrize("query", ["turn on the lights in the hayloft", "打开阳光房所有的灯", "泳池边的灯都打开"])
def test_a_place_the_home_lacks_is_asked_about(program, query):
    pred = program(query=query)
    assert pred.hint == "unknown_scope" and pred.unresolved
    assert not acted_on(pred)


@pytest.mark.parametrize("query, kept", [
    ("turn off every plug except the well pump and the chest freezer", {"pump", "freezer"}),  # each part excepted
    ("turn off all the lights in the yard but leave the night light on", {"night"}),  # "leave ... on" excepts
    ("turn off all the plugs but not the kettle one", {"kettle"}),  # a run of a name: the device carrying it
])
def test_what_is_excepted_is_left_alone(program, query, kept):
    pred = program(query=query)
    assert pred.bulk is not None and pred.bulk.targets
    assert not kept & {device for device, _ in pred.bulk.targets}


def test_a_sensitive_candidate_says_it_is_sensitive_and_asked(program):
    top = program(query="unlock the front door, the plumber is here").candidates[0]
    assert (top.device_id, top.command_id, top.sensitive, top.asked) == ("front-door", "main-lock-unlock", True, True)
    light = program(query="turn on 客厅大灯").candidates[0]
    assert (light.sensitive, light.asked) == (False, None)



DOOR = [{"id": "main-doorControl-open", "description": "open", "type": None, "value_range": None},
        {"id": "main-doorControl-close", "description": "close", "type": None, "value_range": None}]
GARAGE = [{"id": "main-garageDoorControl-open", "description": "open", "type": None, "value_range": None},
          {"id": "main-garageDoorControl-close", "description": "close", "type": None, "value_range": None}]
DOOR_SPECS = {"p-lock": LOCK, "p-switch": SWITCH, "p-door": DOOR, "p-garage": GARAGE}
DOOR_ROOMS = {"r-hall": "Hall", "r-yard": "Yard", "r-garage": "Garage", "r-office": "Office"}
DOORS = [  # locks, a door and garage doors together: "open all the doors" asks each kind's own command
    ("front", "Front Door", "r-hall", "Lock", "p-lock"),
    ("side", "Side Door", "r-hall", "Lock", "p-lock"),
    ("bolt", "Hall Deadbolt", "r-hall", "Lock", "p-lock"),
    ("patio", "Patio Door", "r-yard", "Door", "p-door"),
    ("garage", "Garage Door", "r-garage", "GarageDoor", "p-garage"),
    ("gate", "Driveway Gate", "r-yard", "GarageDoor", "p-garage"),
    ("safe", "Office Safe", "r-office", "Lock", "p-lock"),
    ("camera", "Front Door Camera", "r-hall", "Camera", "p-switch"),
    ("porch", "Porch Light", "r-yard", "Light", "p-switch"),
]
ZH_DOORS = [
    ("front", "大门", "r-hall", "Lock", "p-lock"),
    ("side", "侧门", "r-hall", "Lock", "p-lock"),
    ("yard", "院门", "r-yard", "Door", "p-door"),
    ("garage", "车库门", "r-garage", "GarageDoor", "p-garage"),
    ("safe", "保险箱", "r-office", "Lock", "p-lock"),
    ("camera", "大门摄像头", "r-hall", "Camera", "p-switch"),  # 门 in a camera's name: no door
    ("light", "大门灯", "r-hall", "Light", "p-switch"),
]


@pytest.fixture(scope="module")
def doors(tmp_path_factory, embedder):
    def program(devices):
        home = Home.load(write_home(tmp_path_factory.mktemp("doors"), devices, DOOR_SPECS, DOOR_ROOMS))
        return CommandRetrieval(CommandIndex(home, embedder), ir_source="none")
    return {"en": program(DOORS), "zh": program(ZH_DOORS)}


def test_every_door_opens_by_each_kinds_own_command(doors):
    pred = doors["en"](query="open all the doors except the side door")
    assert pred.bulk is not None and pred.bulk.hint is None
    assert set(pred.bulk.targets) == {("front", "main-lock-unlock"), ("bolt", "main-lock-unlock"),
                                      ("patio", "main-doorControl-open"), ("garage", "main-garageDoorControl-open")}


def test_every_door_in_chinese_is_the_other_doors_not_the_safe(doors):
    pred = doors["zh"](query="除了大门，别的门都打开")  # 别的门: the other doors, no negation
    assert pred.bulk is not None and pred.bulk.hint is None
    assert set(pred.bulk.targets) == {("side", "main-lock-unlock"), ("yard", "main-doorControl-open"),
                                      ("garage", "main-garageDoorControl-open")}


def test_unlocking_every_door_unlocks_the_locks_of_doors_only(doors):
    pred = doors["en"](query="unlock every door")
    assert pred.bulk is not None
    assert {d for d, _ in pred.bulk.targets} == {"front", "side", "bolt"}


def test_a_door_one_passes_through_is_the_door_referred_to(doors):
    pred = doors["en"](query="could you let the movers in through the driveway gate")
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("gate", "main-garageDoorControl-open")
    assert pred.candidates[0].asked
