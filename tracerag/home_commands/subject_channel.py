"""The subject channel: the utterance names what a command acts on, in words its sibling commands do not use.

"风速" names the subject of 设置空调风速, "扫风" that of 设置扫风 (``command_docs.subject_phrases``). A word that
names the device's kind (in ``kind_word_share`` of its category's names: "灯", "空调") is no subject: "调节灯光
颜色" acts on the colour, not the light. A word no room, name, value or verb of the home explains ("风量") may
still name a subject the embedder puts it next to ("风速"), where the two share a token.

For a single target the subject only ranks a device's commands against each other (``scoring``): a device
described in another language cannot be named this way and must not lose its place for that.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from ..embedding.embedders import Embedder, l2_normalize, small_product
from .argument_channel import ArgumentChannel
from .category_words import category_name_words
from .command_docs import SET_VERBS, subject_phrases, subject_text
from .command_table import CommandTable
from .home_names import FILLER_TOKENS, HomeNames
from .index_params import IndexParams
from .name_index import PhraseIndex
from .room_words import RoomWords
from .text_match import join_tokens, split_on_phrases, tokens
from .verb_channel import VerbChannel


class SubjectChannel:
    """What each slot's command acts on, as phrases and as one embedded text."""

    def __init__(self, table: CommandTable, rooms: RoomWords, names: HomeNames, arguments: ArgumentChannel,
                 verbs: VerbChannel, embedder: Embedder, params: IndexParams):
        self.table, self.rooms, self.names, self.embedder, self.params = table, rooms, names, embedder, params
        kind_tokens = self._kind_tokens()
        subjects: dict[tuple, int] = {}
        slot_subject = []
        for device, spec in table.slot_commands:
            subject = tuple(run for run in subject_phrases(spec, device.commands)
                            if not set(run) & kind_tokens.get(device.category, set()))
            slot_subject.append(subjects.setdefault(subject, len(subjects)))
        self.subject_sets = list(subjects)
        self.slot_subject = np.asarray(slot_subject, dtype=np.int64)
        # the phrases of every subject, looked up once per utterance rather than scanned per set
        self.phrases = PhraseIndex(p for phrases in self.subject_sets for p in phrases)
        # for words no command document says: what each slot's command acts on, in its own words
        texts: dict[str, int] = {}
        self.slot_subject_text = np.asarray(
            [texts.setdefault(subject_text(spec, self._kind_words(kind_tokens, device.category)), len(texts))
             for device, spec in table.slot_commands], dtype=np.int64)
        self.subject_texts = list(texts)
        self._known_phrases = PhraseIndex({p for shape in arguments.shapes for p in shape.phrases}
                                          | set(verbs.phrases.phrases) | set(SET_VERBS)
                                          | {(t,) for t in FILLER_TOKENS})
        self.subject_vectors = l2_normalize(embedder.embed(self.subject_texts)) if self.subject_texts else \
            np.zeros((0, embedder.dim), dtype=np.float32)

    def _kind_tokens(self) -> dict[str, set[str]]:
        """Per category, the name words that name the kind ("灯", "空调"): in `kind_word_share` of its names.

        "调节灯光颜色" acts on the colour, not on the light: a subject run holding a kind word would
        claim every "灯光" the user says. Read once, when the index is built."""
        names: dict[str, int] = defaultdict(int)
        carrying: dict[str, Counter] = defaultdict(Counter)
        for device, key in zip(self.table.home.devices, self.names.name_keys, strict=True):
            names[device.category] += 1
            carrying[device.category].update(set(key))
        return {category: {t for t, count in carrying[category].items()
                           if count >= self.params.kind_word_share * n}
                for category, n in names.items()}

    @staticmethod
    def _kind_words(kind_tokens: dict[str, set[str]], category: str) -> set[str]:
        """The words that say a device's kind: its category's name ("air conditioner") and name words."""
        return kind_tokens.get(category, set()) | set(category_name_words(category))

    def scores(self, text: str, similar: bool = False) -> np.ndarray:
        """Per slot: 1 where the text names its command's subject (see `subject_phrases`), or, when it
        names none and ``similar`` is set, says a word the embedder puts next to it (`_similar`)."""
        said = tokens(text)
        if not self.table.slots:
            return np.zeros(0, dtype=np.float32)
        named = self.phrases.found_in(said)
        per_set = np.asarray([0.0 if named.isdisjoint(phrases) else 1.0 for phrases in self.subject_sets],
                             dtype=np.float32)
        if per_set.any() or not similar:
            return per_set[self.slot_subject]
        return self._similar(said)

    def _similar(self, said: tuple[str, ...]) -> np.ndarray:
        """Per slot: 1 where a word of the text that no room, name, value or verb of this home explains
        ("风量") shares a token with what the slot's command acts on ("风速", see `subject_text`) and is
        as near it as anything (cosine >= `similar_subject`; within 0.03 of the nearest counts, the other
        channels decide). The command documents say what a command acts on and the embedder knows their
        other words, so no synonym list is kept."""
        names = self.names
        explained = [*self.rooms.phrases.found_in(said), *names.name_phrases.found_in(said),
                     *names.run_phrases.found_in(said), *self._known_phrases.found_in(said)]
        runs = split_on_phrases(said, explained)  # a Latin run is words, each its own; a CJK run one word
        words = [join_tokens(w) for run in runs for w in ([(t,) for t in run] if run[0].isascii() else [run])
                 if (len(w) >= 2 or len(w[0]) >= 3) and not any(t.isdigit() for t in w)]
        if not words or not self.subject_texts:
            return np.zeros(len(self.table.slots), dtype=np.float32)
        cosines = small_product(l2_normalize(self.embedder.embed(words)), self.subject_vectors)
        # a word and a subject must share a token: a character of a Chinese compound (风量, 风速) or a
        # word. The embedder alone puts "dim" and "brighten" next to "hue", 地方 next to 位置.
        shares = np.asarray([[bool(set(tokens(w)) & set(tokens(t))) and len(t) >= 2 for t in self.subject_texts]
                             for w in words])
        near = np.where(shares, cosines, 0.0).max(axis=0)
        best = float(near.max())
        if best < self.params.similar_subject:
            return np.zeros(len(self.table.slots), dtype=np.float32)
        return (near >= best - 0.03).astype(np.float32)[self.slot_subject_text]
