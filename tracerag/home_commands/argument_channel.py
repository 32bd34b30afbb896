"""The argument channel: whether a command can take what the utterance carries.

A command takes a value when one of its listed values is named ("制冷", "上下扫风", "HDMI 2"), or when the
utterance sets a number ("调到50%") and the command takes one in that unit and range. Commands of one
``ArgumentShape`` (listed value words, numeric or not, unit and range) score alike, so the channel is
computed once per shape. The value an utterance sets is read by ``values`` (numbers by ``numerals``), the
numbers inside the names it says aside (``HomeNames.name_spans``); whether a value is sent as said is
``value_ranges``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import NamedTuple

import numpy as np

from .category_words import categories_said
from .command_docs import SET_VERBS, verb_phrases
from .command_table import CommandTable
from .devices import CommandSpec
from .home_names import FILLER_TOKENS, HomeNames
from .name_index import PhraseIndex
from .text_match import contains, tokens
from .value_ranges import unit_family
from .values import UNIT_FAMILY, SaidValue, Unreadable, is_target, number_and_family, value_said
from .verb_channel import VerbChannel

_SET_VERB_INDEX = PhraseIndex(SET_VERBS)


class ArgumentShape(NamedTuple):
    """What a command takes, as the argument channel reads it; commands of one shape score alike."""

    phrases: tuple[tuple[str, ...], ...]  # the words of its listed values (the home's, in any language)
    numeric: bool  # it takes a number
    relative: bool  # the number changes a value by an amount (a step of -100..100): it takes no target
    takes: bool  # it takes a value at all
    unit: str | None  # the unit family of its range (``unit_scale``), None where the spec does not say
    low: float | None
    high: float | None


class ArgumentChannel:
    """The argument shapes of one home's slots, and what an utterance sets."""

    def __init__(self, table: CommandTable, names: HomeNames, verbs: VerbChannel):
        self.table, self.names, self.verbs = table, names, verbs
        home = table.home
        # a value's words in every profile of the home that lists it for the same command: the value
        # "vertical" of setFanOscillationMode is 上下扫风 on one air conditioner and "vertical swing" on
        # another, so "上下扫风" names it on both, whichever language each profile is described in
        value_words: dict[tuple[str, str], set[tuple[str, ...]]] = defaultdict(set)
        for device in home.devices:
            for command in device.commands:
                for v in command.value_list:
                    value_words[command.id, v.value].update(t for t in (tokens(v.description), tokens(v.value)) if t)
        shapes: dict[ArgumentShape, int] = {}
        slot_shape = []
        for device, spec in table.slot_commands:
            verbs = set().union(*(verb_phrases(c.command, c.capability) for c in device.commands))
            # a value that is also the word for one of the device's verb commands names that command
            # ("turn off the fan" is the fan's off command, not its oscillation value "off"), and a
            # filler word names nothing ("turn off all speakers" does not ask for repeat mode "all")
            phrases = tuple(sorted({t for v in spec.value_list for t in value_words[spec.id, v.value]
                                    if (len(t) >= 2 or (len(t) == 1 and len(t[0]) >= 3))
                                    and t not in verbs and not set(t) <= FILLER_TOKENS}))
            numeric = spec.value_range is not None or (spec.type is not None and not spec.value_list)
            takes = numeric or bool(spec.value_list)
            shape = ArgumentShape(phrases, numeric, _changes_by_amount(spec), takes, *unit_scale(spec))
            slot_shape.append(shapes.setdefault(shape, len(shapes)))
        self.shapes: list[ArgumentShape] = list(shapes)
        self.slot_shape = np.asarray(slot_shape, dtype=np.int64)
        # the phrases of every value, looked up once per utterance rather than scanned per shape
        self.value_phrases = PhraseIndex(p for shape in self.shapes for p in shape.phrases)

    def scores(self, utterance: str, action: str = "") -> np.ndarray:
        """Per slot: 1 when a listed value is named, 0.5 when a number is set and the command takes one.

        A command that changes a value by an amount (a step of -100..100%) cannot take a target
        ("调到40%" is setLevel, not a 40% step of the colour temperature), and the number's unit and
        size pick among the commands that take one: 1 where the unit is the command's own ("2700 K" for
        the colour temperature, "22 degrees" for a setpoint), 0 where it is another unit or the number
        lies outside the command's range (4000 is no brightness, 26度 no fridge setting); a command that takes no
        value cannot either: -0.5 for it when the utterance sets one ("窗帘位置设到30" is not the
        preset position). Without a value, a set verb in the utterance or the parsed action ("set the
        volume", "设置音量") still asks for a command that takes one: -0.25 for those that take none, so
        setVolume beats volumeUp; commands that take values keep their order among themselves. A listed
        value named next to a number set counts half: "制热温度调到26度" sets a temperature, not the mode."""
        said = tokens(utterance)
        read = self.said_value(utterance)
        has_value, target = read is not None, is_target(read)
        set_verb = not has_value and any(_SET_VERB_INDEX.found_in(text) for text in (said, tokens(action)))
        value = number_and_family(read)
        # a value named in words that also name a verb command, with no kind said: "静音" mutes a TV rather
        # than setting an air conditioner's quiet mode ("空调静音" still does)
        verbs = self.verbs.phrases.found_in(said) if not categories_said(utterance) else set()
        named = self.value_phrases.found_in(said)
        per_shape = np.asarray([(0.5 if (target and not numeric) or any(contains(v, p) for v in verbs for p in phrases
                                                                         if p in named) else 1.0)
                                if not named.isdisjoint(phrases)
                                else number_fit(value, unit, low, high) if numeric and has_value
                                and not (relative and target)
                                else -0.5 if not takes and target
                                else -0.25 if not takes and set_verb else 0.0
                                for phrases, numeric, relative, takes, unit, low, high in self.shapes]
                               or [0.0], dtype=np.float32)
        return per_shape[self.slot_shape] if self.table.slots else np.zeros(0, dtype=np.float32)

    # ----- the value said ---------------------------------------------------------------------

    def said_value(self, utterance: str) -> SaidValue | Unreadable | None:
        """The value the utterance sets (``values.read_value``), its names' numbers aside."""
        return value_said(utterance, self.names.name_spans(utterance))

    def value_in(self, utterance: str) -> tuple[float | None, str | None] | None:
        """(number, unit family) of the value the utterance sets (``values.number_and_family``), or None."""
        return number_and_family(self.said_value(utterance))

    def value_in_a_unit(self, texts) -> tuple[float, str] | None:
        """The first value set in a unit among the texts (the utterance, then its parsed action)."""
        values = (self.value_in(text) for text in texts)
        return next((v for v in values if v is not None and v[1] is not None), None)

    def sets_a_temperature(self, texts) -> bool:
        return (self.value_in_a_unit(texts) or (0, None))[1] == "temperature"

    # ----- who takes it -----------------------------------------------------------------------

    def values_named(self, utterance: str) -> np.ndarray:
        """Per slot: whether the utterance names one of its command's listed values ("制冷", "HDMI 2", "速冷")."""
        named = self.value_phrases.found_in(tokens(utterance))
        slots = self.table.slots
        if not named or not slots:
            return np.zeros(len(slots), dtype=bool)
        per_shape = np.asarray([not named.isdisjoint(shape.phrases) for shape in self.shapes], dtype=bool)
        return per_shape[self.slot_shape]

    def takes_kind_said(self, utterance: str) -> np.ndarray:
        """Per slot: whether its command takes the kind of value the utterance sets: a listed value it names
        ("制冷"), or a number where it takes numbers in the unit said; every slot when no value is said."""
        named = self.values_named(utterance)
        value = self.value_in(utterance)
        if not named.any() and value is None:
            return np.ones(len(self.table.slots), dtype=bool)
        # a name said may be a value of a numeric command too ("warm white" of a colour temperature)
        per_shape = np.asarray([numeric and (value is None or not (value[1] and unit and value[1] != unit))
                                for _, numeric, _, _, unit, _, _ in self.shapes], dtype=bool)
        numeric = per_shape[self.slot_shape] if self.table.slots else np.zeros(0, dtype=bool)
        return numeric | named if value is None else numeric

    def value_slots(self, texts) -> np.ndarray:
        """Per slot: whether its command takes the number said in the unit said, within its range."""
        value = self.value_in_a_unit(texts)
        if value is None or not self.table.slots:
            return np.zeros(len(self.table.slots), dtype=bool)
        fits = np.asarray([numeric and not relative and unit == value[1] and number_fit(value, unit, low, high) == 1
                           for _, numeric, relative, _, unit, low, high in self.shapes], dtype=bool)
        return fits[self.slot_shape]

    def value_devices(self, *texts: str) -> np.ndarray:
        """Per device: whether a command of it takes the number said in the unit said, within its range ("26度":
        a setpoint, not a level, nor a fridge's); none when no text says a unit."""
        return self.table.devices_with_slots(self.value_slots(texts))


def unit_scale(spec: CommandSpec) -> tuple[str | None, float | None, float | None]:
    """(unit family, min, max) of a numeric command's value range; None where the spec does not say."""
    bounds = dict(spec.value_range or ())
    unit = bounds.get("unit")
    family = UNIT_FAMILY.get(unit_family(unit))
    low, high = bounds.get("min"), bounds.get("max")
    number = lambda v: float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None  # noqa: E731
    return family, number(low), number(high)


def number_fit(value: tuple[float, str | None] | None, unit: str | None, low: float | None,
               high: float | None) -> float:
    """How well a numeric command takes the value set: 1 in its own unit, 0 in another unit or outside its
    range, 0.5 otherwise (a number without a unit, or a command whose unit is unknown). A temperature
    fits in either scale ("22 degrees" on a Fahrenheit thermostat means Celsius), a current in A or mA."""
    if value is None or value[0] is None:
        return 0.5
    number, said = value
    if not math.isfinite(number):
        return 0.0
    if said is not None and unit is not None and said != unit:
        return 0.0
    if said == "percent" and unit is None and high is not None and high <= 10:
        return 0.5  # a share of a few unitless steps (a fan's speeds 0..3): "84%" is a step, as Home Assistant maps it
    if low is not None and high is not None:
        readings = (number, number * 9 / 5 + 32, (number - 32) * 5 / 9) if unit == "temperature" else \
            (number, number * 1000, number / 1000) if unit == "current" else (number,)  # A or mA
        if not any(low <= n <= high for n in readings):
            return 0.0
    return 1.0 if said is not None and said == unit else 0.5


def _changes_by_amount(spec: CommandSpec) -> bool:
    """A numeric command whose range runs as far below zero as above it (a step of -100..100): it takes a
    change, not a target. A temperature's range (-460..10000 °F) may cross zero and still be a target."""
    bounds = dict(spec.value_range or ())
    low, high = bounds.get("min"), bounds.get("max")
    return isinstance(low, int | float) and isinstance(high, int | float) and low < 0 < high \
        and abs(low + high) <= 0.1 * (high - low)
