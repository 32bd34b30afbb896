"""With the operation known, the command on each device is a decision, not a search.

``PERFORMED_BY`` (``operations``) lists, per operation, the capability commands that perform it, most
specific first. A device's command for an operation is its first one there that takes the value said: a
mode the utterance names picks the command listing it ("制冷": the air conditioner's mode); a number picks
the command whose unit and range take it ("26度": a setpoint, not a level). A device with none of them
cannot do what is asked and is no candidate for it. The ranked candidates and a bulk plan both read
``slot_scores``: the two answers come from one decision and cannot disagree.

What ``on`` and ``off`` mean on a device without a switch (a blind, a valve) is what Home Assistant does
with them: it opens or closes; on a robot cleaner they start and stop it (``STANDS_FOR``).
"""

from __future__ import annotations

import re

import numpy as np

from .operations import PERFORMED_BY, STANDS_FOR, rank_in

# Words that say which of a device's commands for an operation is meant ("制热温度设成27度": the heating setpoint)
QUALIFIERS = {"thermostatHeatingSetpoint": re.compile(r"制热|加热|供暖|\bheat(?:ing)?\b", re.IGNORECASE),
              "thermostatCoolingSetpoint": re.compile(r"制冷|\bcool(?:ing)?\b", re.IGNORECASE)}
# how much a command's value fit outweighs its place in the table: a command that takes the value said
# (a listed value named, a number in its unit and range) beats any command the table lists before it
_VALUE_FIT = 10.0


class CommandChoice:
    """Per index: which row of each device performs an operation (built lazily, per operation)."""

    def __init__(self, index):
        self.index = index
        self._places: dict[str, np.ndarray] = {}
        self._standing: dict[str, np.ndarray] = {}
        self._performing: dict[str, np.ndarray] = {}
        self._able: dict[str, np.ndarray] = {}
        self._stand_in_places: dict[str, np.ndarray] = {}
        self._performing_slots: dict[str, np.ndarray] = {}

    def __deepcopy__(self, memo):
        return self

    def place(self, operation: str) -> np.ndarray:
        """Per slot: where its command stands among those performing ``operation`` (-1: it does not)."""
        found = self._places.get(operation)
        if found is None:
            index = self.index
            found = np.asarray([rank_in(operation, index.table.spec(*slot)) for slot in index.table.slots] or [-1],
                               dtype=np.int64)[:len(index.table.slots)]
            self._places[operation] = found
        return found

    def standing(self, operation: str) -> np.ndarray:
        """Per slot: ``place``, where a command that performs ``operation`` only as a stand-in (``STANDS_FOR``)
        stands after every command the table lists for it: a vacuum's start answers "turn on" only where it
        has no switch, and ranks below the commands that switch on."""
        found = self._standing.get(operation)
        if found is None:
            found = self.place(operation)
            after = len(PERFORMED_BY.get(operation, ()))
            for stand_in in STANDS_FOR.get(operation, ()):
                other = self.place(stand_in)
                found = np.where(found >= 0, found, np.where(other >= 0, other + after, -1))
                after += len(PERFORMED_BY.get(stand_in, ()))
            self._standing[operation] = found
        return found

    def performing(self, operation: str) -> np.ndarray:
        """Per row: whether its command performs ``operation`` on its device (``on``/``off`` on a device that
        has no switch: its open or close, else its start or stop). Built once per operation (the array is
        shared: not to be changed)."""
        found = self._performing.get(operation)
        if found is None:
            found = self._performing[operation] = self._rows_performing(operation)
        return found

    def devices_able(self, operation: str) -> np.ndarray:
        """Per device: whether some command of it performs ``operation``."""
        found = self._able.get(operation)
        if found is None:
            index = self.index
            found = self._able[operation] = np.bincount(index.table.row_device[self.performing(operation)],
                                                        minlength=len(index.home.devices)) > 0
        return found

    def _rows_performing(self, operation: str) -> np.ndarray:
        index = self.index
        rows = self.place(operation)[index.table.row_slot] >= 0
        for stand_in in STANDS_FOR.get(operation, ()):
            able = np.bincount(index.table.row_device[rows], minlength=len(index.home.devices)) > 0
            rows = rows | ((self.place(stand_in)[index.table.row_slot] >= 0) & ~able[index.table.row_device])
        return rows

    def qualified(self, utterance: str) -> np.ndarray:
        """Per slot: 1 where the utterance says the word that tells its command from its siblings (``QUALIFIERS``)."""
        index = self.index
        said = {capability for capability, words in QUALIFIERS.items() if words.search(utterance)}
        if not said:
            return np.zeros(len(index.table.slots), dtype=np.float32)
        return np.asarray([index.table.spec(*slot).capability in said for slot in index.table.slots], dtype=np.float32)

    def slot_scores(self, operation: str, argument: np.ndarray, subject: np.ndarray | None = None) -> np.ndarray:
        """Per slot: how well its command performs ``operation`` for the value said (-inf where it does not).
        ``argument`` (per slot) is the index's argument channel: 1 for a listed value named or a number in the
        command's own unit and range, 0.5 for a number it may take, 0 or below for one it cannot; ``subject``
        (per slot) is higher where the utterance names what the command acts on ("制热温度": the heating
        setpoint). Whether a row performs the operation is its profile's matter: every row of a slot reads
        its slot's score (each device's best: ``CommandTable.device_best_rows``)."""
        place = self._places_with_stand_ins(operation)
        fit = _VALUE_FIT * np.clip(argument, -1.0, 1.0) + (0.0 if subject is None else np.clip(subject, -1.0, 1.0))
        slot = np.where(place >= 0, fit - 0.01 * place, -np.inf)
        return np.where(self._slot_performing(operation), slot, -np.inf)

    def _slot_performing(self, operation: str) -> np.ndarray:
        """Per slot: whether its rows perform ``operation`` (``performing``, read per slot)."""
        found = self._performing_slots.get(operation)
        if found is None:
            table = self.index.table
            found = np.zeros(len(table.slots), dtype=bool)
            found[table.row_slot[self.performing(operation)]] = True
            self._performing_slots[operation] = found
        return found

    def _places_with_stand_ins(self, operation: str) -> np.ndarray:
        """Per slot: where its command stands for ``operation``, a stand-in's far after any own command (built
        once per operation)."""
        found = self._stand_in_places.get(operation)
        if found is None:
            found = self.place(operation)
            for n, stand_in in enumerate(STANDS_FOR.get(operation, ()), start=1):
                other = self.place(stand_in)
                found = np.where(found >= 0, found, np.where(other >= 0, other + 1_000 * n, -1))
            self._stand_in_places[operation] = found
        return found


def choice_of(index) -> CommandChoice:
    """The index's command choice, built once and kept with the index."""
    choice = getattr(index, "_command_choice", None)
    if choice is None:
        choice = index._command_choice = CommandChoice(index)
    return choice
