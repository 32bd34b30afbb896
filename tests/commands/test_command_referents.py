"""Which device an utterance refers to, and which operation it asks for, on a home built to confuse by name:
a Gas Fireplace beside the Gas Valve, a Back Door Light beside the Back Door lock, a Safe Room Lamp beside
the Office Safe, shades facing the front door, a lamp by the oven, a device labelled exactly "TV".

No LM: what is asked is resolved from the utterance, and a sensitive command is chosen only when the
operation asked is its operation and the utterance refers to its device.
"""

from __future__ import annotations

import json

import pytest
from conftest import write_home

from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex

SPECS = {
    "p-switch": [{"id": "main-switch-on", "description": "turn on", "type": None, "value_range": None},
                 {"id": "main-switch-off", "description": "turn off", "type": None, "value_range": None}],
    "p-lock": [{"id": "main-lock-lock", "description": "lock", "type": None, "value_range": None},
               {"id": "main-lock-unlock", "description": "unlock", "type": None, "value_range": None}],
    "p-valve": [{"id": "main-valve-open", "description": "open the valve", "type": None, "value_range": None},
                {"id": "main-valve-close", "description": "close the valve", "type": None, "value_range": None}],
    "p-shade": [{"id": "main-windowShade-open", "description": "open", "type": None, "value_range": None},
                {"id": "main-windowShade-close", "description": "close", "type": None, "value_range": None}],
    "p-oven": [{"id": "main-switch-on", "description": "turn on", "type": None, "value_range": None},
               {"id": "main-switch-off", "description": "turn off", "type": None, "value_range": None},
               {"id": "main-ovenSetpoint-setOvenSetpoint", "description": "set the oven temperature",
                "type": "number", "value_range": None}],
    "p-tv": [{"id": "main-switch-on", "description": "turn on", "type": None, "value_range": None},
             {"id": "main-mediaPlayback-pause", "description": "pause", "type": None, "value_range": None},
             {"id": "main-mediaPlayback-play", "description": "play", "type": None, "value_range": None}],
    "p-panel": [{"id": "main-securitySystem-armAway", "description": "arm away", "type": None, "value_range": None},
                {"id": "main-securitySystem-disarm", "description": "disarm", "type": None, "value_range": None}],
}
ROOMS = {"r-living": "Living Room", "r-kitchen": "Kitchen", "r-office": "Office", "r-hall": "Hallway"}
DEVICES = [
    ("fireplace", "Gas Fireplace", "r-living", "Switch", "p-switch"),
    ("gas", "Gas Valve", "r-kitchen", "GasValve", "p-valve"),
    ("back-light", "Back Door Light", "r-hall", "Light", "p-switch"),
    ("back-lock", "Back Door", "r-hall", "Lock", "p-lock"),
    ("front-lock", "Front Door", "r-hall", "Lock", "p-lock"),
    ("front-shades", "Front Door Shades", "r-living", "Blind", "p-shade"),
    ("living-shades", "Living Room Shades", "r-living", "Blind", "p-shade"),
    ("safe-lamp", "Safe Room Lamp", "r-office", "Light", "p-switch"),
    ("safe", "Office Safe", "r-office", "Lock", "p-lock"),
    ("oven-lamp", "Lamp by the Oven", "r-kitchen", "Light", "p-switch"),
    ("oven", "Oven", "r-kitchen", "Oven", "p-oven"),
    ("floodlight", "Security Floodlight", "r-hall", "Light", "p-switch"),
    ("panel", "Security Panel", "r-hall", "SecurityPanel", "p-panel"),
    ("tv", "TV", "r-living", "Television", "p-tv"),
    ("kitchen-tv", "Kitchen TV", "r-kitchen", "Television", "p-tv"),
    ("office-tv", "Office Television", "r-office", "Television", "p-tv"),
]
SENSITIVE = {("gas", "main-valve-open"), ("back-lock", "main-lock-unlock"), ("front-lock", "main-lock-unlock"),
             ("safe", "main-lock-unlock"), ("oven", "main-switch-on"), ("panel", "main-securitySystem-disarm")}


@pytest.fixture(scope="module")
def program(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("confusing"), DEVICES, SPECS, ROOMS, embedder)


def no_lm(directory, devices, specs, rooms, embedder) -> CommandRetrieval:
    """CommandRetrieval without an LM over a home written from these devices, rooms and capabilities."""
    return CommandRetrieval(CommandIndex(Home.load(write_home(directory, devices, specs, rooms)), embedder),
                            ir_source="none")


def acted_on(pred) -> set[tuple[str, str]]:
    """The top candidate and an executable plan's targets: what would be run."""
    top = {(c.device_id, c.command_id) for c in pred.candidates[:1]}
    return top | set(pred.bulk.targets if pred.bulk is not None else [])


@pytest.mark.parametrize("query, device, command", [
    ("turn on the gas fireplace", "fireplace", "main-switch-on"),  # "gas" inside the label names no valve
    ("turn off the back door light", "back-light", "main-switch-off"),  # nor "back door" the lock
    ("turn on the safe room lamp", "safe-lamp", "main-switch-on"),
    ("turn on the lamp by the oven", "oven-lamp", "main-switch-on"),  # the oven is where, not what
    ("open the shades facing the front door", "front-shades", "main-windowShade-open"),
    ("turn on the security floodlight", "floodlight", "main-switch-on"),
    ("pause the TV", "tv", "main-mediaPlayback-pause"),  # a label said whole: that device, not three
])
def test_a_device_named_is_the_one_acted_on_and_no_sensitive_command_is_reached(program, query, device, command):
    pred = program(query=query)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == (device, command)
    assert not acted_on(pred) & SENSITIVE and pred.bulk is None


@pytest.mark.parametrize("query, device, command", [
    ("unlock the front door, the plumber is here", "front-lock", "main-lock-unlock"),  # a reason in another clause
    ("I need my passport, open the safe", "safe", "main-lock-unlock"),  # the safe is the Office Safe, the head noun
    ("set the security system to disarmed", "panel", "main-securitySystem-disarm"),
    ("open the gas valve so the fireplace works", "gas", "main-valve-open"),
    ("turn on the oven", "oven", "main-switch-on"),
    ("turn on the gas", "gas", "main-valve-open"),  # "gas" inside the fireplace's label names no fireplace
])
def test_a_clear_ask_gets_what_it_asks_for(program, query, device, command):
    pred = program(query=query)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == (device, command)
    assert pred.candidates[0].sensitive


@pytest.mark.parametrize("query", [
    "unlock the office safe's lamp", "open the front door shades", "don't unlock the front door",
    "is the front door unlocked?", "unlock the front door when I get home",
])
def test_what_does_not_plainly_ask_for_a_sensitive_command_never_reaches_one(program, query):
    assert not acted_on(program(query=query)) & SENSITIVE


def test_an_ask_that_cannot_be_answered_offers_nothing_in_its_place(program):
    # the safe's unlock is what is asked; with it held back nothing else (its lock, the blinds) is offered
    pred = program(query="unlock the office safe if it is late")
    assert not pred.candidates and pred.hint == "withheld"


def test_every_door_but_one_leaves_that_door_and_what_is_no_door(program):
    pred = program(query="unlock every door except the back door")
    assert pred.bulk is not None and set(pred.bulk.targets) == {("front-lock", "main-lock-unlock")}


@pytest.mark.parametrize("query", ["turn off the upstairs lights", "turn off the first floor lights",
                                   "turn on the lights in the basement", "unlock the doors on the third floor",
                                   "unlock every front door upstairs"])
def test_a_place_the_home_does_not_have_is_asked_about_never_widened_to_the_home(program, query):
    pred = program(query=query)
    assert pred.hint == "unknown_scope" and pred.unresolved and not pred.candidates and pred.bulk is None


@pytest.mark.parametrize("query", ["unlock the front door upstairs", "unlock the front door on the second floor"])
def test_a_floor_said_beside_a_label_only_says_where_the_named_device_is(program, query):
    # no floors are recorded, but the label says which device: the floor is no scope to resolve
    pred = program(query=query)
    assert pred.hint is None and pred.candidates[0].device_id == "front-lock" and pred.candidates[0].asked


@pytest.mark.parametrize("query, operation", [
    ("turn the lights down", "level_down"), ("lower the shades", "close"), ("pause the TV", "pause"),
    ("set the oven to 400 degrees", "set_temperature"), ("turn it up", "volume_up"),
])
def test_the_parse_carries_a_typed_operation_and_the_command_follows_from_it(program, query, operation):
    assert program(query=query).ir.operation == operation


def test_a_value_no_command_of_the_device_can_take_is_never_moved_to_another_device(program):
    pred = program(query="set the oven to 4e2 degrees")
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == \
        ("oven", "main-ovenSetpoint-setOvenSetpoint")


def test_a_door_the_home_lacks_is_answered_with_nothing_in_its_place(program):
    # the office has no door: neither a lock named "... Door" nor the office's blinds or lamps stand in for it
    pred = program(query="open the office door")
    assert not pred.candidates and pred.hint == "withheld" and not acted_on(pred) & SENSITIVE


WATER_DEVICES = [
    ("water-main", "Water Main", "r-hall", "WaterValve", "p-valve"),
    ("heater", "Water Heater", "r-hall", "WaterHeater", "p-switch"),
    ("shades", "Hall Shades", "r-hall", "Blind", "p-shade"),
    ("front-lock", "入户门锁", "r-hall", "Lock", "p-lock"),
]


@pytest.fixture(scope="module")
def water(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("water"), WATER_DEVICES, SPECS, ROOMS, embedder)


def test_where_an_ask_is_done_can_say_its_device(water):
    # "water" alone may be the heater; "at the main valve" says the valve again
    pred = water(query="turn the water back on at the main valve")
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("water-main", "main-valve-open")


def test_an_ask_held_back_is_never_answered_by_a_blind_that_opens(water):
    pred = water(query="turn on the water")  # the heater or the main: the valve is not opened, nor the shades
    assert "shades" not in {c.device_id for c in pred.candidates}
    assert ("water-main", "main-valve-open") not in {(c.device_id, c.command_id) for c in pred.candidates}


@pytest.mark.parametrize("query", ["unlock the front door", "unlock the door", "please unlock the entrance door"])
def test_a_door_said_in_another_language_than_the_locks_name_is_its_door(water, query):
    pred = water(query=query)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("front-lock", "main-lock-unlock")


def test_a_gate_is_no_house_door(water):
    assert not water(query="unlock the gate").candidates


def test_what_is_excepted_is_no_device_the_answer_must_be(tmp_path, embedder):
    garage = [{"id": "main-garageDoorControl-open", "description": "open", "type": None, "value_range": None},
              {"id": "main-garageDoorControl-close", "description": "close", "type": None, "value_range": None}]
    devices = [("big", "Big Garage Door", "r-garage", "GarageDoor", "p-garage"),
               ("workshop", "Workshop Garage Door", "r-garage", "GarageDoor", "p-garage"),
               ("shades", "Hall Shades", "r-hall", "Blind", "p-shade")]
    home = Home.load(write_home(tmp_path, devices, {**SPECS, "p-garage": garage}, {**ROOMS, "r-garage": "Garage"}))
    pred = CommandRetrieval(CommandIndex(home, embedder), ir_source="none")(
        query="open every garage door except the big one")
    # the big one is excepted, not the device the answer must be: the workshop's door is offered
    assert [(c.device_id, c.command_id) for c in pred.candidates[:1]] == [("workshop", "main-garageDoorControl-open")]
    assert "big" not in {c.device_id for c in pred.candidates}


ZH_ROOMS = {"r-entry": "玄关", "r-second": "次卧", "r-kitchen": "厨房", "r-garage": "车库"}
ZH_DEVICES = [
    ("entry-lock", "入户门", "r-entry", "Lock", "p-lock"),
    ("entry-light", "门口感应灯", "r-entry", "Light", "p-switch"),
    ("second-lock", "次卧门锁", "r-second", "Lock", "p-lock"),
    ("valve-light", "阀门旁的灯", "r-kitchen", "Light", "p-switch"),
    ("stove", "燃气灶", "r-kitchen", "Cooktop", "p-switch"),
    ("garage-door", "车库门", "r-garage", "GarageDoor", "p-garage"),
    ("garage-light", "车库灯", "r-garage", "Light", "p-switch"),
]
GARAGE = [{"id": "main-garageDoorControl-open", "description": "open", "type": None, "value_range": None},
          {"id": "main-garageDoorControl-close", "description": "close", "type": None, "value_range": None}]


@pytest.fixture(scope="module")
def flat(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("flat"), ZH_DEVICES, {**SPECS, "p-garage": GARAGE}, ZH_ROOMS, embedder)


@pytest.mark.parametrize("query, device, command", [
    ("把门打开", "entry-lock", "main-lock-unlock"),  # the door, said bare, is the way in (a lock: unlock)
    ("把次卧的门打开", "second-lock", "main-lock-unlock"),  # the bedroom door's lock; 门口/阀门 name no door
    ("阿姨来打扫了，把玄关的门锁打开", "entry-lock", "main-lock-unlock"),  # the operation of the clause that asks
    ("入户门的锁打开一下，朋友到楼下了", "entry-lock", "main-lock-unlock"),  # 楼下 is where the friend is, no scope
    ("打开车库", "garage-door", "main-garageDoorControl-open"),  # a room named for what opens in it
])
def test_a_clear_chinese_ask_gets_the_device_it_refers_to(flat, query, device, command):
    pred = flat(query=query)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == (device, command) and pred.hint is None


def test_a_room_named_for_a_door_is_not_its_door_when_another_kind_is_said(flat):
    pred = flat(query="车库开灯")
    assert ("garage-door", "main-garageDoorControl-open") not in {(c.device_id, c.command_id) for c in pred.candidates}
    assert pred.candidates[0].device_id == "garage-light"


def test_a_word_for_a_sensitive_kind_names_the_device_it_asks_for(program):
    pred = program(query="switch the oven on")
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("oven", "main-switch-on")


NICK_ROOMS = {"r-entry": "Entry", "r-mud": "Mudroom", "r-yard": "Back Yard", "r-office": "Home Office"}
NICK_DEVICES = [
    ("blue", "Blue Door", "r-entry", "Lock", "p-lock"),
    ("sconce", "Blue Door Sconce", "r-entry", "Light", "p-switch"),
    ("dog", "Dog Door", "r-mud", "Door", "p-door"),
    ("patio", "Patio Door", "r-yard", "Door", "p-door"),
    ("safe", "Office Safe", "r-office", "Lock", "p-lock"),
    ("safe-lamp", "Lamp by the Safe", "r-office", "Light", "p-switch"),
]
DOOR = [{"id": "main-doorControl-open", "description": "open", "type": None, "value_range": None},
        {"id": "main-doorControl-close", "description": "close", "type": None, "value_range": None}]


@pytest.fixture(scope="module")
def nicknamed(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("nick"), NICK_DEVICES, {**SPECS, "p-door": DOOR}, NICK_ROOMS, embedder)


@pytest.mark.parametrize("query, device, command", [
    ("unlock the front door", "blue", "main-lock-unlock"),  # the way in, whatever its lock is called
    ("open the door", "blue", "main-lock-unlock"),  # a door said bare: the way in (a sconce is no door)
    ("could you open the doggy door", "dog", "main-doorControl-open"),
    ("can you open the door to the back yard", "patio", "main-doorControl-open"),  # the door of the room said
    ("I need the documents in the safe, could you unlock it", "safe", "main-lock-unlock"),  # "it": the safe
])
def test_an_ask_finds_its_door_however_it_is_said(nicknamed, query, device, command):
    pred = nicknamed(query=query)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == (device, command)


def test_an_it_that_points_at_nothing_unlocks_nothing(nicknamed):
    assert not nicknamed(query="could you unlock it").candidates


MIXED_ROOMS = {"r-kitchen": "厨房", "r-garden": "花园", "r-hall": "Hall", "r-closet": "Closet", "r-drive": "Driveway"}
MIXED_DEVICES = [
    ("hob", "灶台", "r-kitchen", "Cooktop", "p-switch"),
    ("hob-light", "灶台灯", "r-kitchen", "Light", "p-switch"),
    ("oven", "烤箱", "r-kitchen", "Oven", "p-switch"),
    ("gate", "电动门", "r-garden", "GarageDoor", "p-garage"),
    ("tank-light", "鱼缸灯", "r-kitchen", "Light", "p-switch"),
    ("tank-valve", "鱼缸补水阀", "r-kitchen", "WaterValve", "p-valve"),
    ("siren", "Hall Siren", "r-hall", "Siren", "p-siren"),
    ("driveway", "Driveway Gate", "r-drive", "GarageDoor", "p-garage"),
    ("safe", "Closet Safe", "r-closet", "Lock", "p-lock"),
]
SIREN = [{"id": "main-alarm-siren", "description": "sound the siren", "type": None, "value_range": None},
         {"id": "main-alarm-off", "description": "turn off the alarm", "type": None, "value_range": None}]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, embedder):
    specs = {**SPECS, "p-garage": GARAGE, "p-siren": SIREN}
    return no_lm(tmp_path_factory.mktemp("mixed"), MIXED_DEVICES, specs, MIXED_ROOMS, embedder)


@pytest.mark.parametrize("query, device, command", [
    ("把灶打开", "hob", "main-switch-on"),  # 灶 in 灶台灯 only says which light
    ("能不能帮我把烤箱开起来", "oven", "main-switch-on"),  # asking whether one can is asking
    ("花园大门打开，快递车要进来", "gate", "main-garageDoorControl-open"),  # the main gate of the room said
    ("open the gate, the delivery van is here", "driveway", "main-garageDoorControl-open"),  # a gate is a gate
    ("opne the driveway gate", "driveway", "main-garageDoorControl-open"),  # a slip of the keys
    ("silence the siren, it's a false alarm", "siren", "main-alarm-off"),
    ("shut that siren up", "siren", "main-alarm-off"),
])
def test_a_clear_ask_in_other_words_is_offered(mixed, query, device, command):
    pred = mixed(query=query)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == (device, command)


@pytest.mark.parametrize("query", ["open the closet", "开一下鱼缸"])
def test_a_word_a_sensitive_device_shares_asks_nothing_of_it(mixed, query):
    # the closet is no safe said; 鱼缸 is its lamp's word too
    assert not acted_on(mixed(query=query)) & {("safe", "main-lock-unlock"), ("tank-valve", "main-valve-open")}


SUITE_ROOMS = {"r-a": "Suite A", "r-b": "Suite B", "r-pool": "Pool", "r-drive": "Driveway"}
SUITE_DEVICES = [
    ("a-door", "Suite A Door", "r-a", "Lock", "p-lock"),
    ("a-lights", "Suite A Lights", "r-a", "Light", "p-switch"),
    ("b-door", "Suite B Door", "r-b", "Lock", "p-lock"),
    ("b-lights", "Suite B Lights", "r-b", "Light", "p-switch"),
    ("pool-gate", "Pool Gate", "r-pool", "Lock", "p-lock"),
    ("driveway", "Driveway Gate", "r-drive", "GarageDoor", "p-garage"),
]


@pytest.fixture(scope="module")
def suites(tmp_path_factory, embedder):
    home = Home.load(write_home(tmp_path_factory.mktemp("suites"), SUITE_DEVICES, {**SPECS, "p-garage": GARAGE},
                                SUITE_ROOMS))
    return CommandIndex(home, embedder)


@pytest.mark.parametrize("query", ["unlock suite dee door", "unlock the door of suite bee"])
def test_a_room_name_with_a_short_word_is_no_device_name(suites, query):
    # "Suite A" is a room: "suite" names no Suite A Door, which is just a Door there, like Suite B's
    locks = {("a-door", "main-lock-unlock"), ("b-door", "main-lock-unlock")}
    assert not acted_on(CommandRetrieval(suites, ir_source="none")(query=query)) & locks


def test_a_room_name_with_a_short_word_said_whole_is_its_door(suites):
    pred = CommandRetrieval(suites, ir_source="none")(query="unlock the suite a door")
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("a-door", "main-lock-unlock")


@pytest.mark.parametrize("name_hint", ["Pool Gate", "gate"])
def test_an_lm_cannot_choose_the_lock_among_gates_the_words_do_not_choose(suites, fake_lm, name_hint):
    # "open the gate" reaches the Driveway Gate and the Pool Gate's lock alike; a parse saying "unlock" would pick
    # the lock no word picked: the words' operation stands, and the gate that opens is opened
    query = "open the gate for the delivery guy"
    fake_lm(irs={query: {"operation": "unlock", "action": "unlock", "type_hint": "Lock", "name_hint": name_hint}})
    pred = CommandRetrieval(suites, ir_source="lm")(query=query)
    assert ("pool-gate", "main-lock-unlock") not in acted_on(pred)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("driveway", "main-garageDoorControl-open")


LOFT_DEVICES = [
    ("front-lock", "Front Door", "r-hall", "Lock", "p-lock"),
    ("shades", "Window Shades", "r-living", "Blind", "p-shade"),
    ("cooktop", "Cooktop", "r-kitchen", "Cooktop", "p-switch"),
    ("bedside", "Bedside Lamp", "r-office", "Light", "p-switch"),
    ("floor-lamp", "Floor Lamp", "r-living", "Light", "p-switch"),
]


@pytest.fixture(scope="module")
def loft(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("loft"), LOFT_DEVICES, SPECS, ROOMS, embedder)


@pytest.mark.parametrize("query", [
    "open the front door shades",  # the shades of the front door, though no shades are so labelled
    "turn on the lamp beside the cooktop",  # "beside" is a word, never the Bedside Lamp misspelt
])
def test_a_sensitive_device_said_only_to_say_which_other_device_is_not_asked(loft, query):
    assert not acted_on(loft(query=query)) & {("front-lock", "main-lock-unlock"), ("cooktop", "main-switch-on")}


def test_a_door_said_after_a_room_is_that_rooms_door(suites):
    query = "our guests in suite a are locked out, can you open their door"
    pred = CommandRetrieval(suites, ir_source="none")(query=query)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("a-door", "main-lock-unlock")


def test_a_state_said_short_is_no_request(program):
    # "'s been left open" says how the safe is; "lock it" is what is asked
    pred = program(query="the office safe's been left open, lock it")
    assert ("safe", "main-lock-unlock") not in acted_on(pred)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("safe", "main-lock-lock")


BOAT_DEVICES = [
    ("stern", "Stern Hatch", "r-hall", "Lock", "p-lock"),
    ("side", "Side Hatch", "r-living", "Door", "p-door"),
    ("drugs", "Drug Cabinet", "r-office", "Lock", "p-lock"),
    ("keys", "Key Box", "r-office", "Lock", "p-lock"),
    ("hatch-light", "Hatch Light", "r-hall", "Light", "p-switch"),
]


@pytest.fixture(scope="module")
def boat(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("boat"), BOAT_DEVICES, {**SPECS, "p-door": DOOR}, ROOMS, embedder)


@pytest.mark.parametrize("query", [
    "open the hatch",  # a lock and an opener both called hatch: which one?
    "we're locked out, open the back hatch",  # "back" is in neither name
])
def test_a_phrase_that_fits_no_one_sensitive_device_asks_which(boat, query):
    pred = boat(query=query)
    opened = {("stern", "main-lock-unlock"), ("side", "main-doorControl-open"), ("drugs", "main-lock-unlock"),
              ("keys", "main-lock-unlock")}
    assert not acted_on(pred) & opened and pred.hint == "withheld"


def test_a_word_said_before_a_head_another_label_has_not_is_no_name_of_that_label(boat):
    # "the key cabinet": the Drug Cabinet's word before cabinet is drug, so the key is the Key Box's
    top = boat(query="open the key cabinet").candidates[0]
    assert (top.device_id, top.command_id) == ("keys", "main-lock-unlock")


@pytest.mark.parametrize("query, device, command", [
    ("open the side hatch", "side", "main-doorControl-open"),
    ("unlock the stern hatch", "stern", "main-lock-unlock"),
    ("open the key box", "keys", "main-lock-unlock"),
])
def test_a_phrase_that_fits_one_is_that_one(boat, query, device, command):
    pred = boat(query=query)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == (device, command)


PROPANE_DEVICES = [
    ("main", "Propane Main", "r-kitchen", "GasValve", "p-valve"),
    ("cooktop", "Propane Cooktop", "r-kitchen", "Cooktop", "p-switch"),
]


@pytest.mark.parametrize("parse", [
    {"operation": "on", "action": "on", "type_hint": "Cooktop", "name_hint": "propane"},
    {"operation": "on", "action": "on", "type_hint": "Cooktop", "name_hint": "Propane Cooktop"},
])
def test_the_propane_turned_back_on_is_its_valve_whatever_the_parse(tmp_path, embedder, fake_lm, parse):
    # "propane" is a word for the gas, as "gas" is: the Propane Cooktop's name holding it does not make it asked
    home = Home.load(write_home(tmp_path, PROPANE_DEVICES, SPECS, ROOMS))
    query = "the propane guy filled the tank, turn the propane back on at the main"
    fake_lm(irs={query: parse})
    pred = CommandRetrieval(CommandIndex(home, embedder), ir_source="lm")(query=query)
    assert ("cooktop", "main-switch-on") not in acted_on(pred)


def test_what_a_supply_goes_to_is_where_not_what(tmp_path, embedder):
    # "the gas to the hob" is the hob's gas: the hob is never switched on
    devices = [("hob", "Hob", "r-kitchen", "Cooktop", "p-switch"),
               ("gas", "Hob Gas", "r-kitchen", "GasValve", "p-valve")]
    program = CommandRetrieval(CommandIndex(Home.load(write_home(tmp_path, devices, SPECS, ROOMS)), embedder),
                               ir_source="none")
    assert ("hob", "main-switch-on") not in acted_on(program(query="turn on the gas to the hob"))


FLAT_ROOMS = {"r-hall": "玄关", "r-kitchen": "厨房", "r-living": "客厅"}
FLAT_DEVICES = [
    ("lock", "德施曼Q50", "r-hall", "Lock", "p-lock", "德施曼 Q50 智能门锁"),  # the way in, known by its maker's name
    ("light", "入户门灯", "r-hall", "Light", "p-switch"),
    ("back", "厨房后门", "r-kitchen", "Lock", "p-lock"),
    ("curtain", "客厅窗帘", "r-living", "Blind", "p-shade"),
]


@pytest.fixture(scope="module")
def entrance_flat(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("lift"), FLAT_DEVICES, SPECS, FLAT_ROOMS, embedder)


@pytest.mark.parametrize("query", ["家门解锁", "unlock the front door", "open the front door please"])
def test_the_way_in_is_found_whatever_its_lock_is_called(entrance_flat, query):
    # 家门, the home's door, and "the front door" are the way in: the lock in the 玄关
    pred = entrance_flat(query=query)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("lock", "main-lock-unlock")
    assert ("back", "main-lock-unlock") not in acted_on(pred)


def test_the_light_named_for_the_door_is_still_its_own(entrance_flat):
    pred = entrance_flat(query="打开入户门灯")
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("light", "main-switch-on")
    assert not acted_on(pred) & {("lock", "main-lock-unlock"), ("back", "main-lock-unlock")}


ENTRY_ROOMS = {"r-entry": "Entry", "r-living": "Living Room", "r-barn": "Barn", "r-drive": "Driveway"}
ENTRY_DEVICES = [
    ("front", "Front Door", "r-entry", "Lock", "p-lock"),
    ("shades", "Window Shades", "r-living", "Blind", "p-shade"),
    ("barn", "Barn Door", "r-barn", "Door", "p-door"),
    ("gate", "Driveway Gate", "r-drive", "GarageDoor", "p-garage"),
    ("robot", "Robot Cleaner", "r-living", "RobotCleaner", "p-switch"),  # "let the cleaner in" names it not
]


@pytest.fixture(scope="module")
def one_way_in(tmp_path_factory, embedder):
    specs = {**SPECS, "p-door": DOOR, "p-garage": GARAGE}
    return no_lm(tmp_path_factory.mktemp("entry"), ENTRY_DEVICES, specs, ENTRY_ROOMS, embedder)


@pytest.mark.parametrize("query", ["can you let the guests in", "let the cleaner in please"])  # no Robot Cleaner
def test_a_visitor_let_in_comes_through_the_one_way_in(one_way_in, query):
    pred = one_way_in(query=query)  # first: the blinds only share the verb "open"
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("front", "main-lock-unlock")


@pytest.mark.parametrize("query", ["let the cows in", "the guests are at the driveway, let them drive in",
                                   "open up for the plumber", "let me in"])
def test_animals_cars_and_the_speaker_are_not_let_in_at_the_front_door(one_way_in, query):
    # the speaker stands at a door only they know; "open up" lets no one in by itself
    assert ("front", "main-lock-unlock") not in acted_on(one_way_in(query=query))


YARD_ROOMS = {"r-yard": "Yard", "r-tack": "Tack Room", "r-hall": "Hallway", "r-kitchen": "Kitchen"}
YARD_DEVICES = [
    ("ultion", "Ultion", "r-hall", "Lock", "p-lock", "Ultion Nuki Plus"),  # a door lock by its maker, no word "lock"
    ("yard-gate", "Yard Gate", "r-yard", "GarageDoor", "p-garage"),
    ("tack", "Tack Room Door", "r-tack", "Lock", "p-lock"),
    ("hall-light", "Hallway Light", "r-hall", "Light", "p-switch"),
]


@pytest.mark.parametrize("query", ["front door unlock, mum is visiting", "open the door to the house",
                                   "let me into the flat"])
def test_a_lock_called_by_a_door_lock_makers_name_is_the_way_in(tmp_path, embedder, query):
    program = no_lm(tmp_path, YARD_DEVICES, {**SPECS, "p-garage": GARAGE}, YARD_ROOMS, embedder)
    pred = program(query=query)  # "the flat" is no room here: the home as a whole, come in by its way in
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("ultion", "main-lock-unlock")


def test_a_makers_lock_upstairs_is_no_way_in_to_the_shop_below(tmp_path, embedder):
    floors = {"店面": "一楼", "仓库": "一楼", "客厅": "二楼"}
    rooms = {f"r-{i}": name for i, name in enumerate(floors)}
    devices = [("dsm", "德施曼", "r-2", "Lock", "p-lock", "德施曼 Q50"),
               ("shutter", "卷帘门", "r-0", "GarageDoor", "p-garage"),
               ("store", "仓库门", "r-1", "Lock", "p-lock"),
               ("shop-light", "店面灯", "r-0", "Light", "p-switch")]
    home = write_home(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms)
    (home / "rooms.json").write_text(json.dumps({"items": [
        {"roomId": room_id, "name": name, "floor": floors[name]} for room_id, name in rooms.items()]},
        ensure_ascii=False), encoding="utf-8")
    program = CommandRetrieval(CommandIndex(Home.load(home), embedder), ir_source="none")
    assert ("dsm", "main-lock-unlock") not in acted_on(program(query="开门营业"))  # the flat's door, not the shop's
    # but it is the household's own door: 家门, 家里的门, 入户门, its maker's name (the shop's 仓库门 is none of them)
    for query in ("打开家门", "孩子放学回来了，帮他开一下家里的门", "入户门开锁", "楼上家门开锁", "德施曼开一下"):
        top = program(query=query).candidates[0]
        assert (top.device_id, top.command_id) == ("dsm", "main-lock-unlock"), query


def test_jiamen_is_the_flats_door_above_a_shop_whose_own_lock_is_its_way_in(tmp_path, embedder):
    floors = {"大厅": "一楼", "楼梯口": "二楼", "客厅": "二楼", "院子": "一楼"}
    rooms = {f"r-{i}": name for i, name in enumerate(floors)}
    devices = [("shop-lock", "德施曼", "r-0", "Lock", "p-lock", "德施曼 Q5M 智能锁"),
               ("flat-lock", "鹿客", "r-1", "Lock", "p-lock", "鹿客 Classic 2S"),
               ("lamp", "客厅灯", "r-2", "Light", "p-switch"),
               ("yard-lamp", "院子灯", "r-3", "Light", "p-switch")]
    home = write_home(tmp_path, devices, SPECS, rooms)
    (home / "rooms.json").write_text(json.dumps({"items": [
        {"roomId": room_id, "name": name, "floor": floors[name]} for room_id, name in rooms.items()]},
        ensure_ascii=False), encoding="utf-8")
    program = CommandRetrieval(CommandIndex(Home.load(home), embedder), ir_source="none")
    top = program(query="家门打开，我手里拎着菜").candidates[0]  # the household's door, not the shop's way in
    assert (top.device_id, top.command_id) == ("flat-lock", "main-lock-unlock")
    assert ("shop-lock", "main-lock-unlock") not in acted_on(program(query="让邻居从侧门进来"))  # no side door here
    assert not (pred := program(query="把那盏灯打开")).bulk or not pred.bulk.targets  # 那盏: one lamp, no plan


MUSEUM_ROOMS = {"r-foyer": "Foyer", "r-main": "Main Gallery", "r-vault": "Vault Gallery", "r-strong": "Strongroom"}
MUSEUM_DEVICES = [
    ("salto", "Salto Lock", "r-foyer", "Lock", "p-lock", "Salto XS4 One Escutcheon"),  # its maker's name and "lock"
    ("jewels", "Jewel Case", "r-main", "Lock", "p-lock"),  # "main" of the Main Gallery says no way in
    ("coins", "Coin Case", "r-vault", "Lock", "p-lock"),
    ("strongroom", "Strongroom Door", "r-strong", "Lock", "p-lock"),
]


@pytest.fixture(scope="module")
def museum(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("museum"), MUSEUM_DEVICES, SPECS, MUSEUM_ROOMS, embedder)


@pytest.mark.parametrize("query", ["the main entrance, open it please, the volunteers are here",
                                   "unlock the front pls", "can u unlock the front, it's nine"])
def test_the_way_in_said_without_a_door_word_is_its_lock(museum, query):
    top = museum(query=query).candidates[0]  # "the front" alone, or the entrance "it" points back to
    assert (top.device_id, top.command_id) == ("salto", "main-lock-unlock")


def test_the_front_said_of_something_else_is_no_way_in(museum):
    assert ("salto", "main-lock-unlock") not in acted_on(museum(query="unlock the front of the jewel case"))


def test_a_case_in_the_main_gallery_is_one_of_two_cases_not_the_way_in(museum):
    assert not {d for d, c in acted_on(museum(query="open the case")) if c == "main-lock-unlock"}


@pytest.mark.parametrize("query", ["open the main entrance", "let the school group in, they're at the entrance"])
def test_a_lock_called_by_its_maker_and_lock_in_the_foyer_is_the_way_in(museum, query):
    pred = museum(query=query)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("salto", "main-lock-unlock")


COTTAGE_ROOMS = {"r-rowan": "Rowan Cottage", "r-heron": "Heron Cottage", "r-wren": "Wren Cottage"}
COTTAGE_DEVICES = [
    ("rowan-lock", "Rowan Nuki", "r-rowan", "Lock", "p-lock", "Nuki Smart Lock 4.0"),  # its room and its maker
    ("rowan-patio", "Rowan Patio Door", "r-rowan", "Door", "p-door"),
    *((f"{c}-safe", f"{c.title()} Key Safe", f"r-{c}", "Lock", "p-lock") for c in ("rowan", "heron", "wren")),
]


@pytest.fixture(scope="module")
def cottages(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("cottages"), COTTAGE_DEVICES, {**SPECS, "p-door": DOOR}, COTTAGE_ROOMS,
                 embedder)


def test_guests_let_into_a_cottage_come_through_its_door_not_the_patio_door(cottages):
    pred = cottages(query="rowan cottage guests are here, let them in")
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("rowan-lock", "main-lock-unlock")


def test_both_of_three_asks_which_two(cottages):
    assert not {d for d, c in acted_on(cottages(query="unlock both key safes for the changeover"))
                if c == "main-lock-unlock"}


def test_several_ways_in_let_no_one_in_unasked(tmp_path, embedder):
    devices = [*ENTRY_DEVICES, ("porch", "Porch Door", "r-entry", "Lock", "p-lock")]
    pred = no_lm(tmp_path, devices, {**SPECS, "p-door": DOOR, "p-garage": GARAGE}, ENTRY_ROOMS, embedder)(
        query="let the guests in")
    assert not acted_on(pred) & {("front", "main-lock-unlock"), ("porch", "main-lock-unlock")}


def test_a_side_door_in_the_entry_is_no_way_in_for_guests(tmp_path, embedder):
    devices = [*ENTRY_DEVICES, ("side", "Side Door", "r-entry", "Lock", "p-lock")]
    pred = no_lm(tmp_path, devices, {**SPECS, "p-door": DOOR, "p-garage": GARAGE}, ENTRY_ROOMS, embedder)(
        query="let the guests in")
    assert ("side", "main-lock-unlock") not in acted_on(pred)


WORKSHOP_ROOMS = {"r-forge": "The Forge", "r-cabin": "Cabin", "r-kennel": "Kennels", "r-yard": "院子", "r-hall": "门厅"}
WORKSHOP_DEVICES = [
    ("forge", "Forge Door", "r-forge", "GarageDoor", "p-garage", "Genie Aladdin Connect Roll-Up Door"),
    ("forge-light", "Forge Lights", "r-forge", "Light", "p-switch"),
    ("knox", "Fort Knox", "r-cabin", "Lock", "p-lock", "SentrySafe SFW082 with Z-Wave lock"),
    ("blinds", "Porthole Blinds", "r-cabin", "Blind", "p-shade"),
    ("kennel", "Kennel Door", "r-kennel", "Door", "p-door", "PetSafe Smart Door Opener"),
    ("yard-gate", "院门", "r-yard", "GarageDoor", "p-garage"),
    ("main", "正门", "r-hall", "Lock", "p-lock"),
]


@pytest.fixture(scope="module")
def workshop(tmp_path_factory, embedder):
    specs = {**SPECS, "p-door": DOOR, "p-garage": GARAGE}
    return no_lm(tmp_path_factory.mktemp("workshop"), WORKSHOP_DEVICES, specs, WORKSHOP_ROOMS, embedder)


@pytest.mark.parametrize("query, device, command", [
    ("raise the roll-up door in the forge", "forge", "main-garageDoorControl-open"),  # its own name says roll-up
    ("unlock the safe in the cabin", "knox", "main-lock-unlock"),  # SentrySafe: a safe, whatever its label
    ("the little safe by the bed, open it", "knox", "main-lock-unlock"),
    ("把院子的大门开开", "yard-gate", "main-garageDoorControl-open"),  # 的 says whose, never which door
])
def test_a_door_or_safe_described_by_what_it_is_is_found(workshop, query, device, command):
    pred = workshop(query=query)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == (device, command)


def test_a_maker_whose_name_holds_safe_makes_no_door_a_safe(workshop):
    # PetSafe makes the Kennel Door's opener: "open the kennels" still opens it, "open the safe" never does
    assert ("kennel", "main-doorControl-open") in acted_on(workshop(query="open the kennels"))
    assert ("kennel", "main-doorControl-open") not in acted_on(workshop(query="open the safe"))


CARE_ROOMS = {"r-12": "Room 12", "r-14": "Room 14", "r-office": "Manager's Office", "r-cooler": "Walk-in Cooler",
              "r-kitchen": "Kitchen", "r-drive": "Driveway", "r-pool": "Pool"}
CARE_DEVICES = [
    ("door-12", "Room 12 Door", "r-12", "Lock", "p-lock"),
    ("door-14", "Room 14 Door", "r-14", "Lock", "p-lock"),
    ("office", "Office Door", "r-office", "Lock", "p-lock"),
    ("cooler", "Cooler Door", "r-cooler", "Lock", "p-lock"),
    ("cooler-light", "Cooler Light", "r-cooler", "Light", "p-switch"),
    ("oven", "烤炉", "r-kitchen", "Oven", "p-oven"),
    ("kitchen-light", "厨房灯", "r-kitchen", "Light", "p-switch"),
    ("drive-gate", "Driveway Gate", "r-drive", "GarageDoor", "p-garage"),
    ("pool-gate", "Pool Gate", "r-pool", "Lock", "p-lock"),
]


@pytest.fixture(scope="module")
def care_home(tmp_path_factory, embedder):
    specs = {**SPECS, "p-door": DOOR, "p-garage": GARAGE}
    return no_lm(tmp_path_factory.mktemp("care"), CARE_DEVICES, specs, CARE_ROOMS, embedder)


UNLOCKS = {(d, "main-lock-unlock") for d in ("door-12", "door-14", "office", "cooler", "pool-gate")}


@pytest.mark.parametrize("query", ["unlock the door", "open the door please", "open Mrs Hale's door", "unlock please"])
def test_a_door_said_bare_where_no_door_is_the_way_in_asks_which(care_home, query):
    # the residents' doors are all alike: none is "the door"; "Mrs Hale's" is whose, and no Manager's Office
    pred = care_home(query=query)
    assert not acted_on(pred) & UNLOCKS and pred.hint == "withheld"


def test_the_gate_is_the_one_gate_opener_beside_a_gates_lock(care_home):
    top = care_home(query="open the gate").candidates[0]
    assert (top.device_id, top.command_id) == ("drive-gate", "main-garageDoorControl-open")


@pytest.mark.parametrize("query, device, command", [
    ("I'll unlock the cooler in a minute, first switch the cooler light on", "cooler-light", "main-switch-on"),
    ("烤炉在预热，把厨房灯打开", "kitchen-light", "main-switch-on"),  # a report of what the oven is doing
])
def test_a_plan_or_a_report_beside_an_ask_asks_only_the_ask(care_home, query, device, command):
    pred = care_home(query=query)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == (device, command)
    assert not acted_on(pred) & (UNLOCKS | {("oven", "main-switch-on")})


SHOP_ROOMS = {"r-reception": "Reception", "r-shop": "Shop", "r-living": "Living Room", "r-kitchen": "Kitchen"}
SHOP_DEVICES = [
    ("paxton", "Paxton", "r-reception", "Lock", "p-lock", "Paxton Net2 Entry Door Controller"),  # its own name says
    ("kitchen-door", "Kitchen Door", "r-kitchen", "Lock", "p-lock"),
    ("canopy", "Front Door Canopy Light", "r-reception", "Light", "p-switch"),
    ("shutter", "Roller Shutter", "r-shop", "GarageDoor", "p-garage"),
    ("curtains", "Living Room Curtains", "r-living", "Blind", "p-shade"),
]


@pytest.fixture(scope="module")
def shop(tmp_path_factory, embedder):
    specs = {**SPECS, "p-garage": GARAGE}
    return no_lm(tmp_path_factory.mktemp("shop"), SHOP_DEVICES, specs, SHOP_ROOMS, embedder)


@pytest.mark.parametrize("query, device, command", [
    ("the front door, unlock it please", "paxton", "main-lock-unlock"),  # the entry door controller is the way in
    ("unlock the door", "paxton", "main-lock-unlock"),
    ("shutter up pls", "shutter", "main-garageDoorControl-open"),  # a garage door called a shutter, no blind so
])
def test_what_a_device_is_called_by_its_maker_or_label_finds_it(shop, query, device, command):
    top = shop(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


def test_a_water_valve_is_never_the_gas_valve_asked(tmp_path, embedder):
    devices = [("gas", "Gas Shutoff", "r-kitchen", "GasValve", "p-valve"),
               ("water", "Main Water Valve", "r-kitchen", "WaterValve", "p-valve")]
    pred = no_lm(tmp_path, devices, SPECS, ROOMS, embedder)(query="open the gas valve in the kitchen")
    assert ("water", "main-valve-open") not in acted_on(pred)


@pytest.mark.parametrize("query", ["should we put the shutter up early on market day?", "shutter up?"])
def test_a_question_that_is_no_polite_request_asks_nothing(shop, query):
    assert ("shutter", "main-garageDoorControl-open") not in acted_on(shop(query=query))


BAKERY_ROOMS = {"r-shop": "Shop", "r-cellar": "Cellar", "r-office": "Office", "r-flat": "Flat", "r-yard": "Yard"}
BAKERY_DEVICES = [
    ("stopcock", "Stopcock", "r-cellar", "WaterValve", "p-valve", "Moen Flo Smart Water Shutoff"),
    ("hose", "Yard Hose Valve", "r-yard", "WaterValve", "p-valve"),
    ("heater", "Water Heater", "r-flat", "Switch", "p-switch"),
    ("gas", "Bakery Gas", "r-shop", "GasValve", "p-valve"),
    ("fryer", "Doughnut Fryer", "r-shop", "Cooktop", "p-switch"),
    ("fryer-light", "Light over the Fryer", "r-shop", "Light", "p-switch"),
    ("keys", "Key Cabinet", "r-office", "Lock", "p-lock"),
    ("keys-lamp", "Lamp by the Key Cabinet", "r-office", "Light", "p-switch"),
    ("room-14", "Room 14 Door", "r-flat", "Lock", "p-lock"),
    ("nurse", "Nurse Call Chime", "r-flat", "Switch", "p-switch"),
    ("siren", "Shop Siren", "r-shop", "Siren", "p-siren"),
    ("panel", "Night Watch", "r-shop", "SecurityPanel", "p-panel"),
    ("shutter", "Roller Shutter", "r-shop", "GarageDoor", "p-garage"),
    ("shutter-light", "Shutter Light", "r-shop", "Light", "p-switch"),
    ("rack-oven", "Rack Oven", "r-shop", "Oven", "p-oven"),
]


@pytest.fixture(scope="module")
def bakery(tmp_path_factory, embedder):
    specs = {**SPECS, "p-garage": GARAGE, "p-siren": SIREN}
    return no_lm(tmp_path_factory.mktemp("bakery"), BAKERY_DEVICES, specs, BAKERY_ROOMS, embedder)


@pytest.mark.parametrize("query, device, command", [
    ("turn the water back on at the stopcock", "stopcock", "main-valve-open"),  # the water main, of two valves
    ("open the stop cock", "stopcock", "main-valve-open"),
    ("turn the water main back on, the leak is fixed", "stopcock", "main-valve-open"),
    ("turn the water back on to the house", "stopcock", "main-valve-open"),
    ("switch the fryer on, doughnuts in ten", "fryer", "main-switch-on"),  # the light is over the fryer, no fryer
    ("open the key safe in the office", "keys", "main-lock-unlock"),  # the lamp is by the cabinet, no cabinet
    ("Room 14 door, unlock it for the night nurse", "room-14", "main-lock-unlock"),  # no chime unlocks
])
def test_the_device_meant_is_found_by_what_it_is_not_by_what_it_is_near(bakery, query, device, command):
    top = bakery(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


@pytest.mark.parametrize("query", ["open the gas main", "turn on the light over the fryer", "the water heater on"])
def test_the_water_main_is_never_another_valve_or_a_landmark(bakery, query):
    acted = acted_on(bakery(query=query))
    assert ("stopcock", "main-valve-open") not in acted and ("hose", "main-valve-open") not in acted


def test_the_alarm_switched_off_beside_a_siren_and_a_panel_asks_which(bakery):
    # silence the siren or disarm the panel? Neither is run; both are held back to ask which
    pred = bakery(query="turn the alarm off")
    assert not acted_on(pred) & {("siren", "main-alarm-off"), ("panel", "main-securitySystem-disarm")}
    held = {w.device_id: w.reason for w in pred.withheld}
    assert pred.hint == "withheld" and "say which" in held["siren"]
    # someone arriving switches off the system they disarm to come in, never the siren
    assert acted_on(bakery(query="turn the shop alarm off, it's me, I'm in early")) == {
        ("panel", "main-securitySystem-disarm")}


@pytest.mark.parametrize("query, device, command", [
    ("turn off the siren, false alarm", "siren", "main-alarm-off"),
    ("turn the alarm system off, we're open", "panel", "main-securitySystem-disarm"),
    ("put the shutter up", "shutter", "main-garageDoorControl-open"),
    ("get the rack oven going for the croissants", "rack-oven", "main-switch-on"),  # "going" reports nothing here
    ("stand the alarm system down, we're all in", "panel", "main-securitySystem-disarm"),
])
def test_a_siren_a_panel_or_a_shutter_said_so_is_offered(bakery, query, device, command):
    top = bakery(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


@pytest.mark.parametrize("query", ["it's dark by the shutter, turn it on", "the shutter, turn it on",
                                   "switch on the roller shutter"])
def test_a_door_is_never_switched_on_in_english(bakery, query):
    assert ("shutter", "main-garageDoorControl-open") not in acted_on(bakery(query=query))


HETANG_ROOMS = {"r-hall": "大堂", "r-well": "阀门井", "r-lotus": "荷花房", "r-kitchen": "厨房", "r-coop": "鸡舍"}
HETANG_DEVICES = [
    ("dog", "看门狗", "r-hall", "SecurityPanel", "p-panel", "萤石 A3 安防主机"),  # a watchdog, no door
    ("main", "总水阀", "r-well", "WaterValve", "p-valve"),
    ("well-light", "阀门井灯", "r-well", "Light", "p-switch"),
    ("spray", "喷淋阀", "r-well", "WaterValve", "p-valve"),
    ("gas", "燃气阀门", "r-kitchen", "GasValve", "p-valve"),
    ("lotus-lock", "荷花房门锁", "r-lotus", "Lock", "p-lock"),
    ("coop-door", "鸡舍门", "r-coop", "Door", "p-door"),
    ("coop-light", "鸡舍灯", "r-coop", "Light", "p-switch"),
    ("shutter", "卷闸门", "r-hall", "GarageDoor", "p-garage"),  # a roller shutter
    ("shutter-light", "卷闸门上的灯", "r-hall", "Light", "p-switch"),
    ("stove", "燃气灶", "r-kitchen", "Cooktop", "p-switch"),
]


@pytest.fixture(scope="module")
def farmstay(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("farmstay"), HETANG_DEVICES, {**SPECS, "p-door": DOOR, "p-garage": GARAGE},
                 HETANG_ROOMS, embedder)


@pytest.mark.parametrize("query, device, command", [
    ("撤防", "dog", "main-securitySystem-disarm"),  # the one security system, though its name holds 门
    ("安防撤一下，客人要出去散步", "dog", "main-securitySystem-disarm"),
    ("荷花房门锁，把它打开", "lotus-lock", "main-lock-unlock"),  # "it" is a lock: opened by unlocking
    ("煤气总阀开一下", "gas", "main-valve-open"),  # the gas's main, not the water's
    ("自来水总阀打开", "main", "main-valve-open"),
    ("开一下卷帘门，客人在外面等了", "shutter", "main-garageDoorControl-open"),  # the shutter by its other name
    ("开火，客人点了土鸡", "stove", "main-switch-on"),  # 开火 lights the stove, not the light by the shutter
])
def test_what_a_chinese_ask_refers_to_is_offered(farmstay, query, device, command):
    top = farmstay(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


@pytest.mark.parametrize("query", ["总水阀旁边那个灯打开", "安防别撤", "安防撤了吗？", "鸡舍门口太暗了，开一下",
                                   "卷闸门上的灯打开"])
def test_a_landmark_a_refusal_a_question_or_the_dark_is_no_ask(farmstay, query):
    acted = acted_on(farmstay(query=query))
    assert not acted & {("main", "main-valve-open"), ("dog", "main-securitySystem-disarm"),
                        ("coop-door", "main-doorControl-open"), ("shutter", "main-garageDoorControl-open")}


HOTEL_ROOMS = {"r-lobby": "Lobby", "r-office": "Office", "r-cellar": "Cellar", "r-room2": "Room 2",
               "r-garden": "Beer Garden", "r-yard": "车位"}
HOTEL_DEVICES = [
    ("salto", "Salto", "r-lobby", "Lock", "p-lock", "Salto XS4 Original+"),  # the way in, called by its maker
    ("front-light", "Front Door Light", "r-lobby", "Light", "p-switch"),
    ("porter", "Night Porter", "r-lobby", "SecurityPanel", "p-panel"),
    ("strongbox", "Strongbox", "r-office", "Lock", "p-lock", "Yale Smart Safe"),
    ("office-door", "Office Door", "r-office", "Lock", "p-lock"),
    ("room-2", "Room 2 Door", "r-room2", "Lock", "p-lock"),
    ("co2", "CO2 Valve", "r-cellar", "GasValve", "p-valve"),
    ("kitchen-gas", "Kitchen Gas", "r-cellar", "GasValve", "p-valve"),
    ("garden-door", "Beer Garden Door", "r-garden", "Door", "p-door"),
    ("parking", "车位锁", "r-yard", "Lock", "p-lock"),
]
HOTEL_UNLOCKS = {(d, "main-lock-unlock") for d in ("salto", "strongbox", "office-door", "room-2", "parking")}


@pytest.fixture(scope="module")
def hotel(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("hotel"), HOTEL_DEVICES, {**SPECS, "p-door": DOOR}, HOTEL_ROOMS, embedder)


@pytest.mark.parametrize("query", [
    "open the safe, no, wait, forget it",  # taken back
    "等阿姨来了再开门",  # put off
    "open the safe for room 2",  # the Strongbox is the office's
    "车位锁升起来",  # a parking lock raised is no lock opened
])
def test_what_is_taken_back_put_off_unsaid_or_elsewhere_unlocks_nothing(hotel, query):
    assert not acted_on(hotel(query=query)) & HOTEL_UNLOCKS


@pytest.mark.parametrize("query, device, command", [
    ("the front door, unlock it, the night porter isn't answering", "salto", "main-lock-unlock"),  # no panel unlocks
    ("open the co2 to the beer lines, the pumps are flat", "co2", "main-valve-open"),  # the lines are where it goes
    ("open the co2 for the beer lines", "co2", "main-valve-open"),  # no Beer Garden Door
    ("open the front door please, the guests are here", "salto", "main-lock-unlock"),  # its maker's name, in the lobby
])
def test_it_and_a_supply_are_what_can_do_what_is_asked(hotel, query, device, command):
    top = hotel(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


@pytest.mark.parametrize("query, command", [("车位锁降下来，我要停车", "main-lock-unlock"),
                                            ("把车位锁放下", "main-lock-unlock"), ("车位锁升起来", "main-lock-lock")])
def test_a_parking_lock_lowered_lets_a_car_in_and_raised_bars_the_space(hotel, query, command):
    top = hotel(query=query).candidates[0]
    assert (top.device_id, top.command_id) == ("parking", command)


RESTAURANT_ROOMS = {"r-dining": "Dining Room", "r-cash": "Cash Office", "r-kitchen": "Kitchen", "r-alley": "Back Alley",
                    "r-flat": "Flat Kitchen", "r-landing": "Flat Landing"}
RESTAURANT_DEVICES = [
    # the one door lock called by its maker, where no door says the way in: the front door visitors come in by
    ("conexis", "Yale Conexis", "r-dining", "Lock", "p-lock", "Yale Conexis L1 Smart Door Lock"),
    ("cash-door", "Cash Office Door", "r-cash", "Lock", "p-lock"),
    ("bank", "The Bank", "r-cash", "Lock", "p-lock", "Yale Smart Safe"),
    ("nightwatch", "Nightwatch", "r-cash", "SecurityPanel", "p-panel"),
    ("wok-gas", "Wok Gas Line", "r-kitchen", "GasValve", "p-valve"),
    ("main-gas", "Main Gas", "r-alley", "GasValve", "p-valve"),
    ("lantern", "Front Door Lantern", "r-dining", "Light", "p-switch"),
    ("blinds", "Window Blinds", "r-dining", "Blind", "p-shade"),
    ("flat-oven", "Flat Oven", "r-flat", "Oven", "p-oven"),
    ("flat-door", "Flat Door", "r-landing", "Lock", "p-lock"),
]


@pytest.fixture(scope="module")
def restaurant(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("restaurant"), RESTAURANT_DEVICES, SPECS, RESTAURANT_ROOMS, embedder)


@pytest.mark.parametrize("query, device, command", [
    ("let the customers in, they're queuing on the pavement", "conexis", "main-lock-unlock"),
    ("a party of eight is waiting out front, open up", "conexis", "main-lock-unlock"),  # no lantern switched on
    ("please front door open, I am new waiter", "conexis", "main-lock-unlock"),
    ("can you let Mrs Hale's daughter in", "conexis", "main-lock-unlock"),  # whom, in three words
    ("night watch off, it's me", "nightwatch", "main-securitySystem-disarm"),  # a one-word label said as two
    ("turn the gas back on at the meter in the alley", "main-gas", "main-valve-open"),  # the meter is no place
])
def test_the_way_in_a_visitor_and_a_supply_are_found_as_they_are_said(restaurant, query, device, command):
    top = restaurant(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


@pytest.mark.parametrize("query", [
    "unlock please",  # beside several locks, the lock guessed to be the way in is still a question
    "open the main gas, actually no, leave it for the engineer",  # taken back
    "open the safe in the flat",  # the flat has no safe: The Bank is the cash office's
    "open up for the plumber",  # nobody is said to be waiting anywhere
    "let some fresh air in",  # nobody is let in
])
def test_what_is_not_plainly_asked_of_the_way_in_or_a_supply_reaches_nothing_sensitive(restaurant, query):
    sensitive = {("conexis", "main-lock-unlock"), ("bank", "main-lock-unlock"), ("main-gas", "main-valve-open"),
                 ("wok-gas", "main-valve-open"), ("cash-door", "main-lock-unlock"), ("flat-door", "main-lock-unlock")}
    assert not acted_on(restaurant(query=query)) & sensitive


SCHOOL_ROOMS = {"r-lobby": "Entrance Lobby", "r-kitchen": "School Kitchen", "r-store": "Caretaker's Store",
                "r-playground": "Playground"}
SCHOOL_DEVICES = [
    ("paxton", "Paxton", "r-lobby", "Lock", "p-lock", "Paxton Net2 Plus Door Controller"),
    ("fire-door", "Lobby Fire Door", "r-lobby", "Door", "p-door"),  # no way in: a fire door
    ("hob", "Six Burner Range", "r-kitchen", "Cooktop", "p-switch"),
    ("stopcock", "Stopcock", "r-store", "WaterValve", "p-valve"),
    ("play-gate", "Playground Gate", "r-playground", "GarageDoor", "p-garage"),
    ("infant-gate", "Infant Gate", "r-playground", "Lock", "p-lock"),
]


@pytest.fixture(scope="module")
def school(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("school"), SCHOOL_DEVICES, {**SPECS, "p-door": DOOR, "p-garage": GARAGE},
                 SCHOOL_ROOMS, embedder)


@pytest.mark.parametrize("query, device, command", [
    ("someone rang the visitor bell, let them in", "paxton", "main-lock-unlock"),  # the lock, not the fire door
    ("fire up the hob for the soup", "hob", "main-switch-on"),  # "fire up" names no Fire Door
    ("hold the lobby fire door open for the pushchairs", "fire-door", "main-doorControl-open"),  # no pause
    ("water back on at the stopcock please", "stopcock", "main-valve-open"),
])
def test_a_school_is_answered_what_was_asked(school, query, device, command):
    top = school(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


def test_a_gate_said_is_a_gate_never_the_way_in_or_a_fire_door(school):
    pred = school(query="open the gate")  # the gate opener, as beside any gate's lock
    assert not acted_on(pred) & {("paxton", "main-lock-unlock"), ("fire-door", "main-doorControl-open")}


STUDIO_ROOMS = {"r-desk": "前台", "r-server": "机房", "r-office": "办公区"}
STUDIO_DEVICES = [
    ("k20", "凯迪仕K20", "r-desk", "Lock", "p-lock", "凯迪仕 K20 Max 智能锁"),
    ("server-door", "机房门", "r-server", "Lock", "p-lock"),
    ("server-light", "机房灯", "r-server", "Light", "p-switch"),
    ("sentry", "哨兵", "r-desk", "SecurityPanel", "p-panel"),
    ("bell", "可视门铃", "r-desk", "Doorbell", "p-switch"),
]


@pytest.fixture(scope="module")
def studio(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("studio"), STUDIO_DEVICES, SPECS, STUDIO_ROOMS, embedder)


@pytest.mark.parametrize("query, device, command", [
    ("把大门打开", "k20", "main-lock-unlock"),  # where no gate stands, 大门 is the front door
    ("有人按门铃，让他进来吧", "k20", "main-lock-unlock"),  # someone let in
    ("先撤防", "sentry", "main-securitySystem-disarm"),  # 先 is no word of what to disarm
])
def test_a_chinese_office_is_answered_what_was_asked(studio, query, device, command):
    top = studio(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


@pytest.mark.parametrize("query", ["让我进去", "周六保洁阿姨来，到时候要给她开大门", "打开机房", "让太阳进来",
                                   "让阳光照进来"])
def test_the_speaker_a_plan_or_a_room_switched_on_unlocks_nothing(studio, query):
    assert not acted_on(studio(query=query)) & {("k20", "main-lock-unlock"), ("server-door", "main-lock-unlock")}


def test_everything_unlocked_but_the_safe_is_every_other_lock(restaurant):
    pred = restaurant(query="unlock everything except the bank")
    assert pred.bulk is not None and set(pred.bulk.targets) == {
        ("conexis", "main-lock-unlock"), ("cash-door", "main-lock-unlock"), ("flat-door", "main-lock-unlock")}


def test_a_door_a_label_stands_by_still_names_the_doors(tmp_path, embedder):
    # "Shades by the Front Door" say where the shades are: "every door" is still every door but the one excepted
    program = no_lm(tmp_path, [("front", "Front Door", "r-hall", "Lock", "p-lock"),
                               ("back", "Back Door", "r-hall", "Lock", "p-lock"),
                               ("shades", "Shades by the Front Door", "r-living", "Blind", "p-shade")], SPECS, ROOMS,
                    embedder)
    pred = program(query="open every door except the back door")  # the shades open too, and are no door
    assert pred.bulk is not None and set(pred.bulk.targets) == {("front", "main-lock-unlock")}


@pytest.mark.parametrize("query", ["let the chickens out", "let the hens in"])
def test_animals_let_out_or_in_go_through_the_door_of_their_place(tmp_path, embedder, query):
    program = no_lm(tmp_path, [("coop", "Coop Door", "r-hall", "Door", "p-door"),
                               ("front", "Front Door", "r-hall", "Lock", "p-lock"),
                               ("coop-light", "Coop Light", "r-hall", "Light", "p-switch")],
                    {**SPECS, "p-door": DOOR}, ROOMS, embedder)
    top = program(query=query).candidates[0]
    assert (top.device_id, top.command_id) == ("coop", "main-doorControl-open")


def test_a_supply_said_with_another_word_than_its_label_is_not_that_supply(hotel):
    # "the beer gas" is no Kitchen Gas, though both end in gas; nor the Beer Garden Door
    acted = acted_on(hotel(query="turn the beer gas on, the lager's coming out flat"))
    assert not acted & {("kitchen-gas", "main-valve-open"), ("garden-door", "main-doorControl-open")}



@pytest.mark.parametrize("query, device, command", [
    ("the box we keep the takings in, unlock it", "bank", "main-lock-unlock"),  # what it holds: the safe
    ("open the valve that feeds the woks", "wok-gas", "main-valve-open"),  # what it serves: a word of its label
])
def test_a_device_described_by_what_it_holds_or_serves_is_that_device(restaurant, query, device, command):
    top = restaurant(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


@pytest.mark.parametrize("query", [
    "the thing that lets the gas through, open it",  # two gas valves, nothing says which
    "the valve that feeds the woks is dripping",  # a report asks nothing
])
def test_a_description_that_leaves_several_devices_or_asks_nothing_reaches_none(restaurant, query):
    assert not acted_on(restaurant(query=query)) & {("wok-gas", "main-valve-open"), ("main-gas", "main-valve-open")}


def test_a_description_singles_out_the_supply_in_the_room_of_what_it_serves(tmp_path, embedder):
    # "to the range": the gas valve in the range's kitchen, not the boiler's
    program = no_lm(tmp_path, [("range", "Six Burner Range", "r-kitchen", "Switch", "p-switch"),
                               ("interlock", "Gas Interlock", "r-kitchen", "GasValve", "p-valve"),
                               ("boiler-gas", "Boiler Gas", "r-hall", "GasValve", "p-valve"),
                               ("kitchen-light", "Kitchen Light", "r-kitchen", "Light", "p-switch")],
                    SPECS, ROOMS, embedder)
    top = program(query="the thing that lets gas through to the range, open it up").candidates[0]
    assert (top.device_id, top.command_id) == ("interlock", "main-valve-open")
    pred = program(query="把管燃气的那个阀门打开")  # two gas valves: which one is not said
    assert not acted_on(pred) & {("interlock", "main-valve-open"), ("boiler-gas", "main-valve-open")}


SHARE_DEVICES = [
    ("conexis", "Conexis", "r-hall", "Lock", "p-lock", "Yale Conexis L2 Smart Door Lock"),  # the way in, by maker
    ("key-safe", "Key Safe", "r-hall", "Lock", "p-lock", "Master Lock 5441 Bluetooth key safe"),
    ("garden-door", "Garden Door", "r-kitchen", "Lock", "p-lock"),
    ("lockers", "Locker Bank", "r-office", "Lock", "p-lock", "Ojmar Smart Locker Controller"),
    ("cash-safe", "Cash Safe", "r-office", "Lock", "p-lock", "Phoenix Fortress Safe"),
    ("gas", "Gas Shutoff", "r-kitchen", "GasValve", "p-valve"),
    ("oven", "Oven", "r-kitchen", "Oven", "p-oven"),
]
SHARE_SENSITIVE = {("conexis", "main-lock-unlock"), ("key-safe", "main-lock-unlock"),
                   ("garden-door", "main-lock-unlock"), ("lockers", "main-lock-unlock"),
                   ("cash-safe", "main-lock-unlock"), ("gas", "main-valve-open"), ("oven", "main-switch-on")}


@pytest.fixture(scope="module")
def house_share(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("share"), SHARE_DEVICES, SPECS, ROOMS, embedder)


@pytest.mark.parametrize("query, device, command", [
    ("open the lockers", "lockers", "main-lock-unlock"),  # the Locker Bank, never the front door
    ("the cash safe, open it, the bank run's at ten", "cash-safe", "main-lock-unlock"),  # "it": what came before
    ("buzz me in, forgot my keys again", "conexis", "main-lock-unlock"),  # buzzed in at the way in, no Key Safe
    ("unlock the back door, I'm taking the bins out", "garden-door", "main-lock-unlock"),  # the door out back
    ("oven on in the kitchen pls", "oven", "main-switch-on"),
])
def test_a_house_share_is_answered_what_was_asked(house_share, query, device, command):
    top = house_share(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


@pytest.mark.parametrize("query", [
    "lock the garden door, he left it open again",  # what someone left so is a report
    "turn the oven off, someone left it on",
    "open the gas locker",  # a locker named after the gas is no gas supply
    "unlock the gas locker door",  # the door of something the home has not got: no way in
    "let me in",  # the speaker stands at a door only they know
])
def test_a_report_a_thing_named_after_a_supply_or_the_speaker_let_in_asks_nothing(house_share, query):
    assert not acted_on(house_share(query=query)) & SHARE_SENSITIVE


def test_every_door_but_the_front_door_leaves_the_lock_called_by_its_maker(house_share):
    # the plan asks rather than unlock the rest, and never reaches the lock excepted
    assert not acted_on(house_share(query="unlock every door except the front door")) & {
        ("conexis", "main-lock-unlock"), ("conexis", "main-lock-unlatch")}


CLINIC_ROOMS = {"r-desk": "前台", "r-ward": "住院部", "r-yard": "后院"}
CLINIC_DEVICES = [
    ("lukey", "鹿客", "r-desk", "Lock", "p-lock", "鹿客 Classic 2S 智能门锁"),
    ("kennel", "笼舍门", "r-ward", "Door", "p-door"),  # a ward (住院部) is no courtyard: 大门 is the front door
    ("back", "后门", "r-yard", "Lock", "p-lock", "小米 智能门锁 M20"),
]


@pytest.mark.parametrize("query, device", [
    ("开一下大门，第一个预约的到了", "lukey"),
    ("让外面那位遛狗的先生进来", "lukey"),  # a person said by what they do is let in, the dog they walk aside
    ("让送氧气瓶的师傅从后门进来", "back"),  # let in through the door said
])
def test_a_chinese_clinic_lets_in_whom_it_is_asked_to(tmp_path, embedder, query, device):
    program = no_lm(tmp_path, CLINIC_DEVICES, {**SPECS, "p-door": DOOR}, CLINIC_ROOMS, embedder)
    top = program(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, "main-lock-unlock")


@pytest.mark.parametrize("query", ["the restaurant door, unlock it, the first table is here",
                                   "unlock the customer door please"])
def test_the_door_the_public_comes_in_by_is_the_way_in(restaurant, query):
    top = restaurant(query=query).candidates[0]
    assert (top.device_id, top.command_id) == ("conexis", "main-lock-unlock")


CLUB_ROOMS = {"r-pool": "Pool Hall", "r-plant": "Plant Room", "r-fore": "Forecourt", "r-cash": "财务室"}
CLUB_DEVICES = [
    ("fire-exit", "Pool Fire Exit", "r-pool", "Door", "p-door"),
    ("chlorine", "Chlorine Valve", "r-plant", "WaterValve", "p-valve"),
    ("fill", "Pool Fill Valve", "r-plant", "WaterValve", "p-valve"),
    ("backwash", "Backwash Valve", "r-plant", "WaterValve", "p-valve"),
    ("main-gate", "Main Gate", "r-fore", "GarageDoor", "p-garage"),
    ("bin-gate", "Bin Gate", "r-fore", "Lock", "p-lock"),
    ("cash-door", "财务室门", "r-cash", "Lock", "p-lock"),
    ("cash-light", "财务室灯", "r-cash", "Light", "p-switch"),
]


@pytest.fixture(scope="module")
def club(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("club"), CLUB_DEVICES, {**SPECS, "p-door": DOOR, "p-garage": GARAGE},
                 CLUB_ROOMS, embedder)


@pytest.mark.parametrize("query, device, command", [
    ("dose some chlorine, open the dosing valve", "chlorine", "main-valve-open"),  # which, said in another ask
    ("prop the fire door in the pool hall open", "fire-exit", "main-doorControl-open"),  # "open" ends the place
    ("let the van into the forecourt", "main-gate", "main-garageDoorControl-open"),  # a vehicle: the gate it fits
    ("打开财务室，会计到了", "cash-door", "main-lock-unlock"),  # someone to go in: the room's door
])
def test_a_club_is_answered_what_was_asked(club, query, device, command):
    top = club(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


@pytest.mark.parametrize("query", [
    "don't touch the chlorine, open the valve",  # a device named in a negation says nothing of which
    "打开财务室",  # a room switched on: its lights
])
def test_what_another_request_does_not_say_leaves_the_device_unsaid(club, query):
    acted = acted_on(club(query=query))
    assert not acted & {("chlorine", "main-valve-open"), ("fill", "main-valve-open"),
                        ("backwash", "main-valve-open"), ("cash-door", "main-lock-unlock")}


def test_it_opened_of_a_room_said_is_its_one_door_where_nothing_else_there_opens(tmp_path, embedder):
    devices = [("office-door", "Office Door", "r-office", "Lock", "p-lock"),
               ("office-lamp", "Desk Lamp", "r-office", "Light", "p-switch"),
               ("front", "Front Door", "r-hall", "Lock", "p-lock")]
    program = no_lm(tmp_path / "plain", devices, SPECS, ROOMS, embedder)
    top = program(query="I left my phone in the office and it's locked, can you open it").candidates[0]
    assert (top.device_id, top.command_id) == ("office-door", "main-lock-unlock")
    # a device said is what "it" is, never the door of its room
    assert ("office-door", "main-lock-unlock") not in acted_on(program(query="the Desk Lamp, open it"))
    # where blinds open there too, "open it" may be either: nothing is unlocked
    shaded = no_lm(tmp_path / "shaded", [*devices, ("office-blind", "Office Blind", "r-office", "Blind", "p-shade")],
                   SPECS, ROOMS, embedder)
    assert not acted_on(shaded(query="the office is stuffy, can you open it")) & {
        ("office-door", "main-lock-unlock"), ("front", "main-lock-unlock")}


SURGERY_ROOMS = {"r-wait": "Waiting Area", "r-corridor": "Corridor", "r-office": "Manager's Office",
                 "r-gas": "Gas Store", "r-plant": "Plant Room", "r-dental": "Dental Surgery"}
SURGERY_DEVICES = [
    ("patients", "Patients' Entrance", "r-wait", "Lock", "p-lock"),
    ("auto-door", "Automatic Door", "r-wait", "Door", "p-door"),
    ("staff", "Staff Entrance", "r-corridor", "Lock", "p-lock"),
    ("key-safe", "Key Safe", "r-office", "Lock", "p-lock"),
    ("oxygen", "Oxygen Manifold", "r-gas", "GasValve", "p-valve"),
    ("main-gas", "Main Gas", "r-plant", "GasValve", "p-valve"),
    ("nitrous", "Nitrous Valve", "r-dental", "GasValve", "p-valve"),
]


@pytest.fixture(scope="module")
def surgery(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("surgery"), SURGERY_DEVICES, {**SPECS, "p-door": DOOR}, SURGERY_ROOMS,
                 embedder)


@pytest.mark.parametrize("query, device", [
    ("open the staff door pls, locked out", "staff"),  # a lock called an entrance is the door's
    ("Dr Patel is at the staff door with her hands full, let her in", "staff"),  # where she waits, not the way in
    ("let the first patients in, they're queuing in the rain", "patients"),  # the door the text names
    ("open the front door for the patients", "patients"),  # a staff entrance is no front door
    ("unlock the key safe in the manager's office", "key-safe"),  # a possessive room is the room
])
def test_a_surgery_is_answered_what_was_asked(surgery, query, device):
    top = surgery(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, "main-lock-unlock")


@pytest.mark.parametrize("query", ["open the front door", "let the patients in"])
def test_a_staff_entrance_is_never_the_way_in(surgery, query):
    assert ("staff", "main-lock-unlock") not in acted_on(surgery(query=query))


def test_the_gas_main_and_every_gas_valve_are_read_as_said(surgery):
    top = surgery(query="gas back on at the meter please, the boiler man is done").candidates[0]
    assert (top.device_id, top.command_id) == ("main-gas", "main-valve-open")  # the main, never the oxygen
    # "the gas valve" is in one label only, and all three are gas valves: which one?
    assert not {device for device, _ in acted_on(surgery(query="open the gas valve"))} & {
        "nitrous", "oxygen", "main-gas"}
    # every one of the kind, not only the one whose label says valve; the one excepted never
    acted = acted_on(surgery(query="open every gas valve but the nitrous"))
    assert ("nitrous", "main-valve-open") not in acted and ("oxygen", "main-valve-open") in acted


def test_a_clause_that_says_what_something_does_asks_nothing(tmp_path, embedder):
    # "so it stays open" says why; the shop door may be the Shop Floor's or the Workshop's: which one?
    rooms = {"r-shop": "Shop Floor", "r-work": "Workshop"}
    devices = [("abloy", "Abloy", "r-shop", "Lock", "p-lock", "Abloy PE590 Smart Lock"),
               ("workshop", "Workshop Door", "r-work", "Lock", "p-lock")]
    program = no_lm(tmp_path, devices, SPECS, rooms, embedder)
    for query in ("unlatch the shop door so it stays open", "unlatch the shop door, keep it open"):
        assert ("workshop", "main-lock-unlock") not in acted_on(program(query=query)), query


TEA_HOUSE_ROOMS = {"r-hall": "大堂", "r-203": "203包厢", "r-202": "202包厢", "r-yard": "后院", "r-pantry": "茶水间",
                   "r-meter": "燃气表间"}
TEA_HOUSE_DEVICES = [
    ("desman", "德施曼", "r-hall", "Lock", "p-lock", "德施曼 Q5M 智能锁"),
    ("lock-203", "203门锁", "r-203", "Lock", "p-lock"),
    ("lock-202", "202门锁", "r-202", "Lock", "p-lock"),
    ("back", "后门", "r-yard", "Lock", "p-lock", "小米 智能门锁 M20"),
    ("hob", "燃气灶", "r-pantry", "Cooktop", "p-switch"),
    ("water", "自来水总阀", "r-yard", "WaterValve", "p-valve"),
    ("gas-main", "燃气总阀", "r-meter", "GasValve", "p-valve"),
]


@pytest.mark.parametrize("query, device, command", [
    ("帮203的客人开一下门", "lock-203", "main-lock-unlock"),  # a room said by its number
    ("院子那个门开锁", "back", "main-lock-unlock"),  # 那个 says nothing of which; 院子 is the yard
    ("茶水间的灶点上火", "hob", "main-switch-on"),  # 点上火 is 点火
    ("水闸开一下，院子要冲地", "water", "main-valve-open"),  # 水闸: the water valve
])
def test_a_chinese_tea_house_is_answered_what_was_asked(tmp_path, embedder, query, device, command):
    program = no_lm(tmp_path, TEA_HOUSE_DEVICES, SPECS, TEA_HOUSE_ROOMS, embedder)
    top = program(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


def test_a_room_named_for_the_gas_meter_opened_is_no_gas_main(tmp_path, embedder):
    program = no_lm(tmp_path, TEA_HOUSE_DEVICES, SPECS, TEA_HOUSE_ROOMS, embedder)
    assert ("gas-main", "main-valve-open") not in acted_on(program(query="打开燃气表间"))


def test_every_water_valve_but_the_main_leaves_the_main(tmp_path, embedder):
    rooms = {"r-yard": "Yard", "r-utility": "Utility"}
    devices = [("quench", "Quench Valve", "r-yard", "WaterValve", "p-valve"),
               ("barrel", "Rain Barrel Valve", "r-yard", "WaterValve", "p-valve"),
               ("main", "Water Shutoff", "r-utility", "WaterValve", "p-valve")]
    program = no_lm(tmp_path, devices, SPECS, rooms, embedder)
    acted = acted_on(program(query="open all the water valves except the main"))
    assert ("main", "main-valve-open") not in acted and ("quench", "main-valve-open") in acted


NURSING_ROOMS = {"r-lounge": "Day Lounge", "r-12": "Room 12", "r-14": "Room 14", "r-office": "Manager's Office",
              "r-reception": "Reception"}
NURSING_DEVICES = [
    ("garden", "Garden Door", "r-lounge", "Door", "p-door"),
    ("room-12", "Room 12 Door", "r-12", "Lock", "p-lock"),
    ("room-14", "Room 14 Door", "r-14", "Lock", "p-lock"),
    ("cash-box", "Piggy Bank", "r-office", "Lock", "p-lock", "Master Lock 5900EURD Bluetooth Lock Box"),
    ("front", "Front Door", "r-reception", "Lock", "p-lock"),
]


@pytest.mark.parametrize("query, device, command", [
    ("open Mrs Hale's door, she's in room 12", "room-12", "main-lock-unlock"),  # whose door: no Garden Door
    ("unlock the petty cash box in the manager's office", "cash-box", "main-lock-unlock"),  # a Lock Box by its name
    ("can u open front door plz my uber eats is here", "front", "main-lock-unlock"),  # two sentences run together
])
def test_a_nursing_home_is_answered_what_was_asked(tmp_path, embedder, query, device, command):
    program = no_lm(tmp_path, NURSING_DEVICES, {**SPECS, "p-door": DOOR}, NURSING_ROOMS, embedder)
    top = program(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)



def test_a_verb_split_by_a_space_is_what_it_says(tmp_path, embedder):
    program = no_lm(tmp_path, [("front", "Front Door", "r-hall", "Lock", "p-lock")], SPECS, ROOMS, embedder)
    top = program(query="un lock the front door please").candidates[0]  # "un lock" is unlock, never lock
    assert (top.device_id, top.command_id) == ("front", "main-lock-unlock")


@pytest.mark.parametrize("query", ["燃气灶开着呢，把灶台灯打开", "办公室大门开着呢，把灶台灯打开"])
def test_a_state_reported_beside_an_ask_is_no_ask(tmp_path, embedder, query):
    rooms = {"r-pantry": "茶水间", "r-office": "办公室"}
    devices = [("hob", "燃气灶", "r-pantry", "Cooktop", "p-switch"),
               ("hob-light", "灶台灯", "r-pantry", "Light", "p-switch"),
               ("office-door", "办公室大门", "r-office", "Lock", "p-lock")]
    acted = acted_on(no_lm(tmp_path, devices, SPECS, rooms, embedder)(query=query))
    # "开着呢" says how it is: nothing of the hob or the door is asked
    assert not acted & {("hob", "main-switch-on"), ("office-door", "main-lock-unlock")}


def test_someone_at_the_door_is_let_in_by_the_way_in_never_a_door_named_by_its_word(tmp_path, embedder):
    rooms = {"r-hall": "Hall", "r-living": "Living Room"}
    devices = [("front", "Front Door", "r-hall", "Lock", "p-lock"),
               ("patio", "Patio Door", "r-living", "Door", "p-door")]
    acted = acted_on(no_lm(tmp_path, devices, {**SPECS, "p-door": DOOR}, rooms, embedder)(
        query="someone's at the door, let them in"))
    assert ("patio", "main-doorControl-open") not in acted


@pytest.mark.parametrize("query, device, command", [
    ("the gas for the boiler, turn it back on", "boiler-gas", "main-valve-open"),  # "it" served as it was said
    ("让会计进财务室", "cash-door", "main-lock-unlock"),  # let into a room: its one door, never its safe
])
def test_what_it_serves_and_whom_a_room_lets_in_say_which(tmp_path, embedder, query, device, command):
    rooms = {"r-kitchen": "Hall Kitchen", "r-boiler": "Boiler House", "r-cash": "财务室"}
    devices = [("kitchen-gas", "Kitchen Gas Valve", "r-kitchen", "GasValve", "p-valve"),
               ("boiler-gas", "Boiler Gas", "r-boiler", "GasValve", "p-valve"),
               ("cash-door", "财务室门锁", "r-cash", "Lock", "p-lock"),
               ("cash-safe", "财务室保险柜", "r-cash", "Lock", "p-lock", "得力 智能保险柜 16681")]
    top = no_lm(tmp_path, devices, SPECS, rooms, embedder)(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


@pytest.mark.parametrize("query, device, command", [
    ("fire the mash burner", "burner", "main-switch-on"),  # a heater fired is switched on
    ("open the roller door", "keg-door", "main-garageDoorControl-open"),  # a roller door is a garage door, no gate
])
def test_a_brewery_is_answered_what_was_asked(tmp_path, embedder, query, device, command):
    rooms = {"r-brew": "Brewhouse", "r-keg": "Keg Store", "r-yard": "Yard"}
    devices = [("burner", "Mash Burner", "r-brew", "Cooktop", "p-switch"),
               ("keg-door", "Keg Store Door", "r-keg", "GarageDoor", "p-garage"),
               ("yard-gate", "Yard Gate", "r-yard", "GarageDoor", "p-garage")]
    top = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


MARINA_ROOMS = {"r-office": "Marina Office", "r-pontoon": "Pontoon", "r-shop": "Shop Floor", "r-cold": "Cold Room",
                "r-201": "201", "r-202": "202", "r-203": "203"}
MARINA_DEVICES = [
    ("halo", "Kwikset Halo", "r-office", "Lock", "p-lock", "Kwikset Halo Wi-Fi Smart Lock"),
    ("office-safe", "Office Safe", "r-office", "Lock", "p-lock"),
    ("office-lights", "Office Lights", "r-office", "Light", "p-switch"),
    ("pontoon-gate", "Pontoon Gate", "r-pontoon", "Lock", "p-lock"),
    ("water-point", "Water Point", "r-pontoon", "WaterValve", "p-valve"),
    ("shopfront", "Yale Shopfront", "r-shop", "Lock", "p-lock", "Yale Conexis L2"),
    ("cold-door", "Cold Room Door", "r-cold", "Lock", "p-lock"),
    ("lock-201", "201门锁", "r-201", "Lock", "p-lock"),
    ("lock-202", "202门锁", "r-202", "Lock", "p-lock"),
    ("lock-203", "203门锁", "r-203", "Lock", "p-lock"),
]


@pytest.fixture(scope="module")
def marina(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("marina"), MARINA_DEVICES, SPECS, MARINA_ROOMS, embedder)


@pytest.mark.parametrize("query, devices", [
    # where another clause says someone waits, that is the door they are let through; never the way in
    ("he's at the pontoon gate with his shopping, can you let him through", {"pontoon-gate"}),
    ("let the crew down onto the pontoon", {"pontoon-gate"}),
    ("let the harbourmaster into the office", {"halo"}),  # whom is let in is no word of the place
    ("let the wholesaler in", {"shopfront"}),  # a shop front is a door, and the way in
    ("the cold room - unlock that one too", {"cold-door"}),  # a dash ends a clause; "that one" points back
    ("打开203房间的门锁", {"lock-203"}),  # a room said by its number and 房间
    ("202和203的门都打开，保洁要进去", {"lock-202", "lock-203"}),
])
def test_a_marina_and_a_guest_house_are_answered_what_was_asked(marina, query, devices):
    pred = marina(query=query)
    offered = {c.device_id for c in pred.candidates if c.command_id == "main-lock-unlock" and c.asked}
    assert offered == devices


def test_someone_the_speaker_is_with_is_let_in_by_the_way_in(marina):
    # the speaker's place says nothing of where a visitor waits
    offered = {c.device_id for c in marina(query="I'm at the pontoon, let the wholesaler in").candidates
               if c.command_id == "main-lock-unlock" and c.asked}
    assert "pontoon-gate" not in offered


@pytest.mark.parametrize("query, device, command", [
    ("open the little gate, the postman is there", "side-gate", "main-lock-unlock"),  # people walk through it
    ("open the big gate, the lorry is here", "yard-gate", "main-garageDoorControl-open"),  # vehicles drive
    ("let the tow truck onto the yard", "yard-gate", "main-garageDoorControl-open"),
])
def test_a_gate_said_by_its_size_is_the_one_for_people_or_for_vehicles(tmp_path, embedder, query, device, command):
    rooms = {"r-yard": "Yard", "r-hall": "Hall"}
    devices = [("yard-gate", "Yard Gate", "r-yard", "GarageDoor", "p-garage"),
               ("side-gate", "Side Gate", "r-yard", "Lock", "p-lock"),
               ("front", "Front Door", "r-hall", "Lock", "p-lock")]
    pred = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)(query=query)
    assert {(c.device_id, c.command_id) for c in pred.candidates if c.asked} == {(device, command)}


def test_a_door_said_bare_and_pointed_back_to_is_the_way_in(program):
    asked = {(c.device_id, c.command_id) for c in program(query="the door, unlock it").candidates if c.asked}
    assert asked == {("front-lock", "main-lock-unlock")}


@pytest.mark.parametrize("query, device, command", [
    ("unlock the walk-in fridge", "cold-door", "main-lock-unlock"),  # the cold room, as its users call it
    ("给院子里的花浇浇水", "yard-tap", "main-valve-open"),  # 院子 is the 庭院
])
def test_a_room_said_by_another_word_for_it_is_that_room(tmp_path, embedder, query, device, command):
    rooms = {"r-cold": "Cold Room", "r-yard": "庭院", "r-shop": "Shop Floor"}
    devices = [("cold-door", "Cold Room Door", "r-cold", "Lock", "p-lock"),
               ("yard-tap", "浇花水阀", "r-yard", "WaterValve", "p-valve"),
               ("shop-door", "Shop Door", "r-shop", "Lock", "p-lock")]
    pred = no_lm(tmp_path, devices, SPECS, rooms, embedder)(query=query)
    assert {(c.device_id, c.command_id) for c in pred.candidates if c.asked} == {(device, command)}


@pytest.mark.parametrize("query, device, command", [
    # whom is let in waits where another clause says: that place's door, else the one door called so there
    ("the dray lorry is waiting outside the yard, let him in", "yard-gate", "main-garageDoorControl-open"),
    ("the postman's round the back at the yard gate, let him in", "yard-gate", "main-garageDoorControl-open"),
    ("the engineer is at the gate in his car, let him through", "yard-gate", "main-garageDoorControl-open"),
])
def test_someone_waiting_somewhere_is_let_in_there(tmp_path, embedder, query, device, command):
    rooms = {"r-yard": "Back Yard", "r-stock": "Stockroom", "r-shop": "Shop Floor"}
    devices = [("yard-gate", "Yard Gate", "r-yard", "GarageDoor", "p-garage"),
               ("back-door", "Back Door", "r-stock", "Lock", "p-lock"),
               ("shop-door", "Shop Door", "r-shop", "Lock", "p-lock")]
    pred = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)(query=query)
    assert {(c.device_id, c.command_id) for c in pred.candidates if c.asked} == {(device, command)}


def test_a_fire_escape_is_no_way_in(tmp_path, embedder):
    rooms = {"r-hall": "门厅", "r-class": "大二班"}
    devices = [("entry", "门厅门禁", "r-hall", "Lock", "p-lock"),
               ("fire-exit", "消防通道门", "r-class", "Door", "p-door")]
    pred = no_lm(tmp_path, devices, {**SPECS, "p-door": DOOR}, rooms, embedder)(query="让他进来")
    assert ("fire-exit", "main-doorControl-open") not in {(c.device_id, c.command_id) for c in pred.candidates
                                                          if c.asked}


def test_someone_waiting_somewhere_is_let_in_by_the_door_said(tmp_path, embedder):
    rooms = {"r-shop": "Shop", "r-staff": "Staff Room"}
    devices = [("salto", "Salto", "r-shop", "Lock", "p-lock", "Salto XS4 One"),
               ("staff", "Staff Door", "r-staff", "Lock", "p-lock")]
    pred = no_lm(tmp_path, devices, SPECS, rooms, embedder)(
        query="Priya's at the side, can you let her in the staff door")
    assert {(c.device_id, c.command_id) for c in pred.candidates if c.asked} == {("staff", "main-lock-unlock")}


@pytest.mark.parametrize("query, device, command", [
    ("大门open一下，快递到了", "gate", "main-garageDoorControl-open"),  # English verbs said among Chinese
    ("帮我unlock一下后门", "back", "main-lock-unlock"),
    ("让我老公进来，他在后门没带钥匙", "back", "main-lock-unlock"),  # the speaker's husband, at the back door
])
def test_a_chinese_home_is_answered_what_was_asked(tmp_path, embedder, query, device, command):
    rooms = {"r-yard": "操场", "r-kitchen": "厨房", "r-shop": "店面"}
    devices = [("gate", "大门", "r-yard", "GarageDoor", "p-garage"),
               ("back", "后门", "r-kitchen", "Lock", "p-lock"),
               ("glass", "玻璃门", "r-shop", "Lock", "p-lock")]
    pred = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)(query=query)
    assert {(c.device_id, c.command_id) for c in pred.candidates if c.asked} == {(device, command)}


def test_the_speaker_let_in_is_at_a_door_only_they_know(tmp_path, embedder):
    rooms = {"r-kitchen": "厨房", "r-shop": "店面"}
    devices = [("back", "后门", "r-kitchen", "Lock", "p-lock"), ("glass", "玻璃门", "r-shop", "Lock", "p-lock")]
    pred = no_lm(tmp_path, devices, SPECS, rooms, embedder)(query="让我进去")
    assert not [c for c in pred.candidates if c.asked]


def test_every_room_door_of_a_guest_house_is_the_numbered_rooms(tmp_path, embedder):
    rooms = {"r-1": "Room 1", "r-2": "Room 2", "r-luggage": "Luggage Room", "r-owner": "Owner's Flat"}
    devices = [("room-1", "Room 1 Door", "r-1", "Lock", "p-lock"), ("room-2", "Room 2 Door", "r-2", "Lock", "p-lock"),
               ("luggage", "Luggage Room Door", "r-luggage", "Lock", "p-lock"),
               ("owner", "Owner's Door", "r-owner", "Lock", "p-lock")]
    pred = no_lm(tmp_path, devices, SPECS, rooms, embedder)(query="unlock every room door except the owner's")
    assert {c.device_id for c in pred.candidates if c.asked} == {"room-1", "room-2"}


GAS_ROOMS = {"r-kitchen": "厨房", "r-boiler": "锅炉间", "r-tea": "茶室"}
GAS_DEVICES = [
    ("gas-main", "燃气总阀", "r-boiler", "GasValve", "p-valve"),
    ("hob", "灶台", "r-kitchen", "Cooktop", "p-switch"),
    ("hob-light", "灶台灯", "r-kitchen", "Light", "p-switch"),
    ("tea-light", "茶室灯", "r-tea", "Light", "p-switch"),
]


@pytest.fixture(scope="module")
def gas_house(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("gas-house"), GAS_DEVICES, SPECS, GAS_ROOMS, embedder)


@pytest.mark.parametrize("query", ["厨房的气打开", "开一下厨房的燃气，要做饭了"])
def test_the_gas_of_a_room_that_burns_it_is_the_one_gas_valve_feeding_it(gas_house, query):
    pred = gas_house(query=query)  # 气 said alone is the kitchen's gas; its valve stands in the boiler room
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("gas-main", "main-valve-open")


@pytest.mark.parametrize("query", ["把茶室的燃气打开", "厨房的气温有点高"])
def test_no_gas_is_opened_for_a_room_that_burns_none_nor_for_a_word_with_qi_in_it(gas_house, query):
    assert ("gas-main", "main-valve-open") not in acted_on(gas_house(query=query))


def test_all_the_guest_rooms_are_the_numbered_rooms_doors_but_the_one_excepted(tmp_path, embedder):
    rooms = {"r-1": "Room 1", "r-2": "Room 2", "r-3": "Room 3", "r-luggage": "Luggage Room", "r-lobby": "Lobby"}
    devices = [*((f"room-{i}", f"Room {i} Door", f"r-{i}", "Lock", "p-lock") for i in (1, 2, 3)),
               ("luggage", "Luggage Room Door", "r-luggage", "Lock", "p-lock"),
               ("front", "Front Door", "r-lobby", "Lock", "p-lock"),
               ("lobby-light", "Lobby Lights", "r-lobby", "Light", "p-switch")]
    program = no_lm(tmp_path, devices, SPECS, rooms, embedder)
    pred = program(query="unlock all the guest rooms except room 2, housekeeping is starting")
    unlocked = {d for d, c in acted_on(pred) | {(c.device_id, c.command_id) for c in pred.candidates[:10]}
                if c == "main-lock-unlock"}
    assert unlocked == {"room-1", "room-3"}  # no Luggage Room, no Front Door, not room 2


KENNEL_ROOMS = {"r-reception": "Reception", "r-cattery": "Cattery", "r-office": "Office"}
KENNEL_DEVICES = [
    ("salto", "Salto", "r-reception", "Lock", "p-lock", "Salto XS4 One"),
    ("blinds", "Reception Blinds", "r-reception", "Blind", "p-shade"),
    ("cattery", "Cattery Door", "r-cattery", "Lock", "p-lock"),
    ("office", "Office Door", "r-office", "Lock", "p-lock"),
]


@pytest.mark.parametrize(("query", "device"), [
    ("open up reception please, there's a queue", "salto"),  # a place opened up opens to people: its door
    ("could you possibly pop the cattery open for me", "cattery"),
])
def test_a_place_opened_up_or_popped_open_is_its_door(tmp_path, embedder, query, device):
    pred = no_lm(tmp_path, KENNEL_DEVICES, SPECS, KENNEL_ROOMS, embedder)(query=query)
    assert (device, "main-lock-unlock") in {(c.device_id, c.command_id) for c in pred.candidates[:10]}


def test_a_lock_makers_name_said_names_its_one_lock_and_of_two_none(tmp_path, embedder):
    rooms = {"r-hall": "Hallway", "r-feed": "Feed Store", "r-living": "Living Room"}
    devices = [("ultion", "Ultion", "r-hall", "Lock", "p-lock", "Ultion Nuki Plus"),
               ("feed", "Feed Store Door", "r-feed", "Lock", "p-lock", "Yale Conexis L2"),
               ("blinds", "Living Room Blinds", "r-living", "Blind", "p-shade")]
    top = no_lm(tmp_path / "one", devices, SPECS, rooms, embedder)(query="open the nuki").candidates[0]
    assert (top.device_id, top.command_id) == ("ultion", "main-lock-unlock")
    devices[1] = ("feed", "Feed Store Door", "r-feed", "Lock", "p-lock", "Nuki Smart Lock 3.0 Pro")
    pred = no_lm(tmp_path / "two", devices, SPECS, rooms, embedder)(query="open the nuki")
    assert not {d for d, c in acted_on(pred) if c == "main-lock-unlock"}  # two Nukis: which one?


def test_a_hatch_on_its_deck_is_no_door_lock_by_its_makers_name(tmp_path, embedder):
    rooms = {"r-stern": "Stern Deck", "r-bow": "Bow Deck"}
    devices = [("stern", "Stern Hatch", "r-stern", "Lock", "p-lock", "Nuki Smart Lock 3.0 (hatch bolt)"),
               ("bow", "Bow Doors", "r-bow", "Lock", "p-lock", "Yale Conexis L1")]
    pred = no_lm(tmp_path, devices, SPECS, rooms, embedder)(query="open the doors at the bow")
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("bow", "main-lock-unlock")


def test_a_place_opened_up_opens_no_fire_exit(tmp_path, embedder):
    rooms = {"r-pool": "Pool Hall", "r-lobby": "Lobby"}
    devices = [("exit", "Pool Fire Exit", "r-pool", "Door", "p-door"),
               ("cover", "Pool Cover", "r-pool", "Blind", "p-shade"),
               ("front", "Front Door", "r-lobby", "Lock", "p-lock")]
    pred = no_lm(tmp_path, devices, {**SPECS, "p-door": DOOR}, rooms, embedder)(query="open up the pool hall")
    assert ("exit", "main-doorControl-open") not in acted_on(pred)


def test_a_room_opened_up_with_a_fire_exit_beside_its_door_still_asks_which(tmp_path, embedder):
    # the fire exit sets no door apart: which one is meant stays the question it was
    rooms = {"r-hall": "Main Hall", "r-lobby": "Lobby"}
    devices = [("exit", "Hall Fire Exit", "r-hall", "Door", "p-door"),
               ("hall-door", "Side Door", "r-hall", "Lock", "p-lock"),
               ("front", "Front Door", "r-lobby", "Lock", "p-lock")]
    pred = no_lm(tmp_path, devices, {**SPECS, "p-door": DOOR}, rooms, embedder)(query="open up the main hall")
    assert not acted_on(pred) & {("exit", "main-doorControl-open"), ("hall-door", "main-lock-unlock")}


CHALET_ROOMS = {"r-hall": "Entrance Hall", "r-boot": "Boot Room", "r-lockers": "Ski Locker Room",
                "r-kitchen": "Kitchen", "r-utility": "Utility Room"}
CHALET_DEVICES = [
    ("nuki", "Nuki", "r-hall", "Lock", "p-lock", "Nuki Smart Lock 4.0 Pro"),
    ("boot", "Boot Room Door", "r-boot", "Lock", "p-lock"),
    ("lockers", "Ski Locker", "r-lockers", "Lock", "p-lock"),  # named for its room, and a locker: no door
    ("range", "Range", "r-kitchen", "Oven", "p-oven"),
    ("hob", "Range Hob", "r-kitchen", "Cooktop", "p-switch"),
    ("gas-main", "Gas Main", "r-utility", "GasValve", "p-valve"),
    ("stopcock", "Water Stopcock", "r-utility", "WaterValve", "p-valve"),
]


@pytest.fixture(scope="module")
def chalet(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("chalet"), CHALET_DEVICES, SPECS, CHALET_ROOMS, embedder)


def test_a_locker_named_for_its_room_is_none_of_the_doors(chalet):
    unlocked = {d for d, c in acted_on(chalet(query="unlock all the doors")) if c == "main-lock-unlock"}
    assert unlocked == {"nuki", "boot"}


def test_the_mains_water_is_no_gas_main(chalet):
    top = chalet(query="the plumber's finished, turn the mains water back on").candidates[0]
    assert (top.device_id, top.command_id) == ("stopcock", "main-valve-open")


@pytest.mark.parametrize("query", ["light the hob on the range, I want to boil pasta",
                                   "turn the gas bottles on for the range"])
def test_a_device_said_to_say_where_or_what_for_is_not_switched_on(chalet, query):
    assert ("range", "main-switch-on") not in acted_on(chalet(query=query))


def test_a_bare_door_opened_is_the_one_someone_waits_at(tmp_path, embedder):
    rooms = {"r-shop": "店面", "r-back": "后门过道"}
    devices = [("glass", "玻璃门", "r-shop", "Lock", "p-lock"), ("back", "后门", "r-back", "Lock", "p-lock")]
    program = no_lm(tmp_path, devices, SPECS, rooms, embedder)
    top = program(query="进货的三轮车到后门了，开门").candidates[0]
    assert (top.device_id, top.command_id) == ("back", "main-lock-unlock")


def test_at_the_door_is_no_room_called_the_homes_doorway(tmp_path, embedder):
    rooms = {"r-wait": "候诊区", "r-landing": "家门口"}
    devices = [("dsm", "德施曼", "r-wait", "Lock", "p-lock", "德施曼 Q50"),
               ("home", "家门", "r-landing", "Lock", "p-lock")]
    pred = no_lm(tmp_path, devices, SPECS, rooms, embedder)(query="有个大爷在门口拄着拐杖，给他开下门")
    assert ("home", "main-lock-unlock") not in acted_on(pred)  # 门口 is at the door, not the 家门口 upstairs


def test_a_number_said_with_a_name_names_the_one_so_numbered(tmp_path, embedder):
    rooms = {"r-a": "Unit Hall A", "r-b": "Unit Hall B"}
    devices = [("u12", "Unit 12 Door", "r-a", "GarageDoor", "p-garage"),
               ("u14", "Unit 14 Door", "r-a", "GarageDoor", "p-garage"),
               ("u31", "Unit 31 Door", "r-b", "GarageDoor", "p-garage")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)
    top = program(query="open unit 12 for the customer").candidates[0]
    assert (top.device_id, top.command_id) == ("u12", "main-garageDoorControl-open")
    assert not {d for d, c in acted_on(program(query="open unit 15")) if c == "main-garageDoorControl-open"}


def test_two_devices_each_said_by_its_label_are_each_asked(tmp_path, embedder):
    rooms = {"r-shop": "店面", "r-wash": "洗车房", "r-pharmacy": "药房"}
    devices = [("shutter", "卷帘门", "r-shop", "GarageDoor", "p-garage"),
               ("lift", "升降门", "r-wash", "GarageDoor", "p-garage"),
               ("safe", "贵细药材保险柜", "r-pharmacy", "Lock", "p-lock"),
               ("cabinet", "药柜", "r-pharmacy", "Lock", "p-lock")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)
    offered = {(c.device_id, c.command_id) for c in program(query="打开卷帘门和升降门，今天洗车的多").candidates[:3]}
    assert {("shutter", "main-garageDoorControl-open"), ("lift", "main-garageDoorControl-open")} <= offered
    pred = program(query="贵细药材保险柜和药柜都打开，药监局来检查")
    offered = {(c.device_id, c.command_id) for c in pred.candidates[:3]}
    assert {("safe", "main-lock-unlock"), ("cabinet", "main-lock-unlock")} <= offered
    assert not {d for d, c in acted_on(program(query="打开门")) if c.endswith("open")}  # a door, of two: which?


BIKE_ROOMS = {"r-shop": "Shop Floor", "r-stair": "Stairwell", "r-office": "Office", "r-yard": "Yard",
              "r-landing": "Landing"}
BIKE_DEVICES = [
    ("conexis", "Conexis", "r-shop", "Lock", "p-lock", "Yale Conexis L2"),
    ("shutter", "Shop Shutter", "r-shop", "GarageDoor", "p-garage"),
    ("street", "Street Door", "r-stair", "Lock", "p-lock"),
    ("keys", "Key Cabinet", "r-office", "Lock", "p-lock"),
    ("cage", "Bike Cage", "r-yard", "Lock", "p-lock"),
    ("flat", "Flat Door", "r-landing", "Lock", "p-lock"),
    ("panel", "Chainguard", "r-shop", "SecurityPanel", "p-panel"),
    ("howler", "Howler", "r-yard", "Siren", "p-siren"),
]
SIREN = [{"id": "main-alarm-siren", "description": "sound the siren", "type": None, "value_range": None},
         {"id": "main-alarm-off", "description": "silence the siren", "type": None, "value_range": None}]


@pytest.fixture(scope="module")
def bike_shop(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("bike-shop"), BIKE_DEVICES,
                 {**SPECS, "p-garage": GARAGE, "p-siren": SIREN}, BIKE_ROOMS, embedder)


@pytest.mark.parametrize(("query", "device"), [
    ("buzz me in at the street door, I've got shopping bags", "street"),  # in at it: by it, no landmark
    ("my keys are in the flat and I'm stood at the street door, let me in", "street"),
    ("there's a customer at the shop with a flat tyre, let him in", "conexis"),  # on foot: no shutter, no Flat Door
    ("the box with the bike keys in the office, unlock it", "keys"),  # in the office: no Bike Cage in the yard
    ("open the cage where the bikes are kept", "cage"),  # a cage described by what it holds
])
def test_someone_let_in_or_a_thing_pointed_back_to_is_where_they_are(bike_shop, query, device):
    top = bike_shop(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, "main-lock-unlock")


def test_the_alarm_panel_stopped_is_disarmed_and_no_siren_silenced(bike_shop):
    pred = bike_shop(query="stop the alarm panel, is only me with the dog")
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("panel", "main-securitySystem-disarm")
    assert ("howler", "main-alarm-off") not in acted_on(pred)


def test_a_kind_word_another_cookers_name_carries_chooses_neither(tmp_path, embedder):
    rooms = {"r-kitchen": "Kitchen"}
    devices = [("hob", "Induction Hob", "r-kitchen", "Cooktop", "p-switch"),
               ("range", "Range Oven", "r-kitchen", "Oven", "p-oven")]
    program = no_lm(tmp_path, devices, SPECS, rooms, embedder)
    pred = program(query="put the range on, I'm baking welcome scones")  # a range is a hob; the oven is called so
    assert not acted_on(pred) & {("hob", "main-switch-on"), ("range", "main-switch-on")}
    top = program(query="turn on the hob").candidates[0]
    assert (top.device_id, top.command_id) == ("hob", "main-switch-on")


def test_the_alarm_said_alone_may_still_be_the_panel(tmp_path, embedder):
    rooms = {"r-shop": "店面"}
    devices = [("panel", "看门狗", "r-shop", "SecurityPanel", "p-panel"),
               ("siren", "报警喇叭", "r-shop", "Siren", "p-siren")]
    pred = no_lm(tmp_path, devices, {**SPECS, "p-siren": SIREN}, rooms, embedder)(query="警报关掉")
    assert ("panel", "main-securitySystem-disarm") in {(c.device_id, c.command_id) for c in pred.candidates[:3]}


def test_the_speakers_flat_in_a_block_is_no_way_in_of_the_building(tmp_path, embedder):
    rooms = {"r-street": "Street Entrance", "r-kitchen": "Flat Kitchen", "r-hall": "Manager's Hall"}
    devices = [("gate", "Pedestrian Gate", "r-street", "Lock", "p-lock"),
               ("manager", "Manager's Door", "r-hall", "Lock", "p-lock"),
               ("lamp", "Kitchen Lamp", "r-kitchen", "Light", "p-switch")]
    pred = no_lm(tmp_path, devices, SPECS, rooms, embedder)(query="let me into my flat, unlock my front door")
    assert ("gate", "main-lock-unlock") not in acted_on(pred)


@pytest.mark.parametrize(("query", "device", "command"), [
    ("保险柜，帮我开开", "safe", "main-lock-unlock"),  # the verb alone opens what the other clause says: a lock
    ("烤箱，开了它", "oven", "main-switch-on"),
])
def test_a_verb_alone_after_a_device_said_acts_on_it_as_its_kind_does(tmp_path, embedder, query, device, command):
    rooms = {"r-shop": "店面", "r-kitchen": "厨房"}
    devices = [("safe", "保险柜", "r-shop", "Lock", "p-lock"), ("oven", "烤箱", "r-kitchen", "Oven", "p-oven"),
               ("burner-1", "一号煎药炉", "r-kitchen", "Cooktop", "p-switch"),
               ("burner-2", "二号煎药炉", "r-kitchen", "Cooktop", "p-switch"),
               ("lamp", "店面灯", "r-shop", "Light", "p-switch")]
    top = no_lm(tmp_path, devices, SPECS, rooms, embedder)(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


def test_someone_let_into_a_bay_is_never_let_through_its_fire_exit(tmp_path, embedder):
    rooms = {"r-bay": "Loading Bay", "r-foyer": "Foyer"}
    devices = [("bay", "Loading Bay Door", "r-bay", "GarageDoor", "p-garage"),
               ("exit", "Fire Exit", "r-bay", "Door", "p-door"),
               ("salto", "Salto Lock", "r-foyer", "Lock", "p-lock", "Salto XS4 One")]
    pred = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE, "p-door": DOOR}, rooms, embedder)(
        query="let them into the loading bay")
    assert ("exit", "main-doorControl-open") not in acted_on(pred)


BOOKSHOP_ROOMS = {"r-shop": "Shop", "r-hall": "Hallway", "r-surgery": "Surgery", "r-yard": "Yard", "r-lane": "Lane"}
BOOKSHOP_DEVICES = [
    ("danalock", "Danalock", "r-shop", "Lock", "p-lock", "Danalock V3"),
    ("sign", "Open Sign", "r-shop", "Light", "p-switch"),
    ("door-light", "Door Light", "r-shop", "Light", "p-switch"),
    ("panel", "Bookworm", "r-shop", "SecurityPanel", "p-panel"),
    ("siren", "Hallway Siren", "r-hall", "Siren", "p-siren"),
    ("gas", "Main Gas", "r-hall", "GasValve", "p-valve"),
    ("oxygen", "Oxygen Valve", "r-surgery", "GasValve", "p-valve"),
    ("gate", "Yard Gate", "r-yard", "GarageDoor", "p-garage"),
    ("gate-light", "Yard Gate Light", "r-yard", "Light", "p-switch"),
    ("lane-lamp", "Lane Lamp", "r-lane", "Light", "p-switch"),
]


@pytest.fixture(scope="module")
def bookshop(tmp_path_factory, embedder):
    return no_lm(tmp_path_factory.mktemp("bookshop"), BOOKSHOP_DEVICES,
                 {**SPECS, "p-garage": GARAGE, "p-siren": SIREN}, BOOKSHOP_ROOMS, embedder)


@pytest.mark.parametrize(("query", "device", "command"), [
    ("open the shop door, there's a queue for the signing", "danalock", "main-lock-unlock"),  # no Open Sign
    ("turn on the open sign", "sign", "main-switch-on"),
    ("switch the shop alarm off, I'm opening up", "panel", "main-securitySystem-disarm"),  # arriving: the panel
    ("silence the siren in the hall", "siren", "main-alarm-off"),  # the hall is the Hallway
    ("turn the gas back on, the engineer has finished", "gas", "main-valve-open"),  # no Oxygen Valve
    ("turn the oxygen on for the next patient", "oxygen", "main-valve-open"),
])
def test_what_a_word_refers_to_is_what_it_says_not_a_label_that_holds_it(bookshop, query, device, command):
    top = bookshop(query=query).candidates[0]
    assert (top.device_id, top.command_id) == (device, command)


def test_the_alarm_said_alone_stays_a_question_of_which(bookshop):
    assert not acted_on(bookshop(query="turn off the alarm")) & {("panel", "main-securitySystem-disarm"),
                                                                  ("siren", "main-alarm-off")}


def test_someone_waiting_at_a_gate_is_never_let_in_by_the_front_door(bookshop):
    assert ("danalock", "main-lock-unlock") not in acted_on(
        bookshop(query="there's a harvester at the gate, let him through"))


def test_a_gas_bottle_turned_on_is_the_gas(tmp_path, embedder):
    rooms = {"r-kitchen": "Kitchen"}
    devices = [("bottle", "Gas Bottle Valve", "r-kitchen", "GasValve", "p-valve"),
               ("lamp", "Light over the Range", "r-kitchen", "Light", "p-switch")]
    top = no_lm(tmp_path, devices, SPECS, rooms, embedder)(query="turn the gas bottles on").candidates[0]
    assert (top.device_id, top.command_id) == ("bottle", "main-valve-open")


def test_what_keeps_sounding_out_back_is_the_siren_and_the_lamp_above_a_shutter_opens_no_shutter(tmp_path, embedder):
    rooms = {"r-hall": "大堂", "r-lane": "后巷"}
    devices = [("kaadas", "凯迪仕", "r-hall", "Lock", "p-lock", "凯迪仕 K20"),
               ("shutter", "卷帘门", "r-hall", "GarageDoor", "p-garage"),
               ("shutter-lamp", "卷帘门灯", "r-hall", "Light", "p-switch"),
               ("siren", "警笛", "r-lane", "Siren", "p-siren"), ("lane-lamp", "后巷灯", "r-lane", "Light", "p-switch")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE, "p-siren": SIREN}, rooms, embedder)
    top = program(query="后巷那个一直叫的东西，让它停下").candidates[0]
    assert (top.device_id, top.command_id) == ("siren", "main-alarm-off")
    assert ("shutter", "main-garageDoorControl-open") not in acted_on(program(query="卷帘门别动，把它上面的灯打开"))
    # a door said bare is one people walk through: the lock, not the roller shutter beside it
    assert acted_on(program(query="把大门打开，客人在外面等位")) == {("kaadas", "main-lock-unlock")}


def test_a_store_room_opened_opens_its_door_and_a_room_below_its_hatch(tmp_path, embedder):
    rooms = {"r-cold": "冻库", "r-pharmacy": "药房", "r-stock": "Stockroom", "r-cellar": "Cellar"}
    devices = [("cold-door", "冻库门", "r-cold", "Lock", "p-lock"),
               ("cold-lamp", "冻库灯", "r-cold", "Light", "p-switch"),
               ("cabinet", "药柜", "r-pharmacy", "Lock", "p-lock"),
               ("pharmacy-lamp", "药房灯", "r-pharmacy", "Light", "p-switch"),
               ("hatch", "Cellar Hatch", "r-stock", "Door", "p-door"),
               ("cellar-light", "Cellar Light", "r-cellar", "Light", "p-switch"),
               ("stopcock", "Stopcock", "r-cellar", "WaterValve", "p-valve"),
               ("case", "Window Case", "r-stock", "Lock", "p-lock")]
    rooms["r-window"] = "Window"
    devices.append(("window-blind", "Window Blind", "r-window", "Blind", "p-shade"))
    program = no_lm(tmp_path, devices, {**SPECS, "p-door": DOOR}, rooms, embedder)
    assert ("case", "main-lock-unlock") not in acted_on(program(query="open up the window"))  # a case is no door
    top = program(query="冷库开一下").candidates[0]  # 冷库 is the 冻库: a store is opened by its door
    assert (top.device_id, top.command_id) == ("cold-door", "main-lock-unlock")
    assert not acted_on(program(query="打开药房")) & {("cabinet", "main-lock-unlock")}  # its lights, no cabinet
    top = program(query="open the cellar, the brewery delivery is here").candidates[0]
    assert (top.device_id, top.command_id) == ("hatch", "main-doorControl-open")  # never the stopcock down there


def test_watering_opens_a_valve_that_waters_never_the_main(tmp_path, embedder):
    rooms = {"r-pump": "Pump House", "r-vines": "Vineyard"}
    devices = [("main", "Water Main", "r-pump", "WaterValve", "p-valve"),
               ("irrigation", "Irrigation Valve", "r-vines", "WaterValve", "p-valve")]
    program = no_lm(tmp_path, devices, SPECS, rooms, embedder)
    top = program(query="water the vines please, it's been dry all week").candidates[0]
    assert (top.device_id, top.command_id) == ("irrigation", "main-valve-open")  # "water" of Water Main says nothing
    top = program(query="turn the water main back on").candidates[0]
    assert (top.device_id, top.command_id) == ("main", "main-valve-open")


def test_a_gate_opened_for_a_vehicle_is_the_vehicle_gate_and_one_waited_at_is_the_one_called_so(tmp_path, embedder):
    rooms = {"r-yard": "Yard", "r-road": "Road"}
    devices = [("entry", "Entry Gate", "r-yard", "GarageDoor", "p-garage"),
               ("keypad", "Keypad Gate", "r-yard", "Lock", "p-lock"),
               ("road", "Road Barrier", "r-road", "GarageDoor", "p-garage")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)
    pred = program(query="the milk tanker is out at the road, let him through")
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("road", "main-garageDoorControl-open")
    assert ("keypad", "main-lock-unlock") not in {(c.device_id, c.command_id)
                                                  for c in program(query="open the gate for the van").candidates}


def test_a_roller_shutter_said_is_no_gate_and_a_place_that_is_not_this_home_asks_for_nothing(tmp_path, embedder):
    rooms = {"r-hall": "大堂", "r-gatehouse": "门楼", "r-booth": "包间"}
    devices = [("shutter", "卷闸门", "r-hall", "GarageDoor", "p-garage"),
               ("shutter-lamp", "卷闸门上的灯", "r-hall", "Light", "p-switch"),
               ("gate", "院门", "r-gatehouse", "GarageDoor", "p-garage"),
               ("gate-lamp", "门楼灯", "r-gatehouse", "Light", "p-switch"),
               ("booth-lamp", "包间灯", "r-booth", "Light", "p-switch")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)
    for query in ("开卷闸门灯", "卷闸门口的灯开一下"):  # the light at the shutter, 门灯 read whole no more
        assert not {device for device, _ in acted_on(program(query=query))} & {"shutter", "gate"}
    # 门楼 is a gatehouse, no door said; a roller shutter is not the gate opener that stands there
    assert ("gate", "main-garageDoorControl-open") not in acted_on(program(query="门楼的卷闸打开，灯也开"))
    top = program(query="卷闸拉起来").candidates[0]
    assert (top.device_id, top.command_id) == ("shutter", "main-garageDoorControl-open")
    # another premises, or a place in Latin letters the home lacks: asked about, nothing acted on
    for query in ("隔壁的卷闸打开", "二号店的卷闸拉起来", "KTV的灯打开", "仓库卷闸打开"):
        pred = program(query=query)
        assert not acted_on(pred) and pred.hint == "unknown_scope", query
    assert acted_on(program(query="包厢的灯打开")) == {("booth-lamp", "main-switch-on")}  # 包厢 is the 包间


def test_a_stove_a_shutter_and_a_gate_by_the_words_shops_use_and_a_cottage_by_its_own_name(tmp_path, embedder):
    rooms = {"r-kitchen": "厨房", "r-front": "店面", "r-yard": "院子", "r-heron": "Heron Cottage",
             "r-wren": "Wren Cottage", "r-lodge": "Gate Lodge", "r-living": "Living Room"}
    devices = [("stove", "燃气灶", "r-kitchen", "Cooktop", "p-switch"),
               ("shutter", "卷闸门", "r-front", "GarageDoor", "p-garage"),
               ("gate", "院门", "r-yard", "GarageDoor", "p-garage"),
               ("wicket", "小铁门", "r-yard", "Lock", "p-lock"),
               ("heron-oven", "Heron Oven", "r-heron", "Oven", "p-oven"),
               ("wren-oven", "Wren Oven", "r-wren", "Oven", "p-oven"),
               ("heron-safe", "Heron Key Safe", "r-heron", "Lock", "p-lock"),
               ("wren-safe", "Wren Key Safe", "r-wren", "Lock", "p-lock"),
               ("lodge-lamp", "Lodge Lamp", "r-lodge", "Light", "p-switch"),
               ("wren-lounge", "Wren Lounge Light", "r-wren", "Light", "p-switch"),
               ("living-lights", "Living Room Lights", "r-living", "Light", "p-switch"),
               ("heron-door", "Heron Door", "r-heron", "Lock", "p-lock"),
               ("wren-door", "Wren Door", "r-wren", "Lock", "p-lock")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)
    for query, device, command in [("把炉子打开，烧个水", "stove", "main-switch-on"),
                                   ("卷匝门打开", "shutter", "main-garageDoorControl-open"),  # 匝 misheard for 闸
                                   ("外面那个铁帘子拉起来", "shutter", "main-garageDoorControl-open"),
                                   ("把院子的电动门打开", "gate", "main-garageDoorControl-open"),  # a motor: no lock
                                   ("turn on the oven in heron, the guests asked", "heron-oven", "main-switch-on"),
                                   ("open the key safe at Wren", "wren-safe", "main-lock-unlock")]:
        top = program(query=query).candidates[0]
        assert (top.device_id, top.command_id) == (device, command), query
    assert not acted_on(program(query="open the key safe"))  # which cottage's?
    # a label said whole keeps to its room, though a word of it names another ("lounge": the Living Room)
    assert acted_on(program(query="switch off the wren lounge light")) == {("wren-lounge", "main-switch-off")}
    assert acted_on(program(query="lock the heron cottage door")) <= {("heron-door", "main-lock-lock")}
    # "gate" is a word for a kind, never the Gate Lodge's own name
    assert ("lodge-lamp", "main-switch-on") not in acted_on(program(query="open the gate"))


def test_a_door_called_by_the_end_of_its_label_and_a_door_said_where_it_is(tmp_path, embedder):
    rooms = {"r-bay": "Loading Bay", "r-keg": "Keg Store", "r-vault": "Vault"}
    devices = [("bay-door", "Loading Bay Door", "r-bay", "GarageDoor", "p-garage"),
               ("bay-lamp", "Bay Door Lamp", "r-bay", "Light", "p-switch"),
               ("vault-lamp", "Vault Door Lamp", "r-vault", "Light", "p-switch"),
               ("keg-door", "Keg Store Door", "r-keg", "GarageDoor", "p-garage"),
               ("keg-lights", "Keg Store Lights", "r-keg", "Light", "p-switch")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)
    # "bay door" ends the Loading Bay Door's label (its name without its room is the door alone) and only
    # qualifies the lamp's: the door is raised, no lamp dimmed
    for query in ("raise the bay door", "open the bay door"):
        top = program(query=query).candidates[0]
        assert (top.device_id, top.command_id) == ("bay-door", "main-garageDoorControl-open"), query
    assert acted_on(program(query="bay door lamp on")) == {("bay-lamp", "main-switch-on")}
    # "on the keg store" says where the door is: "get ... up" raises it, it switches nothing on
    top = program(query="get the roller door on the keg store up").candidates[0]
    assert (top.device_id, top.command_id) == ("keg-door", "main-garageDoorControl-open")
    assert acted_on(program(query="turn on the keg store lights")) == {("keg-lights", "main-switch-on")}


def test_a_cooker_beside_an_oven_and_a_hob_is_asked_about_and_its_hood_is_a_fan(tmp_path, embedder):
    rooms = {"r-kitchen": "Kitchen", "r-counter": "Counter"}
    devices = [("oven", "Oven", "r-kitchen", "Oven", "p-oven"),
               ("hob", "Gas Hob", "r-kitchen", "Cooktop", "p-switch"),
               ("hood", "Kitchen Extractor", "r-kitchen", "Fan", "p-switch"),
               ("lights", "Kitchen Lights", "r-kitchen", "Light", "p-switch")]
    program = no_lm(tmp_path, devices, SPECS, rooms, embedder)
    for query in ("put the cooker on", "cooker on"):  # an oven and a hob in one word: which one?
        pred = program(query=query)
        assert not acted_on(pred) and pred.hint == "withheld", query
    assert acted_on(program(query="turn on the cooker hood")) == {("hood", "main-switch-on")}
    alone = no_lm(tmp_path / "alone", devices[:1] + devices[2:], SPECS, rooms, embedder)
    top = alone(query="put the cooker on").candidates[0]  # the one cooker there is
    assert (top.device_id, top.command_id) == ("oven", "main-switch-on")


def test_a_word_said_for_a_label_word_names_its_device_and_a_side_never_another_side(tmp_path, embedder):
    rooms = {"r-lobby": "Lobby", "r-hall": "Hall"}
    devices = [("package", "Package Locker", "r-lobby", "Lock", "p-lock"),
               ("cold", "Cold Locker", "r-lobby", "Lock", "p-lock"),
               ("shelf", "Parcel Shelf Light", "r-lobby", "Light", "p-switch"),
               ("front", "Front Door", "r-hall", "Lock", "p-lock"),
               ("garden", "Garden Door", "r-hall", "Lock", "p-lock")]
    program = no_lm(tmp_path, devices, SPECS, rooms, embedder)
    top = program(query="open the parcel locker").candidates[0]  # parcel / package: the embedder's near synonyms
    assert (top.device_id, top.command_id) == ("package", "main-lock-unlock")
    assert not acted_on(program(query="open the fridge locker")) & {("package", "main-lock-unlock"),
                                                                     ("cold", "main-lock-unlock")}
    # "rear" is near "front" for the embedder, and a side said is never another side
    assert ("front", "main-lock-unlock") not in acted_on(program(query="unlock the rear door"))


def test_water_sprayed_opens_a_valve_and_a_van_let_into_the_yard_comes_through_its_gate(tmp_path, embedder):
    rooms = {"r-shed": "大棚", "r-yard": "Back Yard"}
    devices = [("spray", "喷淋阀", "r-shed", "WaterValve", "p-valve"),
               ("shed-lamp", "大棚灯", "r-shed", "Light", "p-switch"),
               ("gate", "Delivery Gate", "r-yard", "GarageDoor", "p-garage"),
               ("bin-gate", "Bin Gate", "r-yard", "Lock", "p-lock")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)
    top = program(query="给大棚喷点水").candidates[0]  # water sprayed: the valve opens, it never closes
    assert (top.device_id, top.command_id) == ("spray", "main-valve-open")
    top = program(query="let the van into the yard").candidates[0]  # a vehicle: the gate opener, not the bin gate
    assert (top.device_id, top.command_id) == ("gate", "main-garageDoorControl-open")
    top = program(query="let me into the yard").candidates[0]  # on foot: the pedestrian gate's lock
    assert (top.device_id, top.command_id) == ("bin-gate", "main-lock-unlock")


def test_a_vehicle_let_in_is_let_through_no_persons_door_and_a_door_said_at_the_back_is_no_way_in(tmp_path, embedder):
    rooms = {"r-reception": "Reception", "r-yard": "Yard", "r-kitchen": "Kitchen"}
    devices = [("ultion", "Ultion", "r-reception", "Lock", "p-lock", "Ultion Nuki Smart Door Lock"),
               ("car-gate", "Car Park Gate", "r-yard", "GarageDoor", "p-garage"),
               ("foot-gate", "Footpath Gate", "r-yard", "Lock", "p-lock"),
               ("house", "House Door", "r-kitchen", "Lock", "p-lock"),
               ("back-gate", "Back Gate", "r-yard", "Lock", "p-lock")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)
    for query in ("the van's at the barrier, let it in", "the delivery van is at the gate, let it through"):
        pred = program(query=query)  # "it" is the van: no person's door is unlocked for it
        assert not acted_on(pred) & {("ultion", "main-lock-unlock"), ("foot-gate", "main-lock-unlock")}, query
    top = program(query="let the van into the yard").candidates[0]
    assert (top.device_id, top.command_id) == ("car-gate", "main-garageDoorControl-open")
    # "the door at the back" says which door as "the back door" does: never the way in
    assert ("ultion", "main-lock-unlock") not in acted_on(program(query="unlock the door at the back"))


def test_a_siren_nicknamed_for_a_speaker_is_still_the_siren(tmp_path, embedder):
    rooms = {"r-yard": "院子", "r-hall": "大厅"}
    devices = [("horn", "大喇叭", "r-yard", "Siren", "p-siren"),
               ("panel", "门神", "r-hall", "SecurityPanel", "p-panel"),
               ("yard-lamp", "院子灯", "r-yard", "Light", "p-switch")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-siren": SIREN}, rooms, embedder)
    top = program(query="把警笛关掉").candidates[0]  # the one siren: its name says speaker, no speaker is sensitive
    assert (top.device_id, top.command_id) == ("horn", "main-alarm-off")


def test_the_front_door_beside_a_front_shutter_is_the_lock_people_walk_through(
        tmp_path, embedder):
    rooms = {"r-shop": "Shop", "r-yard": "Yard"}
    devices = [("eufy", "Eufy", "r-shop", "Lock", "p-lock", "Eufy Smart Lock Touch"),
               ("shutter", "Front Shutter", "r-shop", "GarageDoor", "p-garage"),
               ("van-gate", "Van Gate", "r-yard", "GarageDoor", "p-garage"),
               ("back-gate", "Back Gate", "r-yard", "Lock", "p-lock")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)
    for query, device, command in [("unlock the front door", "eufy", "main-lock-unlock"),
                                   ("open the front shutter", "shutter", "main-garageDoorControl-open"),
                                   ("open the big gate", "van-gate", "main-garageDoorControl-open")]:
        top = program(query=query).candidates[0]
        assert (top.device_id, top.command_id) == (device, command), query


def test_a_sensitive_device_in_a_plan_or_a_report_leaves_the_ask_beside_it_answered(tmp_path, embedder):
    rooms = {"r-counter": "Counter", "r-plant": "Plant Room", "r-machine": "设备间"}
    devices = [("safe", "Coin Safe", "r-counter", "Lock", "p-lock"),
               ("lamp", "Counter Lamp", "r-counter", "Light", "p-switch"),
               ("main", "Water Main", "r-plant", "WaterValve", "p-valve"),
               ("plant-light", "Plant Room Light", "r-plant", "Light", "p-switch"),
               ("valve", "燃气总阀", "r-machine", "GasValve", "p-valve"),
               ("machine-light", "设备间灯", "r-machine", "Light", "p-switch")]
    program = no_lm(tmp_path, devices, SPECS, rooms, embedder)
    for query, device in [("before I open the coin safe, turn the counter lamp on", "lamp"),  # a plan: no ask
                          ("the water main's in the plant room, light on in there please", "plant-light"),
                          ("设备间的灯开一下，我去看看总阀", "machine-light")]:  # where the speaker goes: no valve
        pred = program(query=query)
        assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == (device, "main-switch-on"), query
        assert not {d for d, _ in acted_on(pred)} & {"safe", "main", "valve"}, query


def test_a_room_the_home_lacks_said_as_a_room_or_by_its_number_is_asked_about(tmp_path, embedder):
    rooms = {"r-5": "Year 5", "r-6": "Year 6", "r-hall": "Hall", "r-lockup": "Lock-up"}
    devices = [("blinds-5", "Year 5 Blinds", "r-5", "Blind", "p-shade"),
               ("blinds-6", "Year 6 Blinds", "r-6", "Blind", "p-shade"),
               ("hall-blinds", "Hall Blinds", "r-hall", "Blind", "p-shade"),
               ("hall-lights", "Hall Lights", "r-hall", "Light", "p-switch"),
               ("lockup-light", "Lock-up Light", "r-lockup", "Light", "p-switch")]
    program = no_lm(tmp_path, devices, SPECS, rooms, embedder)
    for query in ("close the blinds in year 3", "lights on in the valeting room", "lights off in the spare rooms"):
        pred = program(query=query)  # no such class or room here: never every blind or light of the home
        assert not acted_on(pred) and pred.hint == "unknown_scope", query
    assert acted_on(program(query="close the blinds in year 5")) == {("blinds-5", "main-windowShade-close")}
    assert ("lockup-light", "main-switch-on") in acted_on(program(query="lights on in the lock-up"))


def test_a_word_for_what_a_safe_is_inside_a_lamps_label_is_the_safe(tmp_path, embedder):
    rooms = {"r-shop": "店面", "r-hall": "大堂", "r-cash": "收银区"}
    devices = [("safe", "小金库", "r-shop", "Lock", "p-lock", "得力 智能保险柜 16675"),
               ("lamp", "保险柜台灯", "r-shop", "Light", "p-switch"),
               ("spot", "收银灯", "r-cash", "Light", "p-switch")]
    program = no_lm(tmp_path / "a", devices, SPECS, rooms, embedder)
    top = program(query="保险柜打开，要拿备用金").candidates[0]  # 保险柜 said alone: the safe, not the lamp by it
    assert (top.device_id, top.command_id) == ("safe", "main-lock-unlock")
    top = program(query="保险柜台灯打开").candidates[0]  # the lamp, said as such
    assert (top.device_id, top.command_id) == ("lamp", "main-switch-on")
    devices = [("box", "保险箱", "r-cash", "Lock", "p-lock"), ("spot", "保险箱射灯", "r-cash", "Light", "p-switch")]
    pred = no_lm(tmp_path / "b", devices, SPECS, rooms, embedder)(query="把照着保险箱的灯打开")
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("spot", "main-switch-on")


def test_a_hall_is_no_front_door_and_a_cash_box_at_the_front_desk_no_way_in(tmp_path, embedder):
    rooms = {"r-hall": "大厅", "r-desk": "前台", "r-stairs": "楼梯口"}
    devices = [("dessmann", "德施曼", "r-hall", "Lock", "p-lock", "德施曼 Q5M 智能锁"),
               ("sensor-door", "感应门", "r-hall", "Door", "p-door"),
               ("cash", "钱箱", "r-desk", "Lock", "p-lock", "得力 智能保险箱 16688"),
               ("lamp", "钱箱灯", "r-desk", "Light", "p-switch")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-door": DOOR}, rooms, embedder)
    for query in ("前门开锁", "开一下前门，今天十点营业"):  # the brand lock in the hall is the way in
        top = program(query=query).candidates[0]
        assert (top.device_id, top.command_id) == ("dessmann", "main-lock-unlock"), query
    # a character picked for its sound, as a fuzzy input method hears it (因 yin for 应 ying)
    top = program(query="感因门打开").candidates[0]
    assert (top.device_id, top.command_id) == ("sensor-door", "main-doorControl-open")


def test_a_supply_said_before_a_main_valve_is_that_supply_only(tmp_path, embedder):
    rooms = {"r-plant": "设备间"}
    devices = [("gas-main", "天然气总阀", "r-plant", "GasValve", "p-valve"),
               ("water-in", "进水阀", "r-plant", "WaterValve", "p-valve")]
    program = no_lm(tmp_path, devices, SPECS, rooms, embedder)
    pred = program(query="把自来水总阀打开")  # tap water's main: never the gas main, whose label says 总阀
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("water-in", "main-valve-open")
    assert "gas-main" not in {d for d, _ in acted_on(pred)}


def test_a_noun_made_with_off_is_no_verb_and_a_cages_lock_is_none_of_the_doors(tmp_path, embedder):
    rooms = {"r-store": "Store", "r-cage": "Propane Cage", "r-office": "Office", "r-apartment": "Apartment"}
    devices = [("deputy", "Deputy", "r-store", "SecurityPanel", "p-panel"),
               ("schlage", "Schlage", "r-store", "Lock", "p-lock", "Schlage Encode Smart Deadbolt"),
               ("cage", "Cage Lock", "r-cage", "Lock", "p-lock"),
               ("office", "Office Door", "r-office", "Lock", "p-lock"),
               ("apartment", "Apartment Door", "r-apartment", "Lock", "p-lock")]
    program = no_lm(tmp_path, devices, SPECS, rooms, embedder)
    # a report of the morning's drive-off: its "off" disarms nothing
    assert ("deputy", "main-securitySystem-disarm") not in acted_on(
        program(query="the deputy came by about the drive-off this morning"))
    acted = acted_on(program(query="unlock all the doors except the office"))  # a cage's lock is none of the doors
    assert ("cage", "main-lock-unlock") not in acted and ("office", "main-lock-unlock") not in acted
    top = program(query="let me into the propane cage").candidates[0]  # and still the way into the cage
    assert (top.device_id, top.command_id) == ("cage", "main-lock-unlock")
    # "the one into the apartment" says which door the clause before it means
    top = program(query="open our door, the one into the apartment, it's stuck locked again").candidates[0]
    assert (top.device_id, top.command_id) == ("apartment", "main-lock-unlock")


def test_a_door_said_to_go_up_is_the_door_that_rolls_up_never_the_front_doors_lock(tmp_path, embedder):
    rooms = {"r-shop": "Shop", "r-bay": "Loading Bay"}
    devices = [("front", "Front Door", "r-shop", "Lock", "p-lock"),
               ("loading", "Loading Door", "r-bay", "GarageDoor", "p-garage")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-garage": GARAGE}, rooms, embedder)
    for query in ("the van's backing onto the loading bay, get the door up", "get the door up"):
        top = program(query=query).candidates[0]
        assert (top.device_id, top.command_id) == ("loading", "main-garageDoorControl-open"), query


def test_a_room_called_as_an_appliance_is_the_appliance_when_only_an_appliance_is_so_done(tmp_path, embedder):
    rooms = {"r-rehearsal": "The Oven", "r-kitchen": "Flat Kitchen"}
    devices = [("oven", "Oven", "r-kitchen", "Oven", "p-oven"),
               ("hob", "Hob", "r-kitchen", "Cooktop", "p-switch", "Bosch Induction Hob"),
               ("room-lights", "Oven Lights", "r-rehearsal", "Light", "p-switch"),
               ("room-fan", "Oven Fan", "r-rehearsal", "Fan", "p-switch")]
    program = no_lm(tmp_path, devices, SPECS, rooms, embedder)
    top = program(query="preheat the oven").candidates[0]  # a room is never preheated: the Oven
    assert top.device_id == "oven"
    top = program(query="turn on the lights in the oven").candidates[0]  # the lights of the room so called
    assert (top.device_id, top.command_id) == ("room-lights", "main-switch-on")
    top = program(query="switch on the induction").candidates[0]  # "the induction" is the hob
    assert (top.device_id, top.command_id) == ("hob", "main-switch-on")


def test_a_cabinet_said_by_its_last_character_and_a_powered_gate_in_the_one_yard(tmp_path, embedder):
    rooms = {"r-bar": "吧台", "r-hall": "大厅", "r-yard": "后院"}
    devices = [("till", "收银柜", "r-bar", "Lock", "p-lock", "Aqara Cabinet Lock"),
               ("bar-lamp", "吧台灯", "r-bar", "Light", "p-switch"),
               ("auto", "自动门", "r-hall", "Door", "p-door"),
               ("gate", "伸缩门", "r-yard", "GarageDoor", "p-garage"),
               ("yard-lamp", "后院灯", "r-yard", "Light", "p-switch")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-door": DOOR, "p-garage": GARAGE}, rooms, embedder)
    for query in ("把钱柜打开", "吧台放钱的那个柜子，把它打开"):  # the one cabinet lock
        top = program(query=query).candidates[0]
        assert (top.device_id, top.command_id) == ("till", "main-lock-unlock"), query
    # 电动门 holds 动门 and names no 自动门; 院子 is the one yard, 后院
    top = program(query="把院子的电动门打开").candidates[0]
    assert (top.device_id, top.command_id) == ("gate", "main-garageDoorControl-open")


FAN_SPEED = [{"id": "main-switch-on", "description": "turn on", "type": None, "value_range": None},
             {"id": "main-fanSpeed-setFanSpeed", "description": "set the fan speed", "type": "integer",
              "value_range": [0, 4]}]
SHADE_LEVEL = [{"id": "main-windowShadeLevel-setShadeLevel", "description": "set the shade level", "type": "integer",
                "value_range": [0, 100]}]
LEVEL = [{"id": "main-switch-off", "description": "turn off", "type": None, "value_range": None},
         {"id": "main-switchLevel-setLevel", "description": "set the brightness", "type": "integer",
          "value_range": [0, 100]}]


def test_the_one_device_said_is_the_one_acted_on_never_every_device_of_its_kind(tmp_path, embedder):
    rooms = {"r-kitchen": "Kitchen", "r-deli": "Deli", "r-shop": "Shop", "r-cd": "CD Room"}
    devices = [("oven", "Oven", "r-kitchen", "Oven", "p-oven"),
               ("deli-oven", "Deli Oven", "r-deli", "Oven", "p-oven"),
               ("shop-lights", "Shop Lights", "r-shop", "Light", "p-level"),
               ("cd-light", "CD Cabinet Light", "r-cd", "Light", "p-level")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-level": LEVEL}, rooms, embedder)
    for query, device, command in [("oven off", "oven", "main-switch-off"),
                                   ("cabinet light to 1e2%", "cd-light", "main-switchLevel-setLevel")]:
        pred = program(query=query)  # the Oven by its whole label; the light by more of its name than "light"
        assert acted_on(pred) == {(device, command)}, query
    assert len(acted_on(program(query="turn off the lights"))) == 2  # the lights: each of them


def test_a_fans_step_said_sets_its_speed_never_a_curtains_position(tmp_path, embedder):
    rooms = {"r-kitchen": "后厨", "r-living": "客厅"}
    devices = [("hood", "排烟机", "r-kitchen", "Fan", "p-fan"),
               ("curtain", "客厅窗帘", "r-living", "Blind", "p-shade-level")]
    program = no_lm(tmp_path, devices, {**SPECS, "p-fan": FAN_SPEED, "p-shade-level": SHADE_LEVEL}, rooms, embedder)
    pred = program(query="排烟机开到二档")  # 开到 a step (档): the fan's speed 2
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("hood", "main-fanSpeed-setFanSpeed")
    assert "curtain" not in {d for d, _ in acted_on(pred)}


def test_a_floor_said_only_inside_a_label_names_the_device_not_the_floor(tmp_path, embedder):
    rooms = {"r-stairs": "Stairwell", "r-kitchen": "Flat Kitchen", "r-bedroom": "Bedroom"}
    devices = [("upstairs", "Upstairs Door", "r-stairs", "Lock", "p-lock"),
               ("kitchen-light", "Kitchen Lights", "r-kitchen", "Light", "p-switch"),
               ("bedroom-light", "Bedroom Light", "r-bedroom", "Light", "p-switch")]
    directory = write_home(tmp_path, devices, SPECS, rooms)
    floors = {"Stairwell": "Ground Floor", "Flat Kitchen": "First Floor", "Bedroom": "First Floor"}
    payload = json.loads((directory / "rooms.json").read_text(encoding="utf-8"))
    for item in payload["items"]:
        item["floor"] = floors[item["name"]]
    (directory / "rooms.json").write_text(json.dumps(payload), encoding="utf-8")
    program = CommandRetrieval(CommandIndex(Home.load(directory), embedder), ir_source="none")
    # the Upstairs Door stands in the ground-floor stairwell: its name's "upstairs" is no floor said
    top = program(query="unlock the upstairs door, my mum's coming up to the flat").candidates[0]
    assert (top.device_id, top.command_id) == ("upstairs", "main-lock-unlock")
    assert {d for d, _ in acted_on(program(query="turn on the lights upstairs"))} == {"kitchen-light", "bedroom-light"}
