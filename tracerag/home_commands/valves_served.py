"""Which supply valve, by what it feeds: "the gas to the woks" is the Wok Gas Line, not the Main Gas.

A word for a valve's kind ("the gas", "the water") beside several valves of that kind asks which one, unless the
utterance says, beside it, a word that one valve's label carries and no other's (its wok, its boiler, its hose).
Only supplies are read so: a door, a lock or a safe is said by its name, and a word shared with another name
("the house door": the Farmhouse Door or the Gate House Door?) still asks which.
"""

from __future__ import annotations

import numpy as np

from .category_words import categories_said
from .text_match import tokens

_SUPPLIES = frozenset({"GasValve", "WaterValve"})
# words a label shares with talk about anything, or with every valve of its supply: no sign of what a supply serves
# ("the main course"; "water the vines" says nothing of the Water Main)
_NO_SERVED = frozenset({"the", "and", "for", "main", "line", "supply", "valve", "back", "front", "side", "big",
                        "small", "new", "old", "please", "turn", "open", "close", "switch", "water", "gas"})


def valve_served(index, text: str, same: np.ndarray, devices: np.ndarray) -> np.ndarray:
    """``same`` (per sensitive row, rows of one kind on several supply valves; ``devices``: each row's device)
    narrowed to the one valve a word of whose label, besides its kind's, the text says; unchanged otherwise."""
    if not text.isascii() or not set(index.table.device_categories[devices[same]].tolist()) <= _SUPPLIES:
        return same
    said = {_stem(w) for w in tokens(text) if len(w) >= 3} - _NO_SERVED
    found = set()
    for d in set(devices[same].tolist()):
        label = index.home.devices[d].label
        kind_words = {_stem(w) for words in categories_said(label).values() for w in words}
        if ({_stem(w) for w in tokens(label)} - _NO_SERVED - kind_words) & said:
            found.add(d)
    return same & (devices == found.pop()) if len(found) == 1 else same


def _stem(word: str) -> str:
    """A word without its plural ("woks": wok)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
