"""A home's rooms and floors as the words people say for them: full names, short forms, floors, kinds of room.

People drop floors and wings ("餐厅" for 一楼餐厅), say a floor for every room on it ("二楼", "upstairs" where
rooms.json records floors), and say a kind of room where the home's rooms have their own names ("卧室" where
they are 主卧 and 次卧). ``RoomWords`` holds every such form with the rooms it names, judged from the home's
own room names, and which devices stand in which rooms. Which rooms one utterance names, outside the device
names it says, is read by ``home_names``.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cached_property

import numpy as np

from .category_words import categories_said
from .floor_levels import relative_floors
from .home import Home
from .name_index import PhraseIndex, ordered
from .text_match import contains, join_tokens, remove_phrases, tokens

# Words for a kind of room -> the word whose first character the short forms of such rooms end in
# (主卫, 客卫: 卫生间; 主卧, 次卧: 卧室). See `HomeNames.mentioned_rooms`.
ROOM_KINDS = tuple((tokens(word), tokens(kind)) for word, kind in (
    ("卫生间", "卫生间"), ("洗手间", "卫生间"), ("厕所", "卫生间"), ("浴室", "卫生间"),
    ("卧室", "卧室"), ("卧房", "卧室"), ("院子", "院"), ("院落", "院")))  # 院子: 后院, 前院

# Words a household says for the same room. Chinese rooms are named for who sleeps there, by a word the family
# may swap for another (the 保姆间 is 阿姨房 at home; 老人房 is 爷爷屋), and end in 房, 屋, 间 or 室 alike
# (``ROOM_ENDINGS``); English has a few settled pairs. Each group's words are interchangeable inside a room's name.
ROOM_SYNONYMS = tuple(tuple(tokens(word) for word in group) for group in (
    ("保姆", "阿姨", "佣人", "工人"), ("老人", "爷爷", "奶奶", "姥姥", "姥爷", "外公", "外婆"),
    ("儿童", "孩子", "小孩", "宝宝"),
    ("master bedroom", "main bedroom", "primary bedroom"), ("living room", "lounge", "sitting room"),
    ("hallway", "hall"),
    ("kids room", "children's room", "childrens room", "kid's room"),
    ("cold room", "walk-in fridge", "walk-in cooler", "walk-in chiller", "cool room", "cold store"),
    ("庭院", "院子", "院落"), ("大堂", "前厅", "大厅"), ("冷库", "冻库", "冷藏库", "冷冻库"),
    ("包间", "包厢", "雅间")))
ROOM_ENDINGS = tuple(tokens("房屋间室"))


class RoomWords:
    """The room words of one home, and the rooms each names."""

    def __init__(self, home: Home, device_rooms: np.ndarray):
        self.aliases = room_aliases(home.rooms, home.floors)
        self.phrases = PhraseIndex(self.aliases)  # longest first, as words_said reads them
        self.tokens = {room: tokens(room) for room in home.rooms}
        self.full_names = frozenset(self.tokens.values())  # each room's whole name, as tokens
        self._rank = {room: i for i, room in enumerate(self.tokens)}
        self._rooms_with: dict[str, set[str]] = defaultdict(set)  # word -> rooms whose name holds it
        self._rooms_ending: dict[str, list[str]] = defaultdict(list)  # last word -> rooms of 2+ words
        for room, toks in self.tokens.items():
            for t in toks:
                self._rooms_with[t].add(room)
            if len(toks) >= 2:
                self._rooms_ending[toks[-1]].append(room)
        self.code = {room: i for i, room in enumerate(dict.fromkeys([*home.rooms, *device_rooms]))}
        self.device_codes = np.asarray([self.code[r] for r in device_rooms], dtype=np.int64)
        self.names_by_code = list(self.code)
        self._read: dict[tuple, tuple[str, ...]] = {}  # meant_by and expand, remembered (``_remembered``)

    def names_a_room(self, name: str) -> bool:
        """Whether a name (a parse's scope entry) means some room of this home: a room's name, a short form,
        a floor, or a word for a kind of room ("卧室" where the rooms are 主卧 and 次卧)."""
        said = self.tokens.get(name) or tokens(name)
        return name in self.code or said in self.aliases or bool(self.meant_by(said)) or \
            any(contains(said, word) and self.meant_by(kind) for word, kind in ROOM_KINDS)

    def words_said(self, utterance: str) -> list[tuple[str, ...]]:
        """The room names and short forms the utterance says, longest first, none inside another."""
        matched: list[tuple[str, ...]] = []
        for alias in ordered(self.phrases.found_in(tokens(utterance)), self.phrases.rank):  # longest first
            if not any(contains(m, alias) for m in matched):
                matched.append(alias)
        return matched

    def meant_by(self, word: tuple[str, ...]) -> list[str]:
        """Every room a room word may mean in this home, judged from the rooms' own names.

        The rooms whose name contains the word ("bedroom" in "Master Bedroom"), and, for a Chinese
        word, those whose name ends in its first character: short forms keep a word's first
        character, so 主卧 and 次卧 are bedrooms (卧室) and 主卫 is a bathroom (卫生间) too. A single
        Chinese character is no word.
        """
        if not word or (len(word) < 2 and not word[0].isascii()):
            return []
        return list(self._remembered(("meant_by", word), lambda: self._meant_by(word)))

    def _meant_by(self, word: tuple[str, ...]) -> list[str]:
        holding = set.intersection(*(self._rooms_with.get(t, set()) for t in set(word)))
        meant = {room for room in holding if _says_floor_whole(self.tokens[room], word)}
        if not word[0].isascii():
            meant.update(self._rooms_ending.get(word[0], ()))
        return ordered(meant, self._rank)

    def expand(self, names: list[str]) -> list[str]:
        """The rooms a parse's room names stand for: a short form or a floor is every room it names."""
        names = list(names)
        return list(self._remembered(("expand", *names), lambda: [
            room for r in names for room in self.aliases.get(self.tokens.get(r) or tokens(r), (r,))]))

    def _remembered(self, key: tuple, read) -> tuple[str, ...]:
        """``read()``, kept for ``key``: one utterance's parse, screen, ranking and plan ask the same of a
        building's rooms (a short form in every wing is hundreds of rooms) several times over."""
        found = self._read.get(key)
        if found is None:
            if len(self._read) >= _REMEMBERED:
                self._read.clear()
            found = self._read[key] = tuple(read())
        return found

    def first_by_name(self, codes: np.ndarray, n: int) -> list[str]:
        """The first ``n`` names, in sorted order, of the rooms with these codes ("" aside): read by code, a plan
        may stand in thousands of rooms."""
        codes = codes[self._name_rank[codes] >= 0]
        return [self.names_by_code[c] for c in codes[np.argsort(self._name_rank[codes])[:n]].tolist()]

    @cached_property
    def _name_rank(self) -> np.ndarray:
        """Per room code: its name's place in sorted order (-1 for "", no room)."""
        rank = np.full(len(self.names_by_code), -1, dtype=np.int64)
        named = sorted((name, code) for code, name in enumerate(self.names_by_code) if name)
        rank[np.asarray([code for _, code in named], dtype=np.int64)] = np.arange(len(named))
        return rank

    def devices_in(self, rooms) -> np.ndarray:
        """Per device: whether it is in one of these rooms (names the home does not have match nothing)."""
        wanted = np.zeros(len(self.code), dtype=bool)
        wanted[[self.code[r] for r in rooms if r in self.code]] = True
        return wanted[self.device_codes]

    def without_room_names(self, text: str) -> str:
        """The text without the home's room names, for reading its verbs: 玄关 (entrance) says no 关 (close)."""
        toks = tokens(text)
        return join_tokens(remove_phrases(toks, self.phrases.possible_in(toks)))


_AT_THE_DOOR = tokens("门口")  # "在门口" is at the door, any door: no short form of 家门口
_REMEMBERED = 512  # room readings kept per home (a few per utterance)
_NUMBER_BEFORE = frozenset("负地下零一二三四五六七八九十两0123456789")


def _says_floor_whole(room: tuple[str, ...], word: tuple[str, ...]) -> bool:
    """Whether the room's name holds the word, a number in it whole: 一楼 is not in 负一楼 or 十一楼."""
    n = len(word)
    at = [i for i in range(len(room) - n + 1) if room[i:i + n] == word]
    if not at or not (word[0] in _NUMBER_BEFORE and len(word[0]) == 1):
        return bool(at)
    return any(i == 0 or room[i - 1] not in _NUMBER_BEFORE for i in at)


def room_aliases(rooms: list[str], floors: dict[str, str] | None = None) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Token form -> the rooms it names, longest forms first: each full name, plus each trailing run of
    two or more tokens ("餐厅" for "一楼餐厅"; "卫生间" for every room ending in it), each leading run of
    two or more tokens several rooms share ("二楼"), plus each floor's name for every room on it
    (``floors``: room -> floor, where the home records floors) and "upstairs" / "downstairs" for the rooms on
    the floors they mean (``relative_floors``). People drop floors and wings, and
    "所有卫生间" means all of them."""
    full = {tokens(r): r for r in rooms if tokens(r)}
    aliases: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for toks, room in full.items():
        aliases[toks].add(room)
        for start in range(1, len(toks) - 1):
            if toks[start:] not in full and toks[start:] != _AT_THE_DOOR:
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
    # a room's number of three digits or more, said alone, is the room ("帮203的客人开门": 203包厢)
    numbered: dict[str, set[str]] = defaultdict(set)
    for toks, room in full.items():
        for t in toks:
            if t.isdigit() and len(t) >= 3:
                numbered[t].add(room)
    for number, owners in numbered.items():
        if len(owners) == 1 and (number,) not in full:
            aliases[(number,)] |= owners
    for room, floor in (floors or {}).items():
        if room in rooms and tokens(floor) and tokens(floor) not in full:
            aliases[tokens(floor)].add(room)
    for word, meant in relative_floors(set((floors or {}).values())).items():  # "upstairs" where floors are recorded
        if tokens(word) not in full:
            aliases[tokens(word)].update(room for room, floor in floors.items() if room in rooms and floor in meant)
    for toks, room in full.items():  # "in heron": Heron Cottage, a dwelling called by its own name alone
        if len(toks) == 2 and toks[1] in _DWELLINGS and toks[0].isalpha() and toks[0] not in _NOT_OWN_NAMES and \
                sum(t[0] == toks[0] for t in full) == 1 and (toks[0],) not in full and (toks[0],) not in aliases and \
                not categories_said(toks[0]):
            aliases[(toks[0],)].add(room)
    for toks, room in full.items():  # 阿姨房 for 保姆间: where the home has no room of that name itself
        for form in _synonym_forms(toks):
            if form not in full and form not in aliases:
                aliases[form].add(room)
    return {alias: tuple(sorted(owners)) for alias, owners in sorted(aliases.items(), key=lambda kv: -len(kv[0]))}


# the words a dwelling's name ends in, and the words before them that are no name of their own
_DWELLINGS = frozenset({"cottage", "cabin", "lodge", "chalet", "villa", "bungalow", "annexe", "annex", "barn", "yurt",
                        "cabana", "house", "apartment", "suite"})
_NOT_OWN_NAMES = frozenset({"guest", "guests", "main", "master", "staff", "owners", "owner", "family", "garden",
                            "pool", "coach", "boat", "summer", "winter", "bridal", "honeymoon", "junior", "senior",
                            "executive", "deluxe", "studio", "old", "new", "big", "little", "small", "top", "upper",
                            "lower", "front", "back", "east", "west", "north", "south", "gate", "tree", "farm",
                            "dog", "green", "white", "red", "blue", "party", "ice", "hen", "bath", "wash", "pump",
                            "boiler", "power", "store", "play", "club", "school", "guard", "hot", "sun", "glass"})


def _synonym_forms(name: tuple[str, ...]) -> set[tuple[str, ...]]:
    """The room's name with its last character swapped for another room ending and its words for their synonyms
    (``ROOM_SYNONYMS``), in any combination."""
    forms = {name}
    if name[-1] in ROOM_ENDINGS and len(name) >= 2:
        forms.update(name[:-1] + (end,) for end in ROOM_ENDINGS)
    for group in ROOM_SYNONYMS:
        for form in list(forms):
            for word in group:
                for i in range(len(form) - len(word) + 1):
                    if form[i:i + len(word)] == word:
                        forms.update(form[:i] + other + form[i + len(word):] for other in group if other != word)
    forms.discard(name)
    return forms
