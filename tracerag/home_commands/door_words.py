"""The words that say which door or lock a clause means: a door said and the words with it ("大门", "阳台门", "the
side gate"), every door ("unlock all the doors", "其他门都打开"), the lock pointed at ("进门那把锁"), and which
devices are "the doors" said.

A door word names a kind, so it is read with care: "门" is any door or gate, "door" a door (a lock's door too),
"gate" a gate; a safe is never a door.
"""

from __future__ import annotations

import re
import weakref

import numpy as np

from .category_words import DOOR_VERBS, NOT_A_DOOR, categories_said
from .device_kinds import safes
from .floor_levels import rooms_upstairs
from .text_match import tokens

DOOR_WORDS = frozenset({"门", "door", "gate"})
DOOR_SAID = re.compile(r"\b(?:door|gate)s?\b|门", re.I)
DOOR_TO_OR_OF = re.compile(r"\b(?:door|gate)s?\s+(?:of|to|into|for)\b", re.I)  # "the front door of flat 3"
# a door word said, and the words a lock's name may carry for it in either language (门 is door or gate; a gate
# is never a 门 said of a house door)
_DOOR_NAMES = {"door": frozenset({"door", "门"}), "gate": frozenset({"gate"}), "门": DOOR_WORDS}
# the words that make a door the house's way in
# the front of a shop said as one word ("Yale Shopfront"): its door, and the way in
FRONTAGES = frozenset({"shopfront", "storefront"})
ENTRANCE_WORDS = frozenset({"前", "入", "户", "大", "正", "进", "玄", "关", "防", "盗", "front", "main", "entry",
                            "entrance", "entryway", "foyer", "porch", "vestibule", *FRONTAGES})

# what a door's lock may be called for the door ("Staff Entrance", "Side Entry")
ENTRANCE_NOUNS = frozenset({"entrance", "entry", "entryway"})

# the way in said without a door word: "the (main / front / shop) entrance", "the way in"
ENTRANCE_SAID = re.compile(r"\b(?:(?:main|front|shop|building|street|public)\s+)?(?:entrance|entry|way\s+in)\b", re.I)


def door_nouns(text: str) -> frozenset[str]:
    """The words a lock's name may carry for the door the text says (门, door, gate; "doors" as door, "door" as
    门 too); all of them where it says none."""
    said = {t[:-1] if t in ("doors", "gates") else t for t in tokens(text)} & DOOR_WORDS
    return frozenset().union(*(_DOOR_NAMES[w] for w in said)) if said else DOOR_WORDS


def is_a_door(category: str, words: set[str], nouns: frozenset[str], place: set[str] = frozenset()) -> bool:
    """Whether a device (its category, the words of its name; ``place``: the words of its room) is one of "the
    doors" said (``nouns``): a device whose name says the word said; where a door is said, also a lock whose name
    says nothing but that it is a lock (a "Lock" on the porch, "Mudroom Deadbolt"; no safe, no 小金库) and a door
    or garage door whose name says no door word at all ("Big Red"; English "doors" are no Driveway Gate, and
    "the gates" only what is called a gate)."""
    if words & nouns:
        return True
    if not nouns & {"door", "门"} or words & (DOOR_WORDS | _OTHER_OPENINGS):
        return False
    if category == "Lock":  # a Ski Locker in the Ski Locker Room is named for its room, and still no door
        return (not words - place - _LOCK_WORDS or bool(words & FRONTAGES)) and \
            not _NO_DOOR_LOCK.search(" ".join(words))
    return category in ("Door", "GarageDoor")


def doors_among(index, devices: np.ndarray, nouns: frozenset[str], every: bool = False) -> np.ndarray:
    """The devices of the mask that are "the doors" said (``is_a_door``), never a safe (``device_kinds``). Each
    device is judged once per index and door word: "all the doors" of a building asks of thousands. ``every``:
    "all the doors" are said, and a cage's lock is none of them (it still lets one into the propane cage)."""
    if every:
        return doors_among(index, devices & ~_enclosures(index), nouns)
    home, categories = index.home, index.table.device_categories
    judged = _JUDGED.setdefault(index, {}).get(nouns)
    if judged is None:
        judged = _JUDGED[index][nouns] = np.full(len(home.devices), -1, dtype=np.int8)  # -1: not yet
    wanted = devices & ~safes(index)
    for d in np.flatnonzero(wanted & (judged < 0)).tolist():
        device = home.devices[d]
        words = {"lock"} if door_lock_by_model(device) else set(tokens(device.label))
        judged[d] = is_a_door(categories[d], words, nouns, set(tokens(device.room)))
    return wanted & (judged == 1)


_JUDGED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # per index: {door nouns: per device, 1 a door}
_ENCLOSURE = re.compile(r"\bcages?\b|笼", re.I)


def _enclosures(index) -> np.ndarray:
    """Per device: a lock of a cage, by its label or its room (the Cage Lock in the Propane Cage)."""
    return index.memo(("enclosures",), lambda: np.asarray(
        [d.category == "Lock" and bool(_ENCLOSURE.search(f"{d.label} {d.room}")) for d in index.home.devices],
        dtype=bool))


# what a lock's maker may call it that is no door's lock
_NO_DOOR_LOCK = re.compile(r"safe|locker|cabinet|box|flap|柜|箱", re.I)
_DOOR_LOCK = re.compile(r"deadbolt|\bdoor|smart\s*lock|门锁|智能锁", re.I)  # "Paxton Net2 Entry Door Controller"
# makers whose locks are door locks, whatever the model is called ("Ultion Nuki Plus", "Salto XS4")
_DOOR_LOCK_MAKERS = re.compile(r"\b(?:nuki|ultion|yale|august|schlage|kwikset|abloy|salto|ultraloq|danalock|tedee|"
                               r"lockly|conexis)\b|德施曼|凯迪仕|鹿客", re.I)


def lock_by_maker_said(devices, text: str) -> int | None:
    """The index of the one door lock whose own name is by a door-lock maker the text says ("open the nuki" of
    an Ultion Nuki Plus labelled Ultion, 德施曼开一下 of the 德施曼 Q50 labelled 家门); None where the text says no
    such maker, or several locks are of it."""
    said = {m.group(0).lower() for m in _DOOR_LOCK_MAKERS.finditer(text)}
    if not said:
        return None
    made = [d for d, device in enumerate(devices) if device.category == "Lock" and device.model and
            not _NO_DOOR_LOCK.search(device.model) and said & {m.group(0).lower()
                                                                 for m in _DOOR_LOCK_MAKERS.finditer(device.model)}]
    return made[0] if len(made) == 1 else None


def door_lock_by_model(device, in_its_room: bool = True) -> bool:
    """Whether a lock labelled only by its maker's words ("Kevo 99250", "YRD256", 德施曼Q50, "Salto Lock": each
    word of its label in its own name, or a model number) is a door's lock by that name ("Kwikset Kevo 99250
    Touch-to-Open Smart Lock", or a maker whose locks are door locks), and no safe, locker or cabinet.
    ``in_its_room``: a label that says its room besides ("Rowan Nuki" in Rowan Cottage) is one too; never so
    called the home's way in (``ways_in_by_maker``), but that room's door."""
    if device.category != "Lock" or not device.model:
        return False
    model = tokens(device.model)
    if not (_DOOR_LOCK.search(device.model) or _DOOR_LOCK_MAKERS.search(device.model)) or \
            _NO_DOOR_LOCK.search(device.model):
        return False
    label = _maker_words(device)
    if label and all(w in model or any(c.isdigit() for c in w) for w in label):
        return True
    room = {w for w in tokens(device.room) if w.isascii()}
    maker = [w for w in label if w not in room]
    # the rest a door-lock maker's name: a "Pool Gate" on the Pool Deck is called a gate, a "Stern Hatch" a hatch
    return in_its_room and 0 < len(maker) < len(label) and all(w in model for w in maker) and \
        bool(_DOOR_LOCK_MAKERS.fullmatch(" ".join(maker)))


_RECEPTION = frozenset({"lobby", "reception"})
_ZH_RECEPTION = frozenset({"大厅", "大堂", "前台", "前厅", "接待处", "接待室", "门厅"})
_NO_WAY_IN = frozenset({"fire", "emergency", "exit"})  # a fire door is held open or shut, nobody comes in by it
_ZH_NO_WAY_IN = re.compile(r"消防|安全出口|应急|紧急")  # 消防通道门: its 防 is no 防盗门's


# a way in for some, not the way in: "open the front door" is no Staff Entrance, no Side Entry, no Back Door in the hall
_SIDE_WAY = frozenset({"staff", "service", "side", "back", "rear", "delivery", "goods", "tradesmen", "trade"})


# a door out to where the household sits outside: guests are let in elsewhere ("Rowan Patio Door" beside its lock)
_GARDEN_SIDE = frozenset({"patio", "garden", "balcony", "terrace", "deck", "french", "sliding"})


def garden_side(label: str) -> bool:
    """Whether a door's label says it opens to a patio, garden, balcony or terrace."""
    return bool(set(tokens(label)) & _GARDEN_SIDE) or any(w in label for w in ("阳台", "露台", "推拉"))


def side_way(label: str) -> bool:
    """Whether a door's or a lock's label says it is a staff, service, side or back way in."""
    return bool(set(tokens(label)) & _SIDE_WAY)


# what a room by the way in is called: "main" or "front" said of it is then the way in's ("Main Entrance",
# "Front Porch"), and of any other room only which one it is ("Main Gallery", "Front Room")
_ENTRANCE_ROOMS = frozenset({"entrance", "entry", "entryway", "foyer", "porch", "vestibule", "hall", "hallway",
                             "lobby", "reception", "door", "doors", "gate", "step", "steps"})


def room_words(room: str) -> set[str]:
    """The words of a room's name as they speak of a door there: without "main" or "front" where the room is no
    room by the way in (the Jewel Case in the Main Gallery is no way in)."""
    words = set(tokens(room))
    if room.strip() in ("大厅", "正厅"):  # the 大 of 大厅: a hall, no 大门
        return words - {"大", "正"}
    return words if words & _ENTRANCE_ROOMS else words - {"main", "front"}


def no_way_in(label: str) -> bool:
    """Whether a door's label says nobody comes in by it (a fire door, an emergency exit, 消防通道门)."""
    return bool(set(tokens(label)) & _NO_WAY_IN) or bool(_ZH_NO_WAY_IN.search(label))


def says_way_in(device) -> bool:
    """Whether a door's or a lock's label, room or own name says it is the way in (the Front Door, the lock in the
    Entry, a Paxton "Entry Door Controller"), and it is no fire door, nor a staff or side way in."""
    words = set(tokens(f"{device.label} {device.model}")) | room_words(device.room)
    return bool(words & ENTRANCE_WORDS) and not words & _NO_WAY_IN and not side_way(device.label) and \
        not _ZH_NO_WAY_IN.search(device.label)


def named_by_maker(device) -> bool:
    """Whether a device's label is only words of its own (maker's) name, with "lock" or not, and names no other
    kind ("Salto", "Yale Conexis", "Salto Lock"; never "Front Door")."""
    label = _maker_words(device)
    return bool(label) and set(label) <= set(tokens(device.model)) and not categories_said(" ".join(label))


def _maker_words(device) -> list[str]:
    """The words of a lock's label but those that only say it is a lock ("Salto Lock": salto)."""
    return [w for w in tokens(device.label) if w not in _LOCK_WORDS]


def maker_named_at_reception(device) -> bool:
    """A lock called by its maker's name alone ("Salto") in a lobby or reception: the entrance's lock (a "Lobby
    Door" is named for its room, and says nothing of the way in)."""
    return device.category == "Lock" and named_by_maker(device) and \
        (bool(set(tokens(device.room)) & _RECEPTION) or device.room.strip() in _ZH_RECEPTION)


def ways_in_by_maker(devices, floors: dict[str, str]) -> list[int]:
    """The indices of the locks that are the way in by their maker's name alone: those at reception; else, where
    no door or lock says the way in, the home's one door lock so called (a restaurant's "Yale Conexis" in its
    dining room: the front door a visitor is let in by, though "unlock please" still asks which lock), never one
    upstairs (``floors``: room -> floor; a flat's 德施曼 over the shop is no way in to the shop)."""
    at_reception = [d for d, device in enumerate(devices) if maker_named_at_reception(device)]
    if at_reception or any(device.category in ("Door", "Lock") and says_way_in(device) and
                           not _NO_DOOR_LOCK.search(device.label) for device in devices):  # 前台's 钱箱: no door
        return at_reception
    upstairs = rooms_upstairs(floors)
    by_maker = [d for d, device in enumerate(devices)
                if door_lock_by_model(device, in_its_room=False) and device.room not in upstairs]
    return by_maker if len(by_maker) == 1 else []


# the rooms no flat's own door opens into (the lock on a bedroom's or the bathroom's door is no way in)
_PRIVATE_ROOM = re.compile(r"bed|bath|toilet|wc|kitchen|study|nursery|卧|卫|厕|厨|书房|儿童")


def dwelling_way_in(devices, floors: dict[str, str]) -> list[int]:
    """The index of the lock that is the household's own door where the home lives above a shop or workshop: the
    one door lock upstairs, called by its maker alone (a 德施曼 in the flat's 客厅 over the car wash: 家门,
    入户门), in no bedroom, bathroom or kitchen; none where there are several or none."""
    upstairs = rooms_upstairs(floors)
    locks = [d for d, device in enumerate(devices) if device.category == "Lock" and device.room in upstairs]
    if len(locks) != 1:
        return []
    device = devices[locks[0]]
    return locks if door_lock_by_model(device, in_its_room=False) and not _PRIVATE_ROOM.search(
        device.room.lower()) else []


def says_door_locks(words) -> bool:
    """Whether the words said for locks say a door's ("门锁", "door locks"): a safe's lock is none of them."""
    return any("门" in w or "door" in w for w in words)


# what opens and is no door ("Roof Hatch")
_OTHER_OPENINGS = frozenset({"hatch", "window", "skylight", "vent", "flap", "窗"})
_LOCK_WORDS = frozenset({"lock", "deadbolt", "latch", "smart", "锁", "智", "能"})


def door_qualifiers(clause: str) -> list[tuple[str, ...]]:
    """The words that say which door the clause means, one tuple of tokens per door said: "开一下大门" -> [("大",)],
    "打开二楼的门" -> [("二", "楼")], "open the side gate" -> [("side",)], "开门" -> [()] (any door)."""
    out = []
    for match in _ZH_DOOR.finditer(clause):
        before = _ZH_THAT.sub("", clause[max(0, match.start() - 6):match.start()].rstrip("的 ")).rstrip("的 ")
        cut = max((before.rfind(c) for c in _ZH_STOP), default=-1)
        said = tokens(_ZH_EVERY.sub(" ", before[cut + 1:]))
        # 院子, 铺子: 子 names nothing; 仓库里的门, 家里的门: nor does 里
        out.append(tuple(t for t in said if t not in ("子", "里")) if len(said) > 1 else said)
    for match in _EN_DOOR.finditer(clause):
        word = match.group(1)
        before = _WORD_BEFORE.search(clause, 0, match.start(1)) if word == "a" else None
        if before and before.group(1) not in _EN_STOP | _EN_FILLERS:  # "unlock sweet a door": the letter A's door
            out.append((before.group(1), "a"))
            continue
        # "the door at the back", "the big doors at the front": which one, said after it too
        after = _SIDE_AFTER.match(clause, match.end())
        side = (after.group(1).lower(),) if after else ()
        out.append(side if word is None or word in _EN_STOP else (*tokens(word), *side))
    return out


_SIDE_AFTER = re.compile(r"\s+(?:at|round|around|on|to)\s+the\s+(back|front|side|rear)\b", re.I)


def every_door(clause: str) -> bool:
    """Whether the clause speaks of every door, not of one ("unlock all the doors", "其他门都打开", "open the
    doors"): then no door is the house's way in alone."""
    return bool(_EVERY_DOOR.search(clause))


# the words that say every one of a kind, not which one ("其他门", "所有的门")
_ZH_EVERY = re.compile(r"所有的?|其[他它]的?|别的?|全部的?|[每各][个扇道]?|这些|那些")
_EVERY_DOOR = re.compile(r"\b(?:all|every|each|both|other)\b(?:\s+(?:the|my|our|of|other))*\s+(?:[a-z]+\s+)?"
                         r"(?:doors?|gates?)\b|\b(?:doors|gates)\b|(?:所有|其[他它]|别的|全部|每|各)[^，,。；;]{0,4}门|门都|"
                         r"门全", re.I)
_ZH_DOOR = re.compile(rf"(?<![{DOOR_VERBS}阀])门(?![{NOT_A_DOOR}锁])")  # 阀门 is a valve, 门锁 a lock
_ZH_THAT = re.compile(r"(?:那|这)(?:个|扇|道)?$")  # "院子那个门": the courtyard's door, 那个 says nothing of which
_ZH_STOP = "开打把了一下个给帮我请将关锁升拉抬的，,。 和与跟及、"  # "202和203的门": the rooms said, no door word
_EN_DOOR = re.compile(r"(?:\b([a-z]+(?:-[a-z]+)*(?:['’]s)?)\s+)?"  # the word before it, a possessive whole
                      r"(?<!garage )\b(?:door|gate)s?\b(?!\s*(?:lock|bell|way|mat))", re.I)
_EN_STOP = frozenset({"the", "a", "an", "my", "our", "your", "this", "that", "open", "unlock", "unlatch", "all",
                      "every", "both", "lift", "raise", "to", "and", "main"})
_EN_FILLERS = frozenset({"up", "please", "pls", "me", "us", "just", "now", "you", "in", "through", "for", "is", "was"})
_WORD_BEFORE = re.compile(r"\b([a-z]+)\s+$")


def lock_qualifiers(clause: str) -> list[set[str]]:
    """The words that say which lock a Chinese clause means, where it points at one ("那把锁", "这个锁"): "帮我把进门
    那把锁打开" -> [{"进", "门"}]; "把那把锁打开" and "开锁" say none."""
    out = []
    for match in _ZH_LOCK.finditer(clause):
        before = clause[max(0, match.start() - 6):match.start()].rstrip("的 ")
        cut = max((before.rfind(c) for c in _ZH_STOP), default=-1)
        words = set(tokens(before[cut + 1:]))
        if words:
            out.append(words)
    return out


_ZH_LOCK = re.compile(r"(?:那|这)(?:把|个)?的?锁")


def describes_door(qualifier: set[str], words: set[str], loose: bool = False, gateless: bool = False) -> bool:
    """Whether the words said with a door are the device's: its own words, or, said in the other language (or
    ``loose``: no door's own words fit, said in English), the house's way in ("the front door" of 入户门锁, "前门"
    of a Front Door, "the front door" of the Blue Door in the Entry); 大门 and 正门 too where no gate stands
    (``gateless``: an office's or a flat's front door); loose, "the back door" of the door to the garden and "the
    restaurant door" of the way in."""
    if all(any(w == d or len(w) >= 3 and len(d) >= 3 and w.isascii() and (w.startswith(d) or d.startswith(w))
               or len(w) >= 4 and len(d) >= len(w) + 3 and w.isascii() and d.endswith(w)
               for d in words) for w in qualifier):  # "the doggy door": the Dog Door; "the house door": Farmhouse
        return True
    other_script = all(w.isascii() for w in qualifier) != all(w.isascii() for w in words & ENTRANCE_WORDS)
    english = all(w.isascii() for w in qualifier)  # "the front door" is any house's way in; 大门 is a name
    home = qualifier == {"家"}  # 家门, the home's door, is its way in whatever it is called
    if "家" in words and (qualifier - _HOME_SAID == {"家"} or qualifier and qualifier <= {"入", "户"}):
        return True  # 家门, 楼上家门, 入户门: the door called 家门, or the flat's own (``dwelling_way_in``)
    # 入户门, 防盗门, 玄关门 say the flat's own way in where no door is called so (大门 and 前门 may be a gate's name)
    entry = loose and (qualifier <= _FLAT_ENTRY or gateless and qualifier <= _MAIN_DOOR)
    if loose and english and qualifier and qualifier <= _BACK and words & _OUT_BACK:
        return True  # "the back door" where no door is called so: the one to the garden or the yard
    if loose and english and qualifier and qualifier <= _PUBLIC_SIDE and words & ENTRANCE_WORDS:
        return True  # "the restaurant door", "the customer door": the way in the public comes by
    return bool(qualifier) and (qualifier <= ENTRANCE_WORDS or home) and bool(words & ENTRANCE_WORDS) and \
        (other_script or loose and english or home or entry)


_FLAT_ENTRY = frozenset({"入", "户", "防", "盗", "玄", "关"})
_HOME_SAID = frozenset({"楼", "上"})  # 楼上家门: the home's door still
_BACK = frozenset({"back", "rear"})
_OUT_BACK = frozenset({"garden", "yard", "backyard", "patio"})
_PUBLIC_SIDE = frozenset({"restaurant", "customer", "customers", "client", "clients", "visitor", "visitors",
                          "public", "cafe", "café", "salon", "surgery", "clinic"})
_MAIN_DOOR = frozenset({"大", "正"})
