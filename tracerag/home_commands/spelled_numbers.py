"""Numbers said in words, written as digits: "fifty-nine percent" -> "59 percent", "百分之六十三" -> "百分之63",
"亮度为四十" -> "亮度为40".

Speech-to-text and people write values both ways; everything downstream (the value a command sets, its
unit, whether it fits the range) reads digits. Only a number that is a value is rewritten: a word number
of two digits or more, or one said with a unit ("five percent", "二十六度") or after a setting word
("调成三十一", "set it to four"). "one light", "一楼", "一半", "调亮一点", "下一首" keep their words.
"""

from __future__ import annotations

import re

_UNITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
          "nine": 9}
_TEENS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
          "seventeen": 17, "eighteen": 18, "nineteen": 19}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
_EN_UNIT_AFTER = r"(?=\s*(?:%|percent|per\s*cent|degrees?|°|kelvin\b|k\b))"
_EN = re.compile(
    r"\b(?:(?P<hundred>(?:one|a)\s+hundred)"
    rf"|(?P<tens>{'|'.join(_TENS)})(?:[\s-](?P<tens_unit>{'|'.join(_UNITS)}))?"
    rf"|(?P<teen>{'|'.join(_TEENS)})"
    rf"|(?P<unit>{'|'.join(_UNITS)}){_EN_UNIT_AFTER}"
    rf"|(?:(?<=\bto\s)|(?<=\bat\s)|(?<=\bby\s))(?P<set_unit>{'|'.join(_UNITS)}))\b",
    re.IGNORECASE)

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9}
_ZH_RUN = "[零〇一二两三四五六七八九十百]+"
# a value: after 百分之 or a setting word, or before a unit; never before a measure word or 半/点/些/下/楼
_ZH = re.compile(rf"(?P<before>百分之|调到|调成|调至|设为|设到|设成|设置为|设置成|设定为|设定到|设定至|为|到|成|至)"
                 rf"(?P<run>{_ZH_RUN}+)(?![半点些下楼层号个盏台遍次首分秒])"
                 rf"|(?P<run2>{_ZH_RUN}+)(?=\s*(?:%|％|度|摄氏度|开尔文|K\b|档))")


def _zh_value(run: str) -> int | None:
    """三十一 -> 31, 十五 -> 15, 一百 -> 100, 两 -> 2, 六三 -> None (read digit by digit it is no amount)."""
    if run in ("十",):
        return 10
    total, number, seen_unit = 0, 0, False
    for ch in run:
        if ch in _ZH_DIGITS:
            if number and not seen_unit:
                return None  # two digits in a row: not a spoken amount
            number, seen_unit = _ZH_DIGITS[ch], False
        elif ch == "十":
            total += (number or 1) * 10
            number, seen_unit = 0, True
        elif ch == "百":
            total += (number or 1) * 100
            number, seen_unit = 0, True
    return total + number


def with_digits(text: str) -> str:
    """``text`` with each number said in words as a value written in digits (see the module docstring)."""
    if text.isascii():
        return _EN.sub(_en_digits, text) if _EN.search(text) else text
    text = _EN.sub(_en_digits, text)
    return _ZH.sub(_zh_digits, text)


def _en_digits(match: re.Match) -> str:
    if match.group("hundred"):
        return "100"
    if match.group("tens"):
        return str(_TENS[match.group("tens").lower()] + _UNITS.get((match.group("tens_unit") or "zero").lower(), 0))
    if match.group("teen"):
        return str(_TEENS[match.group("teen").lower()])
    return str(_UNITS[(match.group("unit") or match.group("set_unit")).lower()])


def _zh_digits(match: re.Match) -> str:
    run = match.group("run") or match.group("run2")
    value = _zh_value(run)
    if value is None:
        return match.group(0)
    return (match.group("before") or "") + str(value)
