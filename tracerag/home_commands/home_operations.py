"""The operation an utterance asks of one home: what ``operation_words`` reads, given the kinds of device the
utterance refers to there.

``kinds_meant`` says which kinds those are (the parse's category, the devices named, the words for a kind said);
``operation_in`` reads the operation with them, or, where the words only switch on or say nothing, the setting
of a value the home lists ("开启速冷"); ``with_operation`` gives a parse that carries only free text its
operation.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .category_words import categories_said
from .command_choice import choice_of
from .operation_words import read_operation
from .operations import operations_of
from .referents import named
from .request_reading import split_excepted


def kinds_meant(index, ir, text: str) -> frozenset[str]:
    """The kinds of device the utterance refers to, for reading its verbs: the parse's category; else the
    categories of the devices it names (``referents.named``: a label said whole, its head noun: "the safe" is
    the Office Safe, not the Safe Room Lamp), where some name is said; else the words for a kind it says, read
    with the names said set aside ("Gas Fireplace" says no gas), narrowed to the devices in the rooms it says
    ("玄关的门": the lock in the entrance, not the garage door)."""
    if ir.has_category:
        return frozenset({ir.type_hint})
    text = split_excepted(text)[0] or text  # "除了车库通道门，其他门都打开": the doors, not the lock excepted
    by_name = named(index, text)
    if ir.name_hint and not by_name.any():
        by_name = index.names.devices_named(ir.name_hint)
    if by_name.any():
        return frozenset(index.table.device_categories[by_name >= by_name.max()].tolist()) - {""}
    said = categories_said(index.names.without_names(text))
    categories = index.table.categories
    kinds = frozenset(kind for kind in said if kind in categories) or \
        frozenset(stand_in for kind in said for stand_in in _NAMED_AS.get(kind, ()) if stand_in in categories)
    rooms = index.names.mentioned_rooms(text)
    if rooms and len(kinds) > 1:
        there = frozenset(index.table.device_categories[index.rooms.devices_in(rooms)].tolist()) & kinds
        return there or kinds
    return kinds


# a word for a kind the home has no device of, and the kinds it names there ("开门" where the doors are locks)
_NAMED_AS = {"Door": ("Lock", "GarageDoor"), "Siren": ("SecurityPanel",), "SecurityPanel": ("Siren",)}


def with_operation(ir, text: str, index):
    """``ir`` with its operation: as given, else read from its action (a parse that carries only free text),
    else from the utterance."""
    if ir.operation is not None:
        return ir
    kinds = kinds_meant(index, ir, text)
    operation = (operation_in(index, ir.action, kinds) if ir.action else None) or operation_in(index, text, kinds)
    return ir.model_copy(update={"operation": operation}) if operation else ir


def operation_in(index, text: str, kinds: frozenset[str]) -> str | None:
    """The operation an utterance asks of this home's devices of ``kinds``: its words' (``read_operation``), or,
    where they only switch on or say nothing, the setting of a value it names ("开启速冷", "空调上下扫风")."""
    operation = read_operation(text, kinds)
    if operation in (None, "on", "start") or (kinds and not _performed(index, operation, kinds)):
        # "空调静音": an air conditioner has no mute, but a quiet mode named 静音
        operation = _value_operation(index, text, kinds) or operation
    return operation


def _performed(index, operation: str, kinds: frozenset[str]) -> bool:
    """Whether some device of these kinds in the home can do the operation."""
    return index.memo(("performed", operation, kinds), lambda: bool(
        (choice_of(index).devices_able(operation) & index.table.in_categories(kinds)).any()))


def _value_operation(index, text: str, kinds: frozenset[str]) -> str | None:
    """The setting operation of the commands whose listed value the text names (on devices of ``kinds``)."""
    named = np.flatnonzero(index.arguments.values_named(text))
    found: Counter = Counter()
    for slot in named.tolist():
        device, position = index.table.slots[slot]
        if kinds and index.home.devices[device].category not in kinds:
            continue
        performs = operations_of(index.home.devices[device].commands[position])
        found.update(op for op in _SETTINGS if op in performs)  # in a fixed order: ties fall alike in any process
    return found.most_common(1)[0][0] if found else None


_SETTINGS = ("set_mode", "set_fan_speed", "set_input", "set_channel", "set_color")
