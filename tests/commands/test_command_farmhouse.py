"""Referents on a farmhouse and a shop built to confuse (no LM): what people call a device when its label does
not say it, a valve said by the word that says which, the alarm system beside a siren, every door said several
ways, someone let in at a door another clause names, the burners of a cooktop.

Each test is a clear ask that gets what it asks for, or an ordinary request that reaches nothing sensitive.
"""

from __future__ import annotations

import pytest
from conftest import ON_OFF_SPECS as SPECS
from conftest import write_home

from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex

ROOMS = {"r-kitchen": "Kitchen", "r-porch": "Back Porch", "r-barn": "Barn", "r-well": "Well House",
         "r-office": "Farm Office", "r-den": "Den", "r-lane": "Lane", "r-shop": "店面", "r-yard": "Stair Hall",
         "r-garden": "Back Garden", "r-tack": "Tack Room", "r-bunk": "Bunkhouse", "r-veg": "菜园",
         "r-inlaw": "In-Law Suite"}
DEVICES = [
    ("kitchen-door", "Kitchen Door", "r-kitchen", "Lock", "p-lock"),
    ("kitchen-blinds", "Kitchen Blinds", "r-kitchen", "Blind", "p-blind"),
    ("stovetop", "Stovetop", "r-kitchen", "Cooktop", "p-switch"),
    ("stove-light", "Stove Light", "r-kitchen", "Light", "p-switch"),
    ("propane", "Propane Shutoff", "r-porch", "GasValve", "p-valve"),
    ("trough", "Water Trough Valve", "r-barn", "WaterValve", "p-valve"),
    ("big-red", "Big Red", "r-barn", "Door", "p-door"),
    ("feed-door", "Feed Room Door", "r-barn", "Lock", "p-lock"),
    ("coop", "Coop Door", "r-barn", "Door", "p-door"),
    ("main-water", "Main Water Valve", "r-well", "WaterValve", "p-valve"),
    ("heater", "Water Heater", "r-kitchen", "Switch", "p-switch"),
    ("strongbox", "Strongbox", "r-office", "Lock", "p-lock", "SentrySafe Smart Safe"),
    ("office-blinds", "Office Blinds", "r-office", "Blind", "p-blind"),
    ("lane-gate", "Lane Gate", "r-lane", "GarageDoor", "p-gate"),
    ("hatch", "Roof Hatch", "r-den", "Door", "p-door"),
    ("alarm", "Sentry", "r-den", "SecurityPanel", "p-panel"),
    ("siren", "Stairwell Siren", "r-yard", "Siren", "p-siren"),
    ("garden-door", "Garden Door", "r-kitchen", "Door", "p-door"),  # opens to the Back Garden
    ("garden-lights", "Garden Lights", "r-garden", "Light", "p-switch"),
    ("garden-tap", "Garden Tap", "r-garden", "WaterValve", "p-valve"),
    ("tack-door", "Tack Room Door", "r-tack", "Lock", "p-lock"),
    ("tack-light", "Tack Room Light", "r-tack", "Light", "p-switch"),
    ("bunk-door", "Bunkhouse Door", "r-bunk", "Lock", "p-lock"),
    ("bunk-tv", "Bunkhouse TV", "r-bunk", "Television", "p-switch"),
    ("den-blinds", "Den Blinds", "r-den", "Blind", "p-blind"),
    ("den-door", "Den Door", "r-den", "Lock", "p-lock"),
    ("inlaw-door", "In-Law Door", "r-inlaw", "Lock", "p-lock"),
    ("inlaw-lamp", "Nana's Lamp", "r-inlaw", "Light", "p-switch"),
]
SHOP = [  # a bakery with a vegetable plot: the cash safe's label says cash cabinet, its own name says safe
    ("cash", "钱柜", "r-shop", "Lock", "p-lock", "Smart Cash Safe"),
    ("shop-door", "店门", "r-shop", "Lock", "p-lock"),
    ("back-door", "后厨门", "r-kitchen", "Lock", "p-lock"),
    ("shop-siren", "店铺警报器", "r-shop", "Siren", "p-siren"),
    ("fridge", "冷柜", "r-kitchen", "SmartPlug", "p-switch"),
    ("sign", "门头灯", "r-shop", "Light", "p-switch"),
    ("veg-valve", "浇菜阀", "r-veg", "WaterValve", "p-valve"),
    ("veg-light", "菜园灯", "r-veg", "Light", "p-switch"),
]
SENSITIVE = {"main-lock-unlock", "main-valve-open", "main-doorControl-open", "main-garageDoorControl-open",
             "main-securitySystem-disarm", "main-alarm-off", "main-switch-on"}


def _no_lm(directory, embedder, devices, rooms) -> CommandRetrieval:
    """CommandRetrieval without an LM on a home of these devices and rooms, written to ``directory``."""
    home = Home.load(write_home(directory, devices, SPECS, rooms))
    return CommandRetrieval(CommandIndex(home, embedder), ir_source="none")


@pytest.fixture(scope="module")
def homes(tmp_path_factory, embedder):
    return {name: _no_lm(tmp_path_factory.mktemp("farm"), embedder, devices, ROOMS)
            for name, devices in (("farm", DEVICES), ("shop", SHOP))}


@pytest.fixture
def program(homes):
    return homes["farm"]


def asked(pred) -> set[tuple[str, str]]:
    """The sensitive (device, command) pairs the answer offers as asked for."""
    found = {(c.device_id, c.command_id) for c in pred.candidates if c.asked}
    return found | {t for t in (pred.bulk.targets if pred.bulk is not None else [])}


@pytest.mark.parametrize(("query", "device", "command"), [
    ("the gas delivery is done, open the propane valve", "propane", "main-valve-open"),  # no water valve
    ("turn the alarm system off, we're back", "alarm", "main-securitySystem-disarm"),  # the panel, no siren
    ("open the safe in the office", "strongbox", "main-lock-unlock"),  # its own name says Safe
    ("fire up the burners", "stovetop", "main-switch-on"),
    ("light the burners", "stovetop", "main-switch-on"),  # no light among the Stove Light and the rest
    ("light a burner on the stovetop, I'm making coffee", "stovetop", "main-switch-on"),
    ("The hired hand is at the kitchen door, let him in", "kitchen-door", "main-lock-unlock"),
    ("turn the water back on at the well house", "main-water", "main-valve-open"),  # the water heater is elsewhere
    ("fill the water trough", "trough", "main-valve-open"),  # filling: a water valve opens
    ("Let some air in - open the door to the back garden", "garden-door", "main-doorControl-open"),
    ("The guys are back from the fence line, let them into the bunkhouse", "bunk-door", "main-lock-unlock"),
    ("turn on the hose in the back garden", "garden-tap", "main-valve-open"),
])
def test_a_clear_ask_gets_what_it_asks(program, query, device, command):
    _gets_what_it_asks(program(query=query), device, command)


@pytest.mark.parametrize(("query", "device", "command"), [
    ("麻烦把保险柜打开，要拿零钱", "cash", "main-lock-unlock"),  # 保险柜: the safe labelled 钱柜
    ("把店里的警笛关了，是误报", "shop-siren", "main-alarm-off"),  # 警笛: a siren
    ("给菜园浇浇水", "veg-valve", "main-valve-open"),  # watering: a water valve opens
])
def test_a_clear_ask_in_chinese_gets_what_it_asks(homes, query, device, command):
    _gets_what_it_asks(homes["shop"](query=query), device, command)


def _gets_what_it_asks(pred, device, command):
    assert (device, command) in asked(pred)
    assert {(d, c) for d, c in asked(pred) if c in SENSITIVE} == {(device, command)}


def test_every_door_but_one_is_every_door_of_the_farm_and_no_safe_nor_hatch(program):
    pred = program(query="open every door but the coop door")
    assert pred.bulk is not None and pred.bulk.hint is None
    assert set(pred.bulk.targets) == {("kitchen-door", "main-lock-unlock"), ("feed-door", "main-lock-unlock"),
                                      ("big-red", "main-doorControl-open"), ("garden-door", "main-doorControl-open"),
                                      ("tack-door", "main-lock-unlock"), ("bunk-door", "main-lock-unlock"),
                                      ("den-door", "main-lock-unlock"), ("inlaw-door", "main-lock-unlock")}


def test_both_gates_are_the_gates_only(program):
    pred = program(query="open both gates")
    assert {d for d, _ in asked(pred)} == {"lane-gate"}


def test_the_door_locks_are_no_safe(homes):
    pred = homes["shop"](query="除了店门，其他门锁都打开")
    assert {d for d, _ in asked(pred)} == {"back-door"}


@pytest.mark.parametrize("query", ["turn on the lights in the orchard", "unlock the door in the sugar shack",
                                   "open the gate out in the paddock"])
def test_a_place_no_word_of_the_home_names_is_asked_about(program, query):
    pred = program(query=query)
    assert pred.hint == "unknown_scope" and pred.unresolved
    assert not pred.candidates and pred.bulk is None


@pytest.mark.parametrize("query", ["turn on the stove light in the kitchen", "open the kitchen blinds in the morning",
                                   "turn the light on in the corner"])
def test_a_time_a_position_or_a_room_of_the_home_is_no_unknown_place(program, query):
    assert program(query=query).hint != "unknown_scope"


@pytest.mark.parametrize("query", ["open the valve", "turn the water on"])
def test_a_word_for_a_kind_said_once_of_several_such_devices_asks_which(program, query):
    # two water valves and a gas one: which one is not said, so none is offered as asked
    assert not {(d, c) for d, c in asked(program(query=query)) if c in SENSITIVE}


def test_what_is_held_back_as_one_of_several_says_so(program):
    reasons = {w.device_id: w.reason for w in program(query="open the valve").withheld}
    assert "say which" in reasons["trough"] and "say which" in reasons["main-water"]


@pytest.mark.parametrize(("query", "device", "command"), [
    ("open the gas valve", "propane", "main-valve-open"),  # "valve" inside "gas valve" is no water valve
])
def test_a_longer_word_for_a_kind_says_its_kind(program, query, device, command):
    _gets_what_it_asks(program(query=query), device, command)


@pytest.mark.parametrize("query", ["disarm the alarm in the guest cottage", "open the gate at the hunting lodge"])
def test_a_sensitive_command_in_a_place_the_home_lacks_is_never_asked(program, query):
    assert not {(d, c) for d, c in asked(program(query=query)) if c in SENSITIVE}


@pytest.mark.parametrize("query", ["仓库的门锁打开", "打开果园的阀门", "老屋的店门打开"])
def test_a_place_the_shop_lacks_asks_nothing_sensitive(homes, query):
    assert not {(d, c) for d, c in asked(homes["shop"](query=query)) if c in SENSITIVE}


@pytest.mark.parametrize("query", ["open the den", "open the kitchen"])
def test_opening_a_room_with_blinds_is_no_clear_ask_for_its_door(program, query):
    # its door or its blinds? Asked about, never guessed
    assert not {(d, c) for d, c in asked(program(query=query)) if c in SENSITIVE}


@pytest.mark.parametrize(("query", "device"), [
    ("open up the tack room", "tack-door"),  # its one door is all that opens there; its light does not open
    ("can you open up the tack room? I'm at the barn", "tack-door"),
    ("unlock the in-law flat, the caregiver is outside", "inlaw-door"),  # a flat: the In-Law Suite
])
def test_opening_a_room_whose_one_door_is_all_that_opens_asks_for_that_door(program, query, device):
    _gets_what_it_asks(program(query=query), device, "main-lock-unlock")


def test_a_room_said_by_its_first_character_is_that_room(homes):
    _gets_what_it_asks(homes["shop"](query="把店里的警报器关了，是猫碰的"), "shop-siren", "main-alarm-off")


VALVES = {"en": [("gas", "Boiler Gas Valve", "r-kitchen", "GasValve", "p-valve"),
                  ("water", "ZAC36", "r-well", "WaterValve", "p-valve"),
                  ("hose", "Sprinkler", "r-garden", "WaterValve", "p-valve")],
          "zh": [("gas", "燃气表阀门", "r-shop", "GasValve", "p-valve"),
                 ("water", "总水阀", "r-shop", "WaterValve", "p-valve"),
                 ("hose", "浇花阀", "r-veg", "WaterValve", "p-valve")]}


@pytest.mark.parametrize(("lang", "query"), [
    ("en", "open the valve"), ("en", "turn the water main back on, the leak is fixed"),
    ("en", "open the cold water main"), ("zh", "自来水总阀打开"), ("zh", "把水阀打开"), ("zh", "打开阀门")])
def test_a_word_for_water_or_a_valve_never_opens_the_gas(tmp_path_factory, embedder, lang, query):
    # the gas valve is one valve of three: "the valve" asks which, and no word for water names gas
    home = Home.load(write_home(tmp_path_factory.mktemp("valves"), VALVES[lang], SPECS, ROOMS))
    pred = CommandRetrieval(CommandIndex(home, embedder), ir_source="none")(query=query)
    assert ("gas", "main-valve-open") not in asked(pred)


FLAT_ROOMS = {"r-maid": "保姆间", "r-old": "老人房", "r-hall": "玄关"}
FLAT = [("maid-lock", "保姆间门锁", "r-maid", "Lock", "p-lock"),
        ("maid-lamp", "保姆间台灯", "r-maid", "Light", "p-switch"),
        ("old-lamp", "老人房灯", "r-old", "Light", "p-switch"),
        ("front", "入户门", "r-hall", "Lock", "p-lock")]


@pytest.fixture(scope="module")
def flat(tmp_path_factory, embedder):
    return _no_lm(tmp_path_factory.mktemp("flat"), embedder, FLAT, FLAT_ROOMS)


@pytest.mark.parametrize("query", ["阿姨屋的门锁打开一下，她要进去换衣服", "阿姨房的门打开一下，阿姨回来了"])
def test_a_room_said_by_the_name_the_family_uses_is_that_room(flat, query):
    _gets_what_it_asks(flat(query=query), "maid-lock", "main-lock-unlock")  # 阿姨房, 阿姨屋: the 保姆间


@pytest.mark.parametrize(("query", "device"), [("阿姨房的灯打开", "maid-lamp"), ("把爷爷屋的灯打开", "old-lamp")])
def test_a_light_in_a_room_said_by_its_family_name_is_that_rooms(flat, query, device):
    pred = flat(query=query)
    assert pred.candidates[0].device_id == device and not asked(pred)


HOLDING_ROOMS = {"r-gate": "The Gate House", "r-kitchen": "Farmhouse Kitchen", "r-well": "Well House",
                 "r-spa": "Spa Deck", "r-utility": "Utility Room"}
HOLDING = [("road-gate", "Road Gate", "r-gate", "GarageDoor", "p-gate"),
           ("gate-door", "Gate House Door", "r-gate", "Lock", "p-lock"),
           ("gate-lamp", "Gate Lamp", "r-gate", "Light", "p-switch"),
           ("farm-door", "Farmhouse Door", "r-kitchen", "Lock", "p-lock"),
           ("house-water", "House Water Valve", "r-well", "WaterValve", "p-valve"),
           ("tub-fill", "Hot Tub Fill Valve", "r-spa", "WaterValve", "p-valve"),
           ("water-main", "Water Main", "r-utility", "WaterValve", "p-valve")]


@pytest.fixture(scope="module")
def holding(tmp_path_factory, embedder):
    return _no_lm(tmp_path_factory.mktemp("holding"), embedder, HOLDING, HOLDING_ROOMS)


def test_someone_let_into_the_house_comes_through_no_water_valve(holding):
    pred = holding(query="let the vet into the house, she's waiting at the kitchen door")
    assert not {(d, c) for d, c in asked(pred) if c == "main-valve-open"}
    assert not (pred.candidates and pred.candidates[0].command_id == "main-valve-open")


@pytest.mark.parametrize("query", ["let me into the gate house, I left my keys inside", "open the gate house"])
def test_a_room_named_with_a_word_for_a_kind_opens_by_its_own_door(holding, query):
    _gets_what_it_asks(holding(query=query), "gate-door", "main-lock-unlock")  # the Gate House Door, no Road Gate


def test_a_two_word_label_said_the_other_way_round_is_that_device(holding):
    _gets_what_it_asks(holding(query="there's no water in any suite, open the main water valve"), "water-main",
                       "main-valve-open")  # Water Main, not the Hot Tub Fill Valve the word valve ends


RENTAL_ROOMS = {"r-b": "Suite B", "r-c": "Suite C", "r-drive": "Driveway", "r-yard": "Yard"}
RENTAL = [("b-door", "Suite B Door", "r-b", "Lock", "p-lock"),
          ("c-door", "Suite C Door", "r-c", "Lock", "p-lock"),
          ("c-blinds", "Suite C Blinds", "r-c", "Blind", "p-blind"),
          ("drive-gate", "Driveway Gate", "r-drive", "GarageDoor", "p-gate"),
          ("charger", "Car Charger", "r-drive", "SmartPlug", "p-switch"),
          ("yard-gate", "Yard Gate", "r-yard", "GarageDoor", "p-gate")]


@pytest.fixture(scope="module")
def rental(tmp_path_factory, embedder):
    return _no_lm(tmp_path_factory.mktemp("rental"), embedder, RENTAL, RENTAL_ROOMS)


@pytest.mark.parametrize(("query", "device", "command"), [
    ("we're locked out of suite B", "b-door", "main-lock-unlock"),  # locked out: let us in
    ("unlock suite C for housekeeping", "c-door", "main-lock-unlock"),  # unlocking a room with blinds: its door
    ("the guests are sitting in their car at the driveway, let them drive in", "drive-gate",
     "main-garageDoorControl-open"),  # the way in where they wait ("their car" names no way in)
])
def test_a_guest_let_in_gets_the_door_of_the_place_said(rental, query, device, command):
    _gets_what_it_asks(rental(query=query), device, command)


def test_opening_a_room_with_blinds_still_asks_which(rental):
    assert not asked(rental(query="open suite C"))  # its door, or its blinds?


def test_a_chinese_verb_said_apart_asks_what_it_says(homes):
    _gets_what_it_asks(homes["shop"](query="钱柜解个锁，我拿下零钱"), "cash", "main-lock-unlock")  # 解个锁: 解锁


def test_a_door_whose_words_two_doors_share_asks_which(holding):
    pred = holding(query="open the house door for grandma, her hands are full of eggs")
    assert not asked(pred)  # the Farmhouse Door or the Gate House Door? ("house" ends the farmhouse too)
    assert not (pred.candidates and pred.candidates[0].command_id == "main-lock-unlock")


KILN_ROOMS = {"r-barn": "Barn", "r-shed": "Kiln Shed", "r-yard": "Yard"}
KILN = [("banshee", "Banshee", "r-barn", "Siren", "p-siren"),
        ("barn-light", "Barn Light", "r-barn", "Light", "p-switch"),
        ("kiln-lamp", "Kiln Lamp", "r-shed", "Light", "p-switch"),
        ("shed-door", "Shed Door", "r-shed", "Lock", "p-lock"),
        ("front-door", "Front Door", "r-yard", "Lock", "p-lock"),
        ("yard-valve", "Yard Valve", "r-yard", "WaterValve", "p-valve"),
        ("trough-valve", "Trough Valve", "r-barn", "WaterValve", "p-valve")]


@pytest.fixture(scope="module")
def kiln(tmp_path_factory, embedder):
    return _no_lm(tmp_path_factory.mktemp("kiln"), embedder, KILN, KILN_ROOMS)


@pytest.mark.parametrize("query", ["the siren in the barn won't stop, shut it off",
                                   "the siren is screaming, make it stop"])
def test_it_said_of_a_kind_another_clause_says_is_the_one_device_of_that_kind(kiln, query):
    _gets_what_it_asks(kiln(query=query), "banshee", "main-alarm-off")  # a siren called Banshee


@pytest.mark.parametrize("query", [
    "the door of sweet see, open it please",  # a door no door's words describe is no way in
    "close every valve but the yard one, leave it open",  # "it" is one thing, never the valves said
    "the valve is dripping, turn it on",  # two valves: which one?
])
def test_it_said_of_a_kind_reaches_nothing_it_cannot_single_out(kiln, query):
    assert not {command for _, command in asked(kiln(query=query)) if command in SENSITIVE}
