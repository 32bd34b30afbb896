"""The verb channel: a verb command the utterance names by its own words beats its unnamed siblings.

Verb commands (on, off, mute, unmute, stop, lock ...) take no value, and the embedder cannot always tell them
apart: it puts "mute" nearer the unmute document. Whole verb words can (``command_docs.verb_phrases``). A
phrase inside a longer one said counts only as the longer one: "取消静音" names unmute, not mute, and "停止播放"
stop, not off. A text that says a negated verb is left to the other channels (``negation``). The same reading
says which devices can do what a verb says (bulk plans read it to settle a category).
"""

from __future__ import annotations

import numpy as np

from .command_docs import verb_phrases
from .command_table import CommandTable
from .name_index import PhraseIndex
from .negation import is_negated
from .text_match import contains, tokens


class VerbChannel:
    """The verb commands of one home's slots, grouped by the verb phrases that name them."""

    def __init__(self, table: CommandTable):
        self.table = table
        verb_sets: dict[frozenset, int] = {}
        self.slot_verb_set = np.asarray([verb_sets.setdefault(verb_phrases(spec.command, spec.capability),
                                                              len(verb_sets)) for _, spec in table.slot_commands],
                                        dtype=np.int64)
        self.verb_sets = list(verb_sets)
        self.slot_is_verb = np.asarray([bool(verbs) for verbs in self.verb_sets] or [False])[self.slot_verb_set]
        self.phrases = PhraseIndex(frozenset().union(*self.verb_sets))  # each phrase once

    def scores(self, *texts: str) -> np.ndarray:
        """Per slot: -1 for a verb command (on, mute, stop ...) whose device has another one the texts
        name by its own words while this one goes unnamed; 0 elsewhere."""
        named = self.sets_named(texts)
        if named is None:
            return np.zeros(len(self.table.slots), dtype=np.float32)
        per_slot = named.astype(np.float32)[self.slot_verb_set]
        best = self.table.per_profile_best(per_slot, self.slot_is_verb)
        return np.where(self.slot_is_verb, per_slot - best, 0.0).astype(np.float32)

    def devices(self, *texts: str) -> np.ndarray:
        """Per device: whether it has a verb command (lock, open, mute ...) the texts name by its words;
        none for a text that says a negated verb (see `sets_named`)."""
        table = self.table
        named = self.sets_named(texts)
        if named is None or not named.any():
            return np.zeros(len(table.home.devices), dtype=bool)
        return table.devices_with_slots(named[self.slot_verb_set])

    def named(self, text: str) -> np.ndarray:
        """Per slot: whether the text says its verb command by the command's own words ("取消静音": unmute)."""
        named = self.sets_named((text,))
        if named is None:
            return np.zeros(len(self.table.slots), dtype=bool)
        return named[self.slot_verb_set] & self.slot_is_verb

    def sets_named(self, texts: tuple[str, ...]) -> np.ndarray | None:
        """Per verb set: whether the texts say one of its verbs (a phrase inside a longer one said counts
        only as the longer one). None without verb commands, or for a text that says a negated verb
        ("灯不用开了", not read with `negation.read_negation` first): its verb says the opposite of what is
        wanted."""
        if not self.table.slots or any(map(is_negated, texts)):
            return None
        matched = set().union(*(self.phrases.found_in(tokens(text)) for text in texts))
        spoken = {v for v in matched if not any(len(w) > len(v) and contains(w, v) for w in matched)}
        return np.asarray([bool(verbs & spoken) for verbs in self.verb_sets], dtype=bool)
