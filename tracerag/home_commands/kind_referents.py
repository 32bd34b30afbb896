"""Which sensitive devices a clause refers to by a word for their kind, where it names none by name.

"Unlock the door", "解锁", "the gas", "open the garage" (a room): the word for a kind (or, alone, a verb that names
its kind) refers to every device of that kind in the rooms said, less what the words also say of other devices:
a word an ordinary device's name carries that could do what is asked ("water on" beside a Water Heater), a label
that says its device is another kind ("the garage door" is no Street Gate), a word another cooker's name carries
("put the range on" beside a Range Oven), the supply a word names (water is no gas), the door the door words
describe (``door_fitting``). ``SensitiveRequests`` asks this for a clause that names no device.
"""

from __future__ import annotations

import re

import numpy as np

from .category_words import (
    CATEGORY_WORDS,
    categories_said,
    ends_with_kind_word,
    family_of,
    normalised,
    only_specific,
    says_which,
    several_said,
    word_pattern,
)
from .command_choice import choice_of
from .door_fitting import SensitiveDoors
from .door_words import ENTRANCE_WORDS, door_nouns, doors_among, lock_qualifiers, says_door_locks
from .operation_words import read_operation, verb_text
from .places import places_after_in
from .referents import kinds_acted_on, outside_room_names
from .room_doors import DOORISH, room_door
from .sensitive_commands import SENSITIVE_KINDS, SensitiveRows
from .supply_mains import gas_feeding, main_said, the_main
from .text_match import tokens

# the door said to lead somewhere: "the door to the back garden" is the Garden Door in the kitchen
DOOR_TO = re.compile(r"\b(?:door|gate)s?\s+(?:to|into|onto|out to|leading to|that goes to)\b|通往|通向|去", re.I)
# the words left around a verb that names its kind on its own ("帮我解锁", "please unlock"): no other object
BARE = re.compile(r"[\s的了吧呀啊呢把给帮我请一下快马上现在都先]|\b(?:please|can|could|would|will|you|u|it|now|for|me|"
                  r"the|a|right|away|all|up|first|then|everything)\b", re.I)  # "unlock everything": every lock

# what a switching verb does on a device that opens rather than switches, and the other way round
_COUNTERPART = {"open": "on", "close": "off", "on": "open", "off": "close"}
# "the alarm", 警报 may be a siren or a panel ("the alarm panel" only a panel)
_EITHER_ALARM = re.compile(r"\balarms?\b(?!\s+(?:panel|system|keypad|siren|bell|sounder))|警报(?!器)|报警(?![器系面])",
                           re.I)

# a roller shutter is one form of garage door: said so, it is no gate opener where some garage door is a shutter
_ROLLER = re.compile(r"卷闸|卷匝|铁帘|卷帘门|卷门|\broll(?:er|-?up)\b|\bshutters?\b", re.I)
# a door a motor opens: no lock is one ("把院子的电动门打开" beside a gate opener and a gate's lock)
_POWERED = re.compile(r"电动|自动|感应")
# watering something: a valve that waters it, never the main ("water the vines", 给菜园浇浇水)
_WATERING = re.compile(r"^\s*(?:please\s+)?water\s+(?:the|my|our)\b|浇浇?水|浇花|浇菜", re.I)
# the words for a gas that burns, and a gas that is no fuel: a valve labelled so is not "the gas"
_FUEL = frozenset({"gas", "propane", "lpg", "lp gas", "natural gas", "燃气", "煤气", "天然气", "液化气"})
_OTHER_GAS = re.compile(r"\b(?:oxygen|o2|co2|carbon dioxide|argon|nitrogen|nitrous|helium|laughing gas|beer gas)\b|"
                        r"氧气|二氧化碳|氮气|氩气|笑气",
                        re.I)


def _kinds_labelled(label: str) -> set[str]:
    """The kinds a label says its device is: any word for a kind in an English label ("Garage Door"), the word a
    Chinese label ends with (看门狗 is a dog, not a door; 门神 no door either)."""
    said = categories_said(label)
    if label.isascii():
        return set(said)
    return {kind for kind, words in said.items() if any(ends_with_kind_word(label, w) for w in words)}


def said_in(pattern: re.Pattern, text: str) -> bool:
    return bool(pattern.search(text))


class KindReferents:
    """The sensitive rows a clause refers to by a word for their kind (built once per index, with its doors)."""

    def __init__(self, index, sensitive: SensitiveRows, doors: SensitiveDoors):
        self.index = index
        self.sensitive = sensitive
        self.doors = doors

    def referred(self, text: str, said: str, operation: str | None, devices: np.ndarray) -> np.ndarray:
        """Per sensitive row, where the text names no device: a word for its kind (or, alone, a verb that names
        the kind: "解锁", "please unlock") refers to it, in the rooms said; a door word to the door it describes
        (the way in when bare, the one of the room said, a gate any gate); "进门那把锁" to a lock so called."""
        index, sensitive = self.index, self.sensitive
        kinds = sensitive.row_kinds
        rooms = index.names.mentioned_rooms(text) or places_after_in(index, text)  # "the gas at the meter in the alley"
        referred = index.rooms.devices_in(rooms)[devices] if rooms else np.ones(len(devices), dtype=bool)
        verbless = text
        for kind in SENSITIVE_KINDS:  # the 锁 of "开锁" is the verb's, no lock said
            verbless = kind.self_naming.sub(" ", verbless)
        kinds_said = self._kinds_referred(index.names.without_names(verbless), operation, rooms)
        verb = read_operation(verb_text(text, index), frozenset())
        room_kinds: set[str] = set()  # kinds said only by the name of a room ("open the garage")
        if rooms and verb not in (None, "off") and (verb != "on" or not text.isascii()):
            # "open the garage", "打开车库" where the garage is a room: its garage doors, the room's name their
            # word ("turn on the garage" switches what is in it), and no other kind said ("车库开灯": its lights)
            said_kinds = outside_room_names(index, categories_said(verbless), verbless)  # no gate in "gate house"
            by_room = {kind for kind, words in said_kinds.items() if all(index.rooms.names_a_room(w) for w in words)}
            room_kinds = by_room if by_room == set(said_kinds) else set()
            kinds_said |= room_kinds
        self_named = np.asarray([said_in(k.self_naming, said) and self._bare(i, said)
                                 for i, k in enumerate(SENSITIVE_KINDS)] + [False])
        worded = self_named[kinds] | np.asarray([bool(n & kinds_said)
                                                 for n in sensitive.noun_sets])[sensitive.noun_code]
        worded &= ~self._labelled_otherwise(devices, kinds_said)
        named_kinds = categories_said(index.names.without_names(verbless))  # the words said for each kind
        worded &= ~self._word_another_names(named_kinds, devices)
        water = named_kinds.get("WaterValve", ())
        if "GasValve" not in kinds_said and only_specific("WaterValve", water):
            # a word for water is no word for gas: "the water main", 自来水 name no gas valve ("the valve" may)
            worded &= index.table.device_categories[devices] != "GasValve"
        if set(named_kinds.get("GasValve", ())) & _FUEL and not _OTHER_GAS.search(verbless) and \
                not several_said(verbless):
            # "the gas", 燃气 is what burns: no Oxygen Valve, no CO2 for the beer lines ("the co2" names it; "every gas
            # valve" is every one)
            worded &= ~((index.table.device_categories[devices] == "GasValve") &
                        np.asarray([bool(_OTHER_GAS.search(index.home.devices[d].label)) for d in devices.tolist()]))
        door_words = [*named_kinds.get("Door", ()), *named_kinds.get("GarageDoor", ())]
        if door_words and all(_POWERED.search(w) for w in door_words):
            worded &= index.table.device_categories[devices] != "Lock"
        garage_words = named_kinds.get("GarageDoor", ())
        if garage_words and all(_ROLLER.search(w) for w in garage_words):
            # "门楼的卷闸", "the roller door": the shutter, not the 院门 gate opener beside it
            garage = index.table.device_categories[devices] == "GarageDoor"
            rolled = garage & np.asarray([bool(_ROLLER.search(index.home.devices[d].label)) for d in devices.tolist()])
            if rolled.any():
                worded &= ~garage | rolled
        alarms = {"Siren", "SecurityPanel"} & kinds_said
        if len(alarms) == 1 and not _EITHER_ALARM.search(verbless):
            # "the alarm panel" is no siren, "the siren" no panel ("the alarm", 警报 may be either)
            worded &= index.table.device_categories[devices] != ({"Siren", "SecurityPanel"} - alarms).pop()
        if rooms and "GasValve" in kinds_said:  # "厨房的燃气" where the kitchen has no gas valve: the one feeding it
            referred |= gas_feeding(index, rooms)[devices]
        if _WATERING.search(text) and (worded & (index.table.device_categories[devices] == "WaterValve")).sum() > 1:
            worded &= ~the_main(index, "WaterValve")[devices]  # "water the vines": no main waters anything
        if supply := main_said(index, text):  # "the water main", "gas back on at the meter": the main alone
            main = the_main(index, supply)[devices]
            if main.any():
                worded = np.where(index.table.device_categories[devices] == supply, main, worded)
        if "Door" in kinds_said:
            worded = self.doors.worded(worded, kinds_said, verbless, rooms, devices)
            if rooms and DOOR_TO.search(text):  # "the door to the back garden": the Garden Door in the kitchen
                room_words = {w for room in rooms for w in tokens(room)} - ENTRANCE_WORDS
                referred |= np.asarray([bool(sensitive.device_words[d] & room_words & set(tokens(
                    index.home.devices[d].label))) for d in devices.tolist()])
        lock_words = named_kinds.get("Lock", ())
        if says_door_locks(lock_words):  # "其他门锁都打开", "the door locks": the locks of doors, no safe
            locks = index.table.device_categories[devices] == "Lock"
            worded &= ~locks | doors_among(index, index.table.in_category("Lock"), door_nouns(verbless))[devices]
        qualified = lock_qualifiers(verbless)
        if qualified:
            worded &= np.asarray([index.table.device_categories[d] != "Lock" or
                                  any(q <= sensitive.device_words[d] for q in qualified) for d in devices.tolist()])
        if not kinds_said - room_kinds and verb in ("open", "unlock") and operation in ("open", "unlock"):
            # "let them into the bunkhouse"; "unlock suite C" with its blinds (the verb read as said)
            return (referred & worded) | (room_door(self.index, verbless) | room_door(self.index, text))[devices]
        return referred & worded

    def _word_another_names(self, named_kinds: dict[str, list[str]], devices: np.ndarray) -> np.ndarray:
        """Per row's device: a word said for its kind is also a word before the head of another device's label
        that does the same sensitive thing ("put the range on": a range is a hob, and the Range Oven is called
        so): which one is meant? Neither is chosen for the word."""
        sensitive, categories = self.sensitive, self.index.table.device_categories
        modifiers = self.index.memo(("label modifiers",), lambda: {
            d: frozenset(tokens(self.index.home.devices[d].label)[:-1]) for d in sensitive.device_words})
        out = np.zeros(len(devices), dtype=bool)
        for kind, words in named_kinds.items():
            # a word for the carrier's own kind or family too says nothing apart ("the alarm": the Alarm Siren is
            # one; 阀 of 燃气阀门 a valve), nor does a Chinese label's character (its head is more than its last)
            carried = {int(sensitive.row_kinds[i]) for i, d in enumerate(devices.tolist())
                       if family_of(categories[d]) != family_of(kind) and any(
                           w.isascii() and w in modifiers[d] and categories[d] not in categories_said(w)
                           for w in words)}
            if carried:
                out |= (categories[devices] == kind) & np.isin(sensitive.row_kinds, list(carried))
        return out

    def _labelled_otherwise(self, devices: np.ndarray, kinds_said: set[str]) -> np.ndarray:
        """Per row's device: its label says it is a kind its category's words do not name, one that has sensitive
        commands or is a door, and no word for that kind is said: "the garage door" is no Street Gate, though a
        gate opener is a GarageDoor (a siren nicknamed 大喇叭 is still "the siren": no speaker is sensitive)."""
        sensitive = self.sensitive
        telling = sensitive.categories | DOORISH
        labelled = self.index.memo(("label kinds",), lambda: {
            d: _kinds_labelled(self.index.home.devices[d].label) & telling for d in sensitive.device_words})
        return np.asarray([bool(labelled[d]) and not labelled[d] & (sensitive.noun_sets[code] | kinds_said)
                           for d, code in zip(devices.tolist(), sensitive.noun_code.tolist(), strict=True)],
                          dtype=bool)

    def _kinds_referred(self, text: str, operation: str | None, rooms: list[str]) -> set[str]:
        """The kinds the text names by a word for them (``referents.kinds_acted_on``), less those whose word also
        stands in the name of an ordinary device that could do what is asked: "water on" where a Water Heater and a
        Water Feature Pump switch on names no water valve; "unlock the door" beside a Back Door Light still names
        the locks (a light does not unlock). Where ``rooms`` are said, only what stands there counts."""
        index = self.index
        said = kinds_acted_on(index, text)
        if not said or operation is None:
            return set(said)
        choice = choice_of(index)  # a valve opens where a pump switches on: both answer "water on"; "open the
        # door" switches no Blue Door Sconce on
        able = choice.devices_able(operation)
        switched = read_operation(verb_text(text, index), frozenset())  # the verb as said: "turn on" switches
        if switched in ("on", "off"):
            able = able | choice.devices_able(switched) | choice.devices_able(_COUNTERPART[switched])
        plain = able & ~self.sensitive.devices
        if rooms:  # "turn the water back on at the well house": what carries the word in the rooms said
            plain &= index.rooms.devices_in(rooms)

        def own(word: str) -> bool:
            carriers = np.flatnonzero(index.names.carrying(tokens(word)) & plain).tolist()
            labels = (index.home.devices[d].label for d in carriers)  # read as far as the answer needs
            if not word.isascii():  # 灶台灯 is a light, 大门摄像头 a camera: their 灶 and 门 only say which (a Chinese
                # name ends with its kind)
                return all(categories_said(label) and not ends_with_kind_word(label, word) for label in labels)
            return all(says_which(label, word) for label in labels)

        # "turn the water on at the main valve": where it is done says the kind again, in a word only it has; "the
        # gas" is the supply, whatever burns it ("turn the gas back on" beside a Gas Fireplace: its valve)
        return {kind for kind, words in said.items() if kind == "GasValve" or any(own(w) for w in words) or
                kind in CATEGORY_WORDS and
                any(own(m.group(0)) for m in word_pattern(*CATEGORY_WORDS[kind]).finditer(normalised(text)))}

    def _bare(self, kind: int, text: str) -> bool:
        """Whether a verb that names its kind on its own stands alone in the clause, rooms and polite words
        aside ("帮我解锁", "unlock the garage" where the garage is a room; not "unlock my potential")."""
        verbless = SENSITIVE_KINDS[kind].self_naming.sub(" ", text)
        return not BARE.sub("", self.index.rooms.without_room_names(verbless)).strip()
