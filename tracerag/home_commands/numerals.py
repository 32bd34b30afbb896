"""Where a number is written or said in a text, and its value: digits in every notation people use and
numbers in English and Chinese words.

``numerals(text)`` finds each one (``Numeral``: its span, its value or why it has none, whether it was said in
words); ``values`` decides which of them, if any, is the value an utterance sets. Digits: decimals, ``1,000``,
``1_000``, ``0x190``, ``1e2``, ``1.5×10^3``, ``10^2``, ``10**3``, ``10²``, fullwidth and other scripts' digits.
Words: "fifty-nine", "one hundred and five", 二十六, 一千五, 百分之零点五, 零下十度. Shares: half, ½, 1/2, 一半,
三分之一. What cannot be a finite number (NaN, inf, 1e400, an absurd exponent such as ``10^100000``, never
computed) carries the reason instead of a value.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

# ---------------------------------------------------------------------------------------------
# Characters

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SPECIAL_CHARS = {"\u3000": " ", "\u2212": "-", "\u00ba": "°", "\u212a": "K"}  # ideographic space, minus, º, K


def normalise_digits(text: str) -> str:
    """Fullwidth forms and other scripts' decimal digits as ASCII, one character for one, so that spans found
    in the result are spans of the text. The fullwidth comma stays: in Chinese it separates clauses."""
    if text.isascii():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if 0xFF01 <= code <= 0xFF5E and code != 0xFF0C:
            out.append(chr(code - 0xFEE0))
        elif ch in _SPECIAL_CHARS:
            out.append(_SPECIAL_CHARS[ch])
        elif not ch.isascii() and (digit := unicodedata.decimal(ch, None)) is not None:
            out.append(str(digit))
        else:
            out.append(ch)
    return "".join(out)


def number_text(value: float) -> str:
    """A number as a message shows it: 400, 22.5, 1e+100."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return format(value, ".10g")


# ---------------------------------------------------------------------------------------------
# Numerals: where a number is written or said, and its value

@dataclass
class Numeral:
    """A numeral found in the text, before its context says whether it is a value."""

    start: int
    end: int
    value: float | None
    problem: str | None = None  # why it has no finite value
    free: bool = True  # False: a small number word, a value only before a unit or after a setting word
    unit: str | None = None  # a share (half, ½, 一半) is a percent
    words: bool = False  # said in words (no identifier rule: letters follow words)
    zh_point: bool = False  # a Chinese X点Y: a decimal only before a unit, after 百分之 or as 零点Y


_MANTISSA = r"(?:[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+(?:_[0-9]+)*)(?:\.[0-9]+)?|\.[0-9]+"
_SUPER = "[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+"
_DIGIT_NUMERAL = re.compile(
    r"(?<![A-Za-z0-9_.])(?:"
    r"(?P<based>0[xX][0-9a-fA-F]+(?:_[0-9a-fA-F]+)*|0[bB][01]+(?:_[01]+)*|0[oO][0-7]+(?:_[0-7]+)*)"
    rf"|(?P<mantissa>{_MANTISSA})"
    r"(?:[eE](?P<exp>[+-]?[0-9]+)"
    r"|[ \t]*(?:\^|\*\*)[ \t]*(?P<power>[+-]?[0-9]+)"
    rf"|(?P<super>{_SUPER})"
    rf"|[ \t]*[x×*·][ \t]*10(?:[ \t]*(?:\^|\*\*)[ \t]*(?P<tenpow>[+-]?[0-9]+)|(?P<tensuper>{_SUPER}))"
    r")?(?:[ \t]*(?P<wan>[万亿]))?)")
_NOT_FINITE = re.compile(r"(?<![A-Za-z])(?:(?P<nan>nan)|infinity|infinite|inf)(?![A-Za-z])|∞", re.IGNORECASE)
_ZH_NUMERAL = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+(?:点[零〇一二三四五六七八九]+)?")
_SHARE = re.compile(
    r"(?P<half>\bhalf(?:[ \t]*-?[ \t]*way)?\b|一半|半开)"
    r"|(?<![0-9./])(?P<n>[0-9]{1,3})/(?P<d>[0-9]{1,3})(?![0-9/])"
    r"|(?P<vulgar>[½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅛⅜⅝⅞])"
    r"|(?P<whole>百分之?百)"
    r"|(?<=到)(?P<tenths>[一二两三四五六七八九十])成", re.IGNORECASE)  # 开到三成: 30 % (八成, 一成不变: none)

_MAX_EXPONENT_DIGITS = 6  # 10^1234567: an exponent this long is no amount; it is never computed
_FLOAT_MAX_LOG10 = math.log10(1.7976931348623157e308)


def _clipped(said: str) -> str:
    """A numeral as a one-line reason quotes it: a 100,000-digit one is cut in the middle."""
    return said if len(said) <= 40 else f"{said[:20]}…{said[-12:]} ({len(said)} characters)"


def _digit_value(match: re.Match) -> tuple[float | None, str | None]:
    """(value, None) or (None, why it has no finite value) for a numeral in digits."""
    said = _clipped(match.group(0).strip())
    if match["based"]:
        number = int(match["based"].replace("_", ""), 0)
        if number.bit_length() > 1024:
            return None, f"{said} is too large to be read as a number (it overflows to infinity)"
        return float(number), None
    mantissa = match["mantissa"].replace(",", "").replace("_", "")
    exponent = match["exp"] or match["tenpow"] or (match["super"] or match["tensuper"] or "").translate(_SUPERSCRIPT)
    if match["super"] or match["power"]:  # base ** exponent
        return _power(float(mantissa), match["power"] or exponent, said)
    if exponent:
        if len(exponent.lstrip("+-")) > _MAX_EXPONENT_DIGITS:
            return None, f"{said}: an exponent of {len(exponent.lstrip('+-'))} digits is no amount"
        value = float(f"{mantissa}e{exponent}")
    else:
        value = float(mantissa)
    if match["wan"]:
        value *= 10_000 if match["wan"] == "万" else 100_000_000
    return _finite(value, mantissa, said)


def _power(base: float, exponent_text: str, said: str) -> tuple[float | None, str | None]:
    """base ** exponent without computing one too large: its size is judged by its logarithm first."""
    digits = exponent_text.lstrip("+-")
    if len(digits) > _MAX_EXPONENT_DIGITS:
        return None, f"{said}: an exponent of {len(digits)} digits is no amount"
    exponent = int(exponent_text)
    if base == 0:
        if exponent < 0:
            return None, f"{said}: 0 to a negative power has no value"
        return (1.0 if exponent == 0 else 0.0), None
    size = exponent * math.log10(abs(base))
    if size > _FLOAT_MAX_LOG10:
        return None, f"{said} is about 1e{size:.0f}, too large to be read as a number"
    if size < -320:
        return None, f"{said} is about 1e{size:.0f}, too small to be read (it underflows to 0)"
    try:
        return _finite(base ** exponent, str(base), said)
    except OverflowError:
        return None, f"{said} is too large to be read as a number (it overflows to infinity)"


def _finite(value: float, mantissa: str, said: str) -> tuple[float | None, str | None]:
    if math.isinf(value):
        return None, f"{said} is too large to be read as a number (it overflows to infinity)"
    if value == 0 and any(ch in "123456789" for ch in mantissa):
        return None, f"{said} is too small to be read (it underflows to 0)"
    return value, None


_EN_SMALL = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_EN_TENS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)}
_EN_SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
# a number said in words after what it numbers: "room four" is Room 4, "flat twelve" Flat 12
_NUMBERED = re.compile(r"\b(rooms?|flats?|units?|suites?|bays?|doors?|gates?|number|no|apartments?|cabins?|tables?|"
                       r"beds?|stalls?|boxe?s?|zones?)\s+(" + "|".join([*_EN_SMALL, *_EN_TENS][1:]) + r")\b", re.I)


def numbered_in_digits(text: str) -> str:
    """The text with a number said in words after what it numbers written in digits ("unlock room fourteen":
    room 14), as labels and rooms write it."""
    return _NUMBERED.sub(lambda m: f"{m.group(1)} {_EN_SMALL.get(m.group(2).lower()) or _EN_TENS[m.group(2).lower()]}",
                         text)
_EN_WORD = re.compile(r"[A-Za-z]+")
_EN_JOIN = re.compile(r"[ \t]*-?[ \t]*")


def _english_numerals(text: str) -> list[Numeral]:
    """Numbers said in English words: fifty-nine, a hundred, one hundred and five, two thousand seven hundred,
    twenty two point five. A lone one..nine is not free: "one light", "the one in the kitchen"."""
    words = [(m.group().lower(), m.start(), m.end()) for m in _EN_WORD.finditer(text)]
    joined = [i > 0 and bool(_EN_JOIN.fullmatch(text, words[i - 1][2], words[i][1])) for i in range(len(words))]
    found, i = [], 0
    while i < len(words):
        parsed = _english_number(words, joined, i)
        if parsed is None:
            i += 1
            continue
        value, after = parsed
        lone_digit = after == i + 1 and words[i][0] in _EN_SMALL and 1 <= _EN_SMALL[words[i][0]] <= 9
        found.append(Numeral(words[i][1], words[after - 1][2], value, free=not lone_digit, words=True))
        i = after
    return found


def _english_number(words: list[tuple[str, int, int]], joined: list[bool], i: int) -> tuple[float, int] | None:
    """(value, index after its last word) of the longest number said from words[i], or None."""
    total, group, last, hundred, scale = 0, 0, None, False, math.inf
    best: tuple[float, int] | None = None
    j = i
    while j < len(words) and (j == i or joined[j]):
        word = words[j][0]
        following = words[j + 1][0] if j + 1 < len(words) and joined[j + 1] else ""
        if word == "a" and j == i and following in ("hundred", *_EN_SCALES):
            group, last = 1, "unit"
        elif word in _EN_SMALL:
            value = _EN_SMALL[word]
            if not (last in (None, "hundred", "scale", "and") or last == "tens" and 1 <= value <= 9):
                break
            if value == 0 and last is not None:
                break
            group, last = group + value, ("teen" if value >= 10 else "unit")
        elif word in _EN_TENS:
            if last not in (None, "hundred", "scale", "and"):
                break
            group, last = group + _EN_TENS[word], "tens"
        elif word == "hundred":
            if hundred or last not in (None, "unit", "teen") or (last is not None and group == 0):
                break
            group, last, hundred = (group or 1) * 100, "hundred", True
        elif word in _EN_SCALES:
            size = _EN_SCALES[word]
            if size >= scale or last == "and" or (last is not None and group == 0):
                break
            total, group, last, hundred, scale = total + (group or 1) * size, 0, "scale", False, size
        elif word == "and":
            if last not in ("hundred", "scale") or not (following in _EN_SMALL or following in _EN_TENS):
                break
            last = "and"
        elif word == "point" and last not in (None, "and"):
            digits = ""
            k = j + 1
            while k < len(words) and joined[k] and words[k][0] in _EN_SMALL and _EN_SMALL[words[k][0]] <= 9:
                digits += str(_EN_SMALL[words[k][0]])
                k += 1
            if digits:
                best = (total + group + float("0." + digits), k)
            break
        else:
            break
        j += 1
        if last != "and" and not (word == "a"):
            best = (float(total + group), j)
    return best


_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
             "九": 9}
_ZH_SMALL = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = {"万": 10_000, "亿": 100_000_000}


def zh_int(run: str) -> int | None:
    """三十一 -> 31, 一千五 -> 1500, 两百五 -> 250, 一百零五 -> 105, 一万五 -> 15000, 十 -> 10; None for a run
    that is no amount: digits read one by one (六三, 二〇二六) or a lone 百/千/万 (百叶窗, 千万)."""
    if run in ("零", "〇"):
        return 0
    if not run or run[0] in "百千万亿零〇":
        return None
    total = section = last_small = last_big = 0
    digit: int | None = None
    zero = False
    for ch in run:
        if ch in _ZH_DIGIT:
            if digit is not None:
                return None
            if _ZH_DIGIT[ch] == 0:
                zero = True
                continue
            digit = _ZH_DIGIT[ch]
        elif ch in _ZH_SMALL:
            size = _ZH_SMALL[ch]
            if digit is None:
                if ch != "十" or (section and not zero):
                    return None
                digit = 1
            if last_small and size >= last_small:
                return None
            section, digit, last_small, zero = section + digit * size, None, size, False
        else:
            size = _ZH_BIG[ch]
            section += digit or 0
            if section == 0 or (last_big and size >= last_big):
                return None
            total, section, digit, last_small, last_big, zero = total + section * size, 0, None, 0, size, False
    if digit is not None:
        if zero or not (last_small or last_big):
            section += digit
        else:  # 一千五 is 1500, 两百五 250, 一万五 15000: the digit counts in the next lower place
            section += digit * ((last_small or last_big) // 10)
    return total + section


def _chinese_numerals(text: str) -> list[Numeral]:
    """Numbers said in Chinese: 二十六, 两百, 一千五, 零点五. A lone character (一, 三, 十) is not free."""
    found = []
    for match in _ZH_NUMERAL.finditer(text):
        run, _, fraction = match.group().partition("点")
        start = match.start()
        while run and zh_int(run) is None and run[0] in "百千万亿":  # 千万 / 万一: the lone 万 is no amount
            run, start = run[1:], start + 1
        value = zh_int(run) if run else None
        if value is None:
            continue
        if fraction:
            value = float(f"{value}." + "".join(str(_ZH_DIGIT[ch]) for ch in fraction))
        found.append(Numeral(start, match.end(), float(value), free=len(run) > 1 or bool(fraction),
                          words=True, zh_point=bool(fraction) and run not in ("零", "〇")))
    return found


def _shares(text: str) -> list[Numeral]:
    """Half, ½, 1/2, 一半, 百分之百, 三成: a share of the whole, as a percent. n/d is a share only when it is a
    small proper fraction; "24/7" and "12/25" are no values."""
    found = []
    for match in _SHARE.finditer(text):
        if match["half"]:
            value = 50.0
        elif match["vulgar"]:
            value = unicodedata.numeric(match["vulgar"]) * 100
        elif match["whole"]:
            value = 100.0
        elif match["tenths"]:
            value = _ZH_DIGIT[match["tenths"]] * 10.0 if match["tenths"] != "十" else 100.0
        else:
            n, d = int(match["n"]), int(match["d"])
            if not (1 <= n <= d and 2 <= d <= 16):
                continue
            value = n * 100 / d
        found.append(Numeral(match.start(), match.end(), value, unit="percent", words=True))
    return found


# a whole number and a fraction said after it: "twenty-one and a half", "2 and a quarter"
_AND_A_FRACTION = re.compile(r"[ \t]+and[ \t]+(?:a|one)[ \t]+(half|quarter)\b|[ \t]+and[ \t]+three[ \t]+quarters\b",
                             re.IGNORECASE)
_FRACTIONS = {"half": 0.5, "quarter": 0.25, None: 0.75}


def _with_fractions(text: str, found: list[Numeral]) -> list[Numeral]:
    """The numerals with "… and a half" read as part of the number before it (21.5), never as a share of 50 %."""
    out = list(found)
    for raw in found:
        if raw.unit is not None or raw.value is None or raw.problem is not None:
            continue
        match = _AND_A_FRACTION.match(text, raw.end)
        if match is None:
            continue
        fraction = _FRACTIONS[match.group(1).lower() if match.group(1) else None]
        out = [r for r in out if r is not raw and not (r.unit is not None and raw.end <= r.start < match.end())]
        out.append(Numeral(raw.start, match.end(), raw.value + fraction, free=True, words=raw.words))
    return out


def numerals(text: str) -> list[Numeral]:
    """Every numeral in the text, in order; where two overlap, the share or the earlier, longer one."""
    found = _shares(text)
    for match in _DIGIT_NUMERAL.finditer(text):
        value, problem = _digit_value(match)
        found.append(Numeral(match.start(), match.end(), value, problem))
    for match in _NOT_FINITE.finditer(text):
        reason = "is not a number" if match["nan"] else "is infinite: no amount a device can take"
        found.append(Numeral(match.start(), match.end(), None, f"{match.group()} {reason}", free=False, words=True))
    found += _english_numerals(text) + _chinese_numerals(text)
    found = _with_fractions(text, found)
    kept: list[Numeral] = []
    taken = bytearray(len(text))
    for raw in sorted(found, key=lambda r: (r.unit is None, r.start, -r.end)):
        if not any(taken[raw.start:raw.end]):
            kept.append(raw)
            taken[raw.start:raw.end] = b"\x01" * (raw.end - raw.start)
    return sorted(kept, key=lambda r: r.start)
