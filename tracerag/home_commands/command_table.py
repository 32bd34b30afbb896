"""The command table: one home's (device, command) rows, the slots they share, and the command documents.

One row per (device, command), stored device by device. Devices with the same commands and category score
alike on every command channel, so those channels are computed once per "slot" (one such profile's command)
and read per row through ``row_slot``: a query's command scoring costs the number of profiles, not of
devices. Each slot's command documents (``command_docs``) are embedded once per distinct text. Per device,
the table also keeps the id, room and category arrays every other part of the index filters by.

Everything else in the index (names, scoring channels, ranking, bulk plans, safety) reads positions in
this table: a row number, a slot number, a device number.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cached_property

import numpy as np

from ..embedding.embedders import Embedder, LexicalEmbedder
from .command_docs import command_texts, is_chinese
from .devices import CommandSpec, Device
from .home import Home
from .text_match import tokens


class CommandTable:
    """Rows, slots and command documents of one home (see the module docstring)."""

    def __init__(self, home: Home, embedder: Embedder, lexical: LexicalEmbedder):
        self.home = home
        self.rows: list[tuple[int, int]] = []  # (device position, command position)
        self.slots: list[tuple[int, int]] = []  # a row that stands for the slot
        profiles: dict[tuple, int] = {}
        profile_of, slot_starts = [], []
        for di, device in enumerate(home.devices):
            profile = profiles.setdefault((device.commands, device.category), len(profiles))
            if profile == len(slot_starts):
                slot_starts.append(len(self.slots))
                self.slots.extend((di, ci) for ci in range(len(device.commands)))
            profile_of.append(profile)
            self.rows.extend((di, ci) for ci in range(len(device.commands)))
        # where each profile's slots begin (a profile without commands has none)
        self.profile_slot_starts = np.unique(np.asarray([s for s in slot_starts if s < len(self.slots)],
                                                        dtype=np.int64))
        self.row_device = np.asarray([r[0] for r in self.rows], dtype=np.int64)
        self.row_slot = np.asarray([slot_starts[profile_of[di]] + ci for di, ci in self.rows], dtype=np.int64)
        # rows are stored device by device: a device's rows start where its number first appears
        self.device_row_starts = np.flatnonzero(np.r_[True, np.diff(self.row_device) != 0]) \
            if self.rows else np.zeros(0, dtype=np.int64)
        self._prepare_documents(embedder, lexical)
        self._prepare_devices()
        self._prepare_commands()

    def _prepare_documents(self, embedder: Embedder, lexical: LexicalEmbedder) -> None:
        texts: dict[str, int] = {}
        slot_docs = [[texts.setdefault(t, len(texts)) for t in command_texts(spec)] for _, spec in self.slot_commands]
        self.doc_texts = list(texts)
        # per query language: the slot's documents in that language when it has any, else all of them;
        # a Chinese "关" must not meet the one-word English verb document "stop" of another command
        chinese = [is_chinese(t) for t in self.doc_texts]
        self.slot_docs_by_language = {
            lang: self._doc_table([[d for d in docs if chinese[d] == lang] or docs for docs in slot_docs])
            for lang in (True, False)}
        self.doc_vectors = embedder.embed(self.doc_texts) if self.doc_texts else np.zeros((0, embedder.dim))
        self.doc_lexical = lexical.embed(self.doc_texts) if self.doc_texts else np.zeros((0, lexical.dim))

    def _doc_table(self, slot_docs: list[list[int]]) -> np.ndarray:
        """(slots, max docs per slot); a missing place points at the sentinel document len(doc_texts)."""
        width = max((len(d) for d in slot_docs), default=1)
        table = np.full((len(slot_docs), width), len(self.doc_texts), dtype=np.int64)
        for r, docs in enumerate(slot_docs):
            table[r, :len(docs)] = docs
        return table

    def _prepare_devices(self) -> None:
        devices = self.home.devices
        self.device_ids = np.asarray([d.device_id for d in devices], dtype=object)
        self.device_rooms = np.asarray([d.room for d in devices], dtype=object)
        self.device_categories = np.asarray([d.category for d in devices], dtype=object)
        self.category_code = {c: i for i, c in enumerate(dict.fromkeys(self.device_categories))}
        self.device_category_codes = np.asarray([self.category_code[c] for c in self.device_categories],
                                                dtype=np.int64)
        self.category_names = list(self.category_code)  # by code
        self.categories = frozenset(filter(None, self.category_names))  # Home.categories, read once
        self.category_size = np.bincount(self.device_category_codes, minlength=len(self.category_code))
        descriptions: dict[str, set[tuple[str, ...]]] = defaultdict(set)
        for d in devices:
            descriptions[d.category].update(tokens(c.description) for c in d.commands)
        self.category_descriptions = {c: sorted(words) for c, words in descriptions.items()}

    def _prepare_commands(self) -> None:
        self.command_code: dict[str, int] = {}
        slot_command = [self.command_code.setdefault(spec.id, len(self.command_code)) for _, spec in self.slot_commands]
        self.row_command = np.asarray(slot_command, dtype=np.int64)[self.row_slot] if self.rows else \
            np.zeros(0, dtype=np.int64)
        compatibilities: dict[tuple, int] = {}  # argument shapes: devices of one can share a batched call
        self.slot_compatibility_code = np.asarray(
            [compatibilities.setdefault(spec.compatibility, len(compatibilities)) for _, spec in self.slot_commands],
            dtype=np.int64)
        self.compatibilities = list(compatibilities)

    # ----- what a position holds --------------------------------------------------------------

    def spec(self, device: int, position: int) -> CommandSpec:
        """The command at a (device, command) position."""
        return self.home.devices[device].commands[position]

    @cached_property
    def slot_commands(self) -> list[tuple[Device, CommandSpec]]:
        """Per slot: the device that stands for it and its command (the devices of one profile share a slot)."""
        return [(self.home.devices[d], self.home.devices[d].commands[c]) for d, c in self.slots]

    def device_of_row(self, row: int) -> Device:
        return self.home.devices[self.rows[row][0]]

    def spec_of_row(self, row: int) -> CommandSpec:
        """The command of one row."""
        return self.spec(*self.rows[row])

    @cached_property
    def commanded(self) -> np.ndarray:
        """Per device: whether it has a command at all (a sensor has none)."""
        return np.bincount(self.row_device, minlength=len(self.home.devices)) > 0

    # ----- per device ---------------------------------------------------------------------------

    def in_categories(self, categories) -> np.ndarray:
        """Per device: whether its category is one of these (by code: comparing category strings costs more)."""
        codes = [self.category_code[c] for c in categories if c in self.category_code]
        return np.isin(self.device_category_codes, codes)

    def in_category(self, category: str) -> np.ndarray:
        code = self.category_code.get(category)
        return self.device_category_codes == code if code is not None else np.zeros(len(self.home.devices), bool)

    @cached_property
    def device_layout(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(per commanded device: its number, its first slot; per slot: its profile group; per profile group:
        its first slot), for reading per-slot values per device without a pass over every row."""
        starts = self.profile_slot_starts
        group_of_slot = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(self.slots)]))
        return self.row_device[self.device_row_starts], self.row_slot[self.device_row_starts], group_of_slot, starts

    def group_best_slots(self, slot_values: np.ndarray) -> np.ndarray:
        """Per profile group: its slot with the best finite value (ties to the earlier slot), or -1."""
        _, _, group_of_slot, starts = self.device_layout
        values = np.where(np.isfinite(slot_values), slot_values, -np.inf)
        group_best = np.maximum.reduceat(values, starts)
        best = np.flatnonzero(np.isfinite(values) & (values == group_best[group_of_slot]))
        best_slot = np.full(len(starts), -1, dtype=np.int64)
        if best.size:
            groups = group_of_slot[best]
            first = np.r_[True, groups[1:] != groups[:-1]]
            best_slot[groups[first]] = best[first]
        return best_slot

    def device_best_rows(self, slot_values: np.ndarray, device_ok: np.ndarray, missing: int = -1) -> np.ndarray:
        """Per device: its best row where every row reads its slot's value (``slot_values``) and only the
        ``device_ok`` devices count, ties to its earlier row; ``missing`` where none is finite. Devices of one
        profile share their slots, so this costs the slots and the devices, not the rows."""
        if not len(self.slots):
            return np.full(len(self.home.devices), missing, dtype=np.int64)
        return self.device_rows_of(self.group_best_slots(slot_values), device_ok, missing)

    def device_rows_of(self, group_slots: np.ndarray, device_ok: np.ndarray, missing: int = -1) -> np.ndarray:
        """Per device: the row reading its profile group's slot in ``group_slots`` (-1: none), where the device
        is ``device_ok``; ``missing`` elsewhere."""
        out = np.full(len(self.home.devices), missing, dtype=np.int64)
        if not len(self.slots):
            return out
        devices = self.device_layout[0]
        chosen = group_slots[self.device_group]
        ok = (chosen >= 0) & device_ok[devices]
        out[devices[ok]] = self._slot_to_row[ok] + chosen[ok]
        return out

    @cached_property
    def _slot_to_row(self) -> np.ndarray:
        """Per commanded device: what turns a slot of its profile into its row (its first row less its first
        slot)."""
        return self.device_row_starts - self.device_layout[1]

    @cached_property
    def device_group(self) -> np.ndarray:
        """Per commanded device (``device_row_starts``): its profile group."""
        _, first_slot, group_of_slot, _ = self.device_layout
        return group_of_slot[first_slot]

    def devices_with_slots(self, slot_mask: np.ndarray) -> np.ndarray:
        """Per device: whether one of its rows reads a slot of ``slot_mask`` (a device's slots are its
        profile's: read per profile, not per row)."""
        out = np.zeros(len(self.home.devices), dtype=bool)
        if not len(self.slots):
            return out
        devices, first_slot, group_of_slot, starts = self.device_layout
        out[devices] = np.logical_or.reduceat(slot_mask, starts)[group_of_slot[first_slot]]
        return out

    @cached_property
    def device_row_counts(self) -> np.ndarray:
        """Per commanded device (in ``device_row_starts`` order): how many rows it has."""
        return np.diff(np.r_[self.device_row_starts, len(self.rows)])

    @cached_property
    def slot_row_counts(self) -> np.ndarray:
        """Per slot: how many rows read it (one per device of its profile)."""
        return np.bincount(self.row_slot, minlength=len(self.slots))

    @cached_property
    def row_group(self) -> np.ndarray:
        """Per row: its device's place among the commanded devices (``device_row_starts``)."""
        return np.repeat(np.arange(len(self.device_row_starts)), self.device_row_counts)

    def rows_of_groups(self, groups: np.ndarray) -> np.ndarray:
        """The rows of these commanded devices (places in ``device_row_starts``, ascending), in row order."""
        counts = self.device_row_counts[groups]
        if not counts.size:
            return np.zeros(0, dtype=np.int64)
        offsets = self.device_row_starts[groups] - np.r_[0, np.cumsum(counts)[:-1]]
        return np.repeat(offsets, counts) + np.arange(int(counts.sum()))

    def per_profile_best(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """For each slot, the best value among the (masked) slots of the same profile (-inf: none)."""
        starts = self.profile_slot_starts
        return np.repeat(group_max(values, starts, mask), np.diff(np.r_[starts, len(values)]))


def group_max(values: np.ndarray, starts: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """The max of each group of ``values`` (the runs beginning at ``starts``), as float64; -inf where the
    mask leaves a group nothing."""
    values = values.astype(np.float64, copy=False)  # reduceat writes a new array: no copy needed
    if mask is not None:
        values = np.where(mask, values, -np.inf)
    return np.maximum.reduceat(values, starts) if len(values) else values
