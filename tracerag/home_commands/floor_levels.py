"""Which floors "upstairs" and "downstairs" mean, read from the names of the floors a home records.

People say where a room is relative to the floor they live on: "the lights upstairs" where rooms.json says
"Ground Floor" and "First Floor", 楼下的灯 where it says 一楼 and 二楼. The floors' own names order them
(a basement or cellar below, the ground, main or parlour floor, then the numbered ones, an attic or roof on
top); the floor people enter at is the main one. Upstairs is every floor above it; downstairs is the main
floor and every floor below it ("silence the siren downstairs" is the basement's as much as the hall's).
Where the floors cannot all be ordered, or there is only one, the words mean nothing and stay an unresolved
place, asked about.
"""

from __future__ import annotations

import re

_UP = ("upstairs", "楼上")
_DOWN = ("downstairs", "楼下")

_BELOW = re.compile(r"basement|cellar|lower\s+(?:level|ground|floor)|garden\s+level|underground|"
                    r"地下|负[一二三1-3]|^-[1-3]|^b[1-3]\b", re.IGNORECASE)
_MAIN = re.compile(r"ground|main|parlou?r|entry|street|downstairs|楼下|^g$|^gf$", re.IGNORECASE)
_TOP = re.compile(r"attic|loft|roof|top|upper|upstairs|penthouse|阁楼|顶楼|天台|屋顶|楼上", re.IGNORECASE)
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
             "fifth": 5, "5th": 5}
_ZH_NUMBERS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6}
_ZH_FLOOR = re.compile(r"^([一二两三四五六1-6])\s*[楼层fF]$")
_NUMBERED = re.compile(r"\b(first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|[1-6])\b", re.IGNORECASE)


def _level(name: str, main_named: bool) -> float | None:
    """The floor's height among the home's: below ground -1, the main floor 0, a numbered floor its number
    (less one where no floor is called ground or main: the American first floor is the ground), the top above
    all. None where the name says no height ("East Wing")."""
    text = name.strip()
    if _BELOW.search(text):
        return -1
    if _MAIN.search(text):
        return 0
    zh = _ZH_FLOOR.match(text)
    if zh:
        number = _ZH_NUMBERS.get(zh.group(1)) or int(zh.group(1))
        return number - 1
    numbered = _NUMBERED.search(text)
    if numbered:
        word = numbered.group(1).lower()
        number = _ORDINALS.get(word) or int(word)
        return number if main_named else number - 1
    if _TOP.search(text):
        return 99
    return None


def _above_and_below(floors: set[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the floors above the main one, the main one and those below), where every floor's name gives its height
    and there are two or more; ((), ()) otherwise."""
    main_named = any(_MAIN.search(f) for f in floors)
    levels = {floor: _level(floor, main_named) for floor in floors}
    if len(floors) < 2 or any(level is None for level in levels.values()):
        return (), ()
    main = min((level for level in levels.values() if level >= 0), default=None)
    if main is None:
        return (), ()
    return (tuple(sorted(f for f, level in levels.items() if level > main)),
            tuple(sorted(f for f, level in levels.items() if level <= main)))


def rooms_upstairs(floors: dict[str, str]) -> set[str]:
    """The rooms on a floor above the one people enter at (``Home.floors``: room -> floor): a flat over a shop."""
    up, _ = _above_and_below(set(floors.values()))
    return {room for room, floor in floors.items() if floor in up}


def relative_floors(floors: set[str]) -> dict[str, tuple[str, ...]]:
    """"upstairs" / "楼上" and "downstairs" / "楼下" -> the floors each means in this home, where every floor's
    name gives its height, at least one floor stands above the main one, and no floor is itself called so."""
    up, down = _above_and_below(floors)
    if not up:
        return {}
    said = {f.strip().lower() for f in floors}
    out = {}
    for words, meant in ((_UP, up), (_DOWN, down)):
        for word in words:
            if word not in said:
                out[word] = meant
    return out
