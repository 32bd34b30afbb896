"""Scoring: every channel of one query, fused into one score per (device, command) row.

Each channel is kept on the candidate so a ranking can be explained:

- vector: dense similarity of the intent phrase to the command's documents;
- lexical: char n-gram similarity of the same texts (exact wording, "关" vs "开");
- argument: the command can take what the utterance carries (``argument_channel``);
- subject: the intent names what the command acts on (``subject_channel``); it only ranks a device's
  commands against each other;
- verb: a verb command named by its own words beats its unnamed siblings (``verb_channel``);
- name: fuzzy match of the device label against the utterance (custom names such as "老伙计"), a label said
  whole, a word for the device's kind, a landmark said beside it (``home_names``);
- room: the device's room was asked for (a bonus, never a filter).

With a category (QueryIR.type_hint) the candidates are gated to that category first; without one the name
channel weighs more (keyword-first), because a custom name is then the strongest signal. Within a device,
commands are also compared with each other. The command channels are computed per slot (``command_table``),
name and room per device.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..embedding.embedders import Embedder, LexicalEmbedder, small_product
from ..signatures.query_ir import QueryIR
from .argument_channel import ArgumentChannel
from .category_words import categories_said
from .command_docs import is_chinese
from .command_table import CommandTable
from .home_names import HomeNames
from .index_params import IndexParams
from .room_words import RoomWords
from .subject_channel import SubjectChannel
from .text_match import tokens
from .verb_channel import VerbChannel

LANDMARK = 0.3  # what a device of the kind said gains when its name holds the landmark said ("by the front door")
LABEL_SAID = 0.2  # over a full name match for a label said whole: more than an ordinal repeated (0.1) adds
# What a demoted row (one that cannot take the value the utterance sets) loses: more than any score spans.
DEMOTED = 1_000.0


class RowTerms(NamedTuple):
    """One query's fused score as its terms: per slot (the command's), per device (its name, -inf where the
    device is filtered out; its room). A row's score is their sum, read for every row (``rows``) or for a few
    (``at``): the same numbers either way."""

    table: CommandTable
    per_slot: np.ndarray
    per_device: np.ndarray
    per_room: np.ndarray
    device_ok: np.ndarray
    channels: dict[str, np.ndarray]

    def rows(self) -> np.ndarray:
        """The fused score of every row."""
        return self.at(slice(None))

    def at(self, rows) -> np.ndarray:
        """The fused score of these rows."""
        device = self.table.row_device[rows]
        return self.per_slot[self.table.row_slot[rows]] + self.per_device[device] + self.per_room[device]


class Scoring:
    """The channels of one home's command index, read for one query and fused per row."""

    def __init__(self, table: CommandTable, rooms: RoomWords, names: HomeNames, arguments: ArgumentChannel,
                 subjects: SubjectChannel, verbs: VerbChannel, embedder: Embedder, lexical: LexicalEmbedder,
                 params: IndexParams):
        self.table, self.rooms, self.names = table, rooms, names
        self.arguments, self.subjects, self.verbs = arguments, subjects, verbs
        self.embedder, self.lexical, self.params = embedder, lexical, params
        self._last_command_scores: tuple | None = None  # ((utterance, action), text, channels)

    def text_scores(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(text score, vector, lexical) per slot: its best-matching document for its best text."""
        table = self.table
        if not table.slots:
            empty = np.zeros(0, dtype=np.float32)
            return empty, empty, empty
        p = self.params
        vectors = small_product(table.doc_vectors, self.embedder.embed(texts))  # (docs, texts)
        lexicals = small_product(table.doc_lexical, self.lexical.embed(texts))
        per_text = []
        for j, text in enumerate(texts):
            vector, lexical = np.append(vectors[:, j], -np.inf), np.append(lexicals[:, j], 0.0)
            combined = p.w_vector * vector + p.w_lexical * lexical
            docs = table.slot_docs_by_language[is_chinese(text)]
            best = np.take_along_axis(docs, np.argmax(combined[docs], axis=1)[:, None], 1)[:, 0]
            per_text.append((combined[best], vector[best], lexical[best]))
        combined, vector, lexical = (np.stack(arrays) for arrays in zip(*per_text, strict=True))  # (texts, slots)
        pick = np.argmax(combined, axis=0), np.arange(combined.shape[1])
        return combined[pick], vector[pick], lexical[pick]

    def command_scores(self, ir: QueryIR, utterance: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Per slot: how well its command does what is asked: text match, argument fit, subject named.

        They depend on the utterance and the parsed action only, and a query that both searches and
        plans asks twice: the last answer is kept (its arrays are never written to; callers get their
        own dict)."""
        key = (utterance, ir.action)
        last = self._last_command_scores
        if last is not None and last[0] == key:
            return last[1], dict(last[2])
        text, channels = self._score_commands(ir, utterance)
        self._last_command_scores = (key, text, channels)
        return text, dict(channels)

    def _score_commands(self, ir: QueryIR, utterance: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        text, vector, lexical = self.text_scores(ir.search_texts(utterance))
        argument = self.arguments.scores(utterance, ir.action)
        # the subject is named in the intent, without device words. A command that cannot take the value
        # set is not what the words name ("位置设到30" is no request for the preset position, whose
        # subject is 位置). An unknown word names a subject only next to a value it is set to
        # ("风量调到自动"): alone, "照明" or "亮起来" are the embedder's neighbours of 亮度 and still mean "on"
        subject = np.where(argument < 0, 0.0, self.subjects.scores(ir.search_text(utterance), similar=bool(
            (argument > 0).any()))).astype(np.float32)
        verb = self.verbs.scores(utterance, ir.action)
        p = self.params
        return text + p.w_argument * argument + p.w_subject * subject + p.w_verb * verb, \
            {"vector": vector, "lexical": lexical, "argument": argument, "subject": subject, "verb": verb}

    def device_mask(self, ir: QueryIR) -> np.ndarray:
        """Hard prefilter: devices in excluded rooms, and single devices excepted by name (a scope_exclude
        entry that names no room of the home: "desk lamp"), never appear."""
        mask = np.ones(len(self.table.home.devices), dtype=bool)
        if ir.scope_exclude:
            mask &= ~self.rooms.devices_in(self.rooms.expand(ir.scope_exclude))
        for name in self.names.excepted_devices(ir):
            mask &= ~self.names.devices_named(name)
        return mask

    def _room_hits(self, ir: QueryIR, utterance: str) -> np.ndarray:
        rooms = self.rooms
        wanted = set(rooms.expand(ir.scope_include)) | set(self.names.said_rooms(ir, utterance))
        wanted -= set(rooms.expand(ir.scope_exclude))
        return rooms.devices_in(wanted).astype(np.float32)

    def score_rows(self, ir: QueryIR, utterance: str,
                   kind_named: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Fused score per row (-inf where filtered out) and the channels behind it: per slot for the
        command channels, per device for name and room (a row's values: ``row_channels``). ``kind_named``
        (per device): the devices a word for their kind may name (default all)."""
        terms = self.score_terms(ir, utterance, kind_named)
        return terms.rows(), terms.channels

    def score_terms(self, ir: QueryIR, utterance: str, kind_named: np.ndarray | None = None) -> RowTerms:
        """``score_rows`` before it is read per row: its per-slot and per-device terms."""
        p, table, names = self.params, self.table, self.names
        device_ok = self.device_mask(ir)
        if ir.has_category and ir.type_hint in table.categories:
            device_ok &= table.in_category(ir.type_hint)
            w_name = p.w_name
        else:
            w_name = p.w_name_keyword_first
        text, channels = self.command_scores(ir, utterance)
        # the subject ranks commands within a device, never one device over another:
        # 0, or -1 where a sibling's subject was named and not the slot's own
        named = channels["subject"]
        channels["subject"] = named - table.per_profile_best(named)
        text = text + p.w_subject * (channels["subject"] - named)
        channels["within_device"] = text - table.per_profile_best(text)
        name, room = names.name_scores(utterance, ir.name_hint), self._room_hits(ir, utterance)
        # a label said whole ("儿童房窗帘 kab", "Office Blinds kab") names its device: its room word is part of the
        # name (the device may stand in 1栋儿童房), and it wins over devices whose label says less
        labelled = names.labels_said(utterance)
        if labelled.any():
            room = np.maximum(room, labelled)
            name = np.where(labelled > 0, np.maximum(name, 1.0) + LABEL_SAID, name).astype(np.float32)
        # a word for a kind ("风扇", "灯") names every device of that kind, whatever its label (落地扇, 壁扇), unless
        # the word said is part of a longer one the labels use ("台灯": the desk lamps, not every light); an
        # English one ("fan") only where no label of the kind holds it, the labels' own words deciding there
        for kind, words in categories_said(utterance).items():
            of_kind = table.in_category(kind) if kind_named is None else table.in_category(kind) & kind_named
            if not any(names.says_a_narrower_kind(utterance, word, kind) if not word.isascii() else
                       (of_kind & names.carrying(tokens(word))).any() for word in words):
                name = np.maximum(name, p.kind_said_name * of_kind)
        # a landmark says which device of the kind said is meant ("the shades facing the front door": the Front
        # Door Shades among the shades)
        for phrase in names.landmarks(utterance):
            by_it = names.carrying(phrase) & (name > 0)
            name = np.where(by_it, name + LANDMARK, name).astype(np.float32)
        # each term is weighed where it lives (per slot, per device); a device filtered out carries -inf into its
        # rows (the command terms are never +inf or NaN)
        return RowTerms(table, text + p.w_within_device * channels["within_device"],
                        np.where(device_ok, w_name * name, -np.inf), p.w_room * room, device_ok,
                        {**channels, "name": name, "room": room})

    def row_channels(self, row: int, channels: dict[str, np.ndarray]) -> dict[str, float]:
        """One row's channel values, from the per-slot and per-device arrays of ``score_rows``."""
        device, slot = self.table.rows[row][0], int(self.table.row_slot[row])
        return {name: round(float(values[device if name in ("name", "room") else slot]), 4)
                for name, values in channels.items()}
