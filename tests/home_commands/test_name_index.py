"""The lookups that replace scans of every name give exactly the scans' answers."""

from __future__ import annotations

import random

import numpy as np

from tracerag.home_commands.name_index import NameIndex, PhraseIndex
from tracerag.home_commands.text_match import contains, contains_words_in_order, name_similarity, remove_phrases

VOCABULARY = ["灯", "台", "客", "厅", "筒", "空", "调", "lamp", "desk", "kab", "kac", "1", "2"]


def _phrase(rng: random.Random, longest: int) -> tuple[str, ...]:
    return tuple(rng.choice(VOCABULARY) for _ in range(rng.randint(1, longest)))


def test_phrase_lookup_finds_what_a_scan_finds():
    rng = random.Random(7)
    phrases = [_phrase(rng, 4) for _ in range(300)]
    index = PhraseIndex(phrases)
    for _ in range(300):
        said = _phrase(rng, 12)
        assert index.found_in(said) == {p for p in phrases if contains(said, p)}
        # removal meets only phrases whose words are all said, in the order they were given
        possible = index.possible_in(said)
        assert remove_phrases(said, possible) == remove_phrases(said, dict.fromkeys(phrases))
        assert possible == sorted(possible, key=index.rank.__getitem__)


def test_name_scores_equal_the_run_search_over_every_name():
    rng = random.Random(11)
    keys = [_phrase(rng, 5) for _ in range(400)]
    ordinals = [frozenset(t for t in key if t.isdigit()) for key in keys]
    index = NameIndex(keys, ordinals)
    for specificity in (0.0, 4.0):
        for _ in range(150):
            queries = [_phrase(rng, 8), _phrase(rng, 3)]
            said = set(queries[0])
            got = index.scores(queries, said, specificity)
            for device, key in enumerate(keys):
                best = max(name_similarity(key, q, index.weight, specificity) for q in queries)
                want = np.float32(best + (0.1 if best > 0 and not ordinals[device].isdisjoint(said) else 0.0))
                assert got[device] == want, (key, queries)


def test_carrying_equals_a_scan():
    rng = random.Random(3)
    keys = [_phrase(rng, 5) for _ in range(200)]
    index = NameIndex(keys, [frozenset()] * len(keys))
    for _ in range(200):
        word = _phrase(rng, 3)
        assert index.carrying(word).tolist() == [contains(key, word) or contains_words_in_order(key, word)
                                                 for key in keys]
    assert not index.carrying(()).any()
