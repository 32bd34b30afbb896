"""The one door of a room said, for a sensitive ask that names a place rather than a door: someone let into a
room ("let them into the bunkhouse"), a place opened or unlocked as a whole ("open up the tack room", "unlock the
in-law flat"), or a door said in a clause after another that says the room ("三楼那间星空房，开门", "our guests in
suite a are locked out, can you open their door"). Where the room has more than one door, none is meant.
"""

from __future__ import annotations

import re

import numpy as np

from .category_words import categories_said, normalised
from .device_kinds import safes
from .door_words import (
    DOOR_WORDS,
    ENTRANCE_SAID,
    door_qualifiers,
    doors_among,
    garden_side,
    no_way_in,
    says_way_in,
    ways_in_by_maker,
)
from .letting_in import (
    LET_IN,
    a_vehicle_let_in,
    a_visitor_let_in,
    animal_home_words,
    let_into_the_home,
    without_vehicles,
    without_whom,
)
from .numerals import numbered_in_digits
from .operation_words import read_operation, verb_text
from .referents import named
from .text_match import contains, tokens

DOORISH = frozenset({"Door", "GarageDoor", "Lock"})  # the categories a door word may name
_COVERS = frozenset({"Blind", "Window", "Curtain", "Shade"})  # what else opens in a room
# words that say whose door, not which ("open their door", "那个门")
_OWNERS = frozenset({"their", "his", "her", "its", "那个", "那", "个", "这个", "这", "那扇", "扇"})
# words for a dwelling that name a place without being a room's own name ("the in-law flat": the In-Law Suite)
_PLACE_NOUNS = frozenset({"flat", "apartment", "unit", "suite", "room", "place", "building"})
_ZH_POLITE = re.compile(r"[把帮我请给一下吧呀啊快了的]|打开|解锁|开")
# the words around the room someone is let into or locked out of ("could you let them into the bunkhouse",
# "we're locked out of suite B")
_OBJECT = re.compile(r"\b(?:could|can|would|will|you|possibly|just|pop|please|pls|u|open|unlock|unlatch|up|the|teh|"
                     r"hte|my|our|a|for|me|us|now|"
                     r"we're|we|re|are|i'm|i|m|am|locked out|out of|of|"
                     r"let|them|him|her|into|in)\b|[^\w\s-]", re.I)
_OPEN_UP = re.compile(r"\bopen\s+up\b|\bopen\s+(?:the\s+)?[\w' ]+?\s+up\b", re.I)  # "open up the tack room"
_FOR_WHOM = re.compile(r"\bfor\s+(?!(?:me|us)\b)[\w' ]+$")


def door_of_the_room_said(index, clause: str, about: str, pointing: bool = False) -> np.ndarray | None:
    """Per device, where a clause says a door and nothing of which one ("开门", "open their door") and another
    clause says a room: that room's one door (``room_door``'s reading of the room); None otherwise. ``pointing``:
    the clause opens what "it" stands for, and a room is all another clause names ("the luggage room, can you
    open it"): the room's one door, where nothing else there opens as a window does."""
    if about == clause or normalised(about) == normalised(clause):
        return None
    qualifiers = door_qualifiers(clause)
    if pointing and not qualifiers and any(_entrance_opened(part) for part in re.split(r"[,，;；]", about)
                                           if part.strip() != clause.strip()):
        way_in = the_way_in(index)  # "the main entrance, open it please": the way in, where the home has one
        return way_in if way_in.sum() == 1 else None
    if not (qualifiers or pointing) or any(set(q) - _OWNERS and not _someones(index, q) for q in qualifiers):
        return None
    rooms = index.names.mentioned_rooms(about)
    if not rooms:
        return None
    there = index.rooms.devices_in(rooms)
    if not qualifiers and (set(tokens(about)) & DOOR_WORDS or named(index, about).any() or
                           (there & index.table.in_categories(_COVERS)).any()):
        # "the office is stuffy, open it": its window, as much as its door; a door or a device said ("the Suite B
        # Lights, open it") is what "it" is
        return None
    doors = doors_among(index, there & index.table.in_categories(DOORISH), DOOR_WORDS)
    if doors.sum() > 1:
        doors = _carrying_room_name(index, doors, rooms)
    return doors if doors.sum() == 1 else None


def _someones(index, qualifier: tuple[str, ...]) -> bool:
    """Whether the words said with a door are a possessive that names nothing in the home: a person's ("open Mrs
    Hale's door": whose, not which; "Grandma's Door" is a name)."""
    return len(qualifier) >= 2 and qualifier[-1] == "s" and not index.names.carrying(qualifier[-2:-1]).any()


# a room kept shut for what is stored in it: 打开仓库, 冷库开一下 open its door (打开药房 switches on its lights)
_STORE_ROOM = re.compile(r"库|仓")


def a_store_opened(index, text: str) -> bool:
    """Whether a Chinese clause opens a store room it names (仓库, 冷库, 油库): its door, not its lights."""
    return not text.isascii() and any(_STORE_ROOM.search(room) for room in index.names.mentioned_rooms(text))


def room_door(index, text: str) -> np.ndarray:
    """``_find_room_door``, read once per text (each clause asks it up to three times; not to be changed); a room's
    number said in words is its number ("unlock room fourteen")."""
    return index.memo(("room door", text), lambda: _find_room_door(index, numbered_in_digits(text)))


def _find_room_door(index, text: str) -> np.ndarray:
    """Per device, where someone is let into a room ("let them into the bunkhouse"): the one door, garage
    door or door lock there, where it has exactly one (and, unless someone is let in, nothing else there
    opens as a window does). Only letting someone in says so, or a place said as all that is opened or
    unlocked ("open up the tack room", "unlock the in-law flat": ``_place_opened``)."""
    none = np.zeros(len(index.home.devices), dtype=bool)
    if animal_home := animal_home_words(text):  # "let the chickens out": the coop's door
        return _animals_door(index, animal_home)
    letting_in = bool(LET_IN.search(text))
    if letting_in:
        # where the one let in, or the vehicle, goes: "the harbourmaster into the office", "the van into the yard"
        said = tuple(_OBJECT.sub(" ", normalised(without_vehicles(without_whom(text)))).split())
        places = index.names.mentioned_rooms(text) or (index.rooms.meant_by(said) if said else [])
        if len(places) > 1:  # "let me into the flat upstairs": the one room a word says, on the floor said
            narrowed = {room for word in said for room in index.rooms.meant_by((word,)) if room in places}
            places = sorted(narrowed) if narrowed and len(narrowed) < len(places) else places
        if places and _INTO_THE_HOUSE.search(text) and not index.names.mentioned_rooms(text):
            places = []  # "let the vet into the house": the home, by its way in, not the Gate House
    else:
        places = _place_opened(index, text)
        if not places and _entrance_opened(text):
            return the_way_in(index)
        if not places and _EVERY_ROOM.search(text):  # "unlock all the guest rooms": each numbered room's door
            return _numbered_rooms_doors(index)
    if categories_said(index.rooms.without_room_names(text)):
        return none
    if not places:  # a visitor let in, nowhere said: the home's one way in ("let the guests in")
        visitor = (a_visitor_let_in(text) or let_into_the_home(text)) and \
            not (named(index, text).any() or index.names.mentioned_rooms(text))
        return the_way_in(index) if visitor else none
    there = index.rooms.devices_in(places)
    unlocking = read_operation(verb_text(text, index), frozenset()) == "unlock"
    # its door, or its French windows? Someone let in comes through a door, and a place opened up opens for people
    # to come in ("open up reception, there's a queue": no blinds are opened up)
    opening_up = bool(_OPEN_UP.search(text))
    if not (unlocking or letting_in or opening_up) and (there & index.table.in_categories(_COVERS)).any():
        return none
    doors = doors_among(index, there & index.table.in_categories(DOORISH), DOOR_WORDS)
    if not doors.any() and len(places) == 1:  # "open the cellar": the Cellar Hatch, in the stockroom above it
        doors = _carrying_room_name(index, index.table.in_categories(_DOORS) | doors_among(
            index, index.table.in_categories(DOORISH), DOOR_WORDS), places)  # (no Window Case by its window)
    if opening_up and not (unlocking or letting_in) and doors.sum() == 1:  # opened for people to come in: never
        if not _a_way_in(index, doors).any():  # by its one fire exit or patio door
            return none
    garage_doors = doors & index.table.in_category("GarageDoor")
    if letting_in and a_vehicle_let_in(text) and garage_doors.any():
        doors &= index.table.in_category("GarageDoor")  # "let the van into the yard": its gate, not the bin gate
    elif letting_in and (on_foot := doors & index.table.in_category("Lock") & _a_way_in(index, doors)).sum() == 1 \
            and garage_doors.any():
        doors = on_foot  # someone on foot let into the shop: the lock of its door, not its roller shutter
    elif letting_in and doors.sum() > 1:  # guests let into the cottage: by its door, not the patio door
        inside = doors.copy()
        inside[[d for d in np.flatnonzero(doors).tolist() if garden_side(index.home.devices[d].label)]] = False
        doors = inside if inside.any() else doors
    if doors.sum() > 1 and len(places) == 1:  # the Gate House's door is the Gate House Door, not its Road Gate
        doors = _carrying_room_name(index, doors, places)  # (of a floor's rooms, no one room's door is meant)
    return doors if doors.sum() == 1 else none


# every room of a kind said, none of the home's rooms so called ("all the guest rooms", 所有客房)
_EVERY_ROOM = re.compile(r"\b(?:all|every|each)\s+(?:of\s+)?(?:the\s+)?(?:[a-z]+\s+)?rooms?\b(?!\s+doors?\b)|"
                         r"(?:所有|全部|每个|每间)的?(?:客房|房间)(?!门)", re.I)
_NUMBERED = re.compile(r"^(?:room\s*)?\d{1,4}(?:号房|房间?)?$", re.I)  # Room 4, 203, 203房


def _numbered_rooms_doors(index) -> np.ndarray:
    """Per device: the one door of each numbered room (Room 1, Room 2, 203), where two or more are; none
    otherwise (a room with two doors, or one numbered room, says no door for "all the rooms")."""
    none = np.zeros(len(index.home.devices), dtype=bool)
    numbered = [room for room in index.home.rooms if _NUMBERED.match(room.strip())]
    if len(numbered) < 2:
        return none
    out = none.copy()
    for room in numbered:
        doors = doors_among(index, index.rooms.devices_in([room]) & index.table.in_categories(DOORISH), DOOR_WORDS)
        if doors.sum() != 1:
            return none
        out |= doors
    return out


def _a_way_in(index, doors: np.ndarray) -> np.ndarray:
    """The devices of the mask whose label says no fire exit, nor a door out to a patio or garden."""
    out = doors.copy()
    for d in np.flatnonzero(doors).tolist():
        label = index.home.devices[d].label
        out[d] = not (no_way_in(label) or garden_side(label))
    return out


def the_way_in(index) -> np.ndarray:
    """Per device: the home's one way in, a door or a door's lock whose name, room or own name says it is (the
    Front Door, the lock in the Entry, a Paxton "Entry Door Controller", a "Salto" at reception; else the door of a
    shop or a waiting room); none where several are (which one?)."""
    def find() -> np.ndarray:
        home = index.home
        doors = doors_among(index, index.table.in_categories(_WAY_IN_KINDS), DOOR_WORDS)
        way_in = {d for d in np.flatnonzero(doors).tolist() if says_way_in(home.devices[d])} | \
            set(ways_in_by_maker(home.devices, home.floors))
        if not way_in:  # a shop's or a practice's: the door of the room where visitors come in
            way_in = {d for d in np.flatnonzero(doors).tolist() if set(tokens(home.devices[d].room)) & _PUBLIC_ROOMS}
        out = np.zeros(len(home.devices), dtype=bool)
        if len(way_in) == 1:
            out[list(way_in)] = True
        return out
    return index.memo(("the way in",), find)


_DOORS = frozenset({"Door", "GarageDoor"})  # a door by what it is, whatever its name
_WAY_IN_KINDS = frozenset({"Door", "Lock"})  # a garage door or a gate is no way in for people
_PUBLIC_ROOMS = frozenset({"reception", "lobby", "foyer", "shop", "showroom", "salon", "waiting"})


def _animals_door(index, home_words: frozenset[str]) -> np.ndarray:
    """Per device: the one door, garage door or door lock whose label or room says the animals' place (the Coop
    Door, the door of the Kennels); none where no one does."""
    doors = doors_among(index, index.table.in_categories(DOORISH), DOOR_WORDS)
    found = [d for d in np.flatnonzero(doors).tolist()
             if {w.rstrip("s") for w in tokens(f"{index.home.devices[d].label} {index.home.devices[d].room}")}
             & home_words]
    out = np.zeros(len(index.home.devices), dtype=bool)
    if len(found) == 1:
        out[found] = True
    return out


def _carrying_room_name(index, devices: np.ndarray, rooms: list[str]) -> np.ndarray:
    """``devices`` (per device) less those whose label holds the name of none of the rooms (a leading "The"
    aside)."""
    names = [name for room in rooms if (name := tuple(w for w in tokens(room) if w != "the"))]
    out = devices.copy()
    for d in np.flatnonzero(devices).tolist():
        label = tokens(index.home.devices[d].label)
        out[d] = any(contains(label, name) for name in names)
    return out


def _entrance_opened(text: str) -> bool:
    """Whether the way in is all a clause opens or unlocks ("unlatch the main entrance, please"): a door said
    by where it stands rather than by a door word."""
    rest = _FRONT_ALONE.sub(" ", ENTRANCE_SAID.sub(" ", _OBJECT.sub(" ", _FOR_WHOM.sub(" ", normalised(text)))))
    said = ENTRANCE_SAID.search(text) or re.search(r"\b(?:unlock|unlatch)\s+the\s+front\b", text, re.I)
    return bool(said) and text.isascii() and not rest.split()


# "the front" unlocked with nothing after it ("can u unlok the front pls"): the front door ("open the front" may be
# its blinds)
_FRONT_ALONE = re.compile(r"\b(?:the\s+)?front(?=\s*(?:$|[,.!?;]|(?:please|pls|plz|now|for|so|then|again)\b))", re.I)


def _place_opened(index, text: str) -> list[str]:
    """The rooms a clause opens or unlocks as a whole (its verb read by the caller), where a place is all
    it says besides the verb and polite words ("can you open up the tack room", "unlock the in-law flat",
    "把仓库打开"); none otherwise."""
    rooms = index.names.mentioned_rooms(text)
    rest = index.rooms.without_room_names(text)
    if text.isascii():  # whom it is for says nothing of what to open ("unlock suite C for housekeeping")
        rest = _OBJECT.sub(" ", _FOR_WHOM.sub(" ", normalised(rest)))
    else:
        rest = _ZH_POLITE.sub(" ", rest)
    words = tuple(w for w in tokens(rest) if w not in _PLACE_NOUNS)
    if not words:
        return rooms
    if rooms or index.names.label_phrases.found_in(words):  # "open the kiln": the Kiln, no Kiln Shed
        return []
    return index.rooms.meant_by(words)  # "open the shed": the Machine Shed


# someone said to be at a place ("he's at the pontoon gate", "the postman's round the back at the yard gate"; "I'm
# at" is the speaker: where they are let in, never where a visitor waits), and the place's words up to the next
# preposition
_WAITING_AT = re.compile(r"(?:'s|'re|'m|\bis|\bare|\bam)\s+(?:[\w-]+\s+){0,4}?(?:at|by|outside|in\s+front\s+of)\s+"
                         r"(?:the\s+|our\s+|my\s+)?((?:(?!(?:in|with|on|for|by|at|and|so|because)\b)[\w-]+\s*){1,3})",
                         re.I)
_INTO_THE_HOUSE = re.compile(r"\binto\s+(?:the|my|our)\s+(?:house|home)\b", re.I)  # ("my flat" may be one of many)
_SPEAKER_AT = re.compile(r"'m|am\b", re.I)
_SPEAKER_LET_IN = re.compile(r"\b(?:let|buzz)\s+(?:me|us)\b", re.I)
_ZH_WAITING_AT = re.compile(r"(?:[他她人]们?正?在|到了?)([\u4e00-\u9fff]{1,5}?)"  # 在后门, 到后门了
                            r"(?=门口|外面|外边|那边|那儿|那里|等|没|呢|了|[，,。！!]|$)")


def door_waited_at(index, clause: str, about: str | None) -> np.ndarray | None:
    """Per device, for a clause letting someone in that says nowhere ("let him through"), where another clause says
    where they wait: the one door of that place ("he's at the pontoon gate with his shopping": the Pontoon's; "the
    lorry is waiting outside the yard": the yard's gate), or the one door called so ("the engineer is at the gate in
    his car": the one gate; 他在后门没带钥匙: the 后门); None where no other clause says so or no one door is.
    Read once per clause and text (the unnamed "it" and the clause's own reading each ask)."""
    if about is None:
        return None
    return index.memo(("door waited at", clause, about), lambda: _door_waited_at(index, clause, about))


def _door_waited_at(index, clause: str, about: str) -> np.ndarray | None:
    if about == clause or index.names.mentioned_rooms(clause) or any(door_qualifiers(clause)):
        return None  # "Priya's at the side, let her in the staff door": the door the clause says
    others = about.replace(clause.strip(), " ")
    waiting = _WAITING_AT.search(others) or _ZH_WAITING_AT.search(others)
    if waiting is None or _SPEAKER_AT.match(waiting.group(0)) and not _SPEAKER_LET_IN.search(clause):
        return None  # where the speaker is says where they are let in, not where the wholesaler waits
    place = tokens(waiting.group(1))
    into = f"let them into the {' '.join(place)}" if waiting.re is _WAITING_AT else f"让他进{waiting.group(1)}"
    if index.names.mentioned_rooms(into) or index.rooms.meant_by(place):  # a place of the home, never the way in
        door = room_door(index, into)
        if door.any():
            return door
    # a door said there by its words: the one door device whose label holds them ("the yard gate", "the gate"; "out
    # at the road": the Road Gate)
    doors = index.table.in_categories(DOORISH) & ~safes(index)
    called = [d for d in np.flatnonzero(doors).tolist() if set(place) <= set(tokens(index.home.devices[d].label))]
    if len(called) != 1:
        return None
    out = np.zeros(len(index.home.devices), dtype=bool)
    out[called[0]] = True
    return out
