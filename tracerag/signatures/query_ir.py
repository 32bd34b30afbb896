"""QueryIR: the structured reading of a smart-home utterance.

Both the LM parser (`ParseCommand`) and the deterministic no-LM parser produce it, so everything
downstream (the command index, bulk mode, metrics) has one input shape. Values an LM gets wrong are
normalised here rather than rejected: an app must never fail because a parse was sloppy.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from ..device_categories import DEVICE_CATEGORIES, UNKNOWN_CATEGORY, known_category
from ..device_operations import Operation, known_operation

# The device categories and their aliases live with the home model (tracerag/device_categories.py); the LM
# must choose from this list, and anything else is normalised to "Unknown", which disables category gating.
Quantifier = Literal["one", "any", "all", "except"]
CategoryName = Literal[(*DEVICE_CATEGORIES, UNKNOWN_CATEGORY)]  # shown to the LM as an enum
BULK_QUANTIFIERS = frozenset({"all", "except"})

_LATIN = re.compile(r"[A-Za-z]")
_CJK = re.compile(r"[\u3400-\u9fff]")
# A number with a unit says which kind of value is being set; the command documents carry the same
# unit words (see home_commands/command_docs.py), so "26度" meets "温度" and "50%" meets "百分比"; "调暗一点"
# and "暖一点" name the value they change without the word the documents use for it.
_UNIT_HINTS = (
    (re.compile(r"\d\s*(度|℃|°)"), "温度"),
    (re.compile(r"\d\s*%|百分之|一半|半开|\bhalf(way)?\b", re.IGNORECASE), "百分比"),
    # what a relative value is about: brightness and colour temperature are what users leave unsaid
    (re.compile(r"[调变]?[暗亮](一)?[点些]|最[暗亮]|调[暗亮]"), "亮度"),
    (re.compile(r"[暖冷](一)?[点些]|[暖冷](白|光|色)"), "色温"),
    (re.compile(r"\b(dim|dimmer|brighter|brighten|brightness)\b", re.IGNORECASE), "brightness"),
    (re.compile(r"\b(warm|cool) (white|light)|\bwarmer\b|\bcooler light", re.IGNORECASE), "color temperature"),
)
# The utterance carries a value to set ("调到50%", "26度", "音量调到30", "一半", "to 40%", "HDMI 2"):
# only a command that takes an argument can honour it. Ordinals in names ("筒灯3") do not count.
_VALUE = re.compile(r"\d\s*(%|度|℃|°|档|级|percent|degrees?)|百分之|一半|\bhalf(way)?\b|最(暗|亮|低|高|大|小)|"
                    r"(到|成|为|至|to|at)\s*\d|hdmi\s*\d|频道\s*\d|第\s*\d", re.IGNORECASE)
# ... and when it says "to" that value ("调到50%", "set to 40%", "一半"), the value is a target, which a
# command that only changes a value by an amount (range -100..100) cannot reach.
_TARGET = re.compile(r"(到|成|为|至|\bto\b|\bat\b)\s*(百分之)?\d|百分之|一半|\bhalf(way)?\b", re.IGNORECASE)
# Words that switch, open or unlock something ("on"), or switch off, close or lock it ("off"): in an action
# phrase (Chinese by contract, English tolerated) or an utterance. "开关" is the noun "switch", not a
# polarity. A text with both kinds of word (or neither) has none.
_ON = re.compile(r"开|启动|通电|解锁|布防|\b(on|open|start|enable|unlock|unlatch|arm|activate|up)\b", re.IGNORECASE)
_OFF = re.compile(r"关|停|断电|锁上|上锁|锁门|锁好|锁住|反锁|撤防|撤销|解除|取消|闭嘴|别响|不要响|安静|"
                  r"\b(off|out|close|stop|pause|disable|shut|lock|disarm|deactivate|silence|kill|cancel|down|quiet)\b",
                  re.IGNORECASE)


_UNLOCK = re.compile(r"\b(unlock|unlatch)", re.IGNORECASE)
_LOCK_NOUN = re.compile(r"\block\b", re.IGNORECASE)


def action_polarity(action: str) -> str | None:
    """"on" (打开, 开启, 启动, 解锁, turn on, unlock …), "off" (关闭, 关掉, 停止, 断电, 锁上, turn off, lock …) or
    None."""
    text = (action or "").replace("开关", "")
    if _UNLOCK.search(text):
        text = _LOCK_NOUN.sub(" ", text)  # "unlock the door lock": that "lock" is the door's
    on, off = bool(_ON.search(text)), bool(_OFF.search(text))
    return "on" if on and not off else "off" if off and not on else None


def normalize_category(value: object) -> str:
    """Map a free-form category (or a SmartThings alias: SmartLock, Shade) to its canonical spelling, or
    "Unknown"."""
    if not isinstance(value, str):
        return UNKNOWN_CATEGORY
    known = known_category(value)
    return known if known in DEVICE_CATEGORIES else UNKNOWN_CATEGORY


def _as_name_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = re.split(r"[,，、;；]", value)
    if not isinstance(value, list | tuple):
        return []
    return [str(v).strip() for v in value if str(v).strip()]


class QueryIR(BaseModel):
    """What the user asked for: the operation, an intent phrase, and hints that narrow the device set."""

    operation: Operation | None = Field(
        None, description="what is to be done, from the closed set (on, off, set_level, unlock, next ...); other "
                          "for a command outside it; null when not read")
    action: str = Field("", description="Chinese intent phrase without Latin letters, e.g. 打开, 调到制冷模式")
    type_hint: CategoryName = Field(UNKNOWN_CATEGORY, description="the device category, or Unknown")
    name_hint: str = Field("", description="device name words the user said, else empty")
    scope_include: list[str] = Field(default_factory=list, description="room names the user limited to")
    scope_exclude: list[str] = Field(default_factory=list,
                                     description="room names the user excluded, or the name of a single device "
                                                 "excepted (except the desk lamp)")
    quantifier: Quantifier = Field("one", description="one | any | all | except")

    @field_validator("action", "name_hint", mode="before")
    @classmethod
    def _text(cls, v: object) -> str:
        return v.strip() if isinstance(v, str) else ""

    @field_validator("operation", mode="before")
    @classmethod
    def _operation(cls, v: object) -> str | None:
        return known_operation(v)

    @field_validator("type_hint", mode="before")
    @classmethod
    def _category(cls, v: object) -> str:
        return normalize_category(v)

    @field_validator("scope_include", "scope_exclude", mode="before")
    @classmethod
    def _rooms(cls, v: object) -> list[str]:
        return _as_name_list(v)

    @field_validator("quantifier", mode="before")
    @classmethod
    def _quantifier(cls, v: object) -> str:
        v = v.strip().lower() if isinstance(v, str) else ""
        return v if v in ("one", "any", "all", "except") else "one"

    @property
    def has_category(self) -> bool:
        return self.type_hint != UNKNOWN_CATEGORY

    @property
    def is_bulk(self) -> bool:
        return self.quantifier in BULK_QUANTIFIERS

    @staticmethod
    def carries_value(raw_query: str) -> bool:
        return bool(_VALUE.search(raw_query))

    @staticmethod
    def sets_target(raw_query: str) -> bool:
        return bool(_TARGET.search(raw_query))

    def search_texts(self, raw_query: str) -> list[str]:
        """What to embed: the search text, plus the raw utterance when it is not Chinese.

        The action is Chinese by contract; for an English utterance in a home described in
        English, the utterance itself is the better match, so both are searched (best one wins)."""
        text = self.search_text(raw_query)
        if _CJK.search(raw_query) or text == raw_query:
            return [text]
        return [text, raw_query]

    def search_text(self, raw_query: str) -> str:
        """The text to embed: the action, unless it is empty or, for a Chinese utterance, holds Latin
        letters (then the raw query); plus unit words for the values the utterance sets."""
        # A Latin action for a Chinese utterance is an LM that answered in the wrong language.
        usable = self.action and not (_LATIN.search(self.action) and _CJK.search(raw_query))
        text = self.action if usable else raw_query
        hints = [word for pattern, word in _UNIT_HINTS if pattern.search(raw_query) and word not in text]
        return " ".join([text, *hints])
