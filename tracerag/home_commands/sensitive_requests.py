"""Whether an utterance asks for a sensitive command: a request to act now, on that device, in so many words.

A sensitive command (``sensitive_commands``) is chosen only when the utterance itself asks for it: a request to
act now (``request_reading``: no negation, question, narration or condition), in one clause its verb said and
its opposite not, the operation one the command performs (``operation_words``, read from the utterance, never
from an LM), its device named (``referents.named``: by name, else by a word for its kind, in its room when a
room is said), and not excepted. A word that only qualifies or locates another device ("车库的灯", "the lamp
next to the oven") names nothing. What is not asked for is blocked by the screen (``safety_screen``).
"""

from __future__ import annotations

import re

import numpy as np

from ..signatures.query_ir import QueryIR
from .category_words import (
    CATEGORY_WORDS,
    categories_said,
    family_of,
    normalised,
    several_said,
    word_pattern,
)
from .command_choice import choice_of
from .command_docs import verb_phrases
from .described_by_use import described
from .device_kinds import devices_said, safes
from .door_fitting import SensitiveDoors
from .door_words import (
    DOOR_SAID,
    DOOR_WORDS,
    ENTRANCE_WORDS,
    door_nouns,
    door_qualifiers,
    every_door,
    lock_by_maker_said,
)
from .excepted_asks import not_excepted
from .home_names import compact
from .home_operations import kinds_meant, operation_in
from .kind_referents import BARE, DOOR_TO, KindReferents, said_in
from .letting_in import LET_IN, someone_goes_in, vehicle_said
from .operation_words import SENSES, read_operation, verb_text
from .places import in_or_named_for, place_not_exact, places_after_in
from .pointing_back import PointingBack
from .referents import kinds_acted_on, named, names_mixed
from .request_reading import points_back, read_request
from .room_doors import DOORISH, a_store_opened, door_of_the_room_said, door_waited_at, room_door
from .sensitive_commands import SENSITIVE_KINDS, SensitiveRows
from .text_match import contains, tokens
from .valves_served import valve_served

_HEATERS = frozenset({"Oven", "Cooktop"})  # what switching on lights a fire
# a complaint of the dark: a verb said alone after it asks for light
_DARK = re.compile(r"\b(?:dark|darker|pitch black|can't see|cannot see)\b|"
                   r"太暗|很暗|好暗|暗了|太黑|很黑|好黑|黑了|黑乎乎|看不见|看不清", re.I)
_AND = re.compile(r"[和与及、]|\band\b", re.I)
# someone arriving or opening up: the alarm they switch off is the system they disarm to come in
_ARRIVING = re.compile(r"\b(?:opening\s+up|open(?:ing)?\s+(?:the\s+)?(?:shop|store|up)|first\s+in|i'?m\s+in|"
                       r"i\s+am\s+in|it'?s\s+(?:only\s+)?me|i'?m\s+(?:here|back|home)|"
                       r"just\s+(?:got|arrived|come)\s+(?:in|here|back|home)|letting\s+myself\s+in)\b|"
                       r"我到了|我来了|我回来了|到店了|开店了|上班了|是我", re.I)
_GATE = re.compile(r"\bgates?\b", re.I)
_PERSON_LET_IN = re.compile(r"\b(?:let|buzz)\s+(?:me|us|him|her|them)\b|让(?:我|我们|他|她|他们)", re.I)
_BOTH = re.compile(r"\bboth\b|两个都|两扇都|两把都|俩都", re.I)
# a door that goes up is one that rolls or swings up: a garage door or a shutter, never a lock ("get the door up")
_DOOR_UP = re.compile(r"\b(?:get|roll|pull|put|lift|raise|push|wind|crank|bring)\s+(?:[\w'-]+\s+){0,3}?up\b|"
                      r"\b(?:raise|lift)\b", re.I)


def _kinds_of_one_word(text: str) -> list[set[str]]:
    """The kinds each word said for a kind names where it names more than one ("cooker": an oven and a hob);
    doors are read as doors are, and "the alarm" as a siren or a panel is (``_siren_or_panel``)."""
    said = categories_said(text)
    words = {w for ws in said.values() for w in ws}
    found = ({kind for kind, ws in said.items() if word in ws} for word in words)
    return [kinds for kinds in found if len(kinds) > 1 and not kinds & _READ_APART]


_READ_APART = DOORISH | {"Siren", "SecurityPanel"}


def _bare_door(clause: str) -> bool:
    """Whether the clause says a door and nothing of which one ("开门", "open the door"), nor every door."""
    said = door_qualifiers(clause)
    return bool(said) and not any(said) and not every_door(clause)


class SensitiveRequests:
    """Which sensitive rows of one home's command index an utterance asks for (built once per index)."""

    def __init__(self, index, sensitive: SensitiveRows):
        self.index = index
        self.sensitive = sensitive
        self.doors = SensitiveDoors(index, sensitive)
        self.by_kind = KindReferents(index, sensitive, self.doors)
        self.pointing = PointingBack(index, sensitive, self._asked_in)

    def asked(self, text: str) -> np.ndarray:
        """Per sensitive row (``SensitiveRows.rows``): whether the text asks for its command on its device.

        Only a clause that is a request to act now can (``request_reading``: a reason in another clause takes
        nothing away), its operation must be one the command performs (``operation_words``, read from the
        utterance, never from an LM), and the clause must refer to the device (``_asked_in``); never a device
        the text excepts ("unlock every door except the front door")."""
        asked = np.zeros(len(self.sensitive.rows), dtype=bool)
        text = described(self.index, self.sensitive.rows, text)  # "the box where we keep the cash": the safe
        reading = read_request(text)
        requests = reading.requests
        if not requests:
            return asked
        if requests == [reading.text] and reading.text == normalised(text):
            requests = [text]  # the utterance as said, one request: what the parse and the search read, memos shared
        whole = named(self.index, text if reading.text == normalised(text) else reading.text)
        for clause in requests:
            if place_not_exact(self.index, clause):  # asked of a place the home does not have
                continue
            # a clause names its own devices; a verb alone ("帮我解锁") or one pointing back ("unlock it") speaks of
            # those of the others ("保险柜密码忘了，帮我解锁"); "put on some music" of none of them
            own = named(self.index, clause) if len(reading.clauses) > 1 else whole
            # what "it" stands for can do what is asked: "Room 14 door, unlock it for the night nurse" (no Nurse Call
            # Chime unlocks), "the front door, unlock it, the night porter isn't answering" (nor does a panel)
            able = self.pointing.able(clause, reading.text) if points_back(clause) else None
            if able is not None:
                own, whole_able = np.where(able, own, 0), np.where(able, whole, 0)
            else:
                whole_able = whole
            elsewhere = not own.any() and (points_back(clause) or self._verb_alone(clause))
            if elsewhere and _DARK.search(reading.text):  # "鸡舍门口太暗了，开一下", "it's dark by the shutter, turn
                continue  # it on": what is switched on where it is dark is a light, whatever stands there
            if elsewhere and points_back(clause) and not whole_able.any():
                # "it" is what another clause mentions, where it is too ("the documents in the safe, unlock it");
                # an "it" nothing here names asks for nothing, never for every device of the verb's kind
                asked |= self.pointing.asked_of_unnamed(clause, own, able, reading)
                continue
            # the text that names what the clause acts on: its own, or the utterance's ("let him in")
            about = clause if named(self.index, clause).any() else reading.text
            if elsewhere and points_back(clause):
                whole = self.pointing.pointed_back_to(clause, reading.text, whole, able)
            others = " , ".join(c for c in requests if c != clause) or None  # what the other requests name
            asked |= self._asked_in(clause, whole if elsewhere else own, about, requested=others,
                                    utterance=reading.text)
        for clause in requests:  # a device held back in a clause is held back in what was said
            self.one_of_several(text).update(self.one_of_several(clause))
        if reading.excepted and asked.any():  # "every door except the kiln shed": nothing there, nor of a kind said
            asked &= not_excepted(self.index, self.doors, self.index.table.row_device[self.sensitive.rows],
                                  reading.excepted)
        return asked

    def _asked_in(self, text: str, named_by: np.ndarray, about: str | None = None,
                  kind_text: str | None = None, requested: str | None = None,
                  utterance: str | None = None) -> np.ndarray:
        """``asked`` for one clause: the operation it asks for is one the row's command performs, and it refers
        to the row's device: by name (``referents.named``: the devices it names best; naming another device
        leaves this one out), or, naming none, by a word for its kind (or, alone, a verb that names the kind:
        "解锁", "please unlock") with any room said being the device's room ("打开阳台门" asks nothing of the lock
        in the living room). ``named_by``: the ``referents.named`` the clause stands for; ``about``: the text
        that names it, where another clause does ("the hand is at the kitchen door, let him in"); ``kind_text``: the
        text whose words for a kind the clause's "it" stands for, where no device is named; ``utterance``: all that
        was said ("alarm off, I'm opening up": someone arriving)."""
        index = self.index
        sensitive = self.sensitive
        rows, kinds = sensitive.rows, sensitive.row_kinds
        # "荷花房门锁，把它打开", "保险柜，帮我开开": what "it" stands for, or the verb alone acts on, says what opening
        # it does (a lock opens by unlocking)
        kinds_text = about if about is not None and (points_back(text) or self._verb_alone(text)) else text
        operation = index.memo(("operation", text, kinds_text), lambda: operation_in(
            index, verb_text(text, index), kinds_meant(index, QueryIR(), text) or kinds_meant(index, QueryIR(),
                                                                                             kinds_text)))
        verb = read_operation(verb_text(text, index), frozenset())  # the verb as said, no device's kind read in
        # 打开 a room switches its lights on, unless someone is to go in ("打开财务室，会计到了": its door)
        letting_in = bool(LET_IN.search(text))
        door = room_door(self.index, text) if verb in ("open", "unlock") or verb is None and letting_in \
            or verb == "on" and (someone_goes_in(about or text) or a_store_opened(index, text)) \
            else None  # 让会计进财务室: no verb but the letting in
        if door is not None and not door.any() and about is not None and points_back(text):
            door = door_of_the_room_said(index, text, about, pointing=True)  # "the luggage room, can you open it"
        # someone let in, or a door opened bare ("进货的三轮车到后门了，开门"), goes by the door they wait at
        bare_door = (verb in ("open", "unlock") or operation in ("open", "unlock")) and _bare_door(text)
        waited_at = door_waited_at(index, text, about) if letting_in or bare_door else None
        if waited_at is not None:  # "he's at the pontoon gate with his shopping, let him through": that gate
            door = waited_at
        elif letting_in and (let_by := (named_by > self._named_by_door_words(about or text))
                             & index.table.in_categories(DOORISH) & ~safes(index)).any():
            # someone let in by a door or lock the text names by more than the word door ("let the patients in":
            # Patients' Entrance; "someone's at the door, let them in" names no Patio Door)
            door = let_by
        if door is not None and door.any():  # "open the shed" opens its door, though the Shed Lights switch on
            operation = "unlock" if (index.table.device_categories[door] == "Lock").all() else "open"
        raised = self._door_raised(text, utterance or about or text) if operation in ("open", "level_up") else None
        if raised is not None:  # "get the door up" beside a lock: the door opens, whatever "up" does to a lock
            operation = "open"
        performing = choice_of(index).performing(operation)[rows] if operation else np.zeros(len(rows), bool)
        if verb == "open" and text.isascii():  # "open the oven" opens its door: in English it switches no oven on
            performing &= ~index.table.in_categories(_HEATERS)[index.table.row_device[rows]]
        if verb == "on" and text.isascii():  # in English a door is opened, never switched on: "it's dark by the
            performing &= ~index.table.in_categories(DOORISH)[index.table.row_device[rows]]  # shutter, turn it on"
        # someone let in comes through a door, a gate or a lock: never a valve or a safe ("buzz me in, forgot my
        # keys": no Key Safe)
        let_through = index.table.in_categories(DOORISH) & ~safes(index) if letting_in else None
        if letting_in and not _PERSON_LET_IN.search(text) and vehicle_said(
                index.rooms.without_room_names(index.names.without_names(utterance or about or text))):
            # a vehicle let in comes through a gate opener ("the van's at the barrier, let it in": no front door)
            let_through &= index.table.in_category("GarageDoor")
        if let_through is not None:
            performing &= let_through[index.table.row_device[rows]]
        about = text if about is None else about
        if operation == "open" and not (DOOR_SAID.search(about) or "Lock" in categories_said(about)):
            # a lock opens only as a door said, or as what its name calls it ("open the safe": the Gun Safe; "open
            # the closet" unlocks no Closet Safe; "open the door" may)
            performing = performing & (~choice_of(index).performing("unlock")[rows] | self._head_said(about, rows) |
                                       (door if door is not None else room_door(self.index, text))[
                                           index.table.row_device[rows]])
        marked = kinds == len(SENSITIVE_KINDS)
        if not (performing.any() or marked.any()):
            return performing
        devices = index.table.row_device[rows]
        # only a device named that can do what is asked counts: "unlock the door" beside a Patio Door names no
        # door that unlocks, so it speaks of the locks by their kind (what policy.json marks is judged apart)
        able = np.zeros(len(named_by), dtype=bool)
        able[devices[marked]] = True
        if operation:
            able |= choice_of(index).devices_able(operation)
        named_by = np.where(able if let_through is None else able & let_through, named_by, 0)
        best = self._best_naming(text, named_by)
        said = index.rooms.without_room_names(text).replace("开关", " ")
        theirs = door_of_the_room_said(index, text, about, pointing=points_back(text) and verb in ("open", "unlock")) \
            if verb in ("open", "unlock", "on") and not best else None
        if waited_at is not None:
            referred = waited_at[devices]
        elif raised is not None and not best:
            referred = raised[devices]  # "get the door up": a door that rolls up, never the front door's lock
        elif theirs is not None and theirs.any():
            # "三楼那间星空房，开门", "our guests in suite a are locked out, open their door": the door of the room
            # the other clause says, not the way in
            referred = theirs[devices]
        elif best:
            referred = self._referred_by_name(text, named_by, best, devices)
        elif kind_text is not None:
            referred = self.by_kind.referred(kind_text, index.rooms.without_room_names(kind_text), operation,
                                              devices)
        else:
            referred = self.by_kind.referred(text, said, operation, devices)
        if verb in ("on", None) and door is not None:  # the room's door, someone going in ("打开财务室，会计到了")
            referred = referred | door[devices]
        if not best and operation == "off":
            referred = self._siren_or_panel(text, referred, devices, utterance or text)
            if referred is None:
                return np.zeros(len(rows), dtype=bool)
        said_all = utterance or about or text
        if letting_in and _GATE.search(said_all):  # "a harvester at the gate, let him through": a gate, never the
            referred = referred & self._gates()[devices]  # front door
        if _GATE.search(said_all) and (vehicle_gate := self._vehicle_gate()).any() and \
                vehicle_said(index.rooms.without_room_names(index.names.without_names(said_all))):
            # a gate opened for a lorry is the one vehicles come through, not the pedestrian gate's lock
            gates = self._gates()[devices]
            referred = (referred & ~gates) | vehicle_gate[devices]
        asked = self._one_of_several(text, performing & referred, devices,
                                     kind_text if kind_text is not None else about, requested)
        for i in np.flatnonzero(marked & referred).tolist():  # what policy.json marks
            asked[i] = self._asked_marked(said, int(rows[i]), bool(best))
        return asked

    def _door_raised(self, clause: str, said: str) -> np.ndarray | None:
        """Per device, for a door said bare to go up ("get the door up", "raise the door"): the garage doors,
        those of the rooms said where some are there ("the van's backing onto the loading bay"); None where no
        door goes up."""
        if not (_DOOR_UP.search(clause) and DOOR_SAID.search(clause)) or any(door_qualifiers(clause)):
            return None  # "raise both roller doors": which ones, their words say
        garage = self.index.table.in_category("GarageDoor")
        rooms = self.index.names.mentioned_rooms(said)
        there = garage & self.index.rooms.devices_in(rooms) if rooms else garage
        return there if there.any() else garage

    def _head_said(self, text: str, rows: np.ndarray) -> np.ndarray:
        """Per row: the last word of its device's name, or a word for what it is, is said ("open the safe" of Gun
        Safe, of a Strongbox whose own name says Safe)."""
        said = set(tokens(text))
        devices = self.index.table.row_device[rows]
        heads = [tokens(self.index.home.devices[d].label)[-1:] for d in devices.tolist()]
        by_maker = lock_by_maker_said(self.index.home.devices, text)  # "open the nuki": the lock that is one
        return np.asarray([bool(h) and h[0] in said and len(h[0]) >= 2 or d == by_maker
                           for h, d in zip(heads, devices.tolist(), strict=True)], dtype=bool) | \
            (devices_said(self.index, text)[devices] > 0)

    def _one_of_several(self, text: str, asked: np.ndarray, devices: np.ndarray, naming: str,
                        requested: str | None = None) -> np.ndarray:
        """``asked`` without the rows a word for a kind said once reaches on several devices of one kind ("open the
        valve" where three valves are: which one?); doors are read as doors are (the way in), and "all", "both",
        a plural, 都 ask for each. ``naming``: the text that says what the clause acts on."""
        # a gas valve is one of the valves: "open the valve" beside a water valve asks which
        if not asked.any():
            return asked
        if several_said(text):  # "both" of three: which two?
            if _BOTH.search(text) and len(set(devices[asked].tolist())) != 2:
                self._hold(asked, asked.copy(), devices, text)
            return asked
        # an "it" is what another clause says, as it says it ("unlatch the shop door, keep it open", "the gas for
        # the boiler, turn it back on")
        said_as = naming if points_back(text) else text
        # the words said with a door reach several doors of a kind ("the house door": the Farmhouse Door and the
        # Gate House Door): which one? A door said bare or as the front door is the way in, read as doors are;
        # a door said by a name ("the hatch": the Stern Hatch's lock and the Side Hatch's opener) is any door
        said_which = any(set(q) - ENTRANCE_WORDS for q in door_qualifiers(said_as))
        kinds = self.index.table.device_categories[devices]
        for both in _kinds_of_one_word(said_as):  # "put the cooker on" beside an oven and a hob: which one?
            held = asked.copy()
            self._hold(held, asked & np.isin(kinds, list(both)), devices, text)
            asked = held
        any_door = len(set(kinds[asked].tolist()) & DOORISH) > 1 and (said_which or not DOOR_SAID.search(said_as))
        categories = np.asarray(["door" if any_door and c in DOORISH else family_of(c) for c in kinds.tolist()])
        out = asked.copy()
        if not DOOR_SAID.search(naming) and not LET_IN.search(naming):
            # "unlock please", "解锁", "把锁打开" beside several locks: the way in, as a door said bare is; where no
            # lock is, which one?
            doorish = asked & np.isin(kinds, list(DOORISH))
            way_in = doorish & np.asarray([bool(self.sensitive.device_words[d] & ENTRANCE_WORDS)
                                           and d not in self.sensitive.way_in_guessed for d in devices.tolist()],
                                          dtype=bool)
            theirs = doorish & room_door(self.index, text)[devices]  # "unlock the shop": its door, not its safe
            if theirs.any():
                out &= ~(doorish & ~theirs)
            elif way_in.any():
                out &= ~(doorish & ~way_in)
            else:
                self._hold(out, doorish, devices, text)
        doors = asked & np.isin(categories, [*DOORISH, "door"])
        garage = doors & (kinds == "GarageDoor")
        if not said_which and DOOR_SAID.search(said_as) and garage.any() and (doors & ~garage).any() and \
                not vehicle_said(naming) and not _GATE.search(naming) and "GarageDoor" not in categories_said(naming):
            # "开门", "把大门打开": the door people walk through, not the shutter beside it ("the gate" may be either)
            out &= ~garage
            doors &= ~garage
        if not said_which and DOOR_SAID.search(said_as) and not self.doors.some_way_in(doors, devices) and \
                self.doors.several_alike(doors, devices):
            # a door said bare is the way in; where no door asked is one and several would do it alike ("unlock
            # the door" in a care home whose doors are the residents'), it is any of them: which one? ("open the
            # gate" beside one gate opener and a gate's lock still opens the gate)
            self._hold(out, doors, devices, text)
        for category in set(categories[asked].tolist()) - (set() if said_which else DOORISH):
            same = asked & (categories == category)
            served = valve_served(self.index, said_as, same, devices)  # "the gas to the woks": the Wok Gas Line
            if requested is not None and len(set(devices[served].tolist())) > 1:
                served = self._named_in_another_request(requested, served, devices)
            out &= ~same | served
            if not self._each_said_whole(said_as, set(devices[served].tolist())):
                self._hold(out, served, devices, text)
        return out

    def _gates(self) -> np.ndarray:
        """Per device: a gate, by its label or as a garage door (a gate opener)."""
        return self.index.memo(("gates",), lambda: self.index.table.in_category("GarageDoor") | np.asarray(
            [bool(_GATE.search(d.label)) for d in self.index.home.devices], dtype=bool))

    def _vehicle_gate(self) -> np.ndarray:
        """Per device: the home's one gate for vehicles (a gate opener called a gate); none where several are."""
        def find() -> np.ndarray:
            gates = self.index.table.in_category("GarageDoor") & np.asarray(
                [bool(_GATE.search(d.label)) for d in self.index.home.devices], dtype=bool)
            return gates if gates.sum() == 1 else np.zeros_like(gates)
        return self.index.memo(("vehicle gate",), find)

    def _each_said_whole(self, text: str, devices: set[int]) -> bool:
        """Whether each of several devices is said by its own whole label, one device's ("打开卷帘门和升降门"):
        each is asked, none is one of several."""
        names = self.index.names
        said = names.labels_named(text)
        return len(devices) > 1 and all(
            said[d] and len(names.devices_labelled[tokens(names.home.devices[d].label)]) == 1 for d in devices)

    def _named_in_another_request(self, requested: str, same: np.ndarray, devices: np.ndarray) -> np.ndarray:
        """``same`` narrowed to the one device the utterance's other requests name best, where one does ("dose some
        chlorine, open the dosing valve": the Chlorine Valve; 美容池放水，阀门打开); unchanged otherwise. Only what
        is asked counts: a device named in a negation or a report says nothing of which."""
        by_name = named(self.index, requested)[devices]
        best = by_name[same].max(initial=0)
        found = set(devices[same & (by_name == best)].tolist())
        return same & (devices == found.pop()) if best and len(found) == 1 else same

    def _siren_or_panel(self, text: str, referred: np.ndarray, devices: np.ndarray,
                        utterance: str) -> np.ndarray | None:
        """``referred``, where "the alarm" switched off is a siren to silence or a security panel to disarm, both of
        which the home has where the text refers: the panel alone for someone arriving ("alarm off, I'm opening
        up"), else None: which one? (both noted as one of several). "the siren", "the alarm system" say which."""
        said = categories_said(text)
        if not set(said.get("Siren", ())) & set(said.get("SecurityPanel", ())):
            return referred
        kinds = self.index.table.device_categories[devices]
        siren, panel = referred & (kinds == "Siren"), referred & (kinds == "SecurityPanel")
        if not (siren.any() and panel.any()):
            return referred
        if _ARRIVING.search(utterance):
            return referred & ~siren
        self.one_of_several(text).update(devices[siren | panel].tolist())
        return None

    def _hold(self, out: np.ndarray, same: np.ndarray, devices: np.ndarray, text: str) -> None:
        """Take the rows of ``same`` out of ``out`` (in place) where they are on more than one device, and note
        those devices as one of several."""
        if len(set(devices[same].tolist())) > 1:
            out &= ~same
            self.one_of_several(text).update(devices[same].tolist())

    def one_of_several(self, text: str) -> set[int]:
        """The devices a clause of the text could each mean, none of them said ("open the valve" beside three
        valves): held back until the user says which (filled as ``asked`` reads the text)."""
        return self.index.memo(("one of several", normalised(text)), set)

    def _best_naming(self, text: str, named_by: np.ndarray) -> int:
        """How long the longest name said is (0: none), where a name said only through the word door is no
        name ("open the (front) door": a kind said, locks too, the way in), unless a device is labelled just
        that ("Gate", 门)."""
        index = self.index
        best = int(named_by.max(initial=0))
        best_named = np.flatnonzero(named_by == best)
        if best and several_said(text):
            kind_words = [w for words in categories_said(text).values() for w in words]
            if kind_words and (named(index, " ".join(kind_words)) >= named_by)[best_named].all() and \
                    not any(compact(index.home.devices[d].label) in kind_words for d in best_named):
                return 0  # "open every gas valve": every one of the kind, not only the Nitrous Valve its word is in
        said_door = [set(q) for q in door_qualifiers(text)] if best else []
        if not said_door:
            return best
        through_door = (self._named_by_door_words(text) >= named_by)[best_named].all()
        labelled_so = any(compact(index.home.devices[d].label) in DOOR_WORDS for d in best_named.tolist())
        if through_door and every_door(text):  # "open all the doors": every door, the one labelled Door too
            return 0
        if through_door and not labelled_so and (
                not any(said_door) or not self.doors.fitting(best_named, said_door, door_nouns(text)).any()):
            return 0
        return best

    def _named_by_door_words(self, text: str) -> np.ndarray:
        """``referents.named`` of the door words the text says alone ("door", 门): what only they name."""
        return named(self.index, " ".join(DOOR_SAID.findall(text)))

    def _referred_by_name(self, text: str, named_by: np.ndarray, best: int, devices: np.ndarray) -> np.ndarray:
        """Per sensitive row: its device is among those the text names best; a word an ordinary device's name
        shares ("开一下鱼缸": its lamp, its pump, its valve) names the sensitive one only with a word for its kind;
        a door said with words of its own is the door they describe ("the bedroom door" names no Patio Door
        through the word door alone)."""
        index, sensitive = self.index, self.sensitive
        referred = named_by[devices] == best
        if _AND.search(text):  # "贵细药材保险柜和药柜都打开": each label said whole, the shorter one too
            referred |= (named_by[devices] > 0) & (index.names.labels_said(text)[devices] > 0)
        if ((named_by == best) & ~sensitive.devices).any():
            said_kinds = set(kinds_acted_on(index, text))
            referred &= np.asarray([bool(n & said_kinds) for n in sensitive.noun_sets])[sensitive.noun_code]
        said_door = [set(q) for q in door_qualifiers(text)]
        if any(said_door):
            by_door_word = self._named_by_door_words(text) >= named_by
            referred &= ~by_door_word[devices] | self.doors.fitting(devices, said_door, door_nouns(text))
        rooms = index.names.mentioned_rooms(text) or places_after_in(index, text)
        if rooms and not DOOR_TO.search(text):  # "open the safe for room 2": the Strongbox in the office is no
            # safe of room 2 ("the patio door to the deck" is the door the deck is reached by)
            referred &= in_or_named_for(index, rooms, devices)
        return referred & ~names_mixed(index, text, named_by, sensitive.devices)[devices]

    def _verb_alone(self, clause: str) -> bool:
        """Whether the clause says what to do and nothing it acts on ("帮我解锁", "快关掉", "unlock please")."""
        text = normalised(clause)
        for sense in SENSES:
            text = sense.pattern.sub(" ", text)
        return text != normalised(clause) and not BARE.sub("", text).strip()

    def _asked_marked(self, said: str, row: int, named: bool) -> bool:
        """A command the home marks sensitive: its own verbs (or its description) and its device (by name or
        a word for its kind) are said."""
        index = self.index
        spec, device = index.table.spec_of_row(row), index.table.device_of_row(row)
        words = tokens(said)
        verb = any(contains(words, v) for v in verb_phrases(spec.command, spec.capability)) or \
            contains(words, tokens(spec.description))
        kind = CATEGORY_WORDS.get(device.category)
        return verb and (named or (kind is not None and said_in(word_pattern(*kind), said)))
