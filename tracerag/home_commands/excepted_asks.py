"""What an utterance excepts from what it asks: "unlock every door except the front door", "all the valves but the
gas one", "除了竹园房，所有客房门锁都打开".

``request_reading`` sets the excepted words apart; this reads them against the home, so that a sensitive command
is never asked of a device they name, of one in a room they name, of a kind they say where they name no device,
of its supply's main where they say "the main", nor of the door they describe, however its lock is called.
"""

from __future__ import annotations

import re

import numpy as np

from .category_words import categories_said
from .door_words import DOOR_SAID, door_nouns, door_qualifiers
from .referents import named
from .supply_mains import the_main

_MAIN = re.compile(r"\bmains?\b|总阀", re.I)  # a supply's main said alone ("except the main")


def not_excepted(index, doors, devices: np.ndarray, excepted: str) -> np.ndarray:
    """Per row (``devices``: each row's device): whether ``excepted`` (the words an utterance excepts) leaves it
    asked. ``doors``: the home's ``SensitiveDoors``, which read the door the words describe."""
    excepted_rooms = index.names.mentioned_rooms(excepted)
    by_name = named(index, excepted)
    keep = by_name[devices] == 0
    if excepted_rooms:
        keep &= ~index.rooms.devices_in(excepted_rooms)[devices]
    elif not by_name.any():  # no device named, a kind said: "all the valves but the gas one"
        keep &= ~index.table.in_categories(set(categories_said(excepted)))[devices]
        if _MAIN.search(excepted):  # "all the water valves except the main": its supply's main
            for supply in ("WaterValve", "GasValve"):
                keep &= ~the_main(index, supply)[devices]
        if DOOR_SAID.search(excepted):  # "every door except the front door": the way in, however its lock is called
            said_door = [set(q) for q in door_qualifiers(excepted)]
            keep &= ~doors.fitting(devices, said_door, door_nouns(excepted))
    return keep
