"""The value an utterance sets, read once for every way people say and write numbers.

Why one reader: values were read by scattered patterns, each knowing a few notations and cutting the rest
to a prefix ("1e2%" read as 1 %, 百分之一万 as 1 %, "10^100" as 10, "4e2 degrees" as 4). ``read_value`` reads
digits (decimals, signs, ``1,000``, ``1_000``, ``0x190``, ``1e2``, ``1.5×10^3``, ``10^2``, ``10**3``,
``10²``, fullwidth and other scripts' digits), numbers in words (English and Chinese, ``百分之零点五``,
``一千五``, ``零下十度``), shares (half, ½, 1/2, 一半, 三分之一) and extremes (max, 最亮, all the way down).
What cannot be a finite number (NaN, inf, 1e400, an absurd exponent such as ``10^100000``, which is never
computed) is an ``Unreadable`` naming why, never a value cut to what a pattern could read.

Not every number is a value: a time of day ("at 7", "7:30", 七点半), a duration ("in 10 minutes", 两小时),
an ordinal or a count with a measure word (一楼, 第一个, 两个灯, 下一首), a channel or input ("HDMI 2",
第5频道), a number right after a device or room noun ("lamp 2") and the spans a caller marks as names are
never read as one. Small number words ("one", 一, 三) are values only where the utterance sets something
(before a unit, after a setting word such as "to" or 调到), so "one light", 一下 and 一点 stay words.

Which number, when several: the first said with a unit; else the first right after a setting word
(to/at/into/by, 调到/调成/设为/到/为/成/至, a change word such as 调高 or "raise it"); else the only number
left; else an extreme word; else none.

The numbers themselves are found by ``numerals``; ``value_ranges.check_value`` decides whether a command
can take the value read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .numerals import Numeral, normalise_digits, numerals, zh_int

__all__ = ["SaidValue", "Unreadable", "is_target", "number_and_family", "read_value", "sets_target", "value_said",
           "with_digits"]


@dataclass(frozen=True)
class SaidValue:
    """A value as the utterance says it; ``check_value`` turns it into what a command is sent."""

    number: float | None  # the amount as said, finite; None for an extreme ("half" is number 50, unit "percent")
    unit: str | None  # percent | celsius | fahrenheit | degrees (scale not said) | kelvin | ampere | milliampere
    extreme: str | None  # "max" | "min" | None
    relative: int  # 0: a target ("to 50%"); +1 / -1: a change by the amount ("up by 10%", "调低5度")
    start: int  # span of the value in the text (its sign, 百分之 and unit included)
    end: int


@dataclass(frozen=True)
class Unreadable:
    """A number was said where the value is, but no finite value can be read from it."""

    text: str  # what was said ("NaN", "inf", "10^100000" ...)
    reason: str  # why no value can be read from it, in one line


# ---------------------------------------------------------------------------------------------
# Context: whether a numeral is a value, its unit, and whether it is a target or a change

_A = r"(?![A-Za-z0-9_])"  # end of an ASCII unit word (\b fails before a CJK character)
_UNIT = re.compile(
    r"[ \t]*(?:"
    rf"(?P<celsius>°[ \t]*(?:C|celsius|centigrade){_A}|℃|degrees?[ \t]+(?:celsius|centigrade|C){_A}"
    rf"|deg[ \t]*C{_A}|celsius{_A}|centigrade{_A}|摄氏度|(?-i:C){_A})"
    rf"|(?P<fahrenheit>°[ \t]*(?:F|fahrenheit){_A}|℉|degrees?[ \t]+(?:fahrenheit|F){_A}|deg[ \t]*F{_A}"
    rf"|fahrenheit{_A}|华氏度|(?-i:F){_A})"
    rf"|(?P<percent>%|percent{_A}|per[ \t]?cent{_A}|pct{_A})"
    rf"|(?P<kelvin>kelvins?{_A}|开尔文|K{_A})"
    rf"|(?P<milliampere>(?-i:mA){_A}|milliamps?{_A}|milliamperes?{_A}|毫安)"
    rf"|(?P<ampere>amps?{_A}|amperes?{_A}|安培|安(?![装全静排心置])|(?-i:A)(?![A-Za-z0-9_/]))"
    rf"|(?P<degrees>degrees?{_A}|deg{_A}|°|度)"
    r"|(?P<step>档|挡|级)"
    r")", re.IGNORECASE)
_FAMILIES = ("celsius", "fahrenheit", "percent", "kelvin", "milliampere", "ampere", "degrees")

# After a numeral: not a value
_TIME_AFTER = re.compile(r"[ \t]*(?:[ap]\.?[ \t]?m\.?(?![A-Za-z])|o'?[ \t]?clock|oclock|past(?![A-Za-z])"
                         r"|点|點|时(?!间))|:[0-9]", re.IGNORECASE)
_DURATION_AFTER = re.compile(
    r"[ \t]*(?:(?:an?|one)[ \t]+)?(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|d|days?"
    r"|nights?|weeks?|wks?|months?|mos?|years?|yrs?|times)(?![A-Za-z])"
    r"|[ \t]*个?半?(?:小时|钟头|分钟|分|秒钟|秒|毫秒|天|日|晚|周|星期|礼拜|月|年|倍)", re.IGNORECASE)
_MEASURE_AFTER = re.compile(r"[ \t]*(?:个|盏|台|只|把|张|部|楼|层|号|栋|幢|首|遍|次|下|些|间|扇|路|位|组|套|种|份|块"
                            r"|条|道|排|集|季|期|频道|辆|件|支|根|名|元|米|厘米|毫米|公里|公斤|斤|克|毫升|升|瓦|伏|岁|成|折|样|起"
                            r"|直|切|定|般|共|会|边|侧|体|多|几|来|余)")
_FOREIGN_AFTER = re.compile(
    r"[ \t]*(?:watts?|w|kw|kwh|volts?|v|hz|lux|lumens?|lm|mph|kph|km|cm|mm|m|meters?|metres?|feet|foot|ft"
    r"|inch(?:es)?|kg|lbs?|pounds?|ppm|db|decibels?|dollars?|bucks|euros?|calories|-?ish|x)(?![A-Za-z])",
    re.IGNORECASE)
_CLOCK_DECIMAL = re.compile(r"[0-2]?[0-9]\.[0-5][0-9]")  # "at 7.30"

# Before a numeral
_SIGN_BEFORE = re.compile(r"(?:(?P<sym>(?<![A-Za-z0-9_.)])[-+])|\b(?:minus|negative)[ \t]+|零下[ \t]*|负[ \t]*)$",
                          re.IGNORECASE)
_SHARE_OF_BEFORE = re.compile(r"(?P<den>百|千|万|[0-9]+|[零〇一二两三四五六七八九十百千]+)分之[ \t]*$")
_SCALE_BEFORE = re.compile(r"(?P<scale>摄氏|华氏)[ \t]*$")
_NAME_BEFORE = re.compile(
    r"(?:\b(?:channel|ch|hdmi|input|source|port|av|usb|scene|preset|track|song|episode|season|station|number|no"
    r"|line|button|page)\.?[ \t]*|#[ \t]*|第[ \t]*|频道[ \t]*|[0-9]:|[0-9]/|/"
    r"|晚上|早上|上午|下午|凌晨|中午|傍晚|夜里|今晚|明早)$", re.IGNORECASE)
_NOUN_BEFORE = re.compile(  # a number right after these names one ("lamp 2"), unless it has a unit ("lamp 40%")
    r"\b(?:room|bedroom|bathroom|office|zone|floor|speaker|lamp|light|bulb|plug|outlet|socket|pendant|spot"
    r"|spotlight|downlight|group|area|camera|sensor|door|dor|window|blind|shade|curtain|flat|apartment|unit|suite"
    r"|bay|locker|table|cottage|cabin|chalet|pitch|berth|stall|booth|gate|bed|desk|lane|court|shed|hatch|pod)s?[ \t]*$"
    r"|(?:灯|帘|扇|机|器|箱|视|锁|门|阀|座|柜|室|房|厅|间|栋|号)[ \t]*$", re.IGNORECASE)  # 筒灯3, 卧室2, 2栋
_AT_BEFORE = re.compile(r"\bat[ \t]+(?:(?:about|around)[ \t]+)?$", re.IGNORECASE)
_DURATION_BEFORE = re.compile(r"\b(?:in|after|within|for|every|until|till)[ \t]+(?:(?:about|around|another)[ \t]+)?$",
                              re.IGNORECASE)
_ZH_UP = r"调高|调大|调亮|升高|提高|增加|增大|加大|调升|上调|调暖|再高|再大|再亮|加|升"
_ZH_DOWN = r"调低|调小|调暗|降低|减少|减小|减弱|调降|下调|调凉|再低|再小|再暗|减|降"
_FILLERS = (r"(?:[ \t]*(?:(?:about|around|approximately|roughly|exactly|just|speed|level|setting|position|step|the)"
            r"(?![A-Za-z])|大约|约|大概|差不多|了|个|再))*[ \t]*$")
_SETTING_BEFORE = re.compile(
    r"(?:\b(?:to|at|into|by|up|down)\b|=|\b(?:raise|lower|increase|decrease|reduce|boost|drop)(?:[ \t]+(?:it|them))?"
    rf"|到|为|成|至|(?:设|调|保持|维持|设定|设置)在|{_ZH_UP}|{_ZH_DOWN}){_FILLERS}", re.IGNORECASE)
_ZH_CHANGE_BEFORE = re.compile(rf"(?:(?P<up>{_ZH_UP})|(?P<down>{_ZH_DOWN})){_FILLERS}")
_BY_BEFORE = re.compile(rf"\bby(?:[ \t]+another)?{_FILLERS}", re.IGNORECASE)
_DIRECTION = re.compile(
    r"\b(?:(?P<up>up|increase|raise|boost|bump)|(?P<down>down|decrease|lower|reduce|drop|cut)"
    r"|(?P<weak_up>brighten|brighter|warmer|hotter|louder|higher|more|add)"
    r"|(?P<weak_down>dim|dimmer|darker|cooler|colder|quieter|softer|less))\b", re.IGNORECASE)
_TARGET_WORD = re.compile(r"\b(?:to|at|into)\b|=|到|为|成|至", re.IGNORECASE)
_CHANGE_AFTER = re.compile(r"[ \t]*(?:(?P<up>higher|warmer|hotter|brighter|louder|more)"
                           r"|(?P<down>lower|cooler|colder|dimmer|darker|quieter|softer|less))(?![A-Za-z])",
                           re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[,;!?，。；！？]|\.(?![0-9])|\b(?:and|then|but)\b|然后|并且|同时", re.IGNORECASE)
_EXTREME = re.compile(
    r"(?P<max>\b(?:max|maximum|full|highest|brightest|loudest|strongest)\b(?!'s|[ \t]+of\b)"  # "full of eggs": none
    r"|\ball[ \t]+the[ \t]+way[ \t]+up\b"
    r"|最大|最高|最亮|最响|最强|开满|调满|拉满|满档)"
    r"|(?P<min>\b(?:min|minimum|lowest|dimmest|darkest|quietest|weakest)\b(?!'s)|\ball[ \t]+the[ \t]+way[ \t]+down\b"
    r"|最小|最低|最暗|最弱|最静)", re.IGNORECASE)
_COUNT_BEFORE = re.compile(r"\b(?:a|an|one|few|couple|couple[ \t]+of)[ \t]+$", re.IGNORECASE)  # "in a min"
_JOINED = re.compile(r"[ \t]*(?:-|,|&|and|or|和|或|、)?[ \t]*", re.IGNORECASE)  # "lamps 1 and 2", "lights 3,5"
_WINDOW = 48  # characters of context read on each side of a numeral


@dataclass
class _Candidate:
    start: int
    end: int
    value: float | None
    problem: str | None
    unit: str | None
    marked: bool  # said with a unit, 百分之, a step word or as a share
    free: bool  # may stand as the only number
    setting: bool  # right after a setting word


def _candidate(text: str, raw: Numeral, blocked: list[tuple[int, int]]) -> _Candidate | None:
    """The numeral as a value candidate, or None when its context says it is no value (it is then added to
    ``blocked``: a time, a duration, a count, a name)."""
    after_start = raw.end
    if not raw.words and after_start < len(text):
        follows = text[after_start:after_start + 2]
        if follows[:1] == "." and follows[1:2].isdigit() or follows[:1] == "/" and follows[1:2].isdigit():
            blocked.append((raw.start, raw.end))
            return None  # a version 1.2.3, a date 12/25
    unit_match = _UNIT.match(text, after_start)
    comma = re.match(r",([0-9]+)", text[after_start:after_start + _WINDOW]) if not raw.words else None
    if comma and raw.problem is None and "." not in text[raw.start:raw.end]:
        unit_after_comma = _UNIT.match(text, after_start + comma.end())
        if unit_after_comma:  # "22,5 degrees": not 5 degrees, and not a thousands separator either
            said = text[raw.start:after_start + comma.end()]
            return _Candidate(raw.start, unit_after_comma.end(), None,
                              f"{said}: a comma between digits that is not a thousands separator; say "
                              f"{said.replace(',', '.')} or {said.replace(',', '')}", None, True, True, False)
    unit: str | None = raw.unit
    marked = raw.unit is not None
    end = raw.end
    if unit_match and not marked:
        unit = next((f for f in _FAMILIES if unit_match[f]), None)
        marked, end = True, unit_match.end()
    elif not raw.words and re.match(r"[A-Za-z0-9_]", text[after_start:after_start + 1]) and not (
            _TIME_AFTER.match(text, after_start) or _DURATION_AFTER.match(text, after_start)):
        return None  # part of an identifier: mp3, 2nd, 3D, 5x
    if not marked or raw.unit:  # a share too: "half an hour", "half past seven"
        for pattern in (_TIME_AFTER, _DURATION_AFTER) + (() if raw.unit else (_MEASURE_AFTER, _FOREIGN_AFTER)):
            match = pattern.match(text, after_start)
            if match:
                blocked.append((raw.start, match.end()))
                return None
    start, value, free = raw.start, raw.value, raw.free
    if text[end - 1:end + 1] == "度半" and isinstance(value, int | float):  # "二十四度半": 24.5 degrees, never 24
        value, end = value + 0.5, end + 1
    window_start = max(0, start - _WINDOW)
    before = text[window_start:start]
    if _NAME_BEFORE.search(before) or (not marked and _NOUN_BEFORE.search(before)):
        blocked.append((raw.start, end))
        return None
    negative = False
    share_of: float | None = None
    peeled = True
    while peeled:
        peeled = False
        for pattern in (_SIGN_BEFORE, _SHARE_OF_BEFORE, _SCALE_BEFORE):
            match = pattern.search(before)
            if not match:
                continue
            if pattern is _SIGN_BEFORE and not negative:
                negative = match.group().strip() not in ("+",)
                free = True
            elif pattern is _SHARE_OF_BEFORE and share_of is None:
                share_of = _denominator(match["den"])
                if share_of is None:
                    continue
                unit, marked = "percent", True
            elif pattern is _SCALE_BEFORE and unit in (None, "degrees"):
                unit, marked = ("celsius" if match["scale"] == "摄氏" else "fahrenheit"), True
            else:
                continue
            before = before[:match.start()]
            start = window_start + match.start()
            peeled = True
            break
    if raw.zh_point and not marked:
        blocked.append((raw.start, raw.end))
        return None  # 七点三十 is a time; 二十二点五度, 零点五 and 百分之二点五 are decimals
    if value is not None:
        if share_of is not None:
            value = value if share_of == 100 else value * 100 / share_of
        if negative:
            value = -value
    problem = raw.problem and text[start:raw.start] + raw.problem  # "-inf is infinite ..."
    if not marked:
        if _AT_BEFORE.search(before) and value is not None and (
                value.is_integer() and 0 <= value <= 24 or _CLOCK_DECIMAL.fullmatch(text[raw.start:raw.end])):
            blocked.append((start, end))
            return None  # "at 7": a time of day
        if _DURATION_BEFORE.search(before):
            blocked.append((start, end))
            return None  # "in 10": minutes
    setting = bool(_SETTING_BEFORE.search(before))
    return _Candidate(start, end, value, problem, unit, marked, free or marked or setting, setting)


def _denominator(said: str) -> float | None:
    if said in ("百", "千", "万"):
        return {"百": 100.0, "千": 1000.0, "万": 10_000.0}[said]
    number = int(said) if said.isdigit() and len(said) < 10 else zh_int(said)
    return float(number) if number else None


def _overlaps(start: int, end: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start < e and s < end for s, e in spans)


def _relative(text: str, candidate: _Candidate) -> int | None:
    """+1 / -1 when the value is a change ("up by 10%", "调高5度", "raise it 2", "2 degrees warmer"), 0 for a
    target ("to 50%", "turn up the heat to 21"), None for a change by an amount that says no direction."""
    clause = text[max(0, candidate.start - 2 * _WINDOW):candidate.start]
    breaks = list(_CLAUSE_BREAK.finditer(clause))
    if breaks:
        clause = clause[breaks[-1].end():]
    after = _CHANGE_AFTER.match(text, candidate.end)
    after_sign = (1 if after["up"] else -1) if after else 0
    zh = _ZH_CHANGE_BEFORE.search(clause)
    if zh:
        return 1 if zh["up"] else -1
    directions = list(_DIRECTION.finditer(clause))
    if _BY_BEFORE.search(clause):
        if directions:
            return 1 if directions[-1]["up"] or directions[-1]["weak_up"] else -1
        return after_sign or None
    strong = [d for d in directions if d["up"] or d["down"]]
    if strong and not any(t.start() > strong[-1].start() for t in _TARGET_WORD.finditer(clause)):
        return 1 if strong[-1]["up"] else -1
    return after_sign


@dataclass
class _Extreme:
    start: int
    end: int
    which: str
    setting: bool


def _extremes(text: str, skip: list[tuple[int, int]]) -> list[_Extreme]:
    """Extreme words ("max", 最暗, "all the way up") outside the spans of times, durations and names."""
    skipped = bytearray(len(text))
    for start, end in skip:
        start, end = max(0, start), min(len(text), end)
        if start < end:
            skipped[start:end] = b"\x01" * (end - start)
    found = []
    for match in _EXTREME.finditer(text):
        if any(skipped[match.start():match.end()]):
            continue
        before = text[max(0, match.start() - _WINDOW):match.start()]
        if match["min"] and _COUNT_BEFORE.search(before):
            continue  # "in a min"
        found.append(_Extreme(match.start(), match.end(), "max" if match["max"] else "min",
                              bool(_SETTING_BEFORE.search(before))))
    return found


def read_value(text: str, ignore: Sequence[tuple[int, int]] = ()) -> SaidValue | Unreadable | None:
    """The value the utterance sets (None when it sets none). `ignore`: spans the caller knows are names (a label
    "Pendant 2", a room "Bedroom 2", 筒灯3), never values."""
    if not isinstance(text, str) or not text:
        return None
    normal = normalise_digits(text)
    ignore = [(int(s), int(e)) for s, e in ignore]
    blocked: list[tuple[int, int]] = []
    candidates: list[_Candidate] = []
    for raw in numerals(normal):
        if _overlaps(raw.start, raw.end, ignore):
            continue
        candidate = _candidate(normal, raw, blocked)
        if candidate is None:
            continue
        if not candidate.marked and any(0 <= candidate.start - e <= 6 and _JOINED.fullmatch(normal, e, candidate.start)
                                        for _, e in blocked[-4:]):
            blocked.append((candidate.start, candidate.end))  # the rest of a time ("at seven thirty") or a list
            continue
        candidates.append(candidate)
    chosen = _choose(normal, candidates, _extremes(normal, blocked + ignore))
    if chosen is None:
        return None
    if isinstance(chosen, _Extreme):
        return SaidValue(None, None, chosen.which, 0, chosen.start, chosen.end)
    said = text[chosen.start:chosen.end]
    if chosen.problem is not None or chosen.value is None:
        return Unreadable(said, chosen.problem or f"{said}: no value can be read")
    relative = _relative(normal, chosen)
    if relative is None:
        return Unreadable(said, f"{said}: a change by an amount, but not which way (up or down)")
    return SaidValue(chosen.value, chosen.unit, None, relative, chosen.start, chosen.end)


def _choose(text: str, candidates: list[_Candidate], extremes: list[_Extreme]) -> _Candidate | _Extreme | None:
    """The first number with a unit; else the first number or extreme after a setting word; else the only
    number; else the first extreme word."""
    marked = [c for c in candidates if c.marked]
    if marked:
        return marked[0]
    after_setting: list[_Candidate | _Extreme] = [c for c in candidates if c.setting]
    after_setting += [x for x in extremes if x.setting]
    if after_setting:
        return min(after_setting, key=lambda c: c.start)
    free = [c for c in candidates if c.free or _alone(text, c)]
    if len(free) == 1:
        return free[0]
    if not free and extremes:
        return extremes[0]
    return None


def _alone(text: str, candidate: _Candidate) -> bool:
    """Whether the numeral is all the text says ("NaN", "three")."""
    strip = " \t\n.,!?;:，。！？"
    return not text[:candidate.start].strip(strip) and not text[candidate.end:].strip(strip)


# ---------------------------------------------------------------------------------------------
# For the command search: one reading per utterance, the value written as digits

_WRITTEN = {"percent": "%", "celsius": "°C", "fahrenheit": "°F", "kelvin": "K", "ampere": " A",
            "milliampere": " mA", None: ""}
# the unit families the command index compares ("26度" fits any temperature command, "2 A" a current in mA)
UNIT_FAMILY = {"percent": "percent", "celsius": "temperature", "fahrenheit": "temperature",
               "degrees": "temperature", "kelvin": "kelvin", "ampere": "current", "milliampere": "current"}


@lru_cache(maxsize=1024)
def value_said(text: str, ignore: tuple[tuple[int, int], ...] = ()) -> SaidValue | Unreadable | None:
    """``read_value`` of an utterance, read once: the parse, the search, the safety rules and the execution each
    ask (``ignore``: the spans of the names it says that hold a number, "Curtain 1A", 筒灯3)."""
    return read_value(text, ignore)


def sets_target(text: str) -> bool:
    """Whether the value the utterance sets is a target ("to 50%"), not a change by an amount ("up 10%")."""
    return is_target(value_said(text))


def is_target(said: SaidValue | Unreadable | None) -> bool:
    """Whether a value read is a target (one that cannot be read counts as one: it is refused as one)."""
    return isinstance(said, Unreadable) or (said is not None and not said.relative)


def number_and_family(said: SaidValue | Unreadable | None) -> tuple[float | None, str | None] | None:
    """(number, unit family) of a value read, for comparing with commands (``UNIT_FAMILY``): None for no value,
    (None, None) for an extreme ("最亮"), an infinite number for one that cannot be read (NaN, 10^100000)."""
    if said is None:
        return None
    if isinstance(said, Unreadable):
        return math.inf, None
    return said.number, UNIT_FAMILY.get(said.unit)


def with_digits(text: str, ignore: tuple[tuple[int, int], ...] = ()) -> str:
    """The utterance with the value it sets written as digits and a unit ("调到二十六度" -> "调到26度", "1e2%" ->
    "100%", "one hundred and five degrees" -> "105 degrees"), so the search and the parse read one spelling;
    everything else as said (``ignore``: the spans of names that hold a number, left as they are)."""
    said = value_said(text, ignore)
    if not isinstance(said, SaidValue) or said.number is None or said.relative:
        return text
    number = int(said.number) if said.number.is_integer() and abs(said.number) < 1e15 else said.number
    if said.unit is None:  # the numeral alone: what follows it stays ("三档", "to three please")
        numeral = next((n for n in numerals(normalise_digits(text)) if said.start <= n.start < said.end), None)
        start, end = (numeral.start, numeral.end) if numeral is not None else (said.start, said.end)
        return f"{text[:start]}{number}{text[end:]}"
    unit = ("度" if _CJK.search(text) else " degrees") if said.unit == "degrees" else _WRITTEN.get(said.unit, "")
    return f"{text[:said.start]}{number}{unit}{text[said.end:]}"


_CJK = re.compile(r"[\u3400-\u9fff]")
