"""What "it" stands for, where the clause that says it names nothing: a device, a room or a kind another clause says.

"The safe, open it", "the luggage room, can you open it", "the alarm's going off, stop it": the clause asks, the
others say what of. "It" stands for what can do what is asked ("Room 14 door, unlock it for the night nurse": no
Nurse Call Chime unlocks), for what the words before it name rather than a later clause ("the safe, open it, the
bank run is at ten"), and never for several things, nor for every device of the verb's kind where nothing here
names one. ``SensitiveRequests`` asks this module which rows such a clause asks for; it answers through the
clause reading it is given (``asked_in``), so a clause read for "it" is held to the same rules as any other.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from ..signatures.query_ir import QueryIR
from .category_words import categories_said, several_said
from .command_choice import choice_of
from .door_words import DOOR_SAID, DOOR_TO_OR_OF, ENTRANCE_WORDS, describes_door, door_qualifiers
from .home_operations import kinds_meant, operation_in
from .letting_in import LET_IN
from .operation_words import read_operation, verb_text
from .places import in_or_named_for
from .referents import named
from .room_doors import DOORISH, door_of_the_room_said, door_waited_at, room_door

# words that say where something is: "the documents in the safe" still mentions the safe an "it" may point to
_PLACE_WORDS = re.compile(r"\b(?:in|inside|into|at|on|from|of|near|by|behind|under|beside|next to)\b|里面|里头|里",
                          re.I)

# the rows a clause asks for, read as ``SensitiveRequests`` reads any clause: (clause, named_by, about, kind_text)
AskedIn = Callable[..., np.ndarray]


class PointingBack:
    """The rows asked by a clause whose "it" stands for what the rest of the utterance says."""

    def __init__(self, index, sensitive, asked_in: AskedIn):
        self.index = index
        self.sensitive = sensitive
        self.asked_in = asked_in

    def able(self, clause: str, text: str) -> np.ndarray:
        """Per device: it can do what the clause asks (all devices where no verb is), its verb read with the kinds
        the clause says, else those the whole text says ("荷花房门锁，把它打开": a lock opened is unlocked)."""
        kinds = kinds_meant(self.index, QueryIR(), clause) or kinds_meant(self.index, QueryIR(), text)
        operation = operation_in(self.index, verb_text(clause, self.index), kinds)
        if operation is None:
            return np.ones(len(self.index.home.devices), dtype=bool)
        return choice_of(self.index).devices_able(operation)

    def pointed_back_to(self, clause: str, text: str, whole: np.ndarray, able: np.ndarray | None) -> np.ndarray:
        """What "it" stands for: what the words before its clause name, where they name what can do it ("the
        safe, open it, the bank run is at ten": the safe, not the Locker Bank a later clause's "bank" names);
        else what the whole text names."""
        start = text.find(clause.strip())
        before = named(self.index, text[:start]) if start > 0 else whole
        if start > 0 and (rooms := self.index.names.mentioned_rooms(text[:start])):
            # where they say it is, too: "the box with the bike keys in the office" is no Bike Cage in the yard
            found = np.flatnonzero(before)
            before = before.copy()
            before[found[~in_or_named_for(self.index, rooms, found)]] = 0
        usable = np.where(able, before, 0) if able is not None else before
        return before if usable.any() else whole

    def asked_of_unnamed(self, clause: str, own: np.ndarray, able: np.ndarray, reading) -> np.ndarray:
        """``asked`` for a clause whose "it" stands for nothing the utterance names that can do it: what another
        clause mentions where it is ("the documents in the safe, unlock it"), a room's one door ("the luggage room,
        can you open it", "let them into the bunkhouse"), or a kind said ("the alarm's going off, stop it")."""
        text = reading.text
        mentioned = np.where(able, named(self.index, _PLACE_WORDS.sub(" ", text)), 0)
        found = self.asked_in(clause, mentioned, text) if mentioned.any() else None
        if found is not None and found.any():
            return found
        if found is not None and not LET_IN.search(clause):
            # what is named cannot do it: "the siren in the kiln shed is screaming, turn it off" (the kiln shed
            # named) speaks of the kind said; someone let in is let through a door ("their car")
            return self._kind_pointed_back(clause, own, reading)
        if LET_IN.search(clause) and door_waited_at(self.index, clause, text) is not None:
            return self.asked_in(clause, own, text)  # "the lorry is waiting outside the yard, let him in": its gate
        into_room, where_waiting = room_door(self.index, clause), room_door(self.index, text)
        if into_room.any() and not self._waits_elsewhere(clause, reading, into_room):
            # "let them into the bunkhouse": its one door ("the van's at the barrier, let it in": a vehicle's)
            return self.asked_in(clause, own, clause, utterance=text)
        if LET_IN.search(clause) and where_waiting.any() and not self._waits_elsewhere(clause, reading, where_waiting):
            # "they're waiting at the driveway, let them drive in": the door of the place they wait at
            return self.asked_in(text, own, text)
        if found is None and self._room_pointed_back(clause, text):
            return self.asked_in(clause, own, text)  # "the luggage room, can you open it"
        if found is None:  # "the alarm's going off, stop it": the kind another clause says
            return self._kind_pointed_back(clause, own, reading)
        return np.zeros(len(self.sensitive.rows), dtype=bool)

    def _waits_elsewhere(self, clause: str, reading, door: np.ndarray) -> bool:
        """Whether another clause says a door someone waits at that the door found for them is not ("Dr Patel is
        at the staff door, let her in": the Staff Entrance, not the patients' way in; "they're at the shop door"
        may be the way in of the Shop Floor)."""
        others = " ".join(c for c in reading.clauses if c != clause)
        said = [set(q) for q in door_qualifiers(others) if set(q) - ENTRANCE_WORDS]
        found = [self.sensitive.device_words.get(d, set()) for d in np.flatnonzero(door).tolist()]
        return bool(said) and not any(describes_door(q, words, loose=True) for q in said for words in found)

    def _room_pointed_back(self, clause: str, text: str) -> bool:
        """Whether "it" opened or unlocked stands for a room another clause names, one door of which is all that
        opens there ("the luggage room, can you open it")."""
        verb = read_operation(verb_text(clause, self.index), frozenset())
        door = door_of_the_room_said(self.index, clause, text, pointing=True) if verb in ("open", "unlock") else None
        return door is not None and bool(door.any())

    def _kind_pointed_back(self, clause: str, own: np.ndarray, reading) -> np.ndarray:
        """``asked`` for a clause whose "it" stands for a word for one thing of a kind another clause says ("the
        alarm's going off, stop it"). Never several ("close every valve but the garden one, leave it open"), nor a
        door so said: "the door of sweet see, open it" describes no door, and a door said with words no door has is
        no way in."""
        text = reading.text
        # "unlock it" alone names no kind; where someone waits is what "it" is ("the kids are at the back hall door")
        said_others = " ".join(c for c in reading.clauses if c != clause)
        others = _PLACE_WORDS.sub(" ", said_others)
        # a door said with words no door has is no way in ("the door of sweet see"); "the front door, unlock it" is
        said_door = door_qualifiers(others)
        doors = [d for d in self.sensitive.device_words if self.index.table.device_categories[d] in DOORISH]

        def known(words: tuple[str, ...]) -> bool:  # the way in, or words a door has ("the back hall door"), or
            return set(words) <= ENTRANCE_WORDS or any(  # says by what it is ("the restaurant door": the way in)
                set(words) <= self.sensitive.device_words[d] or
                describes_door(set(words), self.sensitive.device_words[d], loose=True) for d in doors)
        odd_door = DOOR_SAID.search(text) and not (said_door and all(known(q) for q in said_door)
                                                   and not DOOR_TO_OR_OF.search(said_others))
        if not categories_said(others) or odd_door or reading.excepted or several_said(text):
            return np.zeros(len(self.sensitive.rows), dtype=bool)
        return self.asked_in(clause, own, text, kind_text=others)
