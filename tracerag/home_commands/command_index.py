"""CommandIndex: find the (device, command) pairs an utterance asks for, in one home.

One entry per (device, command), whose documents are embedded once per distinct text. A query is
scored on these channels, each kept on the candidate so a ranking can be explained:

- vector: dense similarity of the intent phrase to the command's documents;
- lexical: char n-gram similarity of the same texts (exact wording, "关" vs "开");
- argument: the command can take what the utterance carries: one of its listed values is named
  ("制冷", "上下扫风", "HDMI 2"), or the utterance sets a number ("调到50%") and the command takes one;
- subject: the intent names what the command acts on, in words of its description that its sibling
  commands do not use ("风速" of 设置空调风速, "扫风" of 设置扫风). For a single target it only
  ranks a device's commands against each other: a device described in another language cannot be
  named this way and must not lose its place for that;
- name: fuzzy match of the device label against the utterance (custom names such as "老伙计");
- room: the device's room was asked for (a bonus, never a filter).

With a category (QueryIR.type_hint) the candidates are gated to that category first; without one
the name channel weighs more (keyword-first), because a custom name is then the strongest signal.
Within a device, commands are also compared with each other, and a device's second and later
commands are pushed down, so ten slots hold ten devices' best commands before anyone's second guess.

Bulk mode ("all", "except") chooses the command first from aggregated evidence, then expands it
to every target of one category, grouped by argument shape and batched.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter, defaultdict
from functools import cached_property, lru_cache
from itertools import islice
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel

from ..device_operations import OTHER
from ..embedding.embedders import Embedder, LexicalEmbedder, l2_normalize, small_product
from ..signatures.query_ir import QueryIR
from .category_words import categories_said, general_word, is_kind_word, locative, normalised
from .command_choice import choice_of
from .command_docs import SET_VERBS, VERB_RUNS, command_texts, is_chinese, subject_phrases, subject_text, verb_phrases
from .command_results import BulkGroup, BulkPlan, Candidate, CapabilityOption
from .devices import CommandSpec, Device
from .home import Home
from .name_index import NameIndex, PhraseIndex, ordered
from .negation import is_negated
from .text_match import (
    contains,
    join_tokens,
    phrase_mask,
    phrase_pattern,
    remove_phrases,
    split_on_phrases,
    tokens,
)
from .value_ranges import unit_family
from .values import UNIT_FAMILY, SaidValue, Unreadable, is_target, number_and_family, value_said

logger = logging.getLogger(__name__)

# Function characters/words that carry no name information ("把客厅的灯打开" -> 客厅, 灯).
FILLER_TOKENS = frozenset("的 了 把 将 给 帮 我 请 一 下 都 吧 呢 啊 个 些 所 有 全 部 其 他 除 外 以".split()) | {
    "the", "a", "an", "please", "all", "every", "each", "my", "in", "of", "to", "and", "except", "but",
}


_MASKED = "|"  # stands in for a masked phrase: tokens() never yields it, so no name run spans it
# The name index reads at most NAME_TOKENS_MAX words of a label and keeps runs of at most NAME_RUN_MAX of
# them (plus each whole name), so it grows linearly with the labels, not with the cube of their length.
# Real names are far shorter: the bundled homes' longest has 6 words.
NAME_TOKENS_MAX = 64
NAME_RUN_MAX = 8

LANDMARK = 0.3  # what a device of the kind said gains when its name holds the landmark said ("by the front door")
TIE_BREAK = 0.05  # the weight of the command words in a known operation's device order
OTHER_PERFORMER = 0.3  # how far below a device's command for an operation its other commands for it rank
SWITCH_EDGE = 1e-3  # how far a device's switching row ranks above its best other one
LABEL_SAID = 0.2  # over a full name match for a label said whole: more than an ordinal repeated (0.1) adds
LABEL_SAID_CHARS = 200  # longer labels are not looked for whole in an utterance
ROOMS_SAID_CACHE = 256  # utterances whose rooms an index remembers
# What a demoted row (one that cannot take the value the utterance sets) loses: more than any score spans.
DEMOTED = 1_000.0

# a word for one kind that names devices of another where the home has them ("门": a lock)
_NAMED_AS = {"Door": ("Lock", "GarageDoor")}
# Categories whose devices power something else ("排气扇" and "浴霸" are both Switches).
CARRIER_CATEGORIES = frozenset({"Switch", "SmartPlug"})


class ArgumentShape(NamedTuple):
    """What a command takes, as the argument channel reads it; commands of one shape score alike."""

    phrases: tuple[tuple[str, ...], ...]  # the words of its listed values (the home's, in any language)
    numeric: bool  # it takes a number
    relative: bool  # the number changes a value by an amount (a step of -100..100): it takes no target
    takes: bool  # it takes a value at all
    unit: str | None  # the unit family of its range (``unit_scale``), None where the spec does not say
    low: float | None
    high: float | None


class IndexParams(BaseModel):
    """The retriever's own knobs; `optimize.py tune commands` searches them without an LM."""

    w_vector: float = 1.0
    w_lexical: float = 0.35
    w_within_device: float = 0.5  # how much a command must beat the device's other commands
    w_argument: float = 0.8
    w_subject: float = 0.8
    w_verb: float = 0.8  # a verb command the user names by its own words beats its unnamed siblings
    w_name: float = 0.6  # with a category: the gate already did most of the work
    w_name_keyword_first: float = 1.2  # no category: custom names lead
    w_room: float = 0.8
    repeat_penalty: float = 0.05  # per earlier command of the same device in the ranking
    options_window: int = 80  # rows of evidence for bulk command choice (50-100)
    options_per_command: int = 3  # at most M hits per command, so big device groups do not win by count
    options_top_n: int = 5
    option_temperature: float = 0.03
    w_coverage: float = 0.2  # prefer a command the whole target set supports
    fallback_margin: float = 0.15  # devices lacking the chosen command take an option this close to it
    min_top1_ratio: float = 0.5
    min_margin: float = 0.15
    name_specificity: float = 4.0  # IDF weight a name match needs to count in full
    similar_subject: float = 0.6  # cosine from which an unknown word names a subject (风量 for 风速)
    kind_said_name: float = 0.7  # the least name score of a device whose kind the utterance names ("风扇": 落地扇)
    kind_word_share: float = 0.4  # a name word this common in its category names the kind (bulk hints, subjects)
    category_share: float = 0.75  # share of name evidence one category needs to be "established"
    max_targets: int = 200
    max_groups: int = 20
    batch_size: int = 20


class CommandIndex:
    """Command-level index of one home. Cheap to query; shared, never copied, by DSPy optimizers."""

    def __init__(self, home: Home, embedder: Embedder, params: IndexParams | None = None,
                 lexical: LexicalEmbedder | None = None):
        self.home = home
        self.embedder = embedder
        self.lexical = lexical or LexicalEmbedder()
        self.params = params or IndexParams()
        self.rows: list[tuple[int, int]] = []  # (device position, command position)
        # Devices with the same commands and category score alike on every command channel, so those
        # channels are computed once per "slot" (one such profile's command) and read per row through
        # row_slot: a query's command scoring costs the number of profiles, not of devices.
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
        self._profile_slot_starts = np.unique(np.asarray([s for s in slot_starts if s < len(self.slots)],
                                                         dtype=np.int64))
        self.row_device = np.asarray([r[0] for r in self.rows], dtype=np.int64)
        self.row_slot = np.asarray([slot_starts[profile_of[di]] + ci for di, ci in self.rows], dtype=np.int64)
        texts: dict[str, int] = {}
        slot_docs = [[texts.setdefault(t, len(texts)) for t in command_texts(self._command_of(di, ci))]
                     for di, ci in self.slots]
        self.doc_texts = list(texts)
        # per query language: the slot's documents in that language when it has any, else all of them;
        # a Chinese "关" must not meet the one-word English verb document "stop" of another command
        chinese = [is_chinese(t) for t in self.doc_texts]
        self.slot_docs_by_language = {
            lang: self._doc_table([[d for d in docs if chinese[d] == lang] or docs for docs in slot_docs])
            for lang in (True, False)}
        self._prepare_names()
        self._prepare_arguments()
        self._last_command_scores: tuple | None = None  # ((utterance, action), text, channels)
        self.doc_vectors = embedder.embed(self.doc_texts) if self.doc_texts else np.zeros((0, embedder.dim))
        self.doc_lexical = self.lexical.embed(self.doc_texts) if self.doc_texts else np.zeros((0, self.lexical.dim))
        self.subject_vectors = l2_normalize(embedder.embed(self.subject_texts)) if self.subject_texts else \
            np.zeros((0, embedder.dim), dtype=np.float32)
        logger.info("indexed %s: %d devices, %d commands, %d distinct documents (%s)", home.name,
                    len(home.devices), len(self.rows), len(self.doc_texts), embedder.id)

    def _doc_table(self, slot_docs: list[list[int]]) -> np.ndarray:
        """(slots, max docs per slot); a missing place points at the sentinel document len(doc_texts)."""
        width = max((len(d) for d in slot_docs), default=1)
        table = np.full((len(slot_docs), width), len(self.doc_texts), dtype=np.int64)
        for r, docs in enumerate(slot_docs):
            table[r, :len(docs)] = docs
        return table

    def __deepcopy__(self, memo):
        return self

    @property
    def manifest(self) -> dict:
        return {"home": self.home.name, "embedder": self.embedder.id, "dim": int(self.embedder.dim),
                "devices": len(self.home.devices), "rows": len(self.rows), "documents": len(self.doc_texts)}

    # ----- arguments -------------------------------------------------------------------------

    def _prepare_arguments(self) -> None:
        """Per slot: the value phrases its command lists, whether it takes a free value, and its subject."""
        kind_tokens = self._kind_tokens()
        # a value's words in every profile of the home that lists it for the same command: the value
        # "vertical" of setFanOscillationMode is 上下扫风 on one air conditioner and "vertical swing" on
        # another, so "上下扫风" names it on both, whichever language each profile is described in
        value_words: dict[tuple[str, str], set[tuple[str, ...]]] = defaultdict(set)
        for device in self.home.devices:
            for command in device.commands:
                for v in command.value_list:
                    value_words[command.id, v.value].update(t for t in (tokens(v.description), tokens(v.value)) if t)
        shapes: dict[tuple, int] = {}
        subjects: dict[tuple, int] = {}
        slot_shape, slot_subject = [], []
        for di, ci in self.slots:
            device = self.home.devices[di]
            spec = device.commands[ci]
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
            subject = tuple(run for run in subject_phrases(spec, device.commands)
                            if not set(run) & kind_tokens.get(device.category, set()))
            slot_subject.append(subjects.setdefault(subject, len(subjects)))
        self._command_code: dict[str, int] = {}
        slot_command = [self._command_code.setdefault(self._command_of(*slot).id, len(self._command_code))
                        for slot in self.slots]
        self.row_command = np.asarray(slot_command, dtype=np.int64)[self.row_slot] if self.rows else \
            np.zeros(0, dtype=np.int64)
        compatibilities: dict[tuple, int] = {}  # argument shapes: devices of one can share a batched call
        self.slot_compatibility_code = np.asarray(
            [compatibilities.setdefault(self._command_of(*slot).compatibility, len(compatibilities))
             for slot in self.slots], dtype=np.int64)
        self.compatibilities = list(compatibilities)
        verb_sets: dict[frozenset, int] = {}
        specs = [self._command_of(*slot) for slot in self.slots]
        self.slot_verb_set = np.asarray([verb_sets.setdefault(verb_phrases(spec.command, spec.capability),
                                                              len(verb_sets)) for spec in specs], dtype=np.int64)
        self.verb_sets = list(verb_sets)
        self.slot_is_verb = np.asarray([bool(verbs) for verbs in self.verb_sets] or [False])[self.slot_verb_set]
        self.verb_phrases = PhraseIndex(frozenset().union(*self.verb_sets))  # each phrase once
        self.argument_shapes: list[ArgumentShape] = list(shapes)
        self.slot_shape = np.asarray(slot_shape, dtype=np.int64)
        self.subject_sets = list(subjects)
        self.slot_subject = np.asarray(slot_subject, dtype=np.int64)
        # the phrases of every value and subject, looked up once per utterance rather than scanned per shape
        self.value_phrases = PhraseIndex(p for shape in self.argument_shapes for p in shape[0])
        self.subject_phrases = PhraseIndex(p for phrases in self.subject_sets for p in phrases)
        # for words no command document says: what each slot's command acts on, in its own words
        texts: dict[str, int] = {}
        self.slot_subject_text = np.asarray(
            [texts.setdefault(subject_text(self._command_of(*slot), self._kind_words(kind_tokens, slot[0])),
                              len(texts)) for slot in self.slots], dtype=np.int64)
        self.subject_texts = list(texts)
        self._known_phrases = PhraseIndex({p for shape in shapes for p in shape[0]} | set(self.verb_phrases.phrases)
                                          | set(SET_VERBS) | {(t,) for t in FILLER_TOKENS})

    def _kind_words(self, kind_tokens: dict[str, set[str]], device: int) -> set[str]:
        """The words that say a device's kind: its category's name ("air conditioner") and name words."""
        category = self.home.devices[device].category
        return kind_tokens.get(category, set()) | set(_category_words(category))

    def argument_scores(self, utterance: str, action: str = "") -> np.ndarray:
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
        verbs = self.verb_phrases.found_in(said) if not categories_said(utterance) else set()
        named = self.value_phrases.found_in(said)
        per_shape = np.asarray([(0.5 if (target and not numeric) or any(contains(v, p) for v in verbs for p in phrases
                                                                         if p in named) else 1.0)
                                if not named.isdisjoint(phrases)
                                else number_fit(value, unit, low, high) if numeric and has_value
                                and not (relative and target)
                                else -0.5 if not takes and target
                                else -0.25 if not takes and set_verb else 0.0
                                for phrases, numeric, relative, takes, unit, low, high in self.argument_shapes]
                               or [0.0], dtype=np.float32)
        return per_shape[self.slot_shape] if self.slots else np.zeros(0, dtype=np.float32)

    def memo(self, key: tuple, compute):
        """``compute()``, remembered for ``key``: what one utterance's parse, search and safety rules each ask of
        it is read once (the last ``ROOMS_SAID_CACHE`` times four answers are kept)."""
        if key in self._memo:
            return self._memo[key]
        if len(self._memo) >= 4 * ROOMS_SAID_CACHE:
            self._memo.clear()
        value = self._memo[key] = compute()
        return value

    def name_spans(self, utterance: str) -> tuple[tuple[int, int], ...]:
        """Where the utterance says a device label or a room name that holds a number ("Curtain 1A", 筒灯3,
        "Bedroom 2"): never a value."""
        return self.memo(("name_spans", utterance), lambda: self._name_spans(utterance))

    def _name_spans(self, utterance: str) -> tuple[tuple[int, int], ...]:
        said = tokens(utterance)
        found = [p for p in (*self._label_phrases.found_in(said), *self.room_phrases.found_in(said))
                 if any(ch.isdigit() for t in p for ch in t)]
        return tuple((m.start(), m.end()) for phrase in found for m in phrase_pattern(phrase).finditer(utterance))

    def said_value(self, utterance: str) -> SaidValue | Unreadable | None:
        """The value the utterance sets (``values.read_value``), its names' numbers aside."""
        return value_said(utterance, self.name_spans(utterance))

    def value_in(self, utterance: str) -> tuple[float | None, str | None] | None:
        """(number, unit family) of the value the utterance sets (``values.number_and_family``), or None."""
        return number_and_family(self.said_value(utterance))

    def _value_in_a_unit(self, texts) -> tuple[float, str] | None:
        """The first value set in a unit among the texts (the utterance, then its parsed action)."""
        values = (self.value_in(text) for text in texts)
        return next((v for v in values if v is not None and v[1] is not None), None)

    def _sets_a_temperature(self, texts) -> bool:
        return (self._value_in_a_unit(texts) or (0, None))[1] == "temperature"

    def values_named(self, utterance: str) -> np.ndarray:
        """Per slot: whether the utterance names one of its command's listed values ("制冷", "HDMI 2", "速冷")."""
        named = self.value_phrases.found_in(tokens(utterance))
        if not named or not self.slots:
            return np.zeros(len(self.slots), dtype=bool)
        per_shape = np.asarray([not named.isdisjoint(shape[0]) for shape in self.argument_shapes], dtype=bool)
        return per_shape[self.slot_shape]

    def takes_kind_said(self, utterance: str) -> np.ndarray:
        """Per slot: whether its command takes the kind of value the utterance sets: a listed value it names
        ("制冷"), or a number where it takes numbers in the unit said; every slot when no value is said."""
        named = self.values_named(utterance)
        value = self.value_in(utterance)
        if not named.any() and value is None:
            return np.ones(len(self.slots), dtype=bool)
        # a name said may be a value of a numeric command too ("warm white" of a colour temperature)
        per_shape = np.asarray([numeric and (value is None or not (value[1] and unit and value[1] != unit))
                                for _, numeric, _, _, unit, _, _ in self.argument_shapes], dtype=bool)
        numeric = per_shape[self.slot_shape] if self.slots else np.zeros(0, dtype=bool)
        return numeric | named if value is None else numeric

    def _kind_tokens(self) -> dict[str, set[str]]:
        """Per category, the name words that name the kind ("灯", "空调"): in `kind_word_share` of its names.

        "调节灯光颜色" acts on the colour, not on the light: a subject run holding a kind word would
        claim every "灯光" the user says. Read once, when the index is built."""
        names: dict[str, int] = defaultdict(int)
        carrying: dict[str, Counter] = defaultdict(Counter)
        for device, key in zip(self.home.devices, self.name_keys, strict=True):
            names[device.category] += 1
            carrying[device.category].update(set(key))
        return {category: {t for t, count in carrying[category].items()
                           if count >= self.params.kind_word_share * n}
                for category, n in names.items()}

    def subject_scores(self, text: str, similar: bool = False) -> np.ndarray:
        """Per slot: 1 where the text names its command's subject (see `subject_phrases`), or, when it
        names none and ``similar`` is set, says a word the embedder puts next to it (`_similar_subjects`)."""
        said = tokens(text)
        if not self.slots:
            return np.zeros(0, dtype=np.float32)
        named = self.subject_phrases.found_in(said)
        per_set = np.asarray([0.0 if named.isdisjoint(phrases) else 1.0 for phrases in self.subject_sets],
                             dtype=np.float32)
        if per_set.any() or not similar:
            return per_set[self.slot_subject]
        return self._similar_subjects(said)

    def _similar_subjects(self, said: tuple[str, ...]) -> np.ndarray:
        """Per slot: 1 where a word of the text that no room, name, value or verb of this home explains
        ("风量") shares a token with what the slot's command acts on ("风速", see `subject_text`) and is
        as near it as anything (cosine >= `similar_subject`; within 0.03 of the nearest counts, the other
        channels decide). The command documents say what a command acts on and the embedder knows their
        other words, so no synonym list is kept."""
        explained = [*self.room_phrases.found_in(said), *self.name_phrases.found_in(said),
                     *self.run_phrases.found_in(said), *self._known_phrases.found_in(said)]
        runs = split_on_phrases(said, explained)  # a Latin run is words, each its own; a CJK run one word
        words = [join_tokens(w) for run in runs for w in ([(t,) for t in run] if run[0].isascii() else [run])
                 if (len(w) >= 2 or len(w[0]) >= 3) and not any(t.isdigit() for t in w)]
        if not words or not self.subject_texts:
            return np.zeros(len(self.slots), dtype=np.float32)
        cosines = small_product(l2_normalize(self.embedder.embed(words)), self.subject_vectors)
        # a word and a subject must share a token: a character of a Chinese compound (风量, 风速) or a
        # word. The embedder alone puts "dim" and "brighten" next to "hue", 地方 next to 位置.
        shares = np.asarray([[bool(set(tokens(w)) & set(tokens(t))) and len(t) >= 2 for t in self.subject_texts]
                             for w in words])
        near = np.where(shares, cosines, 0.0).max(axis=0)
        best = float(near.max())
        if best < self.params.similar_subject:
            return np.zeros(len(self.slots), dtype=np.float32)
        return (near >= best - 0.03).astype(np.float32)[self.slot_subject_text]

    def verb_scores(self, *texts: str) -> np.ndarray:
        """Per slot: -1 for a verb command (on, mute, stop ...) whose device has another one the texts
        name by its own words while this one goes unnamed; 0 elsewhere.

        Whole verb words decide between verb commands where the embedder cannot: it puts "mute" nearer
        the unmute document. A phrase inside a longer one said counts only as the longer one: "取消静音"
        names unmute, not mute, and "停止播放" stop, not off. A text that says a negated verb is left to the
        other channels (see `_verb_sets_named`)."""
        named = self._verb_sets_named(texts)
        if named is None:
            return np.zeros(len(self.slots), dtype=np.float32)
        per_slot = named.astype(np.float32)[self.slot_verb_set]
        best = self._per_profile_best(per_slot, self.slot_is_verb)
        return np.where(self.slot_is_verb, per_slot - best, 0.0).astype(np.float32)

    # ----- names and rooms -------------------------------------------------------------------

    def _prepare_names(self) -> None:
        self.room_aliases = _room_aliases(self.home.rooms, self.home.floors)
        self._rooms_said: dict[str, list[str]] = {}
        self._landmarks_said: dict[str, tuple[str, list[tuple[str, ...]]]] = {}
        self._memo: dict[tuple, object] = {}
        self._name_ends: dict[int, dict[tuple[str, ...], list[int]]] = {}  # per run length: a name's last words
        self.room_phrases = PhraseIndex(self.room_aliases)  # longest first, as room_words reads them
        self.room_tokens = {room: tokens(room) for room in self.home.rooms}
        self._room_rank = {room: i for i, room in enumerate(self.room_tokens)}
        self._rooms_with: dict[str, set[str]] = defaultdict(set)  # word -> rooms whose name holds it
        self._rooms_ending: dict[str, list[str]] = defaultdict(list)  # last word -> rooms of 2+ words
        for room, toks in self.room_tokens.items():
            for t in toks:
                self._rooms_with[t].add(room)
            if len(toks) >= 2:
                self._rooms_ending[toks[-1]].append(room)
        self.device_ids = np.asarray([d.device_id for d in self.home.devices], dtype=object)
        self.device_rooms = np.asarray([d.room for d in self.home.devices], dtype=object)
        self.device_categories = np.asarray([d.category for d in self.home.devices], dtype=object)
        self._room_code = {room: i for i, room in enumerate(dict.fromkeys([*self.home.rooms, *self.device_rooms]))}
        self.device_room_codes = np.asarray([self._room_code[r] for r in self.device_rooms], dtype=np.int64)
        self._category_code = {c: i for i, c in enumerate(dict.fromkeys(self.device_categories))}
        self.device_category_codes = np.asarray([self._category_code[c] for c in self.device_categories],
                                                dtype=np.int64)
        self._categories = list(self._category_code)
        self.categories = frozenset(filter(None, self._categories))  # Home.categories, read once
        self._category_size = np.bincount(self.device_category_codes, minlength=len(self._category_code))
        descriptions: dict[str, set[tuple[str, ...]]] = defaultdict(set)
        for d in self.home.devices:
            descriptions[d.category].update(tokens(c.description) for c in d.commands)
        self.category_descriptions = {c: sorted(words) for c, words in descriptions.items()}
        self.label_ordinals = [frozenset(t for t in tokens(d.label) if t.isdigit()) for d in self.home.devices]
        self.name_keys = [self.name_key(d.label) for d in self.home.devices]
        # every run of two to NAME_RUN_MAX tokens inside a name, and each whole name: "风扇" of 小米风扇 is
        # a device word too
        self.name_runs = {key[i:j] for key in set(self.name_keys) for i in range(len(key))
                          for j in range(i + 2, min(i + NAME_RUN_MAX, len(key)) + 1)}
        self.name_runs.update(key for key in self.name_keys if len(key) >= 2)
        self.names = NameIndex(self.name_keys, self.label_ordinals)
        self._whole_names = frozenset(key for key in self.name_keys if key)
        self._label_words = [_content(tokens(d.label)) for d in self.home.devices]  # per device
        self._labels = frozenset(self._label_words)
        self.name_phrases = PhraseIndex(self.name_keys)
        self.run_phrases = PhraseIndex(self.name_runs)
        # rows are stored device by device: a device's rows start where its number first appears
        self._device_row_starts = np.flatnonzero(np.r_[True, np.diff(self.row_device) != 0]) \
            if self.rows else np.zeros(0, dtype=np.int64)

    def name_key(self, label: str) -> tuple[str, ...]:
        """The words of a label that name the device: no room words, fillers or ordinal numbers (the first
        ``NAME_TOKENS_MAX`` of them)."""
        full = tuple(islice((t for t in _content(tokens(label)) if not t.isdigit()), NAME_TOKENS_MAX))
        return remove_phrases(full, self.room_phrases.possible_in(full)) or full

    def mentioned_rooms(self, utterance: str) -> list[str]:
        """Rooms named in the utterance (``_read_rooms``), read once per utterance: the parse, the screen and the
        ranking each ask (the list is shared: not to be changed)."""
        found = self._rooms_said.get(utterance)
        if found is None:
            if len(self._rooms_said) >= ROOMS_SAID_CACHE:
                self._rooms_said.clear()
            found = self._rooms_said[utterance] = self._read_rooms(utterance)
        return found

    def _read_rooms(self, utterance: str) -> list[str]:
        """Rooms named in the utterance, by full name or short form (餐厅 for 一楼餐厅).

        A short form means every room of its kind: "所有卫生间" is 一楼卫生间, 二楼卫生间 and 主卫. So does
        a word for a kind of room where no room is called so ("卫生间", "洗手间" where the bathrooms are
        主卫 and 客卫), unless it is part of a device name said (卧室 of the lamp 卧室小夜灯)."""
        full_names = set(self.room_tokens.values())
        found: list[str] = []
        said_rooms = self.room_words(utterance)
        meant_by = [self.room_aliases[alias] if alias in full_names else
                    (*self.room_aliases[alias], *self.rooms_meant_by(alias)) for alias in said_rooms]
        for meant in meant_by:
            # a floor said with a room on it ("the Living Room blinds downstairs", "一楼客厅"): the room
            if not any(set(other) < set(meant) for other in meant_by):
                found.extend(r for r in meant if r not in found)
        said = tokens(utterance)
        kinds = [(word, kind) for word, kind in _ROOM_KINDS if contains(said, word)]
        if kinds:
            inside = [*said_rooms, *self.name_phrases.found_in(said)]  # whole names only: 卧室 of 卧室的灯 is a room
            for word, kind in kinds:
                if not any(contains(other, word) for other in inside):
                    found.extend(r for r in self.rooms_meant_by(kind) if r not in found)
        return found

    def names_a_room(self, name: str) -> bool:
        """Whether a name (a parse's scope entry) means some room of this home: a room's name, a short form,
        a floor, or a word for a kind of room ("卧室" where the rooms are 主卧 and 次卧)."""
        said = self.room_tokens.get(name) or tokens(name)
        return name in self._room_code or said in self.room_aliases or bool(self.rooms_meant_by(said)) or \
            any(contains(said, word) and self.rooms_meant_by(kind) for word, kind in _ROOM_KINDS)

    def room_words(self, utterance: str) -> list[tuple[str, ...]]:
        """The room names and short forms the utterance says, longest first, none inside another."""
        matched: list[tuple[str, ...]] = []
        for alias in ordered(self.room_phrases.found_in(tokens(utterance)), self.room_phrases.rank):  # longest first
            if not any(contains(m, alias) for m in matched):
                matched.append(alias)
        return matched

    def rooms_meant_by(self, word: tuple[str, ...]) -> list[str]:
        """Every room a room word may mean in this home, judged from the rooms' own names.

        The rooms whose name contains the word ("bedroom" in "Master Bedroom"), and, for a Chinese
        word, those whose name ends in its first character: short forms keep a word's first
        character, so 主卧 and 次卧 are bedrooms (卧室) and 主卫 is a bathroom (卫生间) too. A single
        Chinese character is no word.
        """
        if not word or (len(word) < 2 and not word[0].isascii()):
            return []
        holding = set.intersection(*(self._rooms_with.get(t, set()) for t in set(word)))
        meant = {room for room in holding if contains(self.room_tokens[room], word)}
        if not word[0].isascii():
            meant.update(self._rooms_ending.get(word[0], ()))
        return ordered(meant, self._room_rank)

    @staticmethod
    def _without_verbs(said: tuple[str, ...]) -> tuple[str, ...]:
        """The tokens with verb phrases masked: 调 of "调到" names no 空调."""
        return tuple(_MASKED if verb else t for t, verb in zip(said, phrase_mask(said, VERB_RUNS), strict=True))

    def without_landmarks(self, utterance: str) -> str:
        """The utterance (lower case) with each device name it says only to say where something is masked: "open
        the blinds by the patio door" refers to the blinds, "门锁旁的灯" to a light (``category_words.locative``);
        never inside a label said whole (the lamp labelled 门锁旁的灯 is named so)."""
        return self._landmarks(utterance)[0]

    def landmarks(self, utterance: str) -> list[tuple[str, ...]]:
        """The device names the utterance says only to say where something is ("the patio door" of "the blinds by
        the patio door"): they say which of the devices referred to is meant, and name nothing themselves."""
        return self._landmarks(utterance)[1]

    def _landmarks(self, utterance: str) -> tuple[str, list[tuple[str, ...]]]:
        found = self._landmarks_said.get(utterance)
        if found is None:
            if len(self._landmarks_said) >= ROOMS_SAID_CACHE:
                self._landmarks_said.clear()
            found = self._landmarks_said[utterance] = self._read_landmarks(utterance)
        return found

    def _read_landmarks(self, utterance: str) -> tuple[str, list[tuple[str, ...]]]:
        text = normalised(utterance)
        masked: list[tuple[str, ...]] = []
        said = tokens(text)
        labels = [m.span() for label in self._label_phrases.found_in(said)
                  for m in phrase_pattern(label).finditer(text)]
        words = {(t,) for t in said if t.isascii() and len(t) >= 3 and self.names.carrying((t,)).any()}
        phrases = {*self._label_phrases.found_in(said), *self.name_phrases.found_in(said),
                   *self.run_phrases.found_in(said), *words}
        for phrase in sorted(phrases, key=lambda p: (-len(p), p)):
            for m in phrase_pattern(phrase).finditer(text):
                inside = any(s <= m.start() and m.end() <= e and (s, e) != m.span() for s, e in labels)
                if locative(text, m.start(), m.end()) and not inside:
                    text = text[:m.start()] + " " * (m.end() - m.start()) + text[m.end():]
                    masked.append(phrase)
        return text, masked

    def without_names(self, utterance: str) -> str:
        """The utterance with its landmarks and the labels it says whole masked: what is left says kinds of device
        and rooms, never a word of a name ("turn on the gas fireplace" says no gas, "后门灯" no door)."""
        text = self.without_landmarks(utterance)
        for label in sorted(self._label_phrases.found_in(tokens(text)), key=lambda p: (-len(p), p)):
            if label in self._naming_labels:
                text = phrase_pattern(label).sub(" · ", text)
        return text

    def name_scores(self, utterance: str, name_hint: str = "") -> np.ndarray:
        """Per device: how much of its name the utterance (or the name hint) contains, landmarks aside.

        An ordinal in the label ("筒灯3") that the utterance repeats adds a little, so the numbered
        device wins over its siblings without numbers deciding anything on their own.
        """
        spoken = _content(self._without_verbs(tokens(self.without_landmarks(utterance))))
        queries = [remove_phrases(spoken, self.room_phrases.possible_in(spoken))]
        if name_hint:
            queries.append(_content(tokens(name_hint)))
        return self.names.scores(queries, set(tokens(utterance)) | set(tokens(name_hint)), self.params.name_specificity)

    # ----- scoring ---------------------------------------------------------------------------

    def _room_set(self, names: list[str]) -> list[str]:
        return [room for r in names for room in self.room_aliases.get(self.room_tokens.get(r) or tokens(r), (r,))]

    def in_rooms(self, rooms) -> np.ndarray:
        """Per device: whether it is in one of these rooms (names the home does not have match nothing)."""
        wanted = np.zeros(len(self._room_code), dtype=bool)
        wanted[[self._room_code[r] for r in rooms if r in self._room_code]] = True
        return wanted[self.device_room_codes]

    def in_categories(self, categories) -> np.ndarray:
        """Per device: whether its category is one of these (by code: comparing category strings costs more)."""
        codes = [self._category_code[c] for c in categories if c in self._category_code]
        return np.isin(self.device_category_codes, codes)

    def _in_category(self, category: str) -> np.ndarray:
        code = self._category_code.get(category)
        return self.device_category_codes == code if code is not None else np.zeros(len(self.home.devices), bool)

    def _device_mask(self, ir: QueryIR) -> np.ndarray:
        """Hard prefilter: devices in excluded rooms, and single devices excepted by name (a scope_exclude
        entry that names no room of the home: "desk lamp"), never appear."""
        mask = np.ones(len(self.home.devices), dtype=bool)
        if ir.scope_exclude:
            mask &= ~self.in_rooms(self._room_set(ir.scope_exclude))
        for name in self.excepted_devices(ir):
            mask &= ~self.devices_named(name)
        return mask

    def excepted_devices(self, ir: QueryIR) -> list[str]:
        """The scope_exclude entries that name no room of the home: names of single devices excepted."""
        # a device's whole name or label: 卧室 is the bedrooms, not part of the lamp 卧室小夜灯
        return [name for name in ir.scope_exclude if name not in self._room_code
                and (self.room_tokens.get(name) or tokens(name)) not in self.room_aliases
                and (self.name_key(name) in self._whole_names or _content(tokens(name)) in self._labels)]

    def _said_rooms(self, ir: QueryIR, utterance: str) -> list[str]:
        """The rooms the utterance names, outside the names of devices it excepts ("书房台灯除外")."""
        return self.mentioned_rooms(_without_excluded(self.excepted_devices(ir), utterance))

    def devices_named(self, name: str) -> np.ndarray:
        """Per device: whether ``name`` refers to it: its full label ("Living Room Lamp", wherever it
        stands), else its name words in the rooms the name says ("书房台灯": the 台灯 of 书房), else its
        name words anywhere ("the desk lamp")."""
        said = _content(tokens(name))
        if not said:
            return np.zeros(len(self.home.devices), dtype=bool)
        labelled = np.asarray([words == said for words in self._label_words], dtype=bool)
        if labelled.any():
            return labelled
        carriers = self._carrying(self.name_key(name))
        rooms = self.mentioned_rooms(name)
        in_rooms = carriers & self.in_rooms(rooms) if rooms else carriers
        return in_rooms if in_rooms.any() else carriers

    def _room_hits(self, ir: QueryIR, utterance: str) -> np.ndarray:
        wanted = set(self._room_set(ir.scope_include)) | set(self._said_rooms(ir, utterance))
        wanted -= set(self._room_set(ir.scope_exclude))
        return self.in_rooms(wanted).astype(np.float32)

    def _text_scores(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(text score, vector, lexical) per slot: its best-matching document for its best text."""
        if not self.slots:
            empty = np.zeros(0, dtype=np.float32)
            return empty, empty, empty
        p = self.params
        vectors = small_product(self.doc_vectors, self.embedder.embed(texts))  # (docs, texts)
        lexicals = small_product(self.doc_lexical, self.lexical.embed(texts))
        per_text = []
        for j, text in enumerate(texts):
            vector, lexical = np.append(vectors[:, j], -np.inf), np.append(lexicals[:, j], 0.0)
            combined = p.w_vector * vector + p.w_lexical * lexical
            docs = self.slot_docs_by_language[is_chinese(text)]
            best = np.take_along_axis(docs, np.argmax(combined[docs], axis=1)[:, None], 1)[:, 0]
            per_text.append((combined[best], vector[best], lexical[best]))
        combined, vector, lexical = (np.stack(arrays) for arrays in zip(*per_text, strict=True))  # (texts, slots)
        pick = np.argmax(combined, axis=0), np.arange(combined.shape[1])
        return combined[pick], vector[pick], lexical[pick]

    def _command_scores(self, ir: QueryIR, utterance: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
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
        text, vector, lexical = self._text_scores(ir.search_texts(utterance))
        argument = self.argument_scores(utterance, ir.action)
        # the subject is named in the intent, without device words. A command that cannot take the value
        # set is not what the words name ("位置设到30" is no request for the preset position, whose
        # subject is 位置). An unknown word names a subject only next to a value it is set to
        # ("风量调到自动"): alone, "照明" or "亮起来" are the embedder's neighbours of 亮度 and still mean "on"
        subject = np.where(argument < 0, 0.0, self.subject_scores(ir.search_text(utterance), similar=bool(
            (argument > 0).any()))).astype(np.float32)
        verb = self.verb_scores(utterance, ir.action)
        p = self.params
        return text + p.w_argument * argument + p.w_subject * subject + p.w_verb * verb, \
            {"vector": vector, "lexical": lexical, "argument": argument, "subject": subject, "verb": verb}

    def _per_profile_best(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """For each slot, the best value among the (masked) slots of the same profile (-inf: none)."""
        starts = self._profile_slot_starts
        return np.repeat(_group_max(values, starts, mask), np.diff(np.r_[starts, len(values)]))

    def score_rows(self, ir: QueryIR, utterance: str,
                   kind_named: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Fused score per row (-inf where filtered out) and the channels behind it: per slot for the
        command channels, per device for name and room (a row's values: ``row_channels``). ``kind_named``
        (per device): the devices a word for their kind may name (default all)."""
        p = self.params
        device_ok = self._device_mask(ir)
        if ir.has_category and ir.type_hint in self.categories:
            device_ok &= self._in_category(ir.type_hint)
            w_name = p.w_name
        else:
            w_name = p.w_name_keyword_first
        text, channels = self._command_scores(ir, utterance)
        # the subject ranks commands within a device, never one device over another:
        # 0, or -1 where a sibling's subject was named and not the slot's own
        named = channels["subject"]
        channels["subject"] = named - self._per_profile_best(named)
        text = text + p.w_subject * (channels["subject"] - named)
        channels["within_device"] = text - self._per_profile_best(text)
        name, room = self.name_scores(utterance, ir.name_hint), self._room_hits(ir, utterance)
        # a label said whole ("儿童房窗帘 kab", "Office Blinds kab") names its device: its room word is part of the
        # name (the device may stand in 1栋儿童房), and it wins over devices whose label says less
        labelled = self.labels_said(utterance)
        if labelled.any():
            room = np.maximum(room, labelled)
            name = np.where(labelled > 0, np.maximum(name, 1.0) + LABEL_SAID, name).astype(np.float32)
        # a word for a kind ("风扇", "灯") names every device of that kind, whatever its label (落地扇, 壁扇), unless
        # the word said is part of a longer one the labels use ("台灯": the desk lamps, not every light); an
        # English one ("fan") only where no label of the kind holds it, the labels' own words deciding there
        for kind, words in categories_said(utterance).items():
            of_kind = self._in_category(kind) if kind_named is None else self._in_category(kind) & kind_named
            if not any(self._says_a_narrower_kind(utterance, word, kind) if not word.isascii() else
                       (of_kind & self._carrying(tokens(word))).any() for word in words):
                name = np.maximum(name, p.kind_said_name * of_kind)
        # a landmark says which device of the kind said is meant ("the shades facing the front door": the Front
        # Door Shades among the shades)
        for phrase in self.landmarks(utterance):
            by_it = self.names.carrying(phrase) & (name > 0)
            name = np.where(by_it, name + LANDMARK, name).astype(np.float32)
        slot, device = self.row_slot, self.row_device
        fused = text[slot] + p.w_within_device * channels["within_device"][slot] + w_name * name[device] + \
            p.w_room * room[device]
        fused = np.where(device_ok[device], fused, -np.inf)
        return fused, {**channels, "name": name, "room": room}

    def labels_said(self, utterance: str) -> np.ndarray:
        """Per device (float, 0 or 1): its label is said whole, the label names one device (``_naming_labels``),
        no longer label said holds it ("台灯" is not said by "打开阳台灯", "儿童房窗帘" not by "儿童房窗帘 kab"), and
        it does not only say where ("the blinds by the patio door")."""
        found = self._label_phrases.found_in(tokens(utterance))
        said = np.zeros(len(self.home.devices), dtype=np.float32)
        for label in found:
            if label in self._naming_labels and not any(other != label and contains(other, label) for other in found):
                devices = self._devices_labelled[label]
                if not _said_where(utterance, self.home.devices[devices[0]].label):
                    said[devices] = 1.0
        return said

    def name_ends_with(self, run: tuple[str, ...]) -> np.ndarray:
        """Per device: whether its name ends in ``run`` (the run is its head noun: "safe" of Office Safe, not of Safe
        Room Lamp), among the devices carrying it."""
        ends = self._name_ends.get(len(run))
        if ends is None:
            ends = self._name_ends[len(run)] = defaultdict(list)
            for d, key in enumerate(self.name_keys):
                if len(key) >= len(run):
                    ends[key[-len(run):]].append(d)
        out = np.zeros(len(self.home.devices), dtype=bool)
        out[ends.get(run, [])] = True
        return out

    def labels_named(self, utterance: str) -> np.ndarray:
        """Per device: its whole label is said (one device's or several's: "Garage Door" on each floor), not
        inside a longer label said."""
        found = self._label_phrases.found_in(tokens(utterance))
        out = np.zeros(len(self.home.devices), dtype=bool)
        for label in found:
            if not any(other != label and contains(other, label) for other in found):
                out[self._devices_labelled[label]] = True
        return out

    @cached_property
    def _devices_labelled(self) -> dict[tuple[str, ...], list[int]]:
        """Each label's words -> its devices; a label of more than LABEL_SAID_CHARS characters is never said whole."""
        out: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for i, device in enumerate(self.home.devices):
            if len(device.label) <= LABEL_SAID_CHARS and (words := tokens(device.label)):
                out[words].append(i)
        return out

    @cached_property
    def _label_phrases(self) -> PhraseIndex:
        return PhraseIndex(self._devices_labelled)

    @cached_property
    def _naming_labels(self) -> frozenset[tuple[str, ...]]:
        """The labels that name one device: one device's alone ("吸顶灯" of six is a kind of light), not a word for
        a kind, not a room and a kind ("阳台灯": what anyone says for the lights there) unless it is the only one
        of its kind there ("露台门", the terrace's one door)."""
        alone = Counter(zip(self.device_rooms.tolist(), self.device_categories.tolist(), strict=True))
        return frozenset(words for words, devices in self._devices_labelled.items()
                         if len(devices) == 1 and not is_kind_word(join_tokens(words))
                         and (not self._generic(self.home.devices[devices[0]].label)
                              or alone[self.device_rooms[devices[0]], self.device_categories[devices[0]]] == 1))

    def _says_a_narrower_kind(self, utterance: str, word: str, kind: str) -> bool:
        """Whether the utterance says a Chinese kind ``word`` inside a longer word some label of the kind holds:
        the word with the character before or after it ("台灯" of 台灯 and 卧室台灯, "灯带")."""
        said, w = _compact(utterance), re.escape(word)
        labels = self._labels_of_kind[kind]
        return any(m.group(1) in labels for m in re.finditer(rf"(?=(\S{w}|{w}\S))", said))

    @cached_property
    def _labels_of_kind(self) -> dict[str, str]:
        """Per category, its devices' labels (spaces removed, lower case), one a line: searched as one string."""
        labels: dict[str, list[str]] = defaultdict(list)
        for device in self.home.devices:
            labels[device.category].append(_compact(device.label))
        return defaultdict(str, {kind: "\n".join(found) for kind, found in labels.items()})

    def row_channels(self, row: int, channels: dict[str, np.ndarray]) -> dict[str, float]:
        """One row's channel values, from the per-slot and per-device arrays of ``score_rows``."""
        device, slot = self.rows[row][0], int(self.row_slot[row])
        return {name: round(float(values[device if name in ("name", "room") else slot]), 4)
                for name, values in channels.items()}

    def search(self, ir: QueryIR, utterance: str, k: int = 10, **screen) -> list[Candidate]:
        """Top-k (device, command) candidates for a single-target query (``screen``: see ``rank``)."""
        return self.rank(ir, utterance, k, **screen)[0]

    def rank(self, ir: QueryIR, utterance: str, k: int = 10, *, blocked: np.ndarray | None = None,
             demoted: np.ndarray | None = None, unfit: np.ndarray | None = None,
             switching: np.ndarray | None = None,
             kind_named: np.ndarray | None = None) -> tuple[list[Candidate], list[int]]:
        """Top-k candidates, and the ``blocked`` rows that would have ranked among them (best first).

        ``blocked`` rows (per row) are never candidates; ``demoted`` rows rank after every other row, and so do
        ``unfit`` ones unless their device is named in full (a fridge said to 50 degrees stays the fridge, whose
        command then refuses the value, rather than becoming the thermostat); a ``switching`` row answers for
        its device, first among its commands ("关风扇": the fan's off where its speed scored higher);
        ``kind_named`` devices (per device) may be named by a word for their kind (``score_rows``). They
        come from the safety rules (``safety_screen.Screen``): the index itself knows no policy."""
        fused, channels = self.score_rows(ir, utterance, kind_named)
        operation = ir.operation if ir.operation != OTHER else None
        order_key = self._operation_order(operation, ir, utterance, fused, channels) if operation else fused
        reachable = np.isfinite(order_key)  # what would be offered if nothing were held back
        if blocked is not None:
            order_key = np.where(blocked, -np.inf, order_key)
        if operation:  # the operation decides: the screen's polarity and value rules have nothing to add
            demoted = unfit = switching = None
        if demoted is not None:
            order_key = order_key - DEMOTED * demoted
        if unfit is not None:
            order_key = order_key - DEMOTED * (unfit & (channels["name"][self.row_device] < 1.0))
        if switching is not None and switching.any():
            # the device's switching rows move up together, their best just above the device's best row
            starts = self._device_row_starts
            sizes = np.diff(np.r_[starts, len(order_key)])
            with np.errstate(invalid="ignore"):  # a device with no switching row: -inf - -inf, lifts nothing
                lift = _group_max(order_key, starts) - _group_max(order_key, starts, switching)
            lift = np.where(np.isfinite(lift), lift, 0.0)
            order_key = np.where(switching, order_key + np.repeat(lift, sizes) + SWITCH_EDGE, order_key)
        top = self._top_rows(order_key, k)
        candidates = [self._candidate(int(r), float(fused[r]), channels) for r in top]
        passed_over: list[int] = []
        if blocked is not None and blocked.any():
            held = np.flatnonzero(blocked & reachable)
            if len(top) == k:
                held = held[fused[held] >= order_key[top[-1]]]
            passed_over = held[np.argsort(-fused[held], kind="stable")][:k].tolist()
        return candidates, passed_over

    def _operation_order(self, operation: str, ir: QueryIR, utterance: str, fused: np.ndarray,
                         channels: dict[str, np.ndarray]) -> np.ndarray:
        """Row order for a known operation: each device's command for it (``command_choice``), devices ranked by
        how the utterance refers to them (name, room), a device's other commands for the operation just after its
        choice. No other command is offered: "unlock the front door" is never answered with its lock, "open the
        safe" never with the blinds."""
        choice = choice_of(self)
        p = self.params
        scores = np.where(np.isfinite(fused), self._performing_scores(choice, operation, utterance, channels), -np.inf)
        chosen = choice.device_rows(scores)
        devices = np.flatnonzero(chosen >= 0)
        rows = chosen[devices]
        w_name = p.w_name if ir.has_category and ir.type_hint in self.categories else p.w_name_keyword_first
        name, room = channels["name"], channels["room"]
        referent = w_name * name + p.w_room * room
        if (room[devices] > 0).any() and ((room[devices] > 0) & (name[devices] > 0)).any():
            # rooms said, and the device asked for stands in one: a device elsewhere is not what is meant, however
            # much of its name is said ("书房窗帘": the study's blind, not the living room's 客厅窗帘)
            referent = referent - DEMOTED * (room <= 0)
        # Between devices referred to alike, what the command's own words share with the utterance ("stop
        # charging": the charger's stop), whether it takes the value said ("调到20度": an air conditioner, not the
        # fridge) and, last, how plainly it is the operation's ("暂停" alone: a player's pause, not a dryer's)
        words = (channels["vector"] + p.w_lexical * channels["lexical"])[self.row_slot]
        fit = np.clip(channels["argument"], -1.0, 1.0)[self.row_slot]
        place = np.maximum(choice.place(operation), 0)[self.row_slot]
        tie = TIE_BREAK * (words + 2 * fit - 0.2 * place)
        order = np.full(len(fused), -np.inf)  # a command that does not do what is asked is never offered
        others = np.flatnonzero(np.isfinite(scores))
        order[others] = referent[self.row_device[others]] - OTHER_PERFORMER + tie[others]
        order[rows] = referent[devices] + tie[rows]
        return order

    def _performing_scores(self, choice, operation: str, utterance: str, channels: dict[str, np.ndarray]) -> np.ndarray:
        """Per row: how well its command performs the operation for what is said (``CommandChoice.row_scores``)."""
        return choice.row_scores(operation, channels["argument"], channels["subject"] + choice.qualified(utterance))

    def _top_rows(self, scores: np.ndarray, k: int) -> np.ndarray:
        """The k best rows by score, a device's n-th command paying n * ``repeat_penalty``."""
        finite = np.flatnonzero(np.isfinite(scores))
        if finite.size == 0:
            return finite
        # Only rows at least as good as the k-th best device's best row can make the top k: that row and
        # k - 1 better ones keep their scores, and the penalty only lowers a score.
        device_best = _group_max(scores, self._device_row_starts)
        if 0 < k < len(device_best):
            finite = np.flatnonzero(np.isfinite(scores) & (scores >= -np.partition(-device_best, k - 1)[k - 1]))
        order = finite[np.argsort(-scores[finite], kind="stable")]
        # a device's n-th command in this order pays n * repeat_penalty
        devices = self.row_device[order]
        by_device = np.argsort(devices, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(devices[by_device]) != 0])
        nth = np.empty(len(order), dtype=np.int64)
        nth[by_device] = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
        adjusted = scores[order].astype(np.float64) - self.params.repeat_penalty * nth
        return order[np.argsort(-adjusted, kind="stable")[:k]]

    def _candidate(self, row: int, score: float, channels: dict[str, np.ndarray]) -> Candidate:
        di, ci = self.rows[row]
        device = self.home.devices[di]
        return Candidate(device_id=device.device_id, command_id=device.commands[ci].id, label=device.label,
                         room=device.room, category=device.category, score=round(score, 4),
                         channels=self.row_channels(row, channels))

    # ----- bulk mode -------------------------------------------------------------------------

    def establish_category(self, ir: QueryIR, utterance: str, device_ok: np.ndarray) -> str | None:
        """The category bulk mode may expand over, or None when the home's data cannot tell.

        The LM's type_hint wins when the home has that category. Otherwise the evidence is the
        home's own data: first the devices carrying the device word the utterance says ("热水器",
        "风扇" of 小米风扇); failing that, labels it names in part ("所有的灯" matches 吸顶灯, 台灯 ...)
        and category names it mentions ("all lights"). One category must hold `category_share` of it.
        """
        if ir.has_category and ir.type_hint in self.categories:
            return ir.type_hint
        device_ok = device_ok & self._commanded  # a thermometer named "温度" is never what a plan acts on
        acting = self.verb_devices(utterance, ir.action)  # devices that can do what the verb says
        word = self.device_word(utterance, ir.name_hint)
        if word:  # a device word the user said ("热水器", "风扇") is the strongest evidence there is
            carriers = device_ok & self._carrying(word)
            # "lock all the doors": the word names a lock and a garage door, the verb only the lock
            found = self._one_category(carriers) or (self._one_category(carriers & acting) if acting.any() else None)
            if found:
                return found
        # a word for one kind no name here holds ("关掉所有电扇" where the fans are 落地扇 and 小米风扇)
        kinds = [kind for kind in categories_said(utterance) if kind in self.categories]
        if len(kinds) == 1 and (device_ok & self._in_category(kinds[0])).any():
            return kinds[0]
        evidence: dict[str, float] = defaultdict(float)
        said = _content(tokens(utterance))
        # a category named in full ("air conditioners") is not a name: its words do not make the Air
        # Purifier a candidate by name
        category_words = self.category_words_said(said)
        names = self.name_scores(" ".join(t for t in said if t not in category_words) if category_words
                                 else utterance, ir.name_hint)
        named = np.flatnonzero(device_ok & (names > 0))
        # summed device by device, as a loop would: bincount adds its weights in input order
        sums = np.bincount(self.device_category_codes[named], weights=names[named].astype(np.float64),
                           minlength=len(self._category_code))
        codes, first = np.unique(self.device_category_codes[named], return_index=True)
        for code in codes[np.argsort(first)]:  # in the order the named devices come, as ties fall
            if self._categories[code]:
                evidence[self._categories[code]] += float(sums[code])
        for category in self.categories:
            if _category_words(category)[-1:] and _category_words(category)[-1] in said:
                evidence[category] += float(self._category_size[self._category_code[category]])
        total = sum(evidence.values())
        best = max(evidence, key=evidence.get) if total else None
        if best is not None and evidence[best] / total >= self.params.category_share:
            return best
        # the verb settles it when one category can do what it says ("把所有门都锁上": only locks lock), else
        # the value when one category takes it in the unit said ("温度都调到26度": the setpoints)
        if acting.any():
            return self._one_category(device_ok & acting)
        taking = device_ok & self.value_devices(utterance, ir.action)
        return self._one_category(taking) if taking.any() else None

    @cached_property
    def _commanded(self) -> np.ndarray:
        """Per device: whether it has a command at all (a sensor has none)."""
        return np.bincount(self.row_device, minlength=len(self.home.devices)) > 0

    def value_devices(self, *texts: str) -> np.ndarray:
        """Per device: whether a command of it takes the number said in the unit said, within its range ("26度":
        a setpoint, not a level, nor a fridge's); none when no text says a unit."""
        out = np.zeros(len(self.home.devices), dtype=bool)
        out[self.row_device[self._value_slots(texts)[self.row_slot]]] = True
        return out

    def _value_slots(self, texts) -> np.ndarray:
        """Per slot: whether its command takes the number said in the unit said, within its range."""
        value = self._value_in_a_unit(texts)
        if value is None or not self.slots:
            return np.zeros(len(self.slots), dtype=bool)
        fits = np.asarray([numeric and not relative and unit == value[1] and number_fit(value, unit, low, high) == 1
                           for _, numeric, relative, _, unit, low, high in self.argument_shapes], dtype=bool)
        return fits[self.slot_shape]

    def category_words_said(self, said: tuple[str, ...]) -> set[str]:
        """The words of the said tokens that name one of the home's categories of two or more words
        in full ("air conditioners" of AirConditioner: tokens are singular already)."""
        found: set[str] = set()
        for category in self.categories:
            words = _category_words(category)
            if len(words) > 1 and set(words) <= set(said):
                found.update(words)
        return found

    def _one_category(self, devices: np.ndarray) -> str | None:
        """The category holding `category_share` of these devices, if one does."""
        categories, counts = np.unique(self.device_categories[devices].astype(str), return_counts=True)
        if counts.size and counts.max() >= self.params.category_share * counts.sum():
            return str(categories[np.argmax(counts)])
        return None

    def verb_devices(self, *texts: str) -> np.ndarray:
        """Per device: whether it has a verb command (lock, open, mute ...) the texts name by its words;
        none for a text that says a negated verb (see `_verb_sets_named`)."""
        out = np.zeros(len(self.home.devices), dtype=bool)
        named = self._verb_sets_named(texts)
        if named is None or not named.any():
            return out
        out[self.row_device[named[self.slot_verb_set][self.row_slot]]] = True
        return out

    def verbs_named(self, text: str) -> np.ndarray:
        """Per slot: whether the text says its verb command by the command's own words ("取消静音": unmute)."""
        named = self._verb_sets_named((text,))
        if named is None:
            return np.zeros(len(self.slots), dtype=bool)
        return named[self.slot_verb_set] & self.slot_is_verb

    def _verb_sets_named(self, texts: tuple[str, ...]) -> np.ndarray | None:
        """Per verb set: whether the texts say one of its verbs (a phrase inside a longer one said counts
        only as the longer one). None without verb commands, or for a text that says a negated verb
        ("灯不用开了", not read with `negation.read_negation` first): its verb says the opposite of what is
        wanted."""
        if not self.slots or any(map(is_negated, texts)):
            return None
        matched = set().union(*(self.verb_phrases.found_in(tokens(text)) for text in texts))
        spoken = {v for v in matched if not any(len(w) > len(v) and contains(w, v) for w in matched)}
        return np.asarray([bool(verbs & spoken) for verbs in self.verb_sets], dtype=bool)

    def _carrying(self, word: tuple[str, ...]) -> np.ndarray:
        """Per device: whether its name contains the word."""
        return self.names.carrying(word)

    def device_word(self, utterance: str, name_hint: str = "") -> tuple[str, ...]:
        """The name hint, else the longest device name or run of one the utterance says (verbs aside)."""
        if name_hint:
            return _content(tokens(name_hint))
        spoken = self._without_verbs(tokens(utterance))
        said = self.run_phrases.found_in(spoken)
        return max(said, key=lambda run: (len("".join(run)), run)) if said else ()

    def bulk_scope(self, ir: QueryIR, utterance: str, operation: str | None = None) -> tuple[str | None, np.ndarray]:
        """(category, device mask) a bulk command may expand over; category None = unknown.

        In bulk mode the included rooms are where the devices physically are: acting on every
        light "in the living room" must not reach a lamp in the study that is merely named after it.
        A name hint ("所有筒灯") narrows the set to the devices carrying that name.
        """
        device_ok = self._device_mask(ir)
        able = np.ones(len(device_ok), dtype=bool)
        if operation:  # only devices that can do what is asked are in scope ("lock all the doors": the locks)
            performing = choice_of(self).performing(operation)
            able = np.bincount(self.row_device[performing], minlength=len(device_ok)) > 0
        category = self.establish_category(ir, utterance, device_ok & able)
        if category is None:
            return None, device_ok & False
        of_kind = self._in_category(category)
        said = categories_said(self.without_names(utterance))
        if category not in said:  # a word for another kind naming this one ("all the doors": the locks of doors)
            words = [tokens(w) for kind, ws in said.items() if category in _NAMED_AS.get(kind, ()) for w in ws]
            if words:
                of_kind &= np.logical_or.reduce([self._carrying(w) for w in words])
        if not ir.has_category and not categories_said(utterance) and self._sets_a_temperature((utterance, ir.action)):
            # "温度都调到26度", no kind said: every device that takes it, air conditioners and thermostats alike
            of_kind |= self.value_devices(utterance, ir.action)
        device_ok &= of_kind
        hint = self.name_key(ir.name_hint) if ir.name_hint else ()
        if hint:
            named = self._carrying(hint) & device_ok
            # Without a type_hint the name may be the word for the kind ("窗帘", "空调"). An LM's
            # name_hint is meant as a name, and in a category of carriers (switches, plugs) a name is
            # always what tells them apart.
            kind_word = not ir.has_category and category not in CARRIER_CATEGORIES and \
                self._names_the_kind(hint, category, named.sum() / device_ok.sum(), utterance)
            if named.any() and not kind_word:
                device_ok = named
        rooms = set(self._room_set(ir.scope_include) or self._said_rooms(ir, utterance))
        rooms -= set(self._room_set(ir.scope_exclude))
        if rooms:
            device_ok &= self.in_rooms(rooms)
        return category, device_ok & able

    def _names_the_kind(self, hint: tuple[str, ...], category: str, share: float, utterance: str) -> bool:
        """Whether a name hint is the word for the category's kind, so it narrows nothing.

        Either much of the category in scope carries it (`share`), the category's own name says it
        ("light" of Light), the category's own command descriptions use it (a spec that says "打开窗帘" makes
        窗帘 every blind, not the few labelled "…窗帘" next to 布帘, 纱帘 and 百叶帘), or it is the Chinese word for
        the kind as a whole, said on its own (``says_the_kind_itself``: "二楼的窗帘")."""
        return share >= self.params.kind_word_share or contains(_category_words(category), hint) or \
            any(contains(words, hint) for words in self.category_descriptions.get(category, ())) or \
            self.says_the_kind_itself(join_tokens(hint), category, utterance)

    def says_the_kind_itself(self, name: str, category: str, utterance: str) -> bool:
        """Whether a name is the Chinese word for the category as a whole ("窗帘" of Blind: 纱帘 and 百叶窗 too; not
        纱帘), said on its own, not inside a longer word the labels use: it names the kind, not devices called so."""
        return bool(name) and name == general_word(category) and \
            not self._says_a_narrower_kind(utterance, name, category)

    def says_one_device(self, device_id: str, utterance: str) -> bool:
        """Whether the utterance says this device's whole label, its number included ("餐厅筒灯2", not the
        "筒灯" six lamps share), and that label is this device's alone, or alone in the room said ("一楼客厅的
        筒灯5"): it asks for that one device, never for every device of its kind in its room."""
        device = self.home.device(device_id)
        label = _compact(device.label)
        if not label or not _says(utterance, label) or \
                (self._generic(device.label) and len(self._rooms_of_label(device.label)) < 2):
            return False
        same = self._devices_by_label[label]
        said = _compact(utterance)
        return len(same) == 1 or [d.device_id for d in same if d.room and _compact(d.room) in said] == [device_id]

    def _generic(self, label: str) -> bool:
        """A label that is a room and a word for its kind ("客厅空调", "Kitchen Light"): what anyone says for
        the devices of that kind there, whatever they are called, so it names no single one."""
        said = tokens(label)
        rooms = list(self.room_phrases.possible_in(said))
        return bool(rooms) and is_kind_word(join_tokens(remove_phrases(said, rooms)))

    def _rooms_of_label(self, label: str) -> set[str]:
        """The rooms a generic label's room word names: "主卧电视" in a building whose three copies each have a
        二楼主卧 names three rooms, so the label (one device's alone) is that device's name, not an area."""
        rooms = self.room_phrases.possible_in(tokens(label))
        return {room for alias in rooms for room in self.room_aliases.get(alias, ())}

    @cached_property
    def _devices_by_label(self) -> dict:
        out = defaultdict(list)
        for device in self.home.devices:
            out[_compact(device.label)].append(device)
        return out

    def names_a_kind_only(self, ir: QueryIR, utterance: str, candidates: list[Candidate]) -> bool:
        """Whether a one-device parse names no room and no floor, only a word for the kind of the device
        ranked first ("deactivate the lights", "关百叶窗", "风扇速度设到80%"), and no device: neither a word of
        the first one's label nor the whole label of any ranked one ("户外插座关了"): a command for every
        device of that kind in the home."""
        top = candidates[0]
        if ir.quantifier != "one" or ir.scope_include or is_negated(utterance) or self._said_rooms(ir, utterance) \
                or _ONE_OF.search(utterance) or self.landmarks(utterance):  # "the shades by the door": one of them
            return False
        return (not ir.name_hint or is_kind_word(ir.name_hint)) and top.category in categories_said(utterance) \
            and not self._says_part_of_label(top.label, utterance) \
            and not any(self._says_whole_label(c.label, utterance) for c in candidates)

    def _says_whole_label(self, label: str, utterance: str) -> bool:
        """The label said whole, when it is more than a word for a kind ("Lamp") or a room and one ("客厅空调")."""
        compact = _compact(label)
        return compact in _compact(utterance) and _says(utterance, compact) and not is_kind_word(compact) \
            and not self._generic(label)

    def _says_part_of_label(self, label: str, utterance: str) -> bool:
        """Whether the utterance says a word of the label that is no room and no word for a kind: "前门" of
        前门门锁 in "锁上前门", "户外" of 户外插座: a device is being named, not a kind."""
        said, rooms = _compact(utterance), {_compact(r) for r in self.home.rooms}
        label = _compact(label)
        if label.isascii():
            words = set(re.findall(r"[a-z0-9]+", utterance.lower()))
            return any(len(w) >= 3 and w in words and not is_kind_word(w) and w not in rooms
                       for w in re.findall(r"[a-z0-9]+", label))
        return any(label[i:j] in said and not is_kind_word(label[i:j]) and label[i:j] not in rooms
                   and not any(label[i:j] in r for r in rooms)
                   for i in range(len(label)) for j in range(i + 2, len(label) + 1))

    def names_an_area(self, ir: QueryIR, utterance: str) -> bool:
        """Whether a one-device parse names a room, floor or wing: "set the first floor brightness to 50%",
        "客厅灯光调到50%", "客厅筒灯调到30%" mean every device of the kind (or the name) there. Not while the
        utterance says a negated verb: its verb says the opposite of what is wanted, and a plan would carry
        that to every device of the room (CommandRetrieval reads negations first: "老人房的灯不用开了"
        arrives here as "老人房的灯关闭了")."""
        return ir.quantifier == "one" and not is_negated(utterance) and \
            bool(self._room_set(ir.scope_include) or self._said_rooms(ir, utterance))

    def plan_bulk(self, ir: QueryIR, utterance: str, *, blocked: np.ndarray | None = None,
                  skipped: np.ndarray | None = None, other_kind: np.ndarray | None = None) -> BulkPlan:
        """Choose the command from aggregated evidence, then expand it to every target.

        The safety rules' rows: ``skipped`` ones (devices never to act on) are left out of the plan;
        ``blocked`` ones are never targets, and when the command the evidence chooses is blocked on a device
        in scope (an unlock the utterance did not ask for, a level for "26度") the plan asks the user
        (``need_clarification``) instead of running the next best command. ``other_kind`` rows (commands
        that take no value of the kind said: a colour temperature for "green") count as evidence only where
        nothing else is, so the command the value names wins over one more devices support."""
        p = self.params
        operation = ir.operation if ir.operation != OTHER else None
        category, device_ok = self.bulk_scope(ir, utterance, operation)
        if category is None:
            return BulkPlan(hint="need_clarification",
                            reason="the target category cannot be established from this home's devices")
        if skipped is not None:
            device_ok = device_ok & ~np.bincount(self.row_device[skipped], minlength=len(device_ok)).astype(bool)
        if not device_ok.any():
            return BulkPlan(category=category, hint="no_target", reason=f"no {category} device in scope")
        if operation:
            return self._operation_plan(operation, ir, utterance, category, device_ok, blocked)
        text, _ = self._command_scores(ir, utterance)
        scores = text[self.row_slot] if other_kind is None else text[self.row_slot] - DEMOTED * other_kind
        options = self._options(np.where(device_ok[self.row_device], scores, -np.inf), device_ok)
        if not options:
            return BulkPlan(category=category, hint="no_target", reason=f"no {category} device has commands")
        top1 = options[0].p
        margin = top1 - (options[1].p if len(options) > 1 else 0.0)
        plan = BulkPlan(category=category, options=options, top1_ratio=round(top1, 4), margin=round(margin, 4))
        allowed = None if blocked is None else ~blocked
        if allowed is not None:  # the options shown are those some device in scope may run
            plan.options = [o for o in options if allowed[self._supporting(o.command_id, device_ok)].any()]
            if not allowed[self._supporting(options[0].command_id, device_ok)].all():
                return plan.model_copy(update={"hint": "need_clarification", "options": plan.options[:3], "reason":
                                               f"{options[0].command_id} is what the words point to, and it is held "
                                               "back: the utterance does not ask for it"})
            options = plan.options
        if top1 < p.min_top1_ratio or margin < p.min_margin:
            return plan.model_copy(update={"hint": "need_clarification", "options": options[:3],
                                           "reason": "low confidence between the top commands"})
        return self._expand(plan, options[0].command_id, device_ok, allowed,
                            self._same_setting(options[0].command_id, (utterance, ir.action)))

    def _operation_plan(self, operation: str, ir: QueryIR, utterance: str, category: str, device_ok: np.ndarray,
                        blocked: np.ndarray | None) -> BulkPlan:
        """The plan for a known operation: every device in scope with its command for it (``command_choice``),
        the same decision the ranked candidates read. A device in scope whose command for it is held back (an
        unlock the utterance does not ask for) makes the plan ask instead."""
        choice = choice_of(self)
        _, channels = self._command_scores(ir, utterance)
        scores = np.where(device_ok[self.row_device], self._performing_scores(choice, operation, utterance, channels),
                          -np.inf)
        if operation.startswith("set_"):
            # a device whose command cannot take the kind of value said is left out ("all fans to 59%": not the fan
            # that only knows low, medium, high); a number out of a command's range is refused when it is sent
            scores = np.where(self.takes_kind_said(utterance)[self.row_slot], scores, -np.inf)
        row_of = choice.device_rows(scores)
        devices = np.flatnonzero(row_of >= 0)
        if not devices.size:
            return BulkPlan(category=category, hint="no_target",
                            reason=f"no {category} device in scope can do {operation}")
        codes = self.row_command[row_of[devices]]
        found, first, counts = np.unique(codes, return_index=True, return_counts=True)
        options = []
        for i in np.lexsort((first, -counts)).tolist():  # most devices first, ties to the first one found
            taking = devices[codes == found[i]]
            spec = self._command_of(*self.rows[int(row_of[taking[0]])])
            options.append(CapabilityOption(
                command_id=spec.id, description=spec.description, p=round(int(counts[i]) / len(devices), 4),
                evidence=float(counts[i]), supported_devices=int(counts[i]),
                sample_devices=[self.home.devices[d].label for d in taking[:3].tolist()],
                sample_rooms=sorted(set(self.device_rooms[taking].tolist()) - {""})[:3]))
        plan = BulkPlan(category=category, options=options, top1_ratio=1.0, margin=1.0)
        held = devices[blocked[row_of[devices]]] if blocked is not None else devices[:0]
        if held.size:  # the options shown are those no device in scope holds back
            shown = [o for o in options if not blocked[self._supporting(o.command_id, device_ok)].any()]
            return plan.model_copy(update={"hint": "need_clarification", "options": shown, "reason": (
                f"{self._command_of(*self.rows[int(row_of[held[0]])]).id} on {self.home.devices[held[0]].label} is "
                "held back: the utterance does not ask for it")})
        return self._with_targets(plan, options[0].command_id, row_of, int(device_ok.sum()))

    def _same_setting(self, command_id: str, texts) -> set[str]:
        """The commands that set what the chosen one sets to the value said, in its unit: a floor heating's
        heating setpoint where the air conditioners' cooling one is chosen for "26度", a blind's level where
        the others' shade level is for "37%"; never another part of a device (slats' angle, colour, volume)."""
        taking = {(spec.id, spec.capability) for spec in
                  (self._command_of(*self.slots[i]) for i in np.flatnonzero(self._value_slots(texts)))}
        part = next((_PART.get(capability) for id_, capability in taking if id_ == command_id), "none")
        return {id_ for id_, capability in taking if _PART.get(capability) == part}

    def choose(self, plan: BulkPlan, command_id: str, ir: QueryIR, utterance: str, *,
               blocked: np.ndarray | None = None) -> BulkPlan:
        """Expand a command picked outside the index (an arbiter or the user's answer)."""
        return self._expand(plan, command_id, self.bulk_scope(ir, utterance)[1], None if blocked is None else ~blocked)

    def _expand(self, plan: BulkPlan, command_id: str, device_ok: np.ndarray,
                allowed: np.ndarray | None = None, equivalent: set[str] = frozenset()) -> BulkPlan:
        """Targets of `command_id`, grouped by argument shape, split into batches.

        A device in scope that lacks the chosen command takes the best other option it supports
        when that option's evidence is within `fallback_margin` of the chosen one ("调暗一点": the
        step command where there is one, setLevel elsewhere), so no device is dropped silently for
        want of an equivalent command, and none gets a command the utterance did not ask for. An
        ``equivalent`` option (one that takes the value said as the chosen one does) is a fallback too.
        """
        p = self.params
        pool = int(device_ok.sum())
        chosen = next((o for o in plan.options if o.command_id == command_id), None)
        fallbacks = [o.command_id for o in plan.options if o.command_id != command_id and chosen is not None
                     and (chosen.evidence - o.evidence <= p.fallback_margin or o.command_id in equivalent)]
        row_of = np.full(len(self.home.devices), -1, dtype=np.int64)  # per device: the command it gets
        for command in reversed((command_id, *fallbacks)):  # the first one a device has wins
            rows = self._supporting(command, device_ok, allowed)
            row_of[self.row_device[rows]] = rows
        return self._with_targets(plan, command_id, row_of, pool)

    def _with_targets(self, plan: BulkPlan, command_id: str, row_of: np.ndarray, pool: int) -> BulkPlan:
        """``plan`` carrying its targets: each device with ``row_of`` >= 0 and that row's command, grouped by
        argument shape and split into batches; ``command_id`` is the plan's command (its coverage: the share of
        the ``pool`` devices in scope that take it)."""
        p = self.params
        devices = np.flatnonzero(row_of >= 0)
        shapes = self.slot_compatibility_code[self.row_slot[row_of[devices]]]
        found, first = np.unique(shapes, return_index=True)
        groups = {self.compatibilities[shape]: self.device_ids[devices[shapes == shape]].tolist()
                  for shape in found[np.argsort(first)]}  # in the order of each group's first device
        taking = int((self.row_command[row_of[devices]] == self._command_code.get(command_id, -1)).sum())
        plan = plan.model_copy(update={
            "command_id": command_id, "hint": None, "reason": "",
            "coverage": round(taking / pool, 4) if pool else 0.0,
            "groups": [BulkGroup(command_id=sig[0], signature=_signature_text(sig), device_ids=ids)
                       for sig, ids in groups.items()],
            "batches": [ids[i:i + p.batch_size] for ids in groups.values()
                        for i in range(0, len(ids), p.batch_size)],
        })
        if not devices.size:
            plan.hint, plan.reason = "no_target", f"no device in scope supports {command_id}"
        elif devices.size > p.max_targets or len(groups) > p.max_groups:
            plan.hint = "too_many_targets"
            plan.reason = (f"{devices.size} targets in {len(groups)} groups exceed the limits ({p.max_targets} "
                           f"targets, {p.max_groups} groups): narrow by room, category or name, or confirm")
        return plan

    def _options(self, scores: np.ndarray, device_ok: np.ndarray) -> list[CapabilityOption]:
        """Top commands by aggregated evidence: best M hits each, plus a bonus for coverage."""
        p = self.params
        finite = np.flatnonzero(np.isfinite(scores))
        if 0 < p.options_window < len(finite):  # only rows as good as the window's last can be in it
            last = -np.partition(-scores[finite], p.options_window - 1)[p.options_window - 1]
            finite = finite[scores[finite] >= last]
        window = finite[np.argsort(-scores[finite], kind="stable")[:p.options_window]]
        hits: dict[str, list[float]] = defaultdict(list)
        for r in window:
            command_id = self._command_of(*self.rows[r]).id
            if len(hits[command_id]) < p.options_per_command:
                hits[command_id].append(float(scores[r]))
        pool = int(device_ok.sum())
        supporting = {c: self._supporting(c, device_ok) for c in hits}
        evidence = {c: float(np.mean(v)) + p.w_coverage * len(supporting[c]) / pool for c, v in hits.items()}
        ranked = sorted(evidence, key=evidence.get, reverse=True)[:p.options_top_n]
        if not ranked:
            return []
        values = np.asarray([evidence[c] for c in ranked])
        weights = np.exp((values - values.max()) / max(p.option_temperature, 1e-6))
        probs = weights / weights.sum()
        return [CapabilityOption(
            command_id=c, description=self._command_of(*self.rows[supporting[c][0]]).description,
            p=round(float(prob), 4),
            evidence=round(evidence[c], 4), supported_devices=len(supporting[c]),
            sample_devices=[self.home.devices[self.rows[r][0]].label for r in supporting[c][:3].tolist()],
            sample_rooms=sorted(filter(None, set(self.device_rooms[self.row_device[supporting[c]]])))[:3])
            for c, prob in zip(ranked, probs, strict=True)]

    def _supporting(self, command_id: str, device_ok: np.ndarray, allowed: np.ndarray | None = None) -> np.ndarray:
        """The rows of ``command_id`` on the devices in ``device_ok`` (and among the ``allowed`` rows), one per
        device (its first), in device order."""
        wanted = (self.row_command == self._command_code.get(command_id, -1)) & device_ok[self.row_device]
        rows = np.flatnonzero(wanted if allowed is None else wanted & allowed)
        return rows[np.unique(self.row_device[rows], return_index=True)[1]]

    def _command_of(self, device: int, position: int) -> CommandSpec:
        return self.home.devices[device].commands[position]

    @cached_property
    def slot_commands(self) -> list[tuple[Device, CommandSpec]]:
        """Per slot: the device that stands for it and its command (the devices of one profile share a slot)."""
        return [(self.home.devices[d], self.home.devices[d].commands[c]) for d, c in self.slots]

    def device_of_row(self, row: int) -> Device:
        return self.home.devices[self.rows[row][0]]

    def spec_of_row(self, row: int) -> CommandSpec:
        """The command of one row."""
        return self._command_of(*self.rows[row])


def _group_max(values: np.ndarray, starts: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """The max of each group of ``values`` (the runs beginning at ``starts``), as float64; -inf where the
    mask leaves a group nothing."""
    values = values.astype(np.float64)
    if mask is not None:
        values = np.where(mask, values, -np.inf)
    return np.maximum.reduceat(values, starts) if len(values) else values


# The unit a number is said in, by family: the families of SmartThings' value_range units.
_SET_VERB_INDEX = PhraseIndex(SET_VERBS)


# The part of a device a capability sets, where a value in the same unit sets another part than a level does
_PART = {"windowShadeTiltLevel": "slats", "colorControl": "colour", "audioVolume": "volume",
         "fanSpeedPercent": "fan speed", "airConditionerFanMode": "fan speed"}


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


def _without_excluded(names: list[str], utterance: str) -> str:
    """The utterance without the names of the devices it excepts: the room of "书房台灯除外" is no scope."""
    for name in names:
        utterance = re.sub(re.escape(name), " ", utterance, flags=re.IGNORECASE)
    return utterance


def _changes_by_amount(spec: CommandSpec) -> bool:
    """A numeric command whose range runs as far below zero as above it (a step of -100..100): it takes a
    change, not a target. A temperature's range (-460..10000 °F) may cross zero and still be a target."""
    bounds = dict(spec.value_range or ())
    low, high = bounds.get("min"), bounds.get("max")
    return isinstance(low, int | float) and isinstance(high, int | float) and low < 0 < high \
        and abs(low + high) <= 0.1 * (high - low)


def _content(toks: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(t for t in toks if t not in FILLER_TOKENS)


# Words for a kind of room -> the word whose first character the short forms of such rooms end in
# (主卫, 客卫: 卫生间; 主卧, 次卧: 卧室). See `CommandIndex.mentioned_rooms`.
_ROOM_KINDS = tuple((tokens(word), tokens(kind)) for word, kind in (
    ("卫生间", "卫生间"), ("洗手间", "卫生间"), ("厕所", "卫生间"), ("浴室", "卫生间"),
    ("卧室", "卧室"), ("卧房", "卧室")))


def _room_aliases(rooms: list[str], floors: dict[str, str] | None = None) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Token form -> the rooms it names, longest forms first: each full name, plus each trailing run of
    two or more tokens ("餐厅" for "一楼餐厅"; "卫生间" for every room ending in it), each leading run of
    two or more tokens several rooms share ("二楼"), plus each floor's name for every room on it
    (``floors``: room -> floor, where the home records floors). People drop floors and wings, and
    "所有卫生间" means all of them."""
    full = {tokens(r): r for r in rooms if tokens(r)}
    aliases: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for toks, room in full.items():
        aliases[toks].add(room)
        for start in range(1, len(toks) - 1):
            if toks[start:] not in full:
                aliases[toks[start:]].add(room)
    # a leading run of two or more tokens that several rooms share is their floor or wing ("二楼" of
    # 二楼主卧 and 二楼次卧), even where the home records no floors
    starts: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for toks, room in full.items():
        for end in range(2, len(toks)):
            starts[toks[:end]].add(room)
    for run, owners in starts.items():
        if len(owners) >= 2 and run not in full:
            aliases[run] |= owners
    for room, floor in (floors or {}).items():
        if room in rooms and tokens(floor) and tokens(floor) not in full:
            aliases[tokens(floor)].add(room)
    return {alias: tuple(sorted(owners)) for alias, owners in sorted(aliases.items(), key=lambda kv: -len(kv[0]))}


def _category_words(category: str) -> tuple[str, ...]:
    """"AirConditioner" -> ("air", "conditioner"): category names as words a user may say."""
    return tokens(" ".join(re.findall(r"[A-Z][a-z]*|[a-z]+", category)))


def _signature_text(sig: tuple) -> str:
    command_id, kind, value_range, values = sig
    parts = [command_id, kind or "no-argument"]
    if value_range:
        parts.append(",".join(f"{k}={v}" for k, v in value_range))
    if values:
        parts.append("|".join(values))
    return ";".join(parts)


# "随便开一盏灯", "turn on a light", "any speaker": one device of the kind will do, never all of them
_ONE_OF = re.compile(r"随便|任意|哪个都|哪盏都|[一某][盏个台只部]|\b(any|one|either|an?(?! (bit|little|few)\b))\b",
                     re.IGNORECASE)


def _said_where(utterance: str, label: str) -> bool:
    """Whether the label stands in the utterance only to say where ("the blinds by the patio door", "门旁边的灯")."""
    text = normalised(utterance)
    found = re.search(r"\s*".join(map(re.escape, _compact(label))), text)
    return found is not None and locative(text, found.start(), found.end())


def _compact(text: str) -> str:
    """Lower case without spaces: how a label is found in an utterance whatever its spacing."""
    return re.sub(r"\s+", "", text).lower()


def _says(utterance: str, label: str) -> bool:
    """``label`` occurs in ``utterance`` as a whole, whatever its spacing: "筒灯1" is not said by "筒灯10",
    "bed" not by "bedroom"; "Pendant 2" is by "the pendant 2 in the kitchen". A label longer than the
    utterance is never compiled (a 1 MB label would take minutes)."""
    if _compact(label) not in _compact(utterance):
        return False
    return _label_pattern(label).search(utterance.lower()) is not None


@lru_cache(maxsize=4096)
def _label_pattern(label: str) -> re.Pattern:
    body = r"\s*".join(re.escape(ch) for ch in label if not ch.isspace())
    before = r"(?<![a-z0-9])" if label[:1].isascii() and label[:1].isalnum() else ""
    after = r"(?![a-z0-9])" if label[-1:].isascii() and label[-1:].isalnum() else ""
    return re.compile(before + body + after)
