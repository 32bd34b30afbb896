"""Referents in a small apartment building and a potter's house (no LM): a gate opener the home files as a
garage door, a door said to be of a flat the home does not have, a kiln beside the Kiln Shed, an exception that
is a room.

Each test is an ordinary or impossible request that reaches nothing sensitive, or a clear ask that gets what it
asks for and nothing else.
"""

from __future__ import annotations

import pytest
from conftest import ON_OFF_SPECS as SPECS
from conftest import write_home

from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex
from tracerag.signatures.query_ir import QueryIR

ROOMS = {"r-street": "Street", "r-lobby": "Lobby", "r-flat": "Manager's Flat", "r-studio": "Studio",
         "r-kiln": "Kiln Shed", "r-mud": "Mud Room", "r-hall": "Hall", "r-boiler": "Boiler Room",
         "r-porch": "Front Porch"}
DEVICES = [
    ("street-gate", "Street Gate", "r-street", "GarageDoor", "p-gate"),  # a gate opener, filed as a garage door
    ("gate-light", "Gate Light", "r-street", "Light", "p-switch"),
    ("lobby-door", "Lobby Door", "r-lobby", "Lock", "p-lock"),
    ("lobby-shades", "Lobby Shades", "r-lobby", "Blind", "p-blind"),
    ("flat-door", "Manager's Door", "r-flat", "Lock", "p-lock"),
    ("kiln", "Kiln", "r-studio", "Oven", "p-switch"),
    ("studio-light", "Studio Light", "r-studio", "Light", "p-switch"),
    ("kiln-shed-door", "Kiln Shed Door", "r-kiln", "Lock", "p-lock"),
    ("front-door", "Front Door", "r-porch", "Lock", "p-lock"),
    # locks known by their maker's name: one a door's, one a key cabinet's
    ("mud-lock", "Kevo 99250", "r-mud", "Lock", "p-lock", "Kwikset Kevo 99250 Touch-to-Open Smart Lock"),
    ("key-cabinet", "KC-300", "r-mud", "Lock", "p-lock", "Keyless.Co KC-300 Smart Key Cabinet"),
    ("boot-dryer", "Boot Dryer", "r-mud", "SmartPlug", "p-switch"),
    ("sprinkler", "Sprinkler", "r-street", "WaterValve", "p-valve"),
    ("panel", "Concierge", "r-lobby", "SecurityPanel", "p-panel"),
    ("boiler", "Communal Boiler", "r-boiler", "WaterHeater", "p-switch"),
    ("boiler-door", "Boiler Room Door", "r-boiler", "Lock", "p-lock"),
    ("porch-lantern", "Porch Lantern", "r-porch", "Light", "p-switch"),
]
SENSITIVE = {"main-lock-unlock", "main-garageDoorControl-open", "main-switch-on", "main-valve-open",
             "main-securitySystem-disarm"}


@pytest.fixture(scope="module")
def index(tmp_path_factory, embedder):
    return CommandIndex(Home.load(write_home(tmp_path_factory.mktemp("building"), DEVICES, SPECS, ROOMS)), embedder)


@pytest.fixture(scope="module")
def program(index):
    return CommandRetrieval(index, ir_source="none")


@pytest.fixture(scope="module")
def given_parse(index):
    """The program answering with a parse given (what an LM, careful or not, could return)."""
    return CommandRetrieval(index, ir_source="gold")


def sensitive_offered(pred) -> set[tuple[str, str]]:
    """The sensitive (device, command) pairs the answer offers as asked for, or plans."""
    found = {(c.device_id, c.command_id) for c in pred.candidates if c.asked}
    found |= set(pred.bulk.targets) if pred.bulk is not None else set()
    return {(d, c) for d, c in found if c in SENSITIVE and not (c == "main-switch-on" and d != "kiln")}


@pytest.mark.parametrize("query", [
    "open the garage door for the van",  # the home has no garage door: its gate opener is a gate
    "unlock the door of flat 3B",  # a flat the home does not have: never the way in
    "open the kiln",  # in English, its lid or door: no kiln is switched on
])
def test_what_the_home_does_not_have_or_did_not_ask_reaches_nothing_sensitive(program, query):
    assert sensitive_offered(program(query=query)) == set()


@pytest.mark.parametrize("query", ["open the garage door for the van", "unlock the door of flat 3B", "open the kiln"])
def test_a_parse_cannot_make_it_sensitive(given_parse, query):
    # the words decide what is asked: a parse aiming at a sensitive command is overruled
    parses = [QueryIR(operation="open", type_hint="GarageDoor", name_hint="Street Gate"),
              QueryIR(operation="unlock", type_hint="Lock", name_hint="Lobby Door"),
              QueryIR(operation="on", type_hint="Oven", name_hint="Kiln")]
    for ir in parses:
        assert sensitive_offered(given_parse(query=query, ir=ir)) == set(), ir


@pytest.mark.parametrize(("query", "pair"), [
    ("turn on the kiln", ("kiln", "main-switch-on")),
    ("open the street gate", ("street-gate", "main-garageDoorControl-open")),
    ("unlock the mud room door", ("mud-lock", "main-lock-unlock")),  # its lock, labelled by its model
    ("let me in through the mud room, my boots are filthy", ("mud-lock", "main-lock-unlock")),
    ("let her into the lobby", ("lobby-door", "main-lock-unlock")),  # let in through its door, not its shades
    ("buzz the courier in through the lobby door please", ("lobby-door", "main-lock-unlock")),
    ("dissarm the alarm pls", ("panel", "main-securitySystem-disarm")),  # a verb read through a typo
    ("sprinkler on for ten minutes", ("sprinkler", "main-valve-open")),
    ("the service tech is here, let him into the boiler room", ("boiler-door", "main-lock-unlock")),  # no boiler
    ("my sister's waiting on the porch, let her in the front", ("front-door", "main-lock-unlock")),
])
def test_a_clear_ask_gets_its_device(program, query, pair):
    assert sensitive_offered(program(query=query)) == {pair}


def test_a_room_excepted_keeps_its_door_shut(program):
    pred = program(query="unlock every door except the kiln shed")
    assert ("kiln-shed-door", "main-lock-unlock") not in sensitive_offered(pred)


@pytest.fixture(scope="module")
def valves(tmp_path_factory, embedder):
    devices = [("gas", "Boiler Gas Valve", "r-boiler", "GasValve", "p-valve"),
               ("water", "ZAC36", "r-boiler", "WaterValve", "p-valve"),
               ("hose", "Sprinkler", "r-street", "WaterValve", "p-valve"),
               ("boiler-door", "Boiler Room Door", "r-boiler", "Lock", "p-lock"),
               ("boiler-light", "Boiler Room Light", "r-boiler", "Light", "p-switch"),
               ("boiler", "Communal Boiler", "r-boiler", "WaterHeater", "p-switch")]
    return CommandIndex(Home.load(write_home(tmp_path_factory.mktemp("valves"), devices, SPECS, ROOMS)), embedder)


def test_a_kind_excepted_is_never_opened_whatever_the_parse_excepts(valves, fake_lm):
    query = "open all the valves but the gas one"
    assert ("gas", "main-valve-open") not in sensitive_offered(CommandRetrieval(valves, ir_source="none")(query=query))
    fake_lm(irs={query: {"operation": "open", "action": "打开", "type_hint": "WaterValve", "name_hint": "valves",
                         "scope_exclude": ["Boiler Gas Valve"], "quantifier": "except"}})
    assert ("gas", "main-valve-open") not in sensitive_offered(CommandRetrieval(valves)(query=query))


def test_an_lm_operation_that_does_what_the_words_ask_stands(valves, fake_lm):
    # the rules read "on" (a boiler, a light); a careful LM reads the unlock the words ask of the room's door
    query = "the service tech is here, let him into the boiler room"
    fake_lm(irs={query: {"operation": "unlock", "action": "开锁", "type_hint": "Lock", "name_hint": "",
                         "scope_include": ["Boiler Room"], "quantifier": "one"}})
    pred = CommandRetrieval(valves)(query=query)
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("boiler-door", "main-lock-unlock")
