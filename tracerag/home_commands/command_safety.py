"""Never act on what was not asked: which commands are sensitive, and what one utterance may reach.

A wrong light is an annoyance; an unlocked door is a betrayal. This module decides, deterministically
and whatever an LM said, what a command search may answer:

- **Sensitive commands** (``SENSITIVE_KINDS``, plus what a home's ``policy.json`` marks): unlocking or
  unlatching a lock, opening a door or garage door, disarming an alarm or security system, opening a
  water or gas valve, turning on an oven or cooktop. One is chosen only when the utterance itself asks
  for it (``CommandSafety._asked``): a request to act now (no negation, question, narration or condition),
  in one clause its verb said and its opposite not, its device named (by name, else by a word for its
  kind, in its room when a room is said), and not excepted. A word that only qualifies or locates another
  device ("车库的灯", "the lamp next to the oven") names nothing. Otherwise it is blocked: never a
  candidate, never in a plan.
- **Devices never to act on** (``policy.json`` ``never``) are blocked outright, and left out of plans.
- **Polarity**: an utterance that says one way ("关", "turn off") ranks the commands that switch the
  other way last.
- **Values**: a number said with a unit only reaches commands of that unit ("26度" is a temperature,
  never a colour temperature in kelvin, never a brightness in %): the others are blocked. When the
  utterance sets a value ("调到26度"), commands that cannot take it (no value: off; a range it lies
  outside) rank after every command that can, so a setpoint is never answered with ``off``.
- **LM parses** are checked against the utterance and the home (``check_parse``).

The command index takes the verdict as plain masks over its rows (``Screen``); ``CommandRetrieval``
reports what was held back (``withheld``) and marks the sensitive candidates it keeps;
``smarthome.execute`` holds a sensitive call as ``needs_confirmation`` unless it is confirmed.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..device_operations import opposite
from ..signatures.query_ir import QueryIR, action_polarity
from .category_words import CATEGORY_WORDS, categories_said, normalised, word_pattern
from .command_choice import choice_of
from .command_docs import verb_phrases
from .command_index import number_fit
from .command_results import Candidate, Withheld
from .devices import CommandSpec, Device
from .home_policy import HomePolicy
from .name_index import PhraseIndex
from .operation_words import SENSES, kinds_meant, operation_in, verb_text
from .referents import named
from .request_reading import door_qualifiers, lock_qualifiers, points_back, read_request
from .text_match import contains, join_tokens, remove_phrases, tokens
from .values import is_target, number_and_family

_NOTHING = re.compile(r"(?!)")


@dataclass(frozen=True)
class SensitiveKind:
    """One kind of command whose effect is security- or safety-relevant, and the words that ask for it."""

    name: str
    effect: str  # what it does, as a report says it: "unlocks a door"
    commands: frozenset[str]  # "capability.command", sensitive on any device
    categories: frozenset[str]  # devices of these categories ...
    category_commands: frozenset[str]  # ... are sensitive for these command names too
    verbs: re.Pattern  # words that ask for it
    opposite: re.Pattern  # words that ask for its opposite: with them said it is never asked for
    nouns: frozenset[str]  # the categories whose words name the devices it acts on
    self_naming: re.Pattern = _NOTHING  # verbs that name the kind by themselves ("unlock", "解锁")

    def covers(self, spec: CommandSpec, category: str) -> bool:
        return f"{spec.capability}.{spec.command}" in self.commands or \
            (category in self.categories and spec.command in self.category_commands)


def _words(zh: str, en: str, switched_on: bool = False) -> re.Pattern:
    """Chinese words (space-separated) and English ones (comma-separated); ``switched_on`` adds "turn / switch
    ... on" with the object between ("turn the gas on"). A bare "on" is no verb: "put a bottle on the table"."""
    pattern = word_pattern(tuple(zh.split()), tuple(w.strip() for w in en.split(",") if w.strip())).pattern
    if switched_on:
        pattern += r"|\b(?:turn|switch)\s+(?:[\w']+\s+){0,5}?on\b"
    return re.compile(pattern)


SENSITIVE_KINDS: tuple[SensitiveKind, ...] = (
    SensitiveKind(
        "unlock", "unlocks a door", frozenset({"lock.unlock", "lock.unlatch", "lock.open"}),
        frozenset(), frozenset(),
        verbs=_words("解锁 开锁 打开 开", "unlock, unlatch, open"),
        opposite=_words("锁上 上锁 锁门 锁好 锁住 反锁 关", "lock, close, shut"),
        nouns=frozenset({"Lock", "Door"}), self_naming=_words("解锁 开锁", "unlock, unlatch")),
    SensitiveKind(
        "open_door", "opens a door", frozenset({"doorControl.open", "garageDoorControl.open"}),
        frozenset({"Door", "GarageDoor"}),
        frozenset({"open", "open_cover", "set_cover_position", "setShadeLevel", "setLevel", "on", "turn_on"}),
        verbs=re.compile(_words("打开 开 升起 升上 拉起 抬起", "open, raise, lift").pattern +
                         r"|\b(?:put|pull|roll|lift)\s+(?:[\w']+\s+){0,4}?up\b"),
        opposite=_words("关 合上 放下 降下 锁", "close, shut, lower, lock"),
        nouns=frozenset({"Door", "GarageDoor"})),
    SensitiveKind(
        "disarm", "disarms the alarm",
        frozenset({"securitySystem.disarm", "alarm.off", "alarm_control_panel.alarm_disarm"}),
        frozenset({"Siren", "SecurityPanel"}), frozenset({"off", "turn_off", "disarm"}),
        verbs=_words("撤防 解除 撤销 取消 关闭 关掉 关 停",
                     "disarm, deactivate, turn off, switch off, silence, kill, stop, off, disable"),
        opposite=_words("布防 开启 打开 启动", "arm, activate, enable, turn on, switch on"),
        nouns=frozenset({"Siren", "SecurityPanel"}),
        self_naming=_words("撤防 撤销布防 解除布防 取消布防 解除警报", "disarm")),
    SensitiveKind(
        "open_valve", "opens a water or gas valve", frozenset({"valve.open", "valve.open_valve"}),
        frozenset({"WaterValve", "GasValve"}), frozenset({"open", "on", "turn_on", "open_valve"}),
        verbs=_words("打开 开启 开 放水 通水 通气", "open, turn on, switch on", switched_on=True),
        opposite=_words("关", "close, shut, off"),
        nouns=frozenset({"WaterValve", "GasValve"})),
    SensitiveKind(
        "heat_on", "turns on an oven or cooktop",
        frozenset({"ovenOperatingState.start"}), frozenset({"Oven", "Cooktop", "Microwave"}),
        frozenset({"on", "turn_on", "start"}),
        verbs=_words("打开 开启 开 启动 预热 加热 开火 点火", "turn on, switch on, start, preheat, heat, bake",
                     switched_on=True),
        opposite=_words("关 停", "off, stop, cancel"),
        nouns=frozenset({"Oven", "Cooktop", "Microwave"}), self_naming=_words("预热", "preheat")),
)
# The kinds whose words name a device of a category (a door's words name its lock: "开门"; "valve" names either
# valve); any other category is named by its own words. A device whose category the table does not list (a lock
# filed as "Others") is named by any word of its kind's categories.
_NAMED_BY = {"Lock": {"Lock", "Door"}, "GasValve": {"GasValve", "WaterValve"}, "Siren": {"Siren", "SecurityPanel"},
             "SecurityPanel": {"SecurityPanel", "Siren"}}
MARKED = "marked"  # a command or device the home's policy.json marks sensitive
_DOOR_WORDS = frozenset({"门", "door", "gate"})
_ENTRANCE_WORDS = frozenset({"前", "入", "户", "大", "正", "进", "玄", "关", "front", "main", "entry", "entrance",
                             "entryway", "foyer"})
# what a switching verb does on a device that opens rather than switches, and the other way round
_COUNTERPART = {"open": "on", "close": "off", "on": "open", "off": "close"}
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
# any word for a kind of device: what a name said just before it qualifies ("车库的灯")
_KIND_WORD = word_pattern(tuple(w for zh, _ in CATEGORY_WORDS.values() for w in zh),
                          tuple(w for _, en in CATEGORY_WORDS.values() for w in en))
# the words left around a verb that names its kind on its own ("帮我解锁", "please unlock"): no other object
_BARE = re.compile(r"[\s的了吧呀啊呢把给帮我请一下快马上现在都]|\b(?:please|can|could|would|will|you|u|it|now|for|me|"
                   r"the|a|right|away|all|up)\b", re.I)


def sensitive_kind(device: Device, spec: CommandSpec, policy: HomePolicy | None = None) -> str | None:
    """The name of the sensitive kind this command is on this device (``MARKED`` for what the home's
    policy marks), or None."""
    for kind in SENSITIVE_KINDS:
        if kind.covers(spec, device.category):
            return kind.name
    if policy is not None and (spec.id in policy.sensitive_commands or device.device_id in policy.sensitive_devices):
        return MARKED
    return None


def execution_hold(device: Device, spec: CommandSpec, policy: HomePolicy, confirmed: bool) -> tuple[str, str] | None:
    """(status, reason) when a call must not be sent as it stands, else None: ``skipped`` for a device the
    policy says never to act on; ``needs_confirmation`` for a sensitive command sent without an explicit
    confirmation (unless the policy lets the device go without one)."""
    if device.device_id in policy.never:
        return "skipped", "policy.json: never act on this device"
    kind = sensitive_kind(device, spec, policy)
    if kind is None or confirmed or device.device_id in policy.no_confirmation:
        return None
    effect = next((k.effect for k in SENSITIVE_KINDS if k.name == kind), "is marked sensitive in policy.json")
    return "needs_confirmation", f"sensitive ({kind}: {effect}): send it with confirm_sensitive=True " \
                                 "(--confirm-sensitive)"


def _said(pattern: re.Pattern, text: str) -> bool:
    return bool(pattern.search(text))


class Screen:
    """What one utterance may reach in one home, per row of the command index. ``blocked`` and ``skipped`` are
    read at once; the rest only rank a search whose operation is unknown, and are read when it asks."""

    def __init__(self, safety: CommandSafety, text: str, blocked: np.ndarray, skipped: np.ndarray):
        self._safety, self._text = safety, text
        self.blocked = blocked  # never a candidate, never in a plan
        self.skipped = skipped  # (blocked too) the rows of devices the policy never acts on: left out of plans
        # per device: a word for its kind may name it ("风扇" of 落地扇); never a device with a sensitive command,
        # which only its own words name ("天然气阀门" is no water valve)
        self.kind_named = safety._plain_devices

    @cached_property
    def _ranking(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self._safety._ranking_masks(self._text, self.blocked)

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
        home = index.home
        self.policy = home.policy
        self._kinds = [k.name for k in SENSITIVE_KINDS] + [MARKED]
        # per slot the built-in kind (slots share a category and commands), then per row with the policy
        slot_kind = np.asarray([self._kind_code(home.devices[d], home.devices[d].commands[c])
                                for d, c in index.slots] or [-1], dtype=np.int64)[:len(index.slots)]
        self.row_kind = slot_kind[index.row_slot] if len(index.rows) else np.zeros(0, dtype=np.int64)
        device_ids = index.device_ids
        if self.policy.sensitive_commands or self.policy.sensitive_devices:
            marked_device = np.isin(device_ids, list(self.policy.sensitive_devices))[index.row_device]
            marked_command = np.asarray([index._command_of(*index.rows[r]).id in self.policy.sensitive_commands
                                         for r in range(len(index.rows))], dtype=bool) \
                if self.policy.sensitive_commands else np.zeros(len(index.rows), dtype=bool)
            self.row_kind = np.where((self.row_kind < 0) & (marked_device | marked_command), len(self._kinds) - 1,
                                     self.row_kind)
        self.never = np.isin(device_ids, list(self.policy.never)) if self.policy.never else \
            np.zeros(len(home.devices), dtype=bool)
        self.sensitive_devices = np.zeros(len(home.devices), dtype=bool)
        self.sensitive_devices[index.row_device[self.row_kind >= 0]] = True
        self._sensitive_rows = np.flatnonzero(self.row_kind >= 0)
        self._sensitive_categories = set(index.device_categories[self.sensitive_devices].tolist())
        self._sensitive_kinds = self.row_kind[self._sensitive_rows]
        # per sensitive row: the kinds of device whose words name its device (a door's words name its lock)
        noun_sets: dict[frozenset, int] = {}
        self._noun_code = np.asarray([noun_sets.setdefault(self._nouns(int(row)), len(noun_sets))
                                      for row in self._sensitive_rows], dtype=np.int64)
        self._noun_sets = list(noun_sets)
        self._device_position = {device.device_id: i for i, device in enumerate(home.devices)}
        self._plain_devices = np.bincount(index.row_device[self._sensitive_rows], minlength=len(home.devices)) == 0
        # per device: the words of its label, room and floor ("阳台门" says which door: the one on the balcony)
        self._device_words = {int(d): set(tokens(f"{home.devices[d].label} {home.devices[d].room} "
                                                 f"{home.floors.get(home.devices[d].room, '')}"))
                              for d in np.unique(index.row_device[self._sensitive_rows]).tolist()}
        self._sensitive_pairs = {(home.devices[d].device_id, home.devices[d].commands[c].id)
                                 for d, c in (index.rows[r] for r in self._sensitive_rows.tolist())}
        self._slot_colour = np.asarray([home.devices[d].commands[c].capability in COLOUR_CAPABILITIES
                                        for d, c in index.slots], dtype=bool)
        # a colour's name is no number: a hue or a saturation alone cannot take "orange", a whole colour can
        self._slot_colour_number = self._slot_colour & np.asarray(
            [home.devices[d].commands[c].type in ("number", "integer") for d, c in index.slots], dtype=bool)
        self._value_phrases = PhraseIndex({p for phrases, *_ in index.argument_shapes for p in phrases})
        self._slot_tilt = np.asarray([home.devices[d].commands[c].capability in TILT_CAPABILITIES
                                      for d, c in index.slots], dtype=bool)
        # per slot: +1 for a command that switches, opens or starts something, -1 for one that stops it
        self._slot_polarity = np.asarray([_COMMAND_POLARITY.get(home.devices[d].commands[c].command, 0)
                                          for d, c in index.slots], dtype=np.int64)
        self._slot_hold = np.asarray([home.devices[d].commands[c].command in _HOLDS for d, c in index.slots],
                                     dtype=bool)

    def _nouns(self, row: int) -> frozenset[str]:
        """The categories whose words name the device of a sensitive row (none for what policy.json marks)."""
        kind = int(self.row_kind[row])
        if kind >= len(SENSITIVE_KINDS):
            return frozenset()
        category = self.index.home.devices[int(self.index.row_device[row])].category
        nouns = SENSITIVE_KINDS[kind].nouns
        return frozenset(_NAMED_BY.get(category, {category}) if category in nouns else nouns)

    def _kind_code(self, device: Device, spec: CommandSpec) -> int:
        name = sensitive_kind(device, spec)
        return -1 if name is None else self._kinds.index(name)

    def __deepcopy__(self, memo):
        return self

    # ----- one utterance -------------------------------------------------------------------------

    def screen(self, text: str) -> Screen:
        """The rows ``text`` (the utterance with its negations read) may not reach, or reaches last."""
        index = self.index
        skipped = self.never[index.row_device]
        blocked = skipped.copy()
        if self._sensitive_rows.size:
            blocked[self._sensitive_rows] |= ~self._asked(text)
        unit_conflict, _, _ = self._value_fit(text, self._polarity(text))
        blocked |= unit_conflict[index.row_slot]
        return Screen(self, text, blocked, skipped)

    def _polarity(self, text: str) -> str | None:
        """The way the utterance switches ("on", "off"), its room names aside (玄关 closes nothing)."""
        return self.index.memo(("polarity", text), lambda: action_polarity(self._without_rooms(text)))

    def _ranking_masks(self, text: str, blocked: np.ndarray) -> tuple[np.ndarray, ...]:
        """(demoted, unfit, other kind, switching) rows: see ``Screen``."""
        index = self.index
        said = self._polarity(text)
        _, cannot_take, other_kind = self._value_fit(text, said)
        opposite = self._slot_polarity == {"on": -1, "off": 1}.get(said, 0) if said else \
            np.zeros(len(index.slots), dtype=bool)
        # a blind's slats turn only when their angle is said: "百叶窗开到一半" is its position
        tilt = self._slot_tilt & (not _TILT.search(text))
        opposite |= tilt
        other_kind = (other_kind | tilt)[index.row_slot] & ~blocked
        switching, otherwise = self._switching(text, blocked)
        return (opposite[index.row_slot] & ~blocked, (cannot_take[index.row_slot] & ~blocked) | other_kind,
                other_kind | otherwise, switching)

    def _asked(self, text: str) -> np.ndarray:
        """Per sensitive row (``_sensitive_rows``): whether the text asks for its command on its device.

        Only a clause that is a request to act now can (``request_reading``: a reason in another clause takes
        nothing away), its operation must be one the command performs (``operation_words``, read from the
        utterance, never from an LM), and the clause must refer to the device (``_asked_in``); never a device
        the text excepts ("unlock every door except the front door")."""
        asked = np.zeros(len(self._sensitive_rows), dtype=bool)
        reading = read_request(text)
        requests = reading.requests
        if not requests:
            return asked
        whole = named(self.index, reading.text)
        for clause in requests:
            # a clause names its own devices; a verb alone ("帮我解锁") or one pointing back ("unlock it") speaks of
            # those of the others ("保险柜密码忘了，帮我解锁"); "put on some music" of none of them
            own = named(self.index, clause) if len(reading.clauses) > 1 else whole
            elsewhere = not own.any() and (points_back(clause) or self._verb_alone(clause))
            asked |= self._asked_in(clause, whole if elsewhere else own)
        if reading.excepted and asked.any():
            asked &= named(self.index, reading.excepted)[self.index.row_device[self._sensitive_rows]] == 0
        return asked

    def _asked_in(self, text: str, named_by: np.ndarray) -> np.ndarray:
        """``_asked`` for one clause: the operation it asks for is one the row's command performs, and it refers
        to the row's device: by name (``referents.named``: the devices it names best; naming another device
        leaves this one out), or, naming none, by a word for its kind (or, alone, a verb that names the kind:
        "解锁", "please unlock") with any room said being the device's room ("打开阳台门" asks nothing of the lock
        in the living room). ``named_by``: the ``referents.named`` the clause stands for."""
        index = self.index
        rows, kinds = self._sensitive_rows, self._sensitive_kinds
        operation = index.memo(("operation", text), lambda: operation_in(
            index, verb_text(text, index), kinds_meant(index, QueryIR(), text)))
        performing = choice_of(index).performing(operation)[rows] if operation else np.zeros(len(rows), bool)
        marked = kinds == len(SENSITIVE_KINDS)
        if not (performing.any() or marked.any()):
            return performing
        devices = index.row_device[rows]
        # only a device named that can do what is asked counts: "unlock the door" beside a Patio Door names no
        # door that unlocks, so it speaks of the locks by their kind (what policy.json marks is judged apart)
        able = np.zeros(len(named_by), dtype=bool)
        able[devices[marked]] = True
        if operation:
            able |= choice_of(index).devices_able(operation)
        named_by = np.where(able, named_by, 0)
        best = named_by.max(initial=0)
        said = self._without_rooms(text).replace("开关", " ")
        if best:
            referred = named_by[devices] == best
        else:
            rooms = index.mentioned_rooms(text)
            referred = index.in_rooms(rooms)[devices] if rooms else np.ones(len(rows), dtype=bool)
            verbless = text
            for kind in SENSITIVE_KINDS:  # the 锁 of "开锁" is the verb's, no lock said
                verbless = kind.self_naming.sub(" ", verbless)
            kinds_said = self._kinds_referred(index.without_names(verbless), operation)
            self_named = np.asarray([_said(k.self_naming, said) and self._bare(i, said)
                                     for i, k in enumerate(SENSITIVE_KINDS)] + [False])
            worded = self_named[kinds] | np.asarray([bool(n & kinds_said) for n in self._noun_sets])[self._noun_code]
            if "Door" in kinds_said:  # a device reached only through a door word must be the door said
                only_door = np.asarray([n & kinds_said == {"Door"} for n in self._noun_sets])[self._noun_code]
                said_door = [set(q) for q in door_qualifiers(verbless)]
                fits = np.asarray([self._is_the_door(d, said_door, operation) for d in devices.tolist()])
                worded &= ~only_door | fits
            qualified = lock_qualifiers(verbless)  # "进门那把锁": a lock no name or room here calls so
            if qualified:
                worded &= np.asarray([index.device_categories[d] != "Lock" or
                                      any(q <= self._device_words[d] for q in qualified) for d in devices.tolist()])
            referred &= worded
        asked = performing & referred
        for i in np.flatnonzero(marked & referred).tolist():  # what policy.json marks
            asked[i] = self._asked_marked(said, int(rows[i]), bool(best))
        return asked

    def _kinds_referred(self, text: str, operation: str | None) -> set[str]:
        """The kinds the text names by a word for them (``_kinds_said``), less those whose word also stands in the
        name of an ordinary device that could do what is asked: "water on" where a Water Heater and a Water
        Feature Pump switch on names no water valve; "unlock the door" beside a Back Door Light still names the
        locks (a light does not unlock)."""
        index = self.index
        said = self._kinds_said(text)
        if not said or operation is None:
            return set(said)
        choice = choice_of(index)  # a valve opens where a pump switches on: both answer "water on"
        able = choice.devices_able(operation) | choice.devices_able(_COUNTERPART.get(operation, operation))
        plain = able & ~self.sensitive_devices
        return {kind for kind, words in said.items()
                if not any((index.names.carrying(tokens(w)) & plain).any() for w in words)}

    def _is_the_door(self, device: int, said: list[set[str]], operation: str | None) -> bool:
        """Whether a door said names this device: the words said with it are the device's ("阳台门"), a lock
        is a door's lock (its name says door: not the Cubby), and a door said with no word of its own ("开门",
        "open the door") is the house's way in (前门, 入户门, "Front Door"), not the one to the balcony."""
        words = self._device_words[device]
        if not any(q <= words for q in said):
            return False
        if self.index.device_categories[device] == "Lock":
            return bool(words & _DOOR_WORDS)
        return any(q for q in said) or bool(words & _ENTRANCE_WORDS)

    def _verb_alone(self, clause: str) -> bool:
        """Whether the clause says what to do and nothing it acts on ("帮我解锁", "快关掉", "unlock please")."""
        text = normalised(clause)
        for sense in SENSES:
            text = sense.pattern.sub(" ", text)
        return text != normalised(clause) and not _BARE.sub("", text).strip()

    def _bare(self, kind: int, text: str) -> bool:
        """Whether a verb that names its kind on its own stands alone in the clause, rooms and polite words
        aside ("帮我解锁", "unlock the garage" where the garage is a room; not "unlock my potential")."""
        return not _BARE.sub("", self._without_rooms(SENSITIVE_KINDS[kind].self_naming.sub(" ", text))).strip()

    def _asked_marked(self, said: str, row: int, named: bool) -> bool:
        """A command the home marks sensitive: its own verbs (or its description) and its device (by name or
        a word for its kind) are said."""
        index = self.index
        spec = index._command_of(*index.rows[row])
        device = index.home.devices[index.rows[row][0]]
        words = tokens(said)
        verb = any(contains(words, v) for v in verb_phrases(spec.command, spec.capability)) or \
            contains(words, tokens(spec.description))
        kind = CATEGORY_WORDS.get(device.category)
        return verb and (named or (kind is not None and _said(word_pattern(*kind), said)))

    def _without_rooms(self, text: str) -> str:
        """The text without the home's room names, for reading its verbs: 玄关 (entrance) says no 关 (close)."""
        toks = tokens(text)
        return join_tokens(remove_phrases(toks, self.index.room_phrases.possible_in(toks)))

    def _kinds_said(self, text: str) -> dict[str, list[str]]:
        """The kinds of device the text names as what to act on (``categories_said``), with the words said; where
        it names two kinds or more, outside the rooms it names ("the lights in Garage": Garage is a room)."""
        said = categories_said(text)
        if len(said) > 1:
            said = categories_said(self._without_rooms(text)) or said
        rooms = {join_tokens(r) for r in self.index.room_phrases.found_in(tokens(text))}
        # "turn on the garage" where Garage is a room: the room, not its door
        return {kind: words for kind, words in said.items() if not all(w in rooms for w in words)}

    def _value_fit(self, text: str, polarity: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per slot: (the value said has a unit the command's is not; the utterance sets a value the command
        cannot take: it takes none, only changes one by an amount, or the number lies outside its range; the
        command takes no value of the kind said: a colour). ``polarity``: the way the utterance switches."""
        index = self.index
        none = np.zeros(len(index.slots), dtype=bool)
        if self._slot_colour.any() and polarity is None and _COLOUR.search(text):
            # "打开红色台灯" switches a lamp; "调成红色" sets a colour, with a command that takes a whole one
            whole = self._slot_colour & ~self._slot_colour_number
            return none, none, ~(whole if whole.any() else self._slot_colour)
        said = index.said_value(text)
        value = number_and_family(said)
        if value is None or not len(index.slots):
            return none, none, none
        target = is_target(said)
        said = index.value_phrases.found_in(tokens(text))
        conflict, cannot = [], []
        for phrases, numeric, relative, takes, unit, low, high in index.argument_shapes:
            clash = bool(numeric and value[1] and unit and value[1] != unit)
            conflict.append(clash)
            # a number in a unit ("26度", "50%") is none of a listed set of values, unless one is named
            listed = not numeric and takes and value[1] is not None and said.isdisjoint(phrases)
            # outside the range only in the same unit: "96" may be °F, "84%" of a fan's speed steps is a step
            outside = value[1] is not None and value[1] == unit and number_fit(value, unit, low, high) == 0
            cannot.append(target and not clash and (not takes or listed or (numeric and (relative or outside))))
        return np.asarray(conflict)[index.slot_shape], np.asarray(cannot)[index.slot_shape], none

    def _switching(self, text: str, blocked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row, for an utterance that only switches a kind of device ("fans on", "关掉风扇": an on/off word,
        a kind, no value, no listed value or other command named): (the commands that switch that way on the
        devices of that kind, the others there: a speed, a mode). "关风扇" is the fan's off, never a speed with
        no value; a robot cleaner with no switch still starts by its movement; "把声音关掉" names no kind (the
        mute, not the TV's power)."""
        index = self.index
        none = np.zeros(len(index.rows), dtype=bool)
        said = action_polarity(_NO_SWITCH.sub(" ", self._without_rooms(text)))
        kinds = self._kinds_said(text)
        if said is None or not kinds or index.said_value(text) is not None or _SETS_TO.search(text):
            return none, none
        of_kind = index.in_categories(kinds)
        kind_words = sorted({w for words in kinds.values() for w in words}, key=len, reverse=True)
        named_values = self._value_phrases.found_in(tokens(text))
        listed = np.asarray([not named_values.isdisjoint(phrases) for phrases, *_ in index.argument_shapes],
                            dtype=bool)[index.slot_shape]
        # what another command acts on, said beside the kind ("打开所有空调的扫风": the swing, not the power)
        subject = index.subject_scores(re.sub("|".join(map(re.escape, kind_words)), " ", text)) >= 1.0
        named = (listed | subject | index.verbs_named(text))[index.row_slot]
        way = self._slot_polarity[index.row_slot] == (1 if said == "on" else -1)
        hold = way & self._slot_hold[index.row_slot] & (not _HOLD_WORDS.search(text))
        way &= ~(hold & (np.bincount(index.row_device[way & ~hold], minlength=len(of_kind)) > 0)[index.row_device])
        # a device where a listed value or another verb command is named ("开启制冷模式", "取消静音") is set to
        # it, not switched
        of_kind &= np.bincount(index.row_device[named & ~way], minlength=len(of_kind)) == 0
        switching = way & ~blocked & of_kind[index.row_device]
        switches = np.bincount(index.row_device[switching], minlength=len(of_kind)) > 0
        return switching, ~way & ~named & switches[index.row_device]

    # ----- an LM's parse ---------------------------------------------------------------------------

    def check_parse(self, parsed: QueryIR, rules: QueryIR, text: str) -> tuple[QueryIR, list[str]]:
        """The LM's parse with every field that fails a check replaced by the rule parse's, and the names of
        the checks that failed (empty: the parse stands as the LM gave it).

        - ``polarity``: the action must not switch the other way than the utterance's own words (打开 /
          关闭, open / close, lock / unlock, negations read: ``text``);
        - ``type_hint``: a category the home has, and not one the utterance's words for a kind contradict
          ("打开客厅的灯" names a Light: Lock is overruled; "排气扇" may be a Switch whose name says 扇);
        - ``name_hint``: words the utterance says (room words aside): an LM must not name another device;
        - ``scope_include`` / ``scope_exclude``: rooms of this home (or, excluded, a device it names)."""
        index = self.index
        update: dict[str, object] = {}
        said = action_polarity(self._without_rooms(text))
        if said is not None and action_polarity(parsed.action) not in (None, said):
            update["action"] = rules.action
        if opposite(parsed.operation, rules.operation):  # "unlock" for "lock the door": the words decide
            update["operation"] = rules.operation
        if parsed.has_category and not self._category_fits(parsed.type_hint, text):
            update["type_hint"] = rules.type_hint
        if parsed.name_hint and not set(index.name_key(parsed.name_hint)) <= set(tokens(text)):
            update["name_hint"] = rules.name_hint
        if any(not index.names_a_room(room) for room in parsed.scope_include):
            update["scope_include"] = rules.scope_include
        if any(not index.names_a_room(name) and name not in index.excepted_devices(parsed)
               for name in parsed.scope_exclude):
            update["scope_exclude"] = rules.scope_exclude
        failed = list(dict.fromkeys("polarity" if key in ("action", "operation") else key for key in update))
        return (parsed.model_copy(update=update) if update else parsed), failed

    def _category_fits(self, category: str, text: str) -> bool:
        """Whether the home has the category, the device the text names (``referents.named``) is of it, and the
        text names no other kind of device than it (a device of the category whose name holds the word said
        counts as that kind, unless the category has sensitive commands; a room named like a kind, "Garage", is
        where the kind said next to it is)."""
        index = self.index
        if category not in index.categories:
            return False
        by_name = named(index, text)  # a device named ("turn on the gas fireplace") is of its own kind
        if by_name.any() and category not in set(index.device_categories[by_name >= by_name.max()].tolist()):
            return False
        said = self._kinds_said(index.without_names(text))
        if not said or category in said:
            return True
        if category in self._sensitive_categories:  # "open the main valve" names a water valve, never the gas one
            return False
        return any(category in set(index.device_categories[index.names.carrying(tokens(word))])
                   for words in said.values() for word in words)

    # ----- what the search answered --------------------------------------------------------------

    def reason(self, row: int, text: str) -> str:
        """Why a blocked row was held back, in one line."""
        index = self.index
        device = int(index.row_device[row])
        if self.never[device]:
            return "policy.json: never act on this device"
        kind = int(self.row_kind[row])
        if kind >= 0:
            effect = SENSITIVE_KINDS[kind].effect if kind < len(SENSITIVE_KINDS) else "is marked sensitive"
            return f"sensitive ({self._kinds[kind]}: {effect}); the utterance does not ask for it"
        spec = index._command_of(*index.rows[row])
        value = index.value_in(text)
        unit = index.argument_shapes[int(index.slot_shape[index.row_slot[row]])][4]
        return f"{spec.id} takes a {unit} value; the utterance sets a {value[1] if value else 'different'} one"

    def withheld(self, rows: list[int], text: str) -> list[Withheld]:
        index = self.index
        out = []
        for row in rows:
            device = index.home.devices[int(index.row_device[row])]
            out.append(Withheld(device_id=device.device_id, command_id=index._command_of(*index.rows[row]).id,
                                label=device.label, reason=self.reason(row, text)))
        return out

    def marked(self, candidates: list[Candidate]) -> list[Candidate]:
        """The candidates, each sensitive one marked ``sensitive=True`` (executing it needs a confirmation)."""
        if not self._sensitive_rows.size:
            return candidates
        return [c.model_copy(update={"sensitive": True}) if self.is_sensitive(c.device_id, c.command_id) else c
                for c in candidates]

    def is_sensitive(self, device_id: str, command_id: str) -> bool:
        return (device_id, command_id) in self._sensitive_pairs

    def blocked_targets(self, targets: list[tuple[str, str]], screen: Screen) -> list[tuple[str, str]]:
        """The (device, command) pairs of a plan that the screen blocks: a plan holding any is not executed."""
        index = self.index
        out = []
        for device_id, command_id in targets:
            position = self._device_position.get(device_id)
            device = index.home.devices[position] if position is not None else None
            spec = device.command(command_id) if device is not None else None
            if spec is None:
                continue
            row = int(np.searchsorted(index.row_device, position)) + device.commands.index(spec)
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
