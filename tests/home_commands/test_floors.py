"""Floors recorded in rooms.json (a Home Assistant pull writes them) are a scope users can say:
"all lights on the first floor", "except the second floor", "打开一楼的灯"."""

from __future__ import annotations

import json

import pytest
from conftest import DEVICES, write_home

from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.home_commands.floor_levels import relative_floors
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex

FLOORS = {"r-living": "一楼", "r-kitchen": "一楼", "r-bed": "二楼", "r-study": "二楼"}
ENGLISH = {"r-living": "First Floor", "r-kitchen": "First Floor", "r-bed": "Second Floor", "r-study": "Second Floor"}


def _home(tmp_path, floors):
    home = write_home(tmp_path / "home")
    rooms = json.loads((home / "rooms.json").read_text(encoding="utf-8"))
    for room in rooms["items"]:
        room["floor"] = floors[room["roomId"]]
    (home / "rooms.json").write_text(json.dumps(rooms, ensure_ascii=False), encoding="utf-8")
    return home


@pytest.fixture
def floors_program(tmp_path, embedder):
    return CommandRetrieval(CommandIndex(Home.load(_home(tmp_path, FLOORS)), embedder), ir_source="none")


def _lights(rooms: set[str]) -> set[str]:
    names = {"r-living": "客厅", "r-kitchen": "厨房", "r-bed": "主卧", "r-study": "书房"}
    wanted = {names[r] for r in rooms}
    return {d for d, _, room, category, _ in DEVICES if category == "Light" and {names[room]} <= wanted}


def test_home_reads_the_floor_of_each_room(tmp_path):
    home = Home.load(_home(tmp_path, FLOORS))
    assert home.floors == {"客厅": "一楼", "厨房": "一楼", "主卧": "二楼", "书房": "二楼"}
    assert Home.load(write_home(tmp_path / "plain")).floors == {}  # rooms without floors: nothing changes


def test_a_floor_is_a_bulk_scope(floors_program):
    pred = floors_program(query="把一楼所有的灯都关掉")
    assert set(pred.ir.scope_include) == {"客厅", "厨房"}
    assert {d for d, _ in pred.bulk.targets} == _lights({"r-living", "r-kitchen"})


def test_a_floor_can_be_excluded(floors_program):
    pred = floors_program(query="除了二楼，其他灯都关掉")
    assert set(pred.ir.scope_exclude) == {"主卧", "书房"}
    assert {d for d, _ in pred.bulk.targets} == _lights({"r-living", "r-kitchen"})


def test_english_floor_names(tmp_path, embedder):
    program = CommandRetrieval(CommandIndex(Home.load(_home(tmp_path, ENGLISH)), embedder), ir_source="none")
    pred = program(query="turn off all lights on the second floor")
    assert set(pred.ir.scope_include) == {"主卧", "书房"}
    assert {d for d, _ in pred.bulk.targets} == _lights({"r-bed", "r-study"})


def test_a_floor_named_in_a_single_target_query_favours_its_rooms(floors_program):
    top = floors_program(query="打开二楼的台灯").candidates[0]
    assert top.device_id == "light-bed" and top.channels["room"] == 1.0



@pytest.mark.parametrize(("floors", "upstairs", "downstairs"), [
    ({"Ground Floor", "First Floor"}, {"First Floor"}, {"Ground Floor"}),  # British: first is above ground
    ({"Basement", "First Floor", "Second Floor"}, {"Second Floor"}, {"Basement", "First Floor"}),  # American
    ({"Garden Level", "Parlor Floor", "Third Floor"}, {"Third Floor"}, {"Garden Level", "Parlor Floor"}),
    ({"负一层", "一层", "二层"}, {"二层"}, {"负一层", "一层"}),
    ({"Ground Floor", "Upper Floor"}, {"Upper Floor"}, {"Ground Floor"}),
])
def test_upstairs_and_downstairs_are_read_from_the_floors_names(floors, upstairs, downstairs):
    meant = relative_floors(floors)
    assert set(meant["upstairs"]) == set(meant["楼上"]) == upstairs
    assert set(meant["downstairs"]) == set(meant["楼下"]) == downstairs


@pytest.mark.parametrize("floors", [{"East Wing", "West Wing"}, {"一楼"}, {"Main Floor", "Basement"}])
def test_floors_that_cannot_be_ordered_mean_no_upstairs(floors):
    assert relative_floors(floors) == {}  # "the lights upstairs" stays a place the home cannot resolve: asked


def test_a_floor_called_upstairs_keeps_its_name():
    assert "upstairs" not in relative_floors({"Basement", "Main Floor", "Upstairs"})


def test_upstairs_is_the_floors_above_the_ground(floors_program, tmp_path, embedder):
    pred = floors_program(query="把楼上的灯都关掉")
    assert {d for d, _ in pred.bulk.targets} == _lights({"r-bed", "r-study"})
    program = CommandRetrieval(CommandIndex(Home.load(_home(tmp_path, ENGLISH)), embedder), ir_source="none")
    pred = program(query="turn off all the lights downstairs")
    assert pred.hint is None and {d for d, _ in pred.bulk.targets} == _lights({"r-living", "r-kitchen"})


def test_upstairs_without_recorded_floors_is_asked(tmp_path, embedder):
    program = CommandRetrieval(CommandIndex(Home.load(write_home(tmp_path / "plain")), embedder), ir_source="none")
    pred = program(query="turn off all the lights upstairs")
    assert pred.hint == "unknown_scope" and not (pred.bulk and pred.bulk.targets)
