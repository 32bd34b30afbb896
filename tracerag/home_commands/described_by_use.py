"""A sensitive device described by what it does or holds: "the box where we keep the cash" is the safe, "the thing
that lets the gas through to the range" the kitchen's gas valve, "那个管燃气的阀门" the gas valve.

A description is a head word for a sort of device ("the box", "the valve", "the thing", 阀门, 柜子) with a clause
that says what it does or holds ("...that feeds the wok burners", "...with the customers' keys in", 放钱的).
Its referent is the one sensitive device of that sort the clause's words single out: by what it holds or lets
through (cash: a safe; gas: a gas valve), by a word of its label or its room ("the keys": the Key Cupboard; "the
cash": the safe in the Cash Office), or by standing in the room of a device the clause names ("to the range": the
gas valve in the range's kitchen). Where the words leave several, or none, the description names nothing, and
the utterance is read as said.

``described(index, text)`` gives the text with each description resolved so replaced by its device's label:
the rules that decide what is asked then read "The Bank, unlock it".
"""

from __future__ import annotations

import re

import numpy as np

from .category_words import categories_said
from .device_kinds import safes
from .door_words import DOOR_WORDS, doors_among, ways_in_by_maker
from .text_match import tokens

_VALVES = frozenset({"GasValve", "WaterValve"})
# head words, and the sort of device each stands for
_HEADS = {
    "valve": "valve", "tap": "valve", "stopcock": "valve", "阀门": "valve", "阀": "valve", "总阀": "valve",
    "box": "container", "safe": "container", "cabinet": "container", "cupboard": "container",
    "locker": "container", "chest": "container", "cage": "container", "drawer": "container",
    "箱子": "container", "箱": "container", "柜子": "container",
    "柜": "container", "盒子": "container", "盒": "container",
    "thing": "any", "one": "any", "东西": "any", "那个": "any", "玩意": "any",
}
# what a device holds or lets through, and the sort it makes the device
_HOLDS = {
    "gas": "GasValve", "propane": "GasValve", "lpg": "GasValve", "燃气": "GasValve", "煤气": "GasValve",
    "天然气": "GasValve", "water": "WaterValve", "自来水": "WaterValve",
    "cash": "safe", "money": "safe", "takings": "safe", "valuables": "safe", "jewellery": "safe", "jewelry": "safe",
    "passports": "safe", "documents": "safe", "deeds": "safe", "钱": "safe", "现金": "safe", "贵重": "safe",
    "首饰": "safe", "文件": "safe",
}
_EN_HEAD = "|".join(sorted((w for w in _HEADS if w.isascii()), key=len, reverse=True))
_ZH_HEAD = "|".join(sorted((w for w in _HEADS if not w.isascii()), key=len, reverse=True))
# "the box where we keep the cash overnight", "the valve that feeds the wok burners", "the box with the keys in":
# the clause runs to the end of the phrase
_EN_DESCRIPTION = re.compile(
    rf"\b(?:the|that|this)\s+(?:[a-z']+\s+){{0,2}}?(?P<head>{_EN_HEAD})s?\s+"
    rf"(?P<clause>(?:that|which|where|with|we|you|they|i|holding|feeding)\b[^,.;!?]*?)"
    rf"(?=\s*(?:[,.;!?]|$|\band\b|\bthen\b|\bplease\b))", re.I)
# "那个管燃气的阀门", "放钱的那个柜子": what it does, then 的, then the head
_ZH_USE = "管|放|装|存|通|供|接|控制|锁着"
_ZH_DESCRIPTION = re.compile(
    rf"(?:那个|这个)?(?P<clause>(?:{_ZH_USE})[^，。！？,.!?\s的]{{1,8}})的(?:那个|这个)?(?P<head>{_ZH_HEAD})")
# words of a clause that say nothing of which device
_NOT_WHICH = frozenset({"the", "that", "which", "where", "with", "we", "you", "they", "keep", "keeps", "kept",
                        "live", "lives", "feeds", "feed", "lets", "let", "through", "goes", "go", "into", "onto",
                        "for", "our", "your", "their", "its", "in", "to", "of", "on", "at", "all", "overnight",
                        "holding", "feeding", "is", "are", "has", "have", "put", "store", "stores", "use", "uses",
                        "a", "an", "it", "up", "off", "out", "back", "thing", "one", "box", "valve"})


def described(index, sensitive_rows: np.ndarray, text: str) -> str:
    """The text with each description of a sensitive device (one with a row in ``sensitive_rows``) that singles
    one out replaced by its label."""
    if not (_EN_DESCRIPTION.search(text) or _ZH_DESCRIPTION.search(text)):
        return text

    def resolve() -> str:
        sensitive = np.zeros(len(index.home.devices), dtype=bool)
        sensitive[index.table.row_device[sensitive_rows]] = True
        out = text
        for pattern in (_EN_DESCRIPTION, _ZH_DESCRIPTION):
            out = pattern.sub(lambda m: _label_of(index, sensitive, m) or m.group(0), out)
        return out
    return index.memo(("described", text), resolve)


def _label_of(index, sensitive: np.ndarray, match: re.Match) -> str | None:
    """The label of the one device the description singles out, or None."""
    home = index.home
    candidates = sensitive & _of_sort(index, _HEADS[match.group("head").lower()])
    clause = match.group("clause")
    holding = {word for word in _HOLDS if _says(clause, word)}
    if holding:
        candidates &= _holding(index, {_HOLDS[word] for word in holding})
    evidence = bool(holding)
    said = _which_words(clause, holding)
    by_name = np.zeros_like(candidates)
    for d in np.flatnonzero(candidates).tolist():  # only the candidates' names are read
        by_name[d] = _shares(said, home.devices[d])
    if by_name.any():
        candidates, evidence = by_name, True
    elif candidates.sum() > 1:  # "...to the range": the one in the room of a device the clause names
        rooms = {device.room for d, device in enumerate(home.devices)
                 if not candidates[d] and _shares(said, device, by_kind=True)}
        beside = candidates & np.array([device.room in rooms for device in home.devices])
        if beside.sum() == 1:
            candidates, evidence = beside, True
    if not evidence or candidates.sum() != 1:
        return None
    return home.devices[int(np.flatnonzero(candidates)[0])].label


def _which_words(clause: str, holding: set[str]) -> set[str]:
    """The words of a description's clause that may say which device: English words of three letters or more,
    Chinese pairs of characters after its verb ("放样品": 样品), neither what it holds ("the gas": that chose the
    valves) nor words of the clause's grammar."""
    rest = clause
    for word in holding:
        rest = re.sub(rf"\b{word}\b" if word.isascii() else word, " ", rest, flags=re.I)
    english = {w for w in tokens(rest) if w.isascii() and len(w) >= 3 and w not in _NOT_WHICH}
    chinese = re.sub(rf"^(?:{_ZH_USE})|[\x00-\x7f]", " ", rest)
    return english | {chinese[i:i + 2] for i in range(len(chinese) - 1) if " " not in chinese[i:i + 2]}


def _shares(said: set[str], device, by_kind: bool = False) -> bool:
    """Whether a device's label or room carries a word said, besides those of its kind ("Gas" of Boiler Gas)
    unless ``by_kind`` ("the range" names the Six Burner Range)."""
    own = f"{device.label} {device.room}"
    kind = set() if by_kind else {w for ws in categories_said(device.label).values() for w in ws}
    words = set(tokens(own)) - set(tokens(" ".join(kind)))
    return any(w in words if w.isascii() else w in own and not any(w in k for k in kind) for w in said)


def _of_sort(index, sort: str) -> np.ndarray:
    """Per device: a sensitive device of the sort a head word says (a valve; a locked box, never a door)."""
    categories = index.table.device_categories
    if sort == "valve":
        return np.isin(categories, list(_VALVES))
    if sort == "container":
        locks = categories == "Lock"
        boxes = locks & ~doors_among(index, locks, DOOR_WORDS)
        boxes[ways_in_by_maker(index.home.devices, index.home.floors)] = False
        return boxes | (locks & safes(index))
    return np.ones(len(categories), dtype=bool)


def _holding(index, sorts: set[str]) -> np.ndarray:
    """Per device: it holds or lets through what is said (a safe; a valve of that supply)."""
    out = np.isin(index.table.device_categories, [s for s in sorts if s != "safe"])
    return out | safes(index) if "safe" in sorts else out


def _says(clause: str, word: str) -> bool:
    return bool(re.search(rf"\b{word}\b", clause, re.I)) if word.isascii() else word in clause
