"""What is sensitive: the commands whose effect is security- or safety-relevant, and where one home has them.

A wrong light is an annoyance; an unlocked door is a betrayal. ``SENSITIVE_KINDS`` are the built-in kinds:
unlocking or unlatching a lock, opening a door or garage door, disarming an alarm or security system, opening
a water or gas valve, turning on an oven or cooktop; a home's ``policy.json`` (``home_policy``) marks more
(``MARKED``) and names devices never to act on. ``sensitive_kind`` and ``execution_hold`` judge one command on
one device (``smarthome.execute`` holds a sensitive call as ``needs_confirmation`` unless it is confirmed);
``SensitiveRows`` finds them among the rows of one home's command table (``command_table``), once per index.

This is the static side of safety. Whether an utterance asks for a sensitive command is
``sensitive_requests``; what one utterance may reach is ``safety_screen``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .category_words import word_pattern
from .command_table import CommandTable
from .devices import CommandSpec, Device
from .door_words import (
    ENTRANCE_WORDS,
    door_lock_by_model,
    dwelling_way_in,
    maker_named_at_reception,
    room_words,
    side_way,
    ways_in_by_maker,
)
from .home_policy import HomePolicy
from .text_match import tokens

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
        verbs=_words("撤防 撤 解除 撤销 取消 关闭 关掉 关 停",
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


class SensitiveRows:
    """The sensitive commands and the devices never to act on among the rows of one home's command table."""

    def __init__(self, table: CommandTable):
        home = table.home
        self.policy = policy = home.policy
        self.kinds = [k.name for k in SENSITIVE_KINDS] + [MARKED]
        # per slot the built-in kind (slots share a category and commands), then per row with the policy
        slot_kind = np.asarray([self._kind_code(device, spec) for device, spec in table.slot_commands] or [-1],
                               dtype=np.int64)[:len(table.slots)]
        self.row_kind = slot_kind[table.row_slot] if len(table.rows) else np.zeros(0, dtype=np.int64)
        device_ids = table.device_ids
        if policy.sensitive_commands or policy.sensitive_devices:
            marked_device = np.isin(device_ids, list(policy.sensitive_devices))[table.row_device]
            marked_command = np.asarray([table.spec_of_row(r).id in policy.sensitive_commands
                                         for r in range(len(table.rows))], dtype=bool) \
                if policy.sensitive_commands else np.zeros(len(table.rows), dtype=bool)
            self.row_kind = np.where((self.row_kind < 0) & (marked_device | marked_command), len(self.kinds) - 1,
                                     self.row_kind)
        self.never = np.isin(device_ids, list(policy.never)) if policy.never else \
            np.zeros(len(home.devices), dtype=bool)
        self.devices = np.zeros(len(home.devices), dtype=bool)  # per device: it has a sensitive command
        self.devices[table.row_device[self.row_kind >= 0]] = True
        self.rows = np.flatnonzero(self.row_kind >= 0)
        self.categories = set(table.device_categories[self.devices].tolist())
        self.row_kinds = self.row_kind[self.rows]  # per sensitive row
        # per sensitive row: the kinds of device whose words name its device (a door's words name its lock)
        noun_sets: dict[frozenset, int] = {}
        self.noun_code = np.asarray([noun_sets.setdefault(self._nouns(table, int(row)), len(noun_sets))
                                     for row in self.rows], dtype=np.int64)
        self.noun_sets = list(noun_sets)
        # per device: a word for its kind may name it ("风扇" of 落地扇); never a device with a sensitive command,
        # which only its own words name ("天然气阀门" is no water valve)
        self.plain_devices = np.bincount(table.row_device[self.rows], minlength=len(home.devices)) == 0
        # per device: the words of its label, room and floor ("阳台门" says which door: the one on the balcony)
        # (a lock known only by its maker's name, "Kevo 99250", is a door's lock where that name says so)
        # per device: the words of its own name (SmartThings ``name``: "Genie Aladdin Connect Roll-Up Door"), which
        # describe it too ("the roll-up door"); those that say it is the way in ("Paxton Net2 Entry Door
        # Controller") count with its label's
        sensitive_devices = np.unique(table.row_device[self.rows]).tolist()
        self.model_words = {d: set(tokens(home.devices[d].model)) for d in sensitive_devices}
        ways_in = set(ways_in_by_maker(home.devices, home.floors))
        dwelling = set(dwelling_way_in(home.devices, home.floors))  # the flat's own door over a shop: 家门
        # per device: the way in only because it is the home's one lock called by its maker (no bare verb reaches it)
        self.way_in_guessed = {d for d in ways_in if not maker_named_at_reception(home.devices[d])}
        # (a staff or side entrance is no way in for "the front door": its words for the way in go)
        self.device_words = {int(d): (set(tokens(f"{home.devices[d].label} "
                                                 f"{home.floors.get(home.devices[d].room, '')}"))
                                      | room_words(home.devices[d].room)
                                      | ({"door", "门"} if door_lock_by_model(home.devices[d]) else set())
                                      | (self.model_words[d] & ENTRANCE_WORDS)
                                      | ({"entrance"} if d in ways_in else set())
                                      | ({"家"} if d in dwelling else set()))
                             - (ENTRANCE_WORDS if side_way(home.devices[d].label) else set())
                             for d in sensitive_devices}
        self._pairs = {(table.device_of_row(r).device_id, table.spec_of_row(r).id) for r in self.rows.tolist()}

    def _nouns(self, table: CommandTable, row: int) -> frozenset[str]:
        """The categories whose words name the device of a sensitive row (none for what policy.json marks)."""
        kind = int(self.row_kind[row])
        if kind >= len(SENSITIVE_KINDS):
            return frozenset()
        category = table.device_of_row(row).category
        nouns = SENSITIVE_KINDS[kind].nouns
        return frozenset(_NAMED_BY.get(category, {category}) if category in nouns else nouns)

    def _kind_code(self, device: Device, spec: CommandSpec) -> int:
        name = sensitive_kind(device, spec)
        return -1 if name is None else self.kinds.index(name)

    def is_sensitive(self, device_id: str, command_id: str) -> bool:
        return (device_id, command_id) in self._pairs
