"""Someone let in: "let them into the bunkhouse", "buzz the courier in".

Letting someone in asks for a door (``room_doors`` finds which), and the person it lets in names no device: "let
the cleaner in" is no Robot Cleaner. Who comes in also says where: a visitor at the house's way in, the cows into
the barn, a car through the gate, and the speaker at a door only they know. Chinese 让…进来 is read so only of a
pronoun, a short name or a person said by what they are (让他进来, 让送氧气瓶的师傅从后门进来): 让 says "let" and
"make" alike, and never of the speaker, the sun, the air or an animal.
"""

from __future__ import annotations

import re

# whom: a pronoun or "the" and a word ("let them in", "let the cleaner in the side door"); or a few words
# ("Mrs Hale's daughter", "the milk tanker"), let "in" only where the clause ends or says where ("let the Saturday
# girl in at the shop"), never "in the hall" of something left as it is ("let the lights stay in the hall"). The air,
# the light or the rain let in come through a window: nobody is let in.
_NATURE = r"(?:air|breeze|wind|light|daylight|sun|sunlight|sunshine|heat|warmth|cold|rain|water|smoke|steam|fresh|cool)"
_WORD = rf"(?!{_NATURE}\b)[\w']+"
_SHORT = rf"(?:him|her|us|me|them|(?:the|my|our|a|an)\s+{_WORD})"
_LONG = rf"{_WORD}(?:\s+{_WORD}){{0,2}}?"
_IN_HERE = (r"in(?=\s*(?:$|[^\w\s]|(?:please|pls|now|for|at|through|from|quickly|so|and|then|by|"
            r"the\s+[\w' ]{0,30}?(?:door|gate|entrance|way))\b))")
_MOVING = r"(?:(?:drive|come|walk|get|step|pull|roll)\s+)?"
_INTO = r"(?:in(?:to)?|(?:up|down)\s+(?:on)?to|through)\b"  # "let the crew down onto the pontoon"
_INTO_HERE = rf"(?:into|(?:up|down)\s+(?:on)?to|through|{_IN_HERE})\b"
PERSON_IN = rf"(?:{_SHORT}\s+{_MOVING}{_INTO}|{_LONG}\s+{_MOVING}{_INTO_HERE})"  # "them in", "Mrs Hale's daughter in"
PERSON_IN_HERE = rf"(?:{_SHORT}\s+in\b|{_LONG}\s+{_IN_HERE})"  # let in where someone is, not into somewhere
# 让他进来, 让客人进来 (让我进去: the speaker, at a door only they know; 让阳光进来: the sun, through a window)
# 让那位遛狗的先生进来, 让送氧气瓶的师傅从后门进来: someone said by what they are, by a door said or none
_ZH_PERSON = (r"(?:先生|女士|小姐|师傅|阿姨|叔叔|大爷|大妈|老师|医生|客人|客户|顾客|朋友|同事|快递员|快递小哥|外卖员|"
              r"保洁|工人|家长|主人|病人|邻居|亲戚|同学|访客|维修工|物业)们?")
_ZH_THROUGH = r"(?:从[^，,。！!？?]{1,8}?)?(?:进来|进门|进屋)"
_ZH_PERSON_LET = rf"让(?![我它])[\u4e00-\u9fff]{{0,10}}?{_ZH_PERSON}"  # 让 and whom, said by what they are
# 让我老公进来: someone of the speaker's let in (让我进去 is the speaker)
_ZH_MINE = r"(?:老公|老婆|爱人|妈|爸|儿子|女儿|孩子|家人|朋友|同事|哥|姐|弟|妹|爷爷|奶奶)"
ZH_LET_IN = (rf"让(?!它)(?!我(?!{_ZH_MINE}))(?![^进]{{0,4}}?[光阳日亮热暖凉风气雨水味猫狗鸡鸭鹅牛羊马猪鸟车])"
             r"(?:他|她|[\u4e00-\u9fff]{1,4}?)(?:们)?(?:进来|进门|进屋|"
             r"进(?:到|入)?[\u4e00-\u9fff]{1,6}?(?=$|[，,。！!吧呀啊\s]))|"  # 让会计进财务室: into the room said
             rf"{_ZH_PERSON_LET}{_ZH_THROUGH}|"
             r"给(?:他|她)(?:们)?开(?:一下)?门?(?=$|[，,。！!吧呀啊\s])")  # 给他开一下: open (the door) for him
# a vehicle let onto a place comes through its gate ("let the tow truck onto the forecourt")
_VEHICLE_ONTO = r"\blet\s+(?:the|my|our|a|an)\s+(?:[\w-]+\s+)?(?:cars?|vans?|trucks?|lorry|lorries|tankers?)\s+onto\b"
LET_IN = re.compile(rf"\b(?:let|buzz)\s+{PERSON_IN}|{_VEHICLE_ONTO}|{ZH_LET_IN}", re.I)

# whom a let-in phrase lets in: "let (the cleaner) in"
_WHOM = re.compile(rf"(\b(?:let|buzz)\s+)((?!(?:him|her|us|me|them)\b)(?:{_SHORT}(?=\s+{_MOVING}{_INTO})|"
                   rf"{_LONG}(?=\s+{_MOVING}{_INTO_HERE})))", re.I)

_NOT_ON_FOOT = re.compile(r"\b(?:cows?|cattle|calf|calves|chickens?|hens?|sheep|lambs?|goats?|horses?|ponies|pony|"
                          r"pigs?|ducks?|geese|goose|animals?|herd|flock|livestock|stock|dogs?|cats?|puppy|kitten|"
                          r"pets?|drive|driving|pull|roll|cars?|vans?|trucks?|lorry|lorries|tanker|vehicles?|"
                          r"air|breeze|wind|light|sun|sunlight|sunshine|heat|warmth|cold|rain|water|smoke|steam)\b|"
                          r"[车牛羊鸡鸭鹅狗猫马猪风光气水]",
                          re.I)


def without_whom(text: str) -> str:
    """The text without the person it lets in: "let the cleaner in" -> "let · in", 让送氧气瓶的师傅进来 ->
    让 · 进来. Animals let in say where ("let the chickens in": the Chicken Coop Door), and stay."""
    text = _ZH_WHOM.sub("让 · ", text)
    return _WHOM.sub(lambda m: m.group(0) if _NOT_ON_FOOT.search(m.group(0)) else f"{m.group(1)} · ", text)


_ZH_WHOM = re.compile(rf"{_ZH_PERSON_LET}(?={_ZH_THROUGH})")


# someone arriving or going in to fetch something: 会计到了, 拿个行李箱 (Chinese: 打开 a room is else its lights)
_ZH_GOING_IN = re.compile(r"到了|来了|进去|进来|拿|取|搬")


def someone_goes_in(text: str) -> bool:
    """Whether a Chinese utterance says someone arrives or goes in for something ("打开储藏室，拿个行李箱"): a room
    opened is then its door."""
    return not text.isascii() and bool(_ZH_GOING_IN.search(text))


_VEHICLE = re.compile(r"\b(?:cars?|vans?|trucks?|lorry|lorries|tankers?|vehicles?|trailers?|tractors?|harvesters?|"
                      r"horsebox(?:es)?|coach(?:es)?|buses|minibus|pickup|drive|driving)\b|车", re.I)


def vehicle_said(text: str) -> bool:
    """Whether the text speaks of a vehicle ("the van's here", 送菜车): what comes in by a garage door."""
    return bool(_VEHICLE.search(text))


def without_vehicles(text: str) -> str:
    """The text without the vehicles it speaks of: "let the van into the yard" -> "let the · into the yard"."""
    return _VEHICLE.sub(" · ", text)


def a_vehicle_let_in(text: str) -> bool:
    """Whether what the text lets in is a vehicle ("let the van into the yard", "let them drive in"): it comes
    through a gate or a garage door, never a person's door."""
    return bool(LET_IN.search(text)) and bool(_VEHICLE.search(text))


def a_visitor_let_in(text: str) -> bool:
    """Whether the text lets someone in on foot ("let the guests in"; "buzz me in": where the buzzer is): they
    come to the house's way in. The speaker let in ("let me in") stands at a door the home cannot know; animals
    and cars come in elsewhere ("let the cows in": the barn; "let them drive in": the gate), and the air through
    a window."""
    # a person said by what they do is a person: 遛狗的先生
    return bool(LET_IN.search(text)) and not _SPEAKER.search(text) and \
        not _NOT_ON_FOOT.search(_ZH_WHOM.sub("让 · ", text))


# the speaker let in stands at a door only they know; one buzzed in stands where the buzzer is, at the way in
_SPEAKER = re.compile(r"\blet\s+(?:me|us)\b", re.I)
# the home itself said as where someone is let in: "let me into the house", "let us into the flat"
_INTO_THE_HOME = re.compile(r"\binto\s+(?:the|my|our)\s+(?:house|flat|home|apartment)\b", re.I)


def let_into_the_home(text: str) -> bool:
    """Whether the text lets anyone, the speaker too, into the home as a whole ("let me into the flat", where no
    room is called the flat): they come to its way in."""
    return bool(LET_IN.search(text) and _INTO_THE_HOME.search(text))


# someone waiting at the door, said in a clause of its own ("a party of eight is waiting out front", "there's
# someone ringing the bell")
_WAITING = re.compile(r"\b(?:waiting|queuing|queueing|ringing|rang|knocking|knocked|outside\s+the\s+(?:front|door)|"
                      r"out\s+front|at\s+the\s+(?:front|door|bell|entrance))\b", re.I)
# a bare "open up", nothing said of what: "can you open up", "open up please"
_OPEN_UP = re.compile(r"(^|[,.;!?]\s*)((?:(?:can|could|would|will)\s+(?:you|u)\s+)?(?:please\s+)?open\s+up"
                      r"(?:\s+(?:for\s+(?:him|her|them)|please|pls|now))*)(?=\s*(?:[,.;!?]|$))", re.I)


def open_up_for_whoever_waits(text: str) -> str:
    """The text with a bare "open up" said beside someone waiting read as letting them in ("a party of eight is
    waiting out front, open up": the way in, not the Front Door Lantern)."""
    if not _WAITING.search(text):
        return text
    return _OPEN_UP.sub(lambda m: f"{m.group(1)}let them in", text)


# animals let in or out go through the door of the place they live in ("let the chickens out": the Coop Door)
_ANIMAL_HOMES = {"chicken": ("coop", "henhouse", "chicken", "hen"), "hen": ("coop", "henhouse", "chicken", "hen"),
                 "duck": ("duck", "coop"), "dog": ("kennel", "dog"), "cow": ("barn", "byre", "cow"),
                 "horse": ("stable", "horse"), "pony": ("stable", "pony"), "goat": ("goat", "barn"),
                 "sheep": ("sheep", "fold", "pen"), "pig": ("sty", "pig")}
ANIMALS = "|".join(rf"{animal}s?" for animal in _ANIMAL_HOMES) + "|ponies|geese"
LET_ANIMAL = re.compile(rf"\blet\s+(?:the|my|our)\s+({ANIMALS})\s+(?:in|out)\b", re.I)


def animal_home_words(text: str) -> frozenset[str]:
    """The words of the place the animals a text lets in or out live in ("let the hens out": coop, henhouse);
    none where it lets no animal in or out."""
    match = LET_ANIMAL.search(text)
    if match is None:
        return frozenset()
    animal = match.group(1).lower()
    animal = {"ponies": "pony", "geese": "duck"}.get(animal, animal.rstrip("s") if animal != "sheep" else animal)
    return frozenset(_ANIMAL_HOMES.get(animal, ()))

