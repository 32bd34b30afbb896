"""Which of a home's sensitive doors a door said is: the words said with it, the way in, a lock by its door.

"the front door", "阳台门", "开门", "the roll-up door", "unlock all the doors": a door said is read against each
sensitive device's own words (label, room, floor, and what its maker's name says of it: ``SensitiveRows``), so
that a lock is the lock of the door said, a door said bare is the house's way in, and a gate said is any gate.
``SensitiveRequests`` asks it whenever a door word stands in what it reads.
"""

from __future__ import annotations

import re

import numpy as np

from .device_kinds import safes
from .door_words import (
    DOOR_WORDS,
    ENTRANCE_NOUNS,
    ENTRANCE_WORDS,
    describes_door,
    door_nouns,
    door_qualifiers,
    doors_among,
    every_door,
    named_by_maker,
)
from .room_doors import DOORISH
from .sensitive_commands import SensitiveRows
from .text_match import tokens

_NUMBERED_ROOM = re.compile(r"\broom\s*\d+|\b\d{1,4}\s*门锁", re.I)  # Room 4, 203门锁
# a door said by its size: the one vehicles come through, or the one people walk through
_BIG = frozenset({"big", "large", "vehicle", "car", "truck", "lorry", "double", "wide"})
_LITTLE = frozenset({"little", "small", "pedestrian", "wicket", "foot", "person", "narrow"})
_WALKED_THROUGH = frozenset({"Lock", "Door"})
_COURTYARD = re.compile(r"院子|庭院|院门|前院|院落|大院|四合院|小院|院墙")  # never 住院部, 医院 or a 后院


class SensitiveDoors:
    """The door-reading rules over one home's sensitive rows (built once per index, with ``SensitiveRequests``)."""

    def __init__(self, index, sensitive: SensitiveRows):
        self.index = index
        self.sensitive = sensitive
        # no gate stands here (大门 is then the front door): no door's words say gate or courtyard
        self.gateless = not any(words & {"gate", "栅", "闸"} or _COURTYARD.search(f"{device.label} {device.room}")
                                for words, device in ((sensitive.device_words[d], index.home.devices[d])
                                                      for d in sensitive.device_words))

    def worded(self, worded: np.ndarray, kinds_said: set[str], verbless: str, rooms: list[str],
               devices: np.ndarray) -> np.ndarray:
        """``worded`` where a door word is said: a device reached only through it must be the door said."""
        index, sensitive = self.index, self.sensitive
        only_door = np.asarray([n & kinds_said == {"Door"} for n in sensitive.noun_sets])[sensitive.noun_code]
        # the words said with a door, the rooms said aside ("花园大门": 大, in the garden)
        around = index.rooms.without_room_names(verbless) if rooms else verbless
        said_door = [set(q) for q in door_qualifiers(around)]
        nouns = door_nouns(verbless)
        fits = self.fitting(devices, said_door, nouns)
        if rooms and all(q <= ENTRANCE_WORDS for q in said_door):
            # "the door to the back yard", "花园大门": the one there (a lock: one whose name says so, no safe)
            fits = np.asarray([index.table.device_categories[d] != "Lock" or bool(sensitive.device_words[d] & nouns)
                               for d in devices.tolist()])
        elif not any(said_door) and every_door(verbless):  # "unlock all the doors", "其他门都打开": every door
            mask = np.zeros(len(index.home.devices), dtype=bool)
            mask[devices] = True
            fits = doors_among(index, mask, nouns, every=True)[devices]
        elif not any(said_door):  # "开门", "unlock the door": the way in, where a lock is it
            way_in = np.asarray([bool(sensitive.device_words[d] & ENTRANCE_WORDS) for d in devices.tolist()])
            fits &= way_in if (fits & way_in & only_door).any() else fits
        worded = worded & (~only_door | fits)
        # a door device whose own name holds the door word said ("open the gate": the Driveway Gate)
        return worded | fits & np.asarray([bool(sensitive.device_words[d] & nouns) and
                                           index.table.device_categories[d] in DOORISH for d in devices.tolist()])

    def fitting(self, devices: np.ndarray, said: list[set[str]], nouns: frozenset[str]) -> np.ndarray:
        """Per row's device: ``is_the_door``, by the door's own words where some door has them, else by the
        words for the way in ("unlock the front door" of a lock labelled Blue Door in the Entry)."""
        strict = np.asarray([self.is_the_door(d, said, nouns) for d in devices.tolist()], dtype=bool)
        if {"家"} in said:  # 家门 is the way in, unless a door is called so (the flat's own, above a shop)
            called = strict & np.asarray(["家" in self.sensitive.device_words[d] for d in devices.tolist()])
            strict = called if called.any() else strict
        if {"room"} in said:  # "every room door" of a guest house: the numbered rooms', not the Luggage Room's
            numbered = np.asarray([bool(_NUMBERED_ROOM.search(f"{self.index.home.devices[d].label} "
                                                              f"{self.index.home.devices[d].room}"))
                                   for d in devices.tolist()], dtype=bool)
            if (strict & numbered).any():
                strict &= numbered
        # only a door's fit counts: the alarm panel in the 玄关 fits "the front door" by its room, and is no door
        table = self.index.table
        fit = strict & table.in_categories(DOORISH)[devices]
        shutters_only = fit.any() and not (fit & ~table.in_category("GarageDoor")[devices]).any()
        if fit.any() and not (shutters_only and "door" in nouns) or not any(said):
            return strict
        loose = np.asarray([self.is_the_door(d, said, nouns, loose=True) for d in devices.tolist()], dtype=bool)
        if shutters_only:  # "the front door" beside a Front Shutter: also the way in people walk through
            return strict | (loose & table.in_categories(_WALKED_THROUGH)[devices])
        if (loose & self.index.table.in_categories(DOORISH)[devices]).any():
            return loose
        return loose | self._by_size(devices, said, nouns)

    def _by_size(self, devices: np.ndarray, said: list[set[str]], nouns: frozenset[str]) -> np.ndarray:
        """Per row's device, for a gate said only by its size where no door's words fit ("the big gate", "the
        little gate"; "the big doors at the front" are the front doors): the one gate that is one for vehicles (a
        gate opener) or for people on foot (a lock), as the size says; the one gate where it is alone."""
        out = np.zeros(len(devices), dtype=bool)
        sizes = [q for q in said if q]
        if "gate" not in nouns or not sizes or not all(q <= _BIG | _LITTLE for q in sizes) or \
                len({frozenset(q) for q in sizes}) > 1:
            return out
        categories = self.index.table.device_categories
        called = {d for d in set(devices.tolist()) if categories[d] in DOORISH and not safes(self.index)[d]
                  and set(tokens(self.index.home.devices[d].label)) & nouns}
        if len(called) > 1:
            big = sizes[0] <= _BIG
            called = {d for d in called if (categories[d] == "GarageDoor") == big}
        if len(called) == 1:
            out[devices == called.pop()] = True
        return out

    def is_the_door(self, device: int, said: list[set[str]], nouns: frozenset[str], loose: bool = False) -> bool:
        """Whether a door said names this device: the words said with it are the device's ("阳台门"), a lock
        is the lock of what was said (its name says door, or gate where a gate was said: not the Cubby, and
        "every door" is no Front Gate), and a door said with no word of its own ("开门", "open the door") is the
        house's way in (前门, 入户门, "Front Door"), not the one to the balcony; a gate said is any gate."""
        words = self.sensitive.device_words[device]
        described = words | self.sensitive.model_words[device]  # "the roll-up door": its own name says so
        # 大门 is the front door where no gate stands and the door's lock has no name of its own to say otherwise
        main_door = self.gateless and not DOOR_WORDS & set(tokens(self.index.home.devices[device].label))
        if not any(describes_door(q, described, loose, main_door) for q in said):
            return False
        if nouns == {"gate"} and "gate" not in described:  # a gate said is what is called a gate: no Front Door
            return False
        if self.index.table.device_categories[device] == "Lock":
            # a lock called by its maker alone ("Salto") where the way in is, is the way in's lock
            by_maker = named_by_maker(self.index.home.devices[device]) and bool(words & ENTRANCE_WORDS) \
                and not safes(self.index)[device]  # no Key Safe on the front step
            # a lock called an entrance is a door's ("the staff door": the Staff Entrance)
            label = set(tokens(self.index.home.devices[device].label))
            door_lock = bool(words & nouns) or "door" in nouns and bool(label & ENTRANCE_NOUNS)
            return door_lock or by_maker and all(q <= ENTRANCE_WORDS for q in said)
        # a gate said is a gate, the way in or not ("open the gate": the Driveway Gate)
        return any(q for q in said) or bool(words & ENTRANCE_WORDS) or "gate" in words & nouns

    def several_alike(self, rows: np.ndarray, devices: np.ndarray) -> bool:
        """Whether the rows reach more than one device with the same capability (two locks, two gate openers)."""
        table, sensitive_rows = self.index.table, self.sensitive.rows
        by_capability: dict[str, set[int]] = {}
        for i in np.flatnonzero(rows).tolist():
            by_capability.setdefault(table.spec_of_row(int(sensitive_rows[i])).capability, set()).add(int(devices[i]))
        return any(len(found) > 1 for found in by_capability.values())

    def some_way_in(self, rows: np.ndarray, devices: np.ndarray) -> bool:
        """Whether one of the rows' devices is a way in (its name, room or own name says so: ``device_words``)."""
        return any(self.sensitive.device_words[d] & ENTRANCE_WORDS for d in set(devices[rows].tolist()))
