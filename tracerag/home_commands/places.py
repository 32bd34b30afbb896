"""The places an utterance says that the home cannot resolve: asked about, never widened to the whole home.

"turn off the first floor lights" where no floors are recorded, "打开阳光房所有的灯" in a flat with no sunroom,
"turn on the lights in the orchard" on a farm without one: a plan over every light would act on what was not
asked. Two readings: words for a floor or a kind of room (either language) that are no room, floor or room kind
of the home; and, in English, a place said after "in the" / "inside my" ... whose words are no word of the home
at all (its rooms, labels, words for kinds), nor a word for a time or a position ("in the morning", "in the
corner"). A sensitive command is held to more: ``place_not_exact`` says whether a place said cannot be resolved
whole ("the summer kitchen" where only a Kitchen is, 仓库的门锁), and then nothing sensitive is asked for.
"""

from __future__ import annotations

import re
import weakref

import numpy as np

from .category_words import categories_said, normalised
from .spelling import home_runs, home_words
from .text_match import contains, join_tokens, tokens

# Words for a place in a home: a floor, or a kind of room. One the home cannot resolve is asked about, never
# widened to the whole home ("turn off the first floor lights" where no floors are recorded).
_PLACE_EN = re.compile(
    r"\b(?:(?:first|second|third|fourth|fifth|ground|top|upper|lower|1st|2nd|3rd|4th|5th)\s+(?:floor|storey|story)|"
    r"upstairs|downstairs|basement|attic|cellar|wine\s+cellar|guest\s+(?:house|room|bedroom)|sunroom|sun\s+room|"
    r"nursery|playroom|pantry|porch|patio|deck|backyard|front\s+yard|yard|garden|hallway|kitchen|bathroom|"
    r"bedroom|living\s+room|dining\s+room|family\s+room|laundry\s+room|media\s+room|office|study|den|garage|"
    r"balcony|terrace|gym|library|closet|mudroom|utility\s+room|hall|hayloft|loft|shed|workshop|greenhouse|"
    r"conservatory|pool\s*(?:side|house)?|foyer|lobby|mezzanine|rec(?:reation)?\s+room|game\s+room|sauna|"
    r"boathouse|carport|driveway|gazebo|pergola|courtyard|stables?|wine\s+room)\b", re.IGNORECASE)
_PLACE_ZH = re.compile("|".join((
    r"[一二三四五六七八九十两0-9]+楼", "楼上", "楼下", "地下室", "阁楼", "顶楼", "厨房", "卫生间", "洗手间",
    "浴室", "卧室", "主卧", "次卧", "客厅", "餐厅", "书房", "车库", "阳台", "玄关", "走廊", "过道", "花园",
    "院子", "储藏室", "洗衣房", "衣帽间", "儿童房", "客房", "老人房", "健身房", "影音室", "茶室", "露台",
    "阳光房", "游?泳池边?", "花房", "温室", "酒窖", "地窖", "杂物间", "工作室", "车棚", "凉亭", "庭院", "前院", "后院",
    "天台", "地库", "保姆房", "琴房", "棋牌室", "桑拿房", "储物间", "洗衣间", "起居室", "会客厅",
    # rooms of a shop, a restaurant or a farm: "把仓库卷闸打开" where no 仓库 is, the shutter is not the home's
    "仓库", "库房", "货仓", "冷库", "后厨", "包厢", "办公室", "会议室", "休息室", "更衣室", "宿舍", "值班室", "门卫室",
    "机房", "配电房", "配电室", "锅炉房", "车间", "厂房", "停车场", "菜园", "果园", "鱼塘", "楼梯间", "档案室",
    "财务室", "药房", "诊室",
    # another premises: 隔壁的卷闸, 分店的门 are not this home's
    "隔壁", "分店", "总店", "新店", "老店", r"[一二三四五六七八九十0-9]+号店")))


def unresolved_places(index, text: str) -> list[str]:
    """The places the text says that this home cannot resolve: a floor or a kind of room that is no room, floor
    or room kind of the home ("bedroom" is the Master Bedroom), and no part of a device's name said ("the
    Upstairs Hallway Light", "Kitchen TV")."""
    plain = normalised(text)
    kind_words = [word for words in categories_said(plain).values() for word in words]
    out = []
    for match in (*_PLACE_EN.finditer(plain), *_PLACE_ZH.finditer(plain)):
        place = match.group(0)
        said = tokens(place)
        if any(len(word) > len(place) and place in word for word in kind_words):
            continue  # part of a word for a kind of device: 车库门, "garage door"
        if index.rooms.names_a_room(place) or said in index.rooms.aliases or index.names.carrying(said).any() or \
                any(contains(tokens(floor), said) for floor in set(index.home.floors.values())):
            continue
        out.append(place)
    out += [p for p in _places_after_in(index, plain) if not any(p in o or o in p for o in out)]
    out += [p for p in _numbered_places(index, plain) if not any(p in o for o in out)]
    return out + [p for p in _latin_places(index, plain) if not any(p in o for o in out)]


_NUMBERED = re.compile(r"\b([a-z]+)\s*(\d{1,4}[a-z]?)\b")


def _numbered_places(index, plain: str) -> list[str]:
    """Rooms said by a number none of the home's rooms of that name has: "the blinds in year 3" where the rooms
    are Year 5 and Year 6 (a class that is not this school's), "room 9" in a house of four rooms."""
    numbered = {tuple(tokens(room)) for room in index.home.rooms if re.search(r"\d", room)}
    firsts = {words[0] for words in numbered if len(words) > 1}
    return [m.group(0) for m in _NUMBERED.finditer(plain) if m.group(1) in firsts
            and tuple(tokens(m.group(0))) not in numbered and not index.rooms.names_a_room(m.group(0))
            and not index.names.label_phrases.found_in(tokens(m.group(0)))]


# a place named in Latin letters in a Chinese sentence, before 的 or 里 ("KTV的灯", "VIP包间里的空调"; never a verb
# said before a room, "increase客厅的音量"); not an app, the wifi or a word of the home ("Sonos的音量" where a Sonos is)
_LATIN_PLACE = re.compile(r"(?<![a-z0-9])([a-z][a-z0-9]+)\s*(?:包间|包厢|房间?|室|厅|区)?(?:的|里)")
_NOT_LATIN_PLACES = frozenset({"app", "wifi", "wi-fi", "ai", "ok", "pm", "am"})


def _latin_places(index, plain: str) -> list[str]:
    """The places a Chinese text names in Latin letters that are no word of this home (``_LATIN_PLACE``)."""
    if plain.isascii():
        return []
    known, _ = _places_of(index)
    return [m.group(1) for m in _LATIN_PLACE.finditer(plain)
            if m.group(1) not in known and m.group(1) not in _NOT_LATIN_PLACES]


def only_floors_of_a_label(index, text: str, places: list[str]) -> bool:
    """Whether every place the home cannot resolve is a floor, said beside a device's label of two words or more
    and nothing said of several: "unlock the suite C door upstairs" where no floors are recorded names its door,
    the floor only says where it is ("the lights upstairs", "all the doors upstairs and the Hall Lamp" still ask
    which floor)."""
    plain = normalised(text)
    several = _SEVERAL.search(plain) or any(re.search(rf"\b{re.escape(word)}(?:s|es)\b", plain)
                                            for words in categories_said(plain).values() for word in words)
    return not several and all(_FLOOR.fullmatch(normalised(place)) for place in places) and any(
        len(label) > 1 for label in index.names.label_phrases.found_in(tokens(text)))


_SEVERAL = re.compile(r"\b(?:all|every|each|both|whole|everything)\b|都|所有|全部")
_FLOOR = re.compile(r"(?:first|second|third|fourth|fifth|ground|top|upper|lower|1st|2nd|3rd|4th|5th)\s+"
                    r"(?:floor|storey|story)|upstairs|downstairs|[一二三四五六七八九十两0-9]+楼|楼上|楼下")


def _places_after_in(index, text: str) -> list[str]:
    """The places said after "in the", "inside my" ... whose words are no word of this home and no word for a
    time or a position: "the orchard", "the sugar shack"; a room's other name is its ("the hall": the Hallway)."""
    known, _ = _places_of(index)
    out = []
    for match in _IN_THE.finditer(text):
        words = _phrase(match)
        # "the valeting room": a room, and its own word no word of the home ("the wash room" is the Washroom)
        said = [w for w in words if w not in _A_ROOM] if "".join(words) not in known else []
        if said and not any(_known(w, known) or w in _NOT_PLACES or w.rstrip("s") in _NOT_PLACES for w in said):
            out.append(" ".join(words))
    return out


_A_ROOM = frozenset({"room", "rooms"})  # what says a place is a room, not which one


def _known(word: str, known: frozenset[str]) -> bool:
    """Whether a word said is one of the home's, plural or not, or made of its words ("the lock-up": Lock-up)."""
    return word in known or word.rstrip("s") in known or \
        "-" in word and all(part in known or part.rstrip("s") in known for part in word.split("-") if part)


def _phrase(match: re.Match) -> list[str]:
    """The words of the place a match says, up to the first that ends it ("the barn and" -> barn)."""
    words = []
    for word in match.group(1).split():
        if word in _PHRASE_ENDS:
            break
        words.append(word)
    return words


_PLACES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # per index: its place words, its room names


def _places_of(index) -> tuple[frozenset[str], tuple[str, ...]]:
    """The home's English words with those of the rooms as said, and its rooms' names and the forms said for them
    (阿姨房 for 保姆间), read once per index."""
    built = _PLACES.get(index)
    if built is None:
        forms = [join_tokens(alias) for alias in index.rooms.aliases]
        known = home_words(index) | {w for form in forms if form.isascii() for w in form.split()}
        built = _PLACES[index] = (frozenset(known), (*index.home.rooms, *forms))
    return built


def place_not_exact(index, text: str) -> bool:
    """Whether the text says a place the home cannot resolve whole: a sensitive command is then asked for
    nowhere ("disarm the alarm in the guest cottage" where a Guest Room is; "preheat the oven in the summer
    kitchen"; "仓库的门锁打开" in a home with no 仓库). English: a place after "in the", "at the" ..., or that a
    door is said to be of or lead into ("the door of flat 3B"), with a word no word of the home; Chinese: the
    two or three characters before 的 or 里 that are no room, label or word
    for a kind of the home."""
    plain = normalised(text)
    known, rooms = _places_of(index)
    for match in (*_AT_THE.finditer(plain), *_DOOR_OF.finditer(plain)):
        words = _phrase(match)
        # a possessive is its word ("in the manager's office": the Manager's Office)
        words = [re.sub(r"['’]s?$", "", w) for w in words]
        if words and any(not _known(w, known) and w not in _NOT_PLACES for w in words):
            return True
    if plain.isascii():
        return False
    runs = home_runs(index)
    for match in _ZH_OF.finditer(plain):
        before = re.sub(r"(?:里面|里|那边)$", "", _ZH_LEAD.sub("", match.group(1)))
        after = plain[match.end():match.end() + 2]
        if not before or not (after in runs or categories_said(plain[match.end():match.end() + 4])):
            continue  # "是猫碰的": no device said after it
        if before in ("房间", "号房", "号房间") and plain[:match.start()][-1:].isdigit():
            continue  # "203房间的门锁": a room said by its number (which room, the rooms said tell)
        said = [before[-n:] for n in (2, 3) if len(before) >= n]
        # a room said by its first character ("店里": 店面), or two or three of a name or room
        pieces, firsts = _room_pieces(index, rooms)
        if not (any(s in runs or s in pieces or s in _ZH_NOT_PLACES for s in said) or
                index.rooms.names_a_room(before) or  # 院子: the 后院, the one yard
                len(before) == 1 and (before in firsts or before in _ZH_NOT_PLACES)):
            return True
    return False


_ROOM_PIECES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # per index: see _room_pieces


def _room_pieces(index, rooms: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """Every run of two or three characters in the rooms' names and forms, and their first characters: what
    ``place_not_exact`` looks a place up in, once per index instead of a scan of every room per place said."""
    built = _ROOM_PIECES.get(index)
    if built is None:
        pieces = {room[i:i + n] for room in rooms for n in (2, 3) for i in range(len(room) - n + 1)}
        built = _ROOM_PIECES[index] = (frozenset(pieces), frozenset(room[0] for room in rooms if room))
    return built


_AT_THE = re.compile(r"(?<!plug )(?<!log )(?<!sign )(?<!check )(?<!tune )(?<!fill )(?<!hand )(?<!put it )"
                     r"\b(?:in|inside|within|at|out at|over at)\s+(?:the|my|our)\s+"
                     r"([a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2})")
# the place a door is said to be of or lead to ("the door of flat 3B", "the door into unit 4")
_DOOR_OF = re.compile(r"\b(?:door|gate|lock)s?\s+(?:of|into)\s+(?:the\s+|my\s+|our\s+)?"
                      r"([a-z0-9][a-z0-9'-]*(?:\s+[a-z0-9][a-z0-9'-]*){0,2})")
_ZH_LEAD = re.compile(r"^.*(?:[把将给帮在到去让往请]|一下)")  # "开一下家里的门": 家, no 一下家
_ZH_OF = re.compile(r"([\u4e00-\u9fff]{2,3})(?:的|里的|里面的|那边的)")
_ZH_NOT_PLACES = frozenset("家 我们 你们 他们 我家 家里 这个 那个 这边 那边 今天 明天 刚才 其他 其它 别的 所有 "
                           "全部 外面 里面 上面 下面 旁边 屋里 小孩 孩子 老人 爸爸 妈妈 一下 最大 最小".split())


# a place said after a preposition of place and "the" / "my" / "our" ("in the orchard", "out in the sugar shack");
# not the particle of a verb ("plug in my dongle")
_IN_THE = re.compile(r"(?<!plug )(?<!log )(?<!sign )(?<!check )(?<!tune )(?<!fill )(?<!hand )(?<!put it )"
                    r"\b(?:in|inside|within)\s+(?:the|my|our)\s+([a-z][a-z'-]*(?:\s+[a-z][a-z'-]*)?)")
_PHRASE_ENDS = frozenset({"and", "or", "but", "then", "please", "pls", "plz", "now", "thanks", "to", "for", "with",
                          "so", "too", "again", "of", "as", "if", "when", "while", "because", "is", "are", "was",
                          "were", "that", "which", "in", "at", "on", "by", "near", "inside", "beside",
                          "from", "open", "shut", "closed", "off", "ajar", "wide", "up", "down"})
# ("the meter (in) the alley", "the kitchen pls", "prop the fire door in the pool hall open")
# what follows "in the" and is no place of a home: times, ways, positions within a room, the home itself
_NOT_PLACES = frozenset("""
morning afternoon evening night nighttime daytime day week weekend meantime meanwhile moment minute second hour
while bit future past end beginning middle center centre corner front back top bottom side left right way
dark light sun shade cold heat rain wind house home place room rooms area areas building whole entire same other
next last first mood world background foreground window windows wall walls ceiling floor floors air mean
meter manifold regulator cylinder bottle tank supply
""".split())  # (and the fixtures a supply is turned on at: "the gas at the meter in the alley")


# a place after "in" said by one word ("the safe in the flat"), where a word for a room or a door follows none
_IN_PLACE = re.compile(r"\b(?:in|inside)\s+(?:the|my|our)\s+([a-z]+)\b(?!\s+(?:room|door|gate|shed|house|office)\b)",
                       re.I)


def places_after_in(index, text: str) -> list[str]:
    """The rooms a place said after "in" stands for where no room is named so ("the safe in the flat": the Flat
    Kitchen and the Flat Landing; "the gas at the meter in the alley": the Back Alley); none where the word names
    no room."""
    rooms: list[str] = []
    for match in _IN_PLACE.finditer(text):
        rooms += index.rooms.meant_by(tuple(tokens(match.group(1))))
    return rooms


def in_or_named_for(index, rooms: list[str], devices: np.ndarray) -> np.ndarray:
    """Per device of ``devices`` (indices): it stands in one of the rooms, or its label carries one's name
    ("Luggage Room Door"). Only these devices are read: a home of 20,000 devices has a few dozen sensitive ones."""
    there = index.rooms.devices_in(rooms)[devices]
    names = [name for room in rooms if (name := tuple(w for w in tokens(room) if w != "the"))]
    return np.asarray([bool(inside) or any(contains(tokens(index.home.devices[d].label), name) for name in names)
                       for d, inside in zip(devices.tolist(), there.tolist(), strict=True)], dtype=bool)
