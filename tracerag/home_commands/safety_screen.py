"""Never act on what was not asked: what one utterance may reach in one home, and in what order.

This module decides, deterministically and whatever an LM said, what a command search may answer
(``CommandSafety.screen``, a ``Screen`` of masks over the command index's rows):

- **Sensitive commands** (``sensitive_commands``) are blocked, never a candidate and never in a plan, unless
  the utterance itself asks for them (``sensitive_requests``).
- **Devices never to act on** (``policy.json`` ``never``) are blocked outright, and left out of plans.
- **Polarity**: an utterance that says one way ("关", "turn off") ranks the commands that switch the
  other way last.
- **Values**: a number said with a unit only reaches commands of that unit ("26度" is a temperature,
  never a colour temperature in kelvin, never a brightness in %): the others are blocked. When the
  utterance sets a value ("调到26度"), commands that cannot take it (no value: off; a range it lies
  outside) rank after every command that can, so a setpoint is never answered with ``off``.
- **LM parses** are checked against the utterance and the home (``check_parse``).

The command index takes the verdict as plain masks over its rows; ``CommandRetrieval`` reports what was held
back (``withheld``) and marks the sensitive candidates it keeps; ``smarthome.execute`` holds a sensitive call
as ``needs_confirmation`` unless it is confirmed.
"""

from __future__ import annotations

import re
import weakref
from functools import cached_property

import numpy as np

from ..device_operations import opposite
from ..signatures.query_ir import QueryIR, action_polarity
from .argument_channel import number_fit
from .category_words import categories_said, with_family
from .command_choice import choice_of
from .command_results import Candidate, Withheld
from .letting_in import LET_IN
from .name_index import PhraseIndex
from .operations import operations_of
from .referents import kinds_acted_on, named
from .request_reading import split_excepted
from .room_doors import DOORISH
from .sensitive_commands import SENSITIVE_KINDS, SensitiveRows
from .sensitive_requests import SensitiveRequests
from .several_requests import acting_clauses
from .text_match import tokens
from .values import is_target, number_and_family

# Commands that switch, open, start or sound something (+1) and those that stop it (-1): an utterance that says
# one way ("turn off the siren", "打开前门") ranks the other way last ("siren" never answers "turn off").
_COMMAND_POLARITY = {**dict.fromkeys(("on", "open", "unlock", "unlatch", "start", "play", "resume", "siren", "strobe",
                                      "both", "armAway", "armStay", "enableCharging", "fanOn", "turn_on", "open_cover",
                                      "open_valve", "media_play"), 1),
                     **dict.fromkeys(("off", "close", "lock", "stop", "pause", "disarm", "disableCharging", "turn_off",
                                      "close_cover", "close_valve", "media_pause", "media_stop", "stop_cover"), -1)}
# Commands that halt a movement: "关窗帘" closes a blind that can close, it does not pause it ("窗帘停一下" does)
_HOLDS = frozenset({"pause", "stop_cover"})
_HOLD_WORDS = re.compile(r"停|\b(stop|pause|hold|halt)\b", re.IGNORECASE)
# A colour said as the value to set ("调成绿色", "turn the lights blue"): only a colour command can take it.
# White is one only where the utterance says colour ("set the color to white"): "暖白", "warm white" are
# colour temperatures.
_COLOUR = re.compile(r"[红绿蓝黄紫橙粉青棕]色|\b(red|green|blue|yellow|purple|orange|pink|turquoise|cyan|magenta|"
                     r"violet|brown)\b|(颜色|\bcolou?r\b(?!\s*temp)).*"
                     r"((?<![暖冷])白色|(?<!warm )(?<!cool )(?<!cold )\bwhite\b)",
                     re.IGNORECASE)
COLOUR_CAPABILITIES = frozenset({"colorControl"})
TILT_CAPABILITIES = frozenset({"windowShadeTiltLevel"})
_TILT = re.compile(r"角度|叶片|倾斜|翻转|\b(tilt|angle|slats?)\b", re.IGNORECASE)

# Words that switch no power here: "up"/"down" ("turn up the speakers"); a start or a stop, which a machine's
# cycle may answer ("洗衣机开始洗衣服", "start the washer"); "on" where it says where, not how ("next item on
# our speaker", "on Office Speaker go back": after a verb it switches, "turn on the light", "bring on my fan").
_NO_SWITCH = re.compile(r"开始|启动|停止|暂停|\b(up|down|start|stop|pause|resume|play)\b|"
                        r"(?<!turn )(?<!switch )(?<!put )(?<!power )(?<!flip )(?<!bring )(?<!get )"
                        r"(^\s*on\b|\bon (?=(the|my|our|your|this|that|a)\b))", re.IGNORECASE)
# a value set by its name ("to candle light", "to blue"): the utterance does not only switch
_SETS_TO = re.compile(r"\bto (?!(on|off)\b)[a-z]", re.IGNORECASE)


class Screen:
    """What one utterance may reach in one home, per row of the command index. ``blocked`` and ``skipped`` are
    read at once; the rest only rank a search whose operation is unknown, and are read when it asks."""

    def __init__(self, safety: CommandSafety, text: str, blocked: np.ndarray, skipped: np.ndarray,
                 asked_devices: np.ndarray, asked_rows: np.ndarray):
        self._safety, self.text = safety, text  # the utterance screened
        self.blocked = blocked  # never a candidate, never in a plan
        self.asked_rows = asked_rows  # the sensitive rows the utterance asks for
        self.skipped = skipped  # (blocked too) the rows of devices the policy never acts on: left out of plans
        # per device: a word for its kind may name it (``SensitiveRows.plain_devices``), and a device with a
        # sensitive command the utterance asks for ("turn on the stove": the Cooktop) is named by its kind too
        self.kind_named = safety.sensitive.plain_devices | asked_devices

    @cached_property
    def _ranking(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self._safety.ranking_masks(self.text, self.blocked)

    @property
    def demoted(self) -> np.ndarray:
        """Ranked after every row that is not: it switches the other way than the utterance says, or turns a
        blind's slats where no angle is said."""
        return self._ranking[0]

    @property
    def unfit(self) -> np.ndarray:
        """Ranked after every row that is not, unless its device is named in full: it cannot take the value the
        utterance sets."""
        return self._ranking[1]

    @property
    def other_kind(self) -> np.ndarray:
        """Its command takes no value of the kind said (a colour; unfit too), or does not switch the way an
        utterance that only switches says: no evidence for a plan's command, where a number out of range still
        is (refused per device)."""
        return self._ranking[2]

    @property
    def switching(self) -> np.ndarray:
        """The command that switches the way said on a device of the kind said ("关风扇": the fan's off, never its
        speed): it answers for its device."""
        return self._ranking[3]


class CommandSafety:
    """The safety rules applied to one home's command index (built once per index; cheap per query)."""

    def __init__(self, index):
        self.index = index
        self.table = index.table
        self.sensitive = SensitiveRows(index.table)
        self.requests = SensitiveRequests(index, self.sensitive)
        self._device_position = {device.device_id: i for i, device in enumerate(index.home.devices)}
        specs = [spec for _, spec in self.table.slot_commands]
        self._slot_colour = np.asarray([spec.capability in COLOUR_CAPABILITIES for spec in specs], dtype=bool)
        # a colour's name is no number: a hue or a saturation alone cannot take "orange", a whole colour can
        self._slot_colour_number = self._slot_colour & np.asarray(
            [spec.type in ("number", "integer") for spec in specs], dtype=bool)
        self._value_phrases = PhraseIndex({p for shape in index.arguments.shapes for p in shape.phrases})
        self._slot_tilt = np.asarray([spec.capability in TILT_CAPABILITIES for spec in specs], dtype=bool)
        # per slot: +1 for a command that switches, opens or starts something, -1 for one that stops it
        self._slot_polarity = np.asarray([_COMMAND_POLARITY.get(spec.command, 0) for spec in specs], dtype=np.int64)
        self._slot_hold = np.asarray([spec.command in _HOLDS for spec in specs], dtype=bool)

    def __deepcopy__(self, memo):
        return self

    # ----- one utterance -------------------------------------------------------------------------

    def screen(self, text: str) -> Screen:
        """The rows ``text`` (the utterance with its negations read) may not reach, or reaches last."""
        table = self.table
        skipped = self.sensitive.never[table.row_device]
        blocked = skipped.copy()
        asked_devices = np.zeros(len(self.index.home.devices), dtype=bool)
        asked_rows = np.zeros(0, dtype=np.int64)
        if self.sensitive.rows.size:
            asked = self.requests.asked(text)
            blocked[self.sensitive.rows] |= ~asked
            asked_rows = self.sensitive.rows[asked]
            asked_devices[table.row_device[asked_rows]] = True
        unit_conflict, _, _ = self._value_fit(text, self._polarity(text))
        blocked |= unit_conflict[table.row_slot]
        return Screen(self, text, blocked, skipped, asked_devices, asked_rows[~blocked[asked_rows]])

    def _polarity(self, text: str) -> str | None:
        """The way the utterance switches ("on", "off"), its room names aside (玄关 closes nothing)."""
        return self.index.memo(("polarity", text), lambda: action_polarity(self.index.rooms.without_room_names(text)))

    def ranking_masks(self, text: str, blocked: np.ndarray) -> tuple[np.ndarray, ...]:
        """(demoted, unfit, other kind, switching) rows: see ``Screen``."""
        table = self.table
        said = self._polarity(text)
        _, cannot_take, other_kind = self._value_fit(text, said)
        opposite = self._slot_polarity == {"on": -1, "off": 1}.get(said, 0) if said else \
            np.zeros(len(table.slots), dtype=bool)
        # a blind's slats turn only when their angle is said: "百叶窗开到一半" is its position
        tilt = self._slot_tilt & (not _TILT.search(text))
        opposite |= tilt
        other_kind = (other_kind | tilt)[table.row_slot] & ~blocked
        switching, otherwise = self._switching(text, blocked)
        return (opposite[table.row_slot] & ~blocked, (cannot_take[table.row_slot] & ~blocked) | other_kind,
                other_kind | otherwise, switching)

    def _value_fit(self, text: str, polarity: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per slot: (the value said has a unit the command's is not; the utterance sets a value the command
        cannot take: it takes none, only changes one by an amount, or the number lies outside its range; the
        command takes no value of the kind said: a colour). ``polarity``: the way the utterance switches."""
        index, table = self.index, self.table
        none = np.zeros(len(table.slots), dtype=bool)
        if self._slot_colour.any() and polarity is None and _COLOUR.search(text):
            # "打开红色台灯" switches a lamp; "调成红色" sets a colour, with a command that takes a whole one
            whole = self._slot_colour & ~self._slot_colour_number
            return none, none, ~(whole if whole.any() else self._slot_colour)
        said = index.arguments.said_value(text)
        value = number_and_family(said)
        if value is None or not len(table.slots):
            return none, none, none
        target = is_target(said)
        said = index.arguments.value_phrases.found_in(tokens(text))
        conflict, cannot = [], []
        for phrases, numeric, relative, takes, unit, low, high in index.arguments.shapes:
            clash = bool(numeric and value[1] and unit and value[1] != unit)
            conflict.append(clash)
            # a number in a unit ("26度", "50%") is none of a listed set of values, unless one is named
            listed = not numeric and takes and value[1] is not None and said.isdisjoint(phrases)
            # outside the range only in the same unit: "96" may be °F, "84%" of a fan's speed steps is a step
            outside = value[1] is not None and value[1] == unit and number_fit(value, unit, low, high) == 0
            cannot.append(target and not clash and (not takes or listed or (numeric and (relative or outside))))
        return np.asarray(conflict)[index.arguments.slot_shape], np.asarray(cannot)[index.arguments.slot_shape], none

    def _switching(self, text: str, blocked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row, for an utterance that only switches a kind of device ("fans on", "关掉风扇": an on/off word,
        a kind, no value, no listed value or other command named): (the commands that switch that way on the
        devices of that kind, the others there: a speed, a mode). "关风扇" is the fan's off, never a speed with
        no value; a robot cleaner with no switch still starts by its movement; "把声音关掉" names no kind (the
        mute, not the TV's power)."""
        index, table = self.index, self.table
        none = np.zeros(len(table.rows), dtype=bool)
        said = action_polarity(_NO_SWITCH.sub(" ", index.rooms.without_room_names(text)))
        kinds = kinds_acted_on(index, text)
        if said is None or not kinds or index.arguments.said_value(text) is not None or _SETS_TO.search(text):
            return none, none
        of_kind = table.in_categories(kinds)
        kind_words = sorted({w for words in kinds.values() for w in words}, key=len, reverse=True)
        named_values = self._value_phrases.found_in(tokens(text))
        listed = np.asarray([not named_values.isdisjoint(shape.phrases) for shape in index.arguments.shapes],
                            dtype=bool)[index.arguments.slot_shape]
        # what another command acts on, said beside the kind ("打开所有空调的扫风": the swing, not the power)
        subject = index.subjects.scores(re.sub("|".join(map(re.escape, kind_words)), " ", text)) >= 1.0
        named = (listed | subject | index.verbs.named(text))[table.row_slot]
        way = self._slot_polarity[table.row_slot] == (1 if said == "on" else -1)
        hold = way & self._slot_hold[table.row_slot] & (not _HOLD_WORDS.search(text))
        way &= ~(hold & (np.bincount(table.row_device[way & ~hold], minlength=len(of_kind)) > 0)[table.row_device])
        # a device where a listed value or another verb command is named ("开启制冷模式", "取消静音") is set to
        # it, not switched
        of_kind &= np.bincount(table.row_device[named & ~way], minlength=len(of_kind)) == 0
        switching = way & ~blocked & of_kind[table.row_device]
        switches = np.bincount(table.row_device[switching], minlength=len(of_kind)) > 0
        return switching, ~way & ~named & switches[table.row_device]

    # ----- an LM's parse ---------------------------------------------------------------------------

    def check_parse(self, parsed: QueryIR, rules: QueryIR, text: str) -> tuple[QueryIR, list[str]]:
        """The LM's parse with every field that fails a check replaced by the rule parse's, and the names of
        the checks that failed (empty: the parse stands as the LM gave it).

        - ``polarity``: the action must not switch the other way than the utterance's own words (打开 /
          关闭, open / close, lock / unlock, negations read: ``text``);
        - ``type_hint``: a category the home has, and not one the utterance's words for a kind contradict
          ("打开客厅的灯" names a Light: Lock is overruled; "排气扇" may be a Switch whose name says 扇);
        - ``asked``: the operation must not miss the sensitive command the utterance asks for in so many words
          ("preheat the oven" parsed as "on" where the oven starts: the words' operation stands);
        - ``name_hint``: words the utterance says (room words aside): an LM must not name another device;
        - ``scope_include`` / ``scope_exclude``: rooms of this home (or, excluded, a device it names)."""
        index = self.index
        update: dict[str, object] = {}
        checks = {"action": "polarity", "operation": "polarity"}  # the check each field failed, where not its own
        said = action_polarity(index.rooms.without_room_names(text))
        if said is not None and action_polarity(parsed.action) not in (None, said):
            update["action"] = rules.action
        if opposite(parsed.operation, rules.operation):  # "unlock" for "lock the door": the words decide
            update["operation"] = rules.operation
        elif self._asked_only_by(rules.operation, parsed.operation, text):
            # "preheat the oven" parsed "on": the words ask the oven's start, and a clear ask gets what it asks
            update["operation"] = rules.operation
            checks["operation"] = "asked"
        if parsed.has_category and not self._category_fits(parsed.type_hint, text):
            update["type_hint"] = rules.type_hint
        if parsed.name_hint and not set(index.names.name_key(parsed.name_hint)) <= set(tokens(text)):
            update["name_hint"] = rules.name_hint
        if any(not index.rooms.names_a_room(room) for room in parsed.scope_include):
            update["scope_include"] = rules.scope_include
        if any(not index.rooms.names_a_room(name) and name not in index.names.excepted_devices(parsed)
               for name in parsed.scope_exclude):
            update["scope_exclude"] = rules.scope_exclude
        failed = list(dict.fromkeys(checks.get(key, key) for key in update))
        return (parsed.model_copy(update=update) if update else parsed), failed

    def _asked_only_by(self, words: str | None, parsed: str | None, text: str) -> bool:
        """Whether the utterance asks for a sensitive command that the operation its words say performs and the
        parse's operation leaves out: it performs none of the commands asked, or those of fewer devices."""
        if words is None or words == parsed or not self.sensitive.rows.size:
            return False
        asked = self.sensitive.rows[self.requests.asked(text)]
        choice = choice_of(self.index)
        if not (asked.size and choice.performing(words)[asked].any()):
            return False
        if parsed is None:
            return True
        # the parse's operation may not choose between the devices asked: "open the gate" asks the Driveway Gate
        # and the Pool Gate alike, and "unlock" picks the lock no word picked
        devices = self.table.row_device[asked]
        by_parse, by_words = (set(devices[choice.performing(op)[asked]].tolist()) for op in (parsed, words))
        return by_parse < by_words

    def _category_fits(self, category: str, text: str) -> bool:
        """Whether the home has the category, the device the text names (``referents.named``) is of it, and the
        text names no other kind of device than it (a device of the category whose name holds the word said
        counts as that kind, unless the category has sensitive commands; a room named like a kind, "Garage", is
        where the kind said next to it is)."""
        index, table = self.index, self.table
        if category not in table.categories:
            return False
        by_name = named(index, text)  # a device named ("turn on the gas fireplace") is of its own kind
        if by_name.any() and category not in set(table.device_categories[by_name >= by_name.max()].tolist()):
            return False
        said = kinds_acted_on(index, index.names.without_names(text))
        if not said or category in said:
            return True
        if category in self.sensitive.categories:  # "open the main valve" names a water valve, never the gas one
            return False
        return any(category in set(table.device_categories[index.names.carrying(tokens(word))])
                   for words in said.values() for word in words)

    # ----- what the search answered --------------------------------------------------------------

    def reason(self, row: int, text: str) -> str:
        """Why a blocked row was held back, in one line."""
        index, table = self.index, self.table
        device = int(table.row_device[row])
        if self.sensitive.never[device]:
            return "policy.json: never act on this device"
        kind = int(self.sensitive.row_kind[row])
        if kind >= 0:
            effect = SENSITIVE_KINDS[kind].effect if kind < len(SENSITIVE_KINDS) else "is marked sensitive"
            if device in self.requests.one_of_several(text):
                return f"sensitive ({self.sensitive.kinds[kind]}: {effect}); several devices could be meant: " \
                       "say which"
            return f"sensitive ({self.sensitive.kinds[kind]}: {effect}); the utterance does not ask for it"
        spec = table.spec_of_row(row)
        value = index.arguments.value_in(text)
        unit = index.arguments.shapes[int(index.arguments.slot_shape[table.row_slot[row]])].unit
        return f"{spec.id} takes a {unit} value; the utterance sets a {value[1] if value else 'different'} one"

    def withheld(self, rows: list[int], text: str) -> list[Withheld]:
        table = self.table
        out = []
        for row in rows:
            device = table.device_of_row(row)
            out.append(Withheld(device_id=device.device_id, command_id=table.spec_of_row(row).id,
                                label=device.label, reason=self.reason(row, text)))
        return out

    def parse_of_the_ask(self, screen: Screen, parsed: QueryIR, candidates: list[Candidate]) -> QueryIR | None:
        """Where the utterance asks a sensitive command of one device and the search offered none of what it asks
        ("let her in the front" answered with the Porch Lantern): the parse aimed at that device and command, so
        that a clear ask is offered what it asks for, never another device in its place. None otherwise."""
        rows = screen.asked_rows
        if not rows.size or len(set(self.table.row_device[rows].tolist())) != 1:
            return None
        pairs = {(self.table.device_of_row(r).device_id, self.table.spec_of_row(r).id) for r in rows.tolist()}
        offered = [i for i, c in enumerate(candidates) if (c.device_id, c.command_id) in pairs]
        # offered after what the words say nothing of ("let me in", "the little safe by the bed, open it": the
        # blinds ranked above matched the verb alone) is offered in place of no answer: searched for instead
        if offered and not self._unreferred_before(candidates[:offered[0]], screen.text):
            return None
        operations = [op for r in rows.tolist() for op in sorted(operations_of(self.table.spec_of_row(r)))]
        if not operations:
            return None
        device = self.table.device_of_row(int(rows[0]))
        return parsed.model_copy(update={
            "operation": parsed.operation if parsed.operation in operations else operations[0],
            "type_hint": device.category, "name_hint": device.label, "scope_include": [], "scope_exclude": [],
            "quantifier": "one"})

    def _unreferred_before(self, candidates: list[Candidate], text: str) -> bool:
        """Whether candidates are ranked first, and none of them is a device the words name (where they name one;
        else of a kind they say, else in a room they say; a door, where someone is let in)."""
        if not candidates:
            return False
        index = self.index
        referred = named(index, text) > 0  # the devices named, else those of the kinds or in the rooms said
        if not referred.any() and (kinds := categories_said(text)):
            referred = referred | index.table.in_categories(with_family(kinds))
        if not referred.any() and (rooms := index.names.mentioned_rooms(text)):
            referred = referred | index.rooms.devices_in(rooms)
        if LET_IN.search(text):  # someone let in comes through a door: the room's blinds are no answer
            referred = referred & index.table.in_categories(DOORISH)
        return not any(referred[self._device_position[c.device_id]] for c in candidates)

    def without_stand_ins(self, candidates: list[Candidate], withheld: list[int], text: str) -> list[Candidate]:
        """The candidates, less every other device offered in place of one the utterance refers to whose command
        was held back: "open the bedroom door" beside a Patio Door is no bedroom shade opened; "turn on the
        water" beside a Water Main no blind. The utterance refers to the devices it names best, else to those
        of the kinds it names (their category, or a name that holds the word), else to those in the rooms it
        names; never to those it excepts."""
        if not withheld or not candidates:
            return candidates
        index, table = self.index, self.table
        text, _ = split_excepted(text)  # "every garage door except the big one" refers to no Big Garage Door
        # what the clauses that say what to do refer to ("设备间的灯开一下，我去看看总阀": the light, no valve)
        text = acting_clauses(index, text)
        referred = named(index, text)
        if referred.any():
            referred = referred == referred.max()
        elif kinds := kinds_acted_on(index, text):
            referred = table.in_categories(kinds)
            for word in {w for words in kinds.values() for w in words}:
                referred = referred | index.names.carrying(tokens(word))
        elif rooms := index.names.mentioned_rooms(text):  # "open the garage": what is there
            referred = index.rooms.devices_in(rooms)
        else:
            return candidates
        if not referred[table.row_device[withheld]].any():
            return candidates
        # a sensitive candidate is one the utterance asks for (the screen let it through): never a stand-in
        return [c for c in candidates
                if referred[self._device_position[c.device_id]] or self.is_sensitive(c.device_id, c.command_id)]

    def marked(self, candidates: list[Candidate]) -> list[Candidate]:
        """The candidates, each sensitive one marked ``sensitive=True`` (executing it needs a confirmation) and
        ``asked=True``: the screen let it through because the utterance asks for it."""
        if not self.sensitive.rows.size:
            return candidates
        return [c.model_copy(update={"sensitive": True, "asked": True})
                if self.is_sensitive(c.device_id, c.command_id) else c for c in candidates]

    def is_sensitive(self, device_id: str, command_id: str) -> bool:
        return self.sensitive.is_sensitive(device_id, command_id)

    def blocked_targets(self, targets: list[tuple[str, str]], screen: Screen) -> list[tuple[str, str]]:
        """The (device, command) pairs of a plan that the screen blocks: a plan holding any is not executed."""
        index, table = self.index, self.table
        out = []
        for device_id, command_id in targets:
            position = self._device_position.get(device_id)
            device = index.home.devices[position] if position is not None else None
            spec = device.command(command_id) if device is not None else None
            if spec is None:
                continue
            row = int(np.searchsorted(table.row_device, position)) + device.commands.index(spec)
            if screen.blocked[row]:
                out.append((device_id, command_id))
        return out


_BUILT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def safety_of(index) -> CommandSafety:
    """The safety rules of one command index, built once and kept as long as the index."""
    safety = _BUILT.get(index)
    if safety is None:
        safety = _BUILT[index] = CommandSafety(index)
    return safety
