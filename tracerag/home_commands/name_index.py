"""Which names an utterance touches, found by lookup instead of a scan of the whole home.

Per query, CommandIndex asks which device names and rooms the utterance says and how much of each
name it says. Testing every name for that is Python work per device per query (76 ms a query at
5,000 devices). Here the names are indexed once, when the home is: a :class:`PhraseIndex` answers
"which of these phrases occur in these tokens" by hashing the utterance's slices, and a
:class:`NameIndex` scores only the names that share a word with the utterance — the rest score 0.

Every answer equals the plain scan's (``text_match.contains`` / ``name_similarity`` over every name):
``tests/home_commands/test_command_rankings.py`` holds the whole retriever to that.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise

import numpy as np

from .text_match import contains, contains_words_in_order, heaviest_common_run

Phrase = tuple[str, ...]
_UNSAID = "\x00"  # stands in for a name word the query does not say: no query token is ever this
CARRYING_CACHE = 1024  # words whose carriers a NameIndex keeps: a home's vocabulary, bounded
_PAD, _MASK = -2, -1  # word numbers: no word (after a key's end), a word the query does not say


class PhraseIndex:
    """A set of token phrases, looked up by the slices of a token sequence.

    ``found_in`` costs (tokens x distinct phrase lengths) hash lookups, whatever the number of phrases.
    Answers keep the order the phrases were given in, where a caller's result depends on it.
    """

    def __init__(self, phrases: Iterable[Sequence[str]]):
        self.rank: dict[Phrase, int] = {}
        for p in phrases:
            if p:
                self.rank.setdefault(tuple(p), len(self.rank))
        self.phrases = self.rank.keys()
        self._lengths = sorted({len(p) for p in self.phrases})
        self._by_first: dict[str, list[Phrase]] = defaultdict(list)
        for phrase in self.phrases:
            self._by_first[phrase[0]].append(phrase)

    def __len__(self) -> int:
        return len(self.phrases)

    def found_in(self, toks: Sequence[str]) -> set[Phrase]:
        """The phrases that occur contiguously in ``toks`` (``text_match.contains``)."""
        toks = tuple(toks)
        found = set()
        for n in self._lengths:
            if n > len(toks):
                break
            found.update(s for s in (toks[i:i + n] for i in range(len(toks) - n + 1)) if s in self.phrases)
        return found

    def possible_in(self, toks: Sequence[str]) -> list[Phrase]:
        """The phrases whose words all occur in ``toks``: the only ones a removal pass over ``toks``
        (``text_match.remove_phrases``) can ever meet, since removing words never adds any."""
        said = set(toks)
        return ordered((p for t in said for p in self._by_first.get(t, ()) if said.issuperset(p)), self.rank)


class NameIndex:
    """Device names with IDF weights (``"灯"`` in half the labels weighs little, ``"起夜"`` a lot).

    ``keys`` are the devices' names in device order (several devices may share one); ``ordinals``
    the numbers in each device's label ("筒灯3"), which add a little when the utterance repeats them.
    """

    def __init__(self, keys: Sequence[Phrase], ordinals: Sequence[frozenset[str]]):
        self.keys: list[Phrase] = list(dict.fromkeys(keys))
        key_id = {key: i for i, key in enumerate(self.keys)}
        self.device_key = np.asarray([key_id[k] for k in keys], dtype=np.int64)
        df: dict[str, int] = defaultdict(int)
        for key in self.keys:
            for t in set(key):
                df[t] += 1
        n = max(len(self.keys), 1)
        self.weight: dict[str, float] = {t: float(np.log1p(n / c)) for t, c in df.items()}
        self._totals = np.asarray([sum(self.weight.get(t, 1.0) for t in key) for key in self.keys], dtype=np.float64)
        keys_with: dict[str, set[int]] = defaultdict(set)
        keys_with_pair: dict[tuple[str, str], set[int]] = defaultdict(set)
        for i, key in enumerate(self.keys):
            for t in key:
                keys_with[t].add(i)
            for pair in pairwise(key):
                keys_with_pair[pair].add(i)
        self._keys_with = {t: np.fromiter(sorted(ids), dtype=np.int64) for t, ids in keys_with.items()}
        self._keys_with_pair = {p: sorted(ids) for p, ids in keys_with_pair.items()}
        self._pair_groups: dict[tuple[str, str], _PairGroup | None] = {}
        self._vocabulary = list(df)  # word numbers, for the run search's key matrices
        self._token_id = {t: i for i, t in enumerate(self._vocabulary)}
        self._carrying: dict[Phrase, np.ndarray] = {}
        devices_with: dict[str, list[int]] = defaultdict(list)
        for device, numbers in enumerate(ordinals):
            for t in numbers:
                devices_with[t].append(device)
        self._ordinal_devices = {t: np.asarray(ids, dtype=np.int64) for t, ids in devices_with.items()}

    def scores(self, queries: Sequence[Phrase], said: Iterable[str], specificity: float) -> np.ndarray:
        """Per device: the best ``name_similarity`` of its name to any of the queries, plus 0.1 when the
        name matched and the utterance (``said``) repeats the label's ordinal."""
        best = np.zeros(len(self.keys), dtype=np.float64)
        for query in queries:
            if query:
                np.maximum(best, self._similarities(query, specificity), out=best)
        per_device = best[self.device_key]
        ordinal = np.zeros(len(per_device), dtype=bool)
        for t in set(said):
            if t in self._ordinal_devices:
                ordinal[self._ordinal_devices[t]] = True
        return (per_device + np.where(ordinal & (per_device > 0), 0.1, 0.0)).astype(np.float32)

    def _similarities(self, query: Phrase, specificity: float) -> np.ndarray:
        """``name_similarity(key, query)`` for every key, exactly, searching runs only in the keys that
        share two adjacent words with the query. Elsewhere the heaviest shared run is one word: its
        weight (capped at 1 for one Chinese character), over the key's total weight. The run search
        sees a key only through the words it shares with the query (the others match nothing), so keys
        that differ elsewhere — "台灯 kab", "台灯 kac" — share one search."""
        single = np.zeros(len(self.keys), dtype=np.float64)
        for t in set(query):
            ids = self._keys_with.get(t)
            if ids is not None:
                w = self.weight[t]
                single[ids] = np.maximum(single[ids], w if t.isascii() else min(w, 1.0))
        out = single / np.maximum(np.maximum(self._totals, specificity), np.finfo(np.float64).tiny)
        said = set(query)
        said_ids = np.asarray([self._token_id[t] for t in said if t in self._token_id], dtype=np.int64)
        runs: dict[Phrase, float] = {}
        for pair in set(pairwise(query)):
            group = self._pair_group(pair)
            if group is None:
                continue
            # each key as the run search sees it: its words the query says, the others masked; keys alike so
            # ("台灯 kab", "台灯 kac") share one search
            seen = np.where(np.isin(group.words, said_ids) | (group.words == _PAD), group.words, _MASK)
            rows = seen.view(np.dtype((np.void, seen.itemsize * seen.shape[1]))).ravel()  # a row as one value
            _, first, which = np.unique(rows, return_index=True, return_inverse=True)
            frames = seen[first]
            found = np.empty(len(frames), dtype=np.float64)
            for f, frame in enumerate(frames.tolist()):
                shared = tuple(self._vocabulary[w] if w >= 0 else _UNSAID for w in frame if w != _PAD)
                if shared not in runs:
                    runs[shared] = heaviest_common_run(shared, query, self.weight, single_cap=1.0)
                found[f] = runs[shared]
            out[group.ids] = found[which.reshape(-1)] / np.maximum(self._totals[group.ids], specificity)
        return out

    def _pair_group(self, pair: tuple[str, str]) -> _PairGroup | None:
        """The keys holding ``pair`` (built on first use, kept)."""
        if pair not in self._pair_groups:
            ids = self._keys_with_pair.get(pair)
            self._pair_groups[pair] = None if ids is None else _PairGroup(
                [[self._token_id[t] for t in self.keys[i]] for i in ids], ids)
        return self._pair_groups[pair]

    def carrying(self, word: Phrase) -> np.ndarray:
        """Per device: whether its name contains the word (Latin words also with others between them:
        "hue spot" in "Hue ambiance spot 3"). Each word is looked up once (up to CARRYING_CACHE words kept)."""
        found = self._carrying.get(word)
        if found is None:
            if len(self._carrying) >= CARRYING_CACHE:
                self._carrying.clear()
            found = self._carrying[word] = self._carriers(word)
        return found.copy()

    def _carriers(self, word: Phrase) -> np.ndarray:
        found = np.zeros(len(self.keys), dtype=bool)
        if word:
            candidates = None
            for t in set(word):
                ids = self._keys_with.get(t)
                if ids is None:
                    return found[self.device_key]
                candidates = ids if candidates is None else np.intersect1d(candidates, ids, assume_unique=True)
            for i in candidates.tolist():
                found[i] = contains(self.keys[i], word) or contains_words_in_order(self.keys[i], word)
        return found[self.device_key]


class _PairGroup:
    """The keys that hold one pair of adjacent words: their positions, and their words as a matrix of word
    numbers (``_PAD`` after a key's last word)."""

    def __init__(self, words: Sequence[Sequence[int]], ids: Sequence[int]):
        self.ids = np.asarray(ids, dtype=np.int64)
        self.words = np.full((len(words), max(map(len, words))), _PAD, dtype=np.int64)
        for row, key in enumerate(words):
            self.words[row, :len(key)] = key


def ordered(found: Iterable, rank: Mapping) -> list:
    """``found`` in the order of ``rank`` (item -> position): a lookup's answer in the scan's order."""
    return sorted(found, key=rank.__getitem__)
