"""The operation an utterance asks for, read from the words people say (the crowd-sourced phrasings of
HWU64-like requests, written anew here), and what it does on devices that lack the obvious command.

No LM: a robot cleaner with no switch is started by "turn on the vacuum", a plug is switched off by "stop
powering the socket", and "be quiet" mutes the speaker.
"""

from __future__ import annotations

import pytest
from conftest import write_home

from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex
from tracerag.home_commands.operation_words import read_operation


@pytest.mark.parametrize("text, kinds, operation", [
    ("be quiet", (), "mute"),
    ("please be silent for thirty minutes", (), "mute"),
    ("silent mode on", (), "mute"),
    ("turn off the sound", (), "mute"),
    ("turn the volume back on", (), "unmute"),
    ("please be quiet for the next two hours", (), "mute"),  # "the next two hours" is no next track
    ("next song", (), "next"),
    ("turn up the volume on my speakers", (), "volume_up"),  # "turn ... on" across "up" switches nothing
    ("slow down the speaker volume", (), "volume_down"),
    ("slow down the fan", ("Fan",), "fan_speed_down"),
    ("turn off the sound bar", (), "off"),  # a device's name, not its sound
    ("power down the plug socket", (), "off"),
    ("shut the smart socket down", (), "off"),
    ("cut the lights off", (), "off"),
    ("start cleaning", (), "start"),
    ("start the smart plug", ("SmartPlug",), "on"),
    ("stop powering the socket", ("SmartPlug",), "off"),
    ("turn the lamps in the dining room out", (), "off"),
    ("return Bob to base", ("RobotCleaner",), "return_home"),
    ("return Bob", ("RobotCleaner",), "return_home"),
    ("继续", (), "play"),
    ("上一台", (), "previous"),
    ("让小白返回基站", (), "return_home"),
    ("恢复声音", (), "unmute"),
    ("light the stove", (), "on"),
    ("unlcok the side door please", (), "unlock"),  # a typo of a sensitive verb is still that verb, never its opposite
    ("get the oven preheating", ("Oven",), "start"),
    ("buzz the courier in", ("Lock",), "unlock"),  # let in: a lock unlocks
    ("let him up onto the roof", ("Lock",), "unlock"),
    ("sprinkler on for ten minutes", ("WaterValve",), "open"),  # a duration after "on" switches it still
    ("lights on in the basement please, I'm headed down", (), "on"),
    ("报警器别响了", ("Siren",), "off"),  # a negated sound asks for silence
    ("be quiet", ("AirConditioner",), None),  # no mute on an air conditioner: its quiet mode, if it lists one
    ("light ·, we're making pizza tonight", ("Oven",), "on"),  # a fire lit in a device said by its name (masked)
    ("pop the lockbox with the keys", ("Lock",), "unlock"),  # popped open
    ("could you pop the · open", ("Lock",), "unlock"),
    ("pop the popcorn", (), None),  # no lock, door or box
    ("把集成灶整着", ("Cooktop",), "on"),  # 整着: switched on (northeastern Chinese)
    ("gas bottle on, I've just swapped it", ("GasValve",), "open"),  # a clause of a device and "on"
    ("the gas is on, I can smell it", ("GasValve",), None),  # a state said of it asks nothing
    ("take the strongroom off lock", ("Lock",), "unlock"),
    ("release the lockers, a member lost her wristband", ("Lock",), "unlock"),
    ("release the handbrake", ("Light",), None),  # only a lock is released open
    ("desbloquea the front door por favor", ("Lock",), "unlock"),  # code-switched verbs
    ("por favor abre the keg store door", ("GarageDoor",), "open"),
    ("öffne bitte the back gate for the van", ("GarageDoor",), "open"),
    ("仓库的大门拉上去，快递来收件了", ("GarageDoor",), "open"),  # pulled up, not 拉上 (drawn shut)
    ("窗帘拉上", ("Blind",), "close"),
    ("看门狗先撤了，保洁阿姨要进来", ("SecurityPanel",), "disarm"),  # a security system withdrawn by its name
    ("let the tow truck onto the forecourt", ("GarageDoor",), "open"),
    ("let the crew down onto the pontoon", ("Lock",), "unlock"),
    ("start the drip in the orchard", ("WaterValve",), "open"),  # water started runs
    ("open the house door for grandma, her hands are full of eggs", ("Door",), "open"),  # "full of" is no value
    ("open the front door, the plumber for flat 4 is outside", ("Door",), "open"),  # a flat's number is no value
    ("opn roler dor 2", ("GarageDoor",), "open"),
    ("heat the oven up for the pasties", ("Oven",), "start"),  # an oven heated up is switched on
    ("warm up the bedroom", ("AirConditioner",), "temperature_up"),
    ("厨房的煤气灶点上", ("Cooktop",), "on"),  # a fire lit
    ("给大棚喷点水", ("WaterValve",), "open"),  # water sprayed runs
    ("车位锁降下来，我要停车", ("Lock",), "unlock"),  # a parking lock lowered lets a car in
    ("车位锁升起来", ("Lock",), "lock"),
    ("get the roller door on the keg store up", ("GarageDoor",), "open"),  # "on the" says where
])
def test_reads_the_operation_people_ask_for(text, kinds, operation):
    assert read_operation(text, kinds) == operation


def test_a_bath_run_opens_no_valve():
    assert read_operation("I'm about to run the bath", ("WaterValve",)) != "open"


SPECS = {
    "p-robot": [{"id": "main-robotCleanerMovement-setRobotCleanerMovement", "description": "set the cleaner movement",
                 "type": "enum", "value_range": None, "values": ["cleaning", "homing", "idle"]}],
    "p-plug": [{"id": "main-switch-on", "description": "turn on", "type": None, "value_range": None},
               {"id": "main-switch-off", "description": "turn off", "type": None, "value_range": None}],
    "p-speaker": [{"id": "main-audioMute-mute", "description": "mute", "type": None, "value_range": None},
                  {"id": "main-audioMute-unmute", "description": "unmute", "type": None, "value_range": None},
                  {"id": "main-mediaPlayback-stop", "description": "stop", "type": None, "value_range": None}],
    "p-door": [{"id": "main-garageDoorControl-open", "description": "open", "type": None, "value_range": None},
               {"id": "main-garageDoorControl-close", "description": "close", "type": None, "value_range": None}],
}
ROOMS = {"r-living": "Living Room", "r-hall": "Hallway"}
DEVICES = [
    ("robot", "Bob", "r-living", "RobotCleaner", "p-robot"),
    ("plug", "Wemo", "r-living", "SmartPlug", "p-plug"),
    ("lamp", "Floor Lamp", "r-living", "Light", "p-plug"),
    ("speaker", "Sonos", "r-living", "Speaker", "p-speaker"),
    ("garage", "Roller Door", "r-hall", "GarageDoor", "p-door"),
]


@pytest.fixture(scope="module")
def program(tmp_path_factory, embedder):
    home = Home.load(write_home(tmp_path_factory.mktemp("operations"), DEVICES, SPECS, ROOMS))
    return CommandRetrieval(CommandIndex(home, embedder), ir_source="none")


@pytest.mark.parametrize("query, device, command", [
    ("turn on the vacuum", "robot", "main-robotCleanerMovement-setRobotCleanerMovement"),  # no switch: it cleans
    ("start vacuuming", "robot", "main-robotCleanerMovement-setRobotCleanerMovement"),
    ("stop powering the socket", "plug", "main-switch-off"),  # no stop: it is switched off
    ("be quiet", "speaker", "main-audioMute-mute"),
    ("turn off the sound", "speaker", "main-audioMute-mute"),
    ("open the garage door", "garage", "main-garageDoorControl-open"),  # "garage" here is no room to ask about
])
def test_asks_get_the_command_that_does_it(program, query, device, command):
    pred = program(query=query)
    assert pred.hint is None
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == (device, command)



def test_several_requests_are_answered_for_the_first_never_a_mix(tmp_path, embedder):
    devices = [("gate", "Front Gate", "r-hall", "Lock", "p-lock"), ("gate-light", "Gate Light", "r-hall", "Light",
                                                                      "p-plug"),
               ("curtains", "Hall Curtains", "r-hall", "Blind", "p-shade")]
    specs = {"p-lock": [{"id": "main-lock-lock", "description": "lock", "type": None, "value_range": None},
                        {"id": "main-lock-unlock", "description": "unlock", "type": None, "value_range": None}],
             "p-plug": SPECS["p-plug"],
             "p-shade": [{"id": "main-windowShade-open", "description": "open", "type": None, "value_range": None}]}
    home = Home.load(write_home(tmp_path, devices, specs, ROOMS))
    program = CommandRetrieval(CommandIndex(home, embedder), ir_source="none")
    pred = program(query="open the front gate and turn on the gate light")
    # the gate's unlock (asked, so offered), never the curtains opened nor the gate light "opened"
    assert (pred.candidates[0].device_id, pred.candidates[0].command_id) == ("gate", "main-lock-unlock")
    assert all(c.device_id == "gate" for c in pred.candidates)
    assert pred.unanswered == "turn on the gate light"  # the request not answered, to ask again
    again = program(query=pred.unanswered)
    assert (again.candidates[0].device_id, again.candidates[0].command_id) == ("gate-light", "main-switch-on")
    assert again.unanswered == "" and program(query="open the front gate").unanswered == ""
