"""The words people use for a kind of device, in Chinese and English, per SmartThings category.

The index never needs them to rank (device names and command documents carry the home's own words),
but two checks do: whether an LM's ``type_hint`` contradicts the kind the utterance itself names
("打开客厅的灯" is about a Light, never a Lock), and whether an utterance names the kind of a sensitive
device at all (see ``sensitive_requests``). A word may name several categories ("门": a door, a garage door
or a lock; "音箱": NetworkAudio or Speaker), so every lookup answers a set.

Chinese words match as substrings, except where a compound means something else: 门 in 门铃 (doorbell),
门廊 (porch), 门厅 (hall), 门口 (entrance), 门帘 and 门灯 is no door. English words match whole, plural
or not.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache

from .text_match import tokens

# category -> (Chinese words, English words); the first Chinese word is the general word for the kind (窗帘 names
# every blind, 纱帘 the sheer ones)
CATEGORY_WORDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Light": (("灯", "照明"), ("light", "lights", "lamp", "bulb", "lighting", "chandelier", "sconce")),
    "AirConditioner": (("空调", "冷气"), ("air conditioner", "air conditioning", "ac", "a/c", "aircon")),
    "Thermostat": (("温控", "恒温器", "地暖", "暖气"), ("thermostat", "heating")),
    "Blind": (("窗帘", "百叶", "卷帘", "遮阳帘", "纱帘", "布帘", "雨棚", "雨蓬", "遮阳棚", "遮阳蓬", "遮阳篷"),
              ("blind", "curtain", "shade", "shutter", "drape", "awning")),
    "Television": (("电视",), ("tv", "television")),
    "NetworkAudio": (("音箱", "音响", "喇叭"), ("speaker", "stereo", "soundbar")),
    "Speaker": (("音箱", "音响", "喇叭"), ("speaker", "stereo", "soundbar")),
    # a cooker's hood is its extractor, never the cooker
    "Fan": (("风扇", "电扇", "吊扇"), ("fan", "cooker hood", "range hood", "extractor hood")),
    "RobotCleaner": (("扫地机", "扫地机器人", "拖地机"), ("vacuum", "robot cleaner", "roomba", "hoover")),
    "Refrigerator": (("冰箱",), ("fridge", "refrigerator", "freezer")),
    "SmartPlug": (("插座", "插头"), ("plug", "outlet", "socket")),
    "Switch": (("开关",), ("switch",)),
    "AirPurifier": (("净化器", "空气净化"), ("purifier",)),
    "Humidifier": (("加湿器",), ("humidifier",)),
    "Dehumidifier": (("除湿机", "抽湿机", "除湿器"), ("dehumidifier",)),
    "Washer": (("洗衣机",), ("washer", "washing machine")),
    "Dryer": (("烘干机", "干衣机"), ("dryer",)),
    "Dishwasher": (("洗碗机",), ("dishwasher",)),
    "Lock": (("锁", "门锁"), ("lock", "deadbolt", "latch", "door lock")),
    # 自动门, 电动门: a door or a gate a motor opens (no lock: ``kind_referents``)
    "Door": (("门", "防盗门", "自动门", "感应门", "电动门", "电动大门"), ("door", "gate")),
    # 卷匝 as 卷闸 is misheard; 铁帘子, the iron curtain of a shop front, is its roller shutter
    "GarageDoor": (("车库门", "车库", "卷帘门", "卷闸门", "卷闸", "卷匝门", "卷匝", "铁帘子", "铁帘",
                    "电动门", "电动大门"),
                   ("garage", "garage door", "roller door", "roll-up door", "rollup door")),
    "WaterValve": (("阀", "阀门", "进水", "供水", "总水", "自来水", "水阀", "水闸", "浇水", "浇花", "浇菜", "灌溉",
                    "喷水", "喷点水", "洒水", "洒点水"),
                   ("valve", "water main", "water supply", "water", "shutoff", "shut-off", "hose", "spigot",
                    "faucet", "stopcock", "stop cock", "stop tap")),
    "GasValve": (("燃气", "煤气", "天然气", "液化气", "气阀"),
                 ("gas", "gas valve", "gas shutoff", "gas shut-off", "lpg", "lp gas", "propane", "propane valve",
                  "propane shutoff", "natural gas", "co2", "carbon dioxide", "argon")),
    # a cooker is an oven and a hob in one: "put the cooker on" beside both asks which
    "Oven": (("烤箱", "烤炉"), ("oven", "cooker")),
    # 开火: light the fire, on a stove; 炉子 a stove (the rings of a cooker are its hob)
    "Cooktop": (("灶", "电磁炉", "炉头", "开火", "炉子"),
                ("cooktop", "stove", "stovetop", "hob", "range", "rangetop", "burner", "cooker", "cooker ring",
                 "gas ring", "induction", "induction hob", "griddle", "plancha")),
    "Microwave": (("微波炉",), ("microwave",)),
    "WaterHeater": (("热水器",), ("water heater", "boiler")),
    "Camera": (("摄像头", "摄像机", "监控"), ("camera", "cam")),
    "Doorbell": (("门铃",), ("doorbell",)),
    "Projector": (("投影",), ("projector",)),
    "Charger": (("充电桩", "充电器"), ("charger", "wallbox")),
    "Vent": (("新风", "通风"), ("vent", "ventilation")),
    # 一直叫的东西, 那个在叫的东西: the thing that sounds
    "Siren": (("警报", "报警器", "警铃", "蜂鸣器", "警笛", "警号", "叫的东西", "在叫的东西", "响的东西"),
              ("siren", "alarm")),
    # "the alarm system" is the panel, never a siren: the longer word said wins
    "SecurityPanel": (("安防", "警戒", "防盗", "报警系统", "警报系统", "报警主机"),
                      ("security", "alarm", "alarm system", "alarm panel", "burglar alarm", "house alarm")),
    "MotionSensor": (("人体传感器", "人体感应"), ("motion sensor",)),
    "ContactSensor": (("门磁", "窗磁"), ("contact sensor",)),
    "TempHumiditySensor": (("温湿度", "温度计"), ("thermometer",)),
    "Hub": (("网关",), ("hub", "bridge")),
}
# 门 inside these is no door: doorbell, porch, hall, entrance, door curtain, door light, door/window sensor,
# gatehouse, gate guard; nor
# after these: to go out, to come in, to drop by, to knock (出门, 进门, 串门, 敲门)
NOT_A_DOOR = "铃廊厅口帘灯磁禁楼卫"
# but a longer word for a door before 灯 or 口 is that door, qualifying what follows: "卷闸门灯", "车库门口的灯" are
# lights at those doors (read as 卷闸 and 门灯 the shutter stayed said)
_NOT_THIS_DOOR = "铃廊厅帘磁禁"
DOOR_VERBS = "出进串敲"
_DOORS = frozenset({"Door"})


def normalised(text: str) -> str:
    """NFKC, lower-cased: what every word here is matched against."""
    return unicodedata.normalize("NFKC", text or "").lower()


def word_pattern(zh: tuple[str, ...], en: tuple[str, ...]) -> re.Pattern:
    """One pattern for Chinese words (substrings; 门 not in 门铃, 门厅, 出门 ...) and English ones (whole words,
    plural or not)."""
    def not_after(w: str) -> str:
        return f"(?![{NOT_A_DOOR if w == '门' else _NOT_THIS_DOOR}])" if w.endswith("门") else ""

    parts = [(f"(?<![{DOOR_VERBS}])" if w == "门" else "") + re.escape(w) + not_after(w)
             for w in sorted(zh, key=len, reverse=True)]
    if en:
        words = "|".join(re.escape(w) for w in sorted(en, key=len, reverse=True))
        parts.append(rf"(?<![\w/])(?:{words})(?:e?s)?(?![\w/])")
    return re.compile("|".join(parts) or r"(?!)")


@cache
def _patterns() -> tuple[tuple[str, re.Pattern], ...]:
    return tuple((category, word_pattern(zh, en)) for category, (zh, en) in CATEGORY_WORDS.items())


def category_name_words(category: str) -> tuple[str, ...]:
    """"AirConditioner" -> ("air", "conditioner"): category names as words a user may say."""
    return tokens(" ".join(re.findall(r"[A-Z][a-z]*|[a-z]+", category)))


def general_word(category: str) -> str | None:
    """The Chinese word for the kind as a whole ("窗帘" of Blind), where the table knows the category."""
    words = CATEGORY_WORDS.get(category)
    return words[0][0] if words and words[0] else None


def categories_said(text: str) -> dict[str, list[str]]:
    """The categories the text names as what to act on, each with the words said ("客厅的灯" -> {"Light": ["灯"]}).

    Not said: a word inside a longer one said ("车库门" names a garage door, not a door; "门锁" a lock); a word
    that only qualifies the word for another kind after it ("车库的灯", "the garage light": a light); a door
    that is part of another device, and that device ("冰箱门", "the oven door": neither a door nor the oven is
    what is opened); a word that only says where something is ("the lamp next to the oven", "在车库",
    "烤箱旁边的灯")."""
    said = _categories_said(text) if len(text) <= _CACHED_CHARS else _read_categories(text)
    return {category: list(words) for category, words in said}


# words that ask for several devices of a kind, not one
_SEVERAL = re.compile(r"\b(?:all|every|everything|both|each|any|whole)\b|都|所有|全部|每|各|两个|俩|几个", re.I)


def several_said(text: str) -> bool:
    """Whether the text asks for several of a kind: "all", "both", 都, or a word for a kind in the plural ("the
    valves", "the ovens")."""
    return bool(_SEVERAL.search(text)) or any(re.search(rf"\b{re.escape(w)}(?:s|es)\b", normalised(text))
                                              for ws in categories_said(text).values() for w in ws if w.isascii())


_CACHED_CHARS = 512  # utterances; longer texts are read each time rather than held


@lru_cache(maxsize=4096)
def _categories_said(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Read once per utterance: the parse, the screen and the search each ask for it."""
    return _read_categories(text)


# words listed for one kind that name any of a family, said after a word for another kind of it ("燃气阀",
# "gas shutoff valve": a gas valve)
_FAMILY = {"WaterValve": (("GasValve",), frozenset({"阀", "阀门", "valve", "valves", "shutoff", "shut-off"}))}
_ANY_OF = {(member, kind): words for kind, (members, words) in _FAMILY.items() for member in members}


def only_specific(kind: str, words) -> bool:
    """Whether some word said for a kind is its own, not one its family shares: "the water main" names no gas
    valve, "the valve" may."""
    generic = _FAMILY.get(kind, ((), frozenset()))[1]
    return any(word not in generic for word in words)


def family_of(kind: str) -> str:
    """The kind whose generic words also name this one (a gas valve is a valve: "WaterValve"), else itself."""
    return next((head for head, (members, _) in _FAMILY.items() if kind in members), kind)


def with_family(kinds) -> set[str]:
    """The kinds with those their generic words also name ("valve" is listed for water valves; "the propane
    valve" is a gas valve)."""
    return {*kinds, *(member for kind in kinds for member in _FAMILY.get(kind, ((), ()))[0])}


def _read_categories(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    text = normalised(text)
    matches = [(m.start(), m.end(), category) for category, pattern in _patterns() for m in pattern.finditer(text)]
    words = [(s, e, c) for s, e, c in matches
             if not any(s2 <= s and e <= e2 and e2 - s2 > e - s for s2, e2, _ in matches)
             and not (text[s:e] == "switch" and _SWITCH_VERB.fullmatch(text[:s]))]
    dropped = set()
    for i, (start, end, category) in enumerate(words):
        # "燃气阀", "煤气总阀", "gas shutoff valve": the gas valve; the generic word after it says no other kind
        said_which = [j for j, (s, e, c) in enumerate(words)
                      if end <= s <= end + 3 and text[s:e] in _ANY_OF.get((category, c), ())]
        dropped.update(said_which)
        after = [j for j, (s, _, c) in enumerate(words)
                 if c != category and s >= end and qualifies(text[end:s]) and j not in said_which]
        if after:
            dropped.add(i)
            dropped.update(j for j in after if words[j][2] in _DOORS)  # a part of this device
        if locative(text, start, end):
            dropped.add(i)
    found: dict[str, list[str]] = {}
    for i, (start, end, category) in enumerate(words):
        if i not in dropped:
            found.setdefault(category, []).append(text[start:end])
    return tuple((category, tuple(words)) for category, words in found.items())


# "switch" at the start of what is asked is the verb ("switch the oven on", "please switch off the fan"), not a
# Switch ("turn on the switch", "the hall switch")
_SWITCH_VERB = re.compile(r"(?:.*[,.;!?，。；！？]|.*\b(?:and|then))?\s*"
                          r"(?:(?:please|pls|can|could|would|will|you|just)\s+)*")


def qualifies(between: str) -> bool:
    """Whether the text between two words makes the first qualify the second: nothing, 的, 's, spaces, or a
    word for where ("烤箱旁边的灯"), also between the rest of the first one's name and the start of the second
    one's ("安防主机边上的射灯": 主机, 射)."""
    return _QUALIFIER.fullmatch(between) is not None or _NAME_THEN_PLACE.fullmatch(between) is not None


def locative(text: str, start: int, end: int) -> bool:
    """Whether the word at ``text[start:end]`` only says where something is: after "in", "near", "next to"
    ... ("the lamp next to the oven", "raise the temperature in the garage"), after 在, or before 里, 里面,
    旁边, 附近 ... ("车库里的温度"); never what something passes through ("let them in through the gate")."""
    before = _BEFORE_PLACE.search(text, 0, start)
    return bool(before) and not _THROUGH.search(before.group(0)) or bool(_AFTER_PLACE.match(text, end))


_WHERE = r"旁边|附近|边上|上面|下面|里面|外面|前面|后面|对面|那边|这边|跟前|上的|下的|边的|旁的|旁|里|内|外"
_QUALIFIER = re.compile(rf"(?:\s|的|'s|口|{_WHERE})*")  # 口 of "阳台门口的灯": the light at the doorway
_NAME_THEN_PLACE = re.compile(rf"[\u4e00-\u9fff]{{0,4}}?(?:{_WHERE})(?:\s|的|{_WHERE})*[\u4e00-\u9fff]{{0,3}}")
# a word said after a preposition of place, with up to two words before it in its phrase ("by the patio door",
# "facing the front door"), or after 在 ("在车库"), says where something is
_BEFORE_PLACE = re.compile(r"(?:\b(?:in|at|inside|near|nearby|by|beside|behind|above|below|under|beneath|underneath|"
                           r"over|outside|around|from|facing|opposite|across(?: from)?|along(?:side)?|toward|towards|"
                           r"against|next to|in front of|close to|on top of|"
                           # what a supply goes to: "the gas to the hob" is the hob's gas ("the co2 for the beer
                           # lines": no Beer Garden Door)
                           r"(?:gas|propane|water|lpg|co2)\s*(?:bottles?|cylinders?|supply)?(?:\s+(?:back\s+)?(?:on|off))?"
                           r"\s+(?:to|for)|"
                           # what is on a device: "light the hob on the range" is the hob's
                           r"(?:hob|burners?|lights?|lamps?|cameras?|sensors?)\s+on"  # ("put a ring on": on)
                           r")\s+(?:the\s+|my\s+|our\s+|a\s+|an\s+)?"
                           r"(?:[\w'-]+\s+){0,2}|在)\s*$")
_AFTER_PLACE = re.compile(rf"\s*(?:{_WHERE})")
_THROUGH = re.compile(r"\b(?:through|thru|via)\b")


def is_kind_word(text: str) -> bool:
    """Whether the text is only a word for a kind of device ("空调", "light", "blinds"), no name, no number."""
    words = {_compact(w) for ws in categories_said(text).values() for w in ws}
    said = _compact(text)
    return bool(said) and not any(ch.isdigit() for ch in said) and (said in words or said.rstrip("s") in words)


def _compact(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def ends_with_kind_word(label: str, word: str) -> bool:
    """Whether a Chinese label ends with the word for a kind ("燃气灶" with 灶), rather than holding it to say which
    device of another kind it is ("灶台灯")."""
    return normalised(label).rstrip("0123456789 ").endswith(word)


def says_which(label: str, word: str) -> bool:
    """Whether an English label holds a word for a kind only to say which device of another kind it is: a word
    for another kind follows it ("Garden Door Shade", "Front Door Camera"); never as part of a longer word for a
    kind ("Water Heater"); or one that says where it stands ("Shades by the Front Door")."""
    text = normalised(label)
    said = categories_said(text)
    if any(word in w and w != word for ws in said.values() for w in ws):
        return False
    if re.search(rf"\b(?:by|near|beside|next\s+to|over|above|facing|under|behind)\s+(?:the\s+)?(?:[\w'-]+\s+){{0,2}}"
                 rf"{re.escape(word)}s?\b", text):
        return True
    at = re.search(rf"\b{re.escape(word)}s?\b", text)
    own = set(categories_said(word))
    return at is not None and any(kind not in own for kind in categories_said(text[at.end():]))
