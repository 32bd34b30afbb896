"""A word of the home's misspelt by one letter is read as that word; nothing else is read again."""

import pytest
from conftest import write_home

from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex
from tracerag.home_commands.spelling import corrected

SPECS = {"p-switch": [{"id": "main-switch-on", "description": "turn on", "type": None, "value_range": None}]}
ROOMS = {"r-hall": "Hall", "r-kitchen": "Kitchen", "r-shop": "店面", "r-gate": "Gate House"}
DEVICES = [
    ("front", "Front Door", "r-hall", "Lock", "p-switch"),
    ("hall", "Hall Light", "r-hall", "Light", "p-switch"),
    ("oven", "Oven", "r-kitchen", "Oven", "p-switch"),
    ("shutter", "卷帘门", "r-shop", "GarageDoor", "p-switch"),
    ("panel", "Cerberus", "r-hall", "SecurityPanel", "p-switch"),
    ("blinds", "Kitchen Covers", "r-kitchen", "Blind", "p-switch"),
    ("gate-door", "Gate House Door", "r-gate", "Lock", "p-switch"),
    ("safe", "保险柜", "r-shop", "Lock", "p-switch"),
    ("roaster", "烤炉", "r-shop", "Oven", "p-switch"),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory, embedder):
    return CommandIndex(Home.load(write_home(tmp_path_factory.mktemp("spelling"), DEVICES, SPECS, ROOMS)), embedder)


@pytest.mark.parametrize(("said", "meant"), [
    ("frnt door unlock pls", "front door unlock pls"),  # one letter short
    ("kitchn door", "kitchen door"),
    ("preheat the ovn", "preheat the oven"),
    ("preheat the oevn", "preheat the oven"),  # two letters swapped
    ("unlok the frnt door", "unlock the front door"),  # the verb of a sensitive ask too
    ("disarm serberus", "disarm cerberus"),  # a long name with one letter wrong
    ("麻烦开一下卷帘们", "麻烦开一下卷帘门"),  # a character that sounds alike, where the name then reads whole
    ("保险贵打开", "保险柜打开"),  # a wrong character picked from the input method's list
    ("烤路开一下", "烤炉开一下"),  # a label of two characters
    ("unlock the gatehouse door", "unlock the gate house door"),  # two words of a name said as one
    ("the frontdoor", "the front door"),
])
def test_a_word_of_the_home_misspelt_by_one_letter_is_read_as_it(index, said, meant):
    assert corrected(index, said) == meant


@pytest.mark.parametrize("said", [
    "turn off all the lights",  # "all" is a common word, never "hall"
    "let the movers in",  # a different letter: never "covers"
    "set it to ten", "他们都在客厅", "play something by the doors", "open the doorhouse",
    "空调调到三十度",  # a number is no misspelling (十度 sounds as 湿度 does)
    "燃气灶是不是忘关了",  # nor a word a sentence is made of (忘关 sounds as 网关 does)
    "车子靠路边停",  # two characters that sound as a label does, both other ones: 靠路 is no 烤炉
])
def test_what_is_no_misspelling_is_left_as_said(index, said):
    assert corrected(index, said) == said
