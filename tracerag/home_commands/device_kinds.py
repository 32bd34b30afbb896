"""What a device is, where its label may not say it: a safe labelled 小金库 or "Strongbox". The device's own
name beside its label (SmartThings ``name``: "Smart Safe Lock") or its label says it in English; a person says
it in either language ("open the safe", "打开保险柜"). Only words that say one thing are listed: an "automatic
door" may be a shop's door or a chicken coop's.

``devices_said(index, text)`` gives, per device, the length of the longest such word said that the device is
(0 for none): ``referents.named`` reads it as a name said where no label or name run is.
"""

from __future__ import annotations

import re
import weakref

import numpy as np

from .category_words import categories_said, normalised
from .text_match import tokens

# (the words a device's label or own name carries, all of them; the words a person says for it)
WHAT_IT_IS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("safe",), ("safe", "strongbox", "gun safe", "vault", "保险柜", "保险箱", "保险库")),
    (("strongbox",), ("safe", "strongbox", "保险柜", "保险箱")),
    (("保险箱",), ("safe", "保险柜", "保险箱", "保险库")),
    (("保险柜",), ("safe", "保险柜", "保险箱", "保险库")),
    (("lock", "box"), ("cash box", "cashbox", "money box", "lock box", "lockbox")),  # a Master Lock "Lock Box"
    (("门禁",), ("门禁",)),  # the entry system a building's door is opened by (海康威视 门禁一体机)
    (("卷帘门",), ("卷帘门", "卷闸门")),  # a roller shutter, by either of its names (杜亚 卷帘门电机)
    (("卷闸门",), ("卷帘门", "卷闸门")),
    (("柜",), ("柜子", "柜")),  # a cabinet by its last character: 钱柜, 放钱的那个柜子 of the lock 收银柜
)
_PATTERNS = [re.compile("|".join(rf"\b{re.escape(w)}s?\b" if w.isascii() else re.escape(w) for w in said))
             for _, said in WHAT_IT_IS]


def devices_said(index, text: str, qualifying=lambda word: False) -> np.ndarray:
    """Per device: the length of the longest word for what it is said in the text (0: none); a word that only
    ``qualifying`` another ("the safe's lamp") says nothing."""
    out = np.zeros(len(index.home.devices), dtype=np.int64)
    text = normalised(text)
    for (carried, _), pattern in zip(WHAT_IT_IS, _PATTERNS, strict=True):
        longest = max((len(m.group(0)) for m in pattern.finditer(text) if not qualifying(m.group(0))), default=0)
        if longest:
            out = np.maximum(out, longest * being(index, carried))
    return out


def safes(index) -> np.ndarray:
    """Per device: it is a safe (its label or own name says so): never one of "the doors"."""
    return being(index, ("safe",)) | being(index, ("strongbox",)) | being(index, ("保险箱",)) | \
        being(index, ("保险柜",))


_BEING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # per index: {words: per device, it is so}


def being(index, carried: tuple[str, ...]) -> np.ndarray:
    """Per device: its own name carries every one of the words, or its label ends with them (a Gun Safe; never
    the Lamp on the Safe). Read once per index."""
    known = _BEING.setdefault(index, {})
    if carried not in known:
        known[carried] = _being(index, carried)
    return known[carried]


def _being(index, carried: tuple[str, ...]) -> np.ndarray:
    devices = index.home.devices
    if not all(w.isascii() for w in carried):  # a Chinese word: in the own name, or ending the label
        return np.asarray([all(w in d.model or d.label.endswith(w) for w in carried) for d in devices], dtype=bool)
    return np.asarray([_own_name_says(d, carried) or
                       set(tokens(d.label.lower())[-len(carried):]) == set(carried) for d in devices], dtype=bool)


def _own_name_says(device, carried: tuple[str, ...]) -> bool:
    """Whether a device's own name carries every word, whole, or ending a maker's compound where its label says no
    kind of its own ("SentrySafe" of Fort Knox is a safe; "PetSafe" of the Kennel Door is no safe)."""
    model = tokens(device.model.lower())
    compound = not categories_said(device.label)
    return all(any(t == w or compound and len(w) >= 4 and t.endswith(w) for t in model) for w in carried)
