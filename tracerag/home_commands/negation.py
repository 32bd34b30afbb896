"""Negated commands, read as what they ask for before any search.

A command search reads the verbs an utterance says, so "老人房的灯不用开了" (the lights there need not be
on any more) would find "on", and "别锁门" (don't lock the door) would find "lock": the opposite of
what was asked. :func:`read_negation` rewrites the utterance first:

- a negated verb that starts something (on, open, start: "不用开了", "别把灯打开", "don't turn the
  lights on") asks for its opposite, which stops it ("关闭", "turn ... off", "close");
- any other negated verb ("别锁门", "不要静音", "don't turn off the fan") asks for nothing to be done
  and is dropped; an utterance left without a verb or a value then asks for nothing at all;
- except a mute that has to end now ("别静音了", "电视别再静音了"): that asks for unmute;
- a negated clause beside another that asks for something ("don't open the roller doors, just turn the workshop
  lights on") only sets that apart, and is dropped;
- and a clause that keeps one thing shut beside another that opens all of a kind ("打开所有门锁，油库门不要开",
  "unlock all the doors, but leave the office locked") excepts it from them, as "除了" and "except" say.

So a negation never makes a command start, open or unlock anything: read wrongly, it stops something.
Only a negation word right before a verb counts: "别的灯都打开" (the other lights) and "厨房没人了"
(nobody is in the kitchen) negate nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .command_docs import SET_VERBS, VERB_SYNONYMS
from .text_match import join_tokens

_STARTING = ("on", "open")  # VERB_SYNONYMS keys whose verbs start something


def _chinese(*keys: str) -> set[str]:
    return {p for key in keys for p in VERB_SYNONYMS[key][0].split()}


def _alternation(words: set[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))  # longest first


_ZH_STARTING = _chinese(*_STARTING) | {"开着", "打开着", "开始"}
_ZH_OTHER = (_chinese(*VERB_SYNONYMS) - _ZH_STARTING) | {join_tokens(t) for t in SET_VERBS if not t[0].isascii()} \
    | {"关着", "关上", "锁", "调", "设", "换", "放"}
# 别 inside a word is no negation: 特别, 分别, 区别, 类别, 级别, 告别, 识别, 性别, 差别, 个别
_ZH_NEGATOR = r"(?<![特分区类级告识性差辨鉴个派离])" \
    r"(?:不用|不要|不需要|不必|无需|无须|没必要|用不着|不许|不准|不再|别|甭|勿)"
_ZH_BETWEEN = r"(?:再|去|给我|帮我|一直|先)*(?P<object>把[^，,。.!！?？;；]{1,12}?)?"
_ZH_VERB = re.compile(_alternation(_ZH_STARTING | _ZH_OTHER))
_ZH = re.compile(rf"{_ZH_NEGATOR}{_ZH_BETWEEN}(?P<verb>{_ZH_VERB.pattern})")

_EN_NEGATOR = r"\b(?:don'?t|do not|never|no need to|not|no longer)(?:\s+(?:need|have|bother|want)(?:\s+to)?)?\s+"
# "turn the lights on", "leave the door open": a verb whose state word may follow its object
_EN_PARTICLE_VERB = r"(?:turn|switch|power|leave|keep)"
_EN_OTHER = ("shut", "close", "lower", "lock", "unlock", "mute", "unmute", "pause", "play", "resume", "stop",
             "set", "dim", "brighten", "change", "adjust", "increase", "decrease", "put", "make", "raise")
_EN = re.compile(rf"{_EN_NEGATOR}(?:{_EN_PARTICLE_VERB}\s+(?P<middle>(?:[\w'-]+\s+){{0,5}}?)"
                 rf"(?P<state>on|off|open|closed|shut)\b|(?P<starting>open|start)\b|(?:{'|'.join(_EN_OTHER)})\b)",
                 re.IGNORECASE)
_EN_VERB = re.compile(rf"\b(?:{_EN_PARTICLE_VERB}|open|start|{'|'.join(_EN_OTHER)})\b", re.IGNORECASE)
_VALUE = re.compile(r"\d")
# a state that has to end now ("别静音了", "不要再静音了"): its undoing is asked for, not nothing
_STOP_MUTING = re.compile(r"(?:别|不要|不用|甭)(?:再)?静音了")


@dataclass(frozen=True, slots=True)
class NegationReading:
    """An utterance with its negated verbs read: ``text`` is what it asks for."""

    text: str
    negated: bool  # it said a negated verb
    asks_nothing: bool  # no verb or value is left once the negated verbs are read


def _zh_reading(match: re.Match) -> str:
    if match["verb"] not in _ZH_STARTING:
        return match["object"] or " "  # a negated verb that stops or sets something: nothing to do
    return f"{match['object'] or ''}关闭"


def _en_reading(match: re.Match) -> str:
    state, starting = (match["state"] or "").lower(), (match["starting"] or "").lower()
    if state == "on":
        return f"turn {match['middle']}off"
    if state == "open":
        return f"close {match['middle']}"
    if starting:
        return "close" if starting == "open" else "stop"
    return f" {match['middle'] or ''}"  # turn off, lock, mute ...: nothing to do


# a clause that keeps one shut beside another that opens all of a kind: what it names is excepted from them
# ("打开一楼所有门锁，油库门不要开", "unlock all the doors, but leave the office locked")
_ZH_KEPT_SHUT = re.compile(r"^(?:(?:不要|别|不用)把(?P<before>[^把]{1,12}?)(?:打开|开锁|解锁|开)|"
                           r"(?P<what>[^把]{1,12}?)(?:就|也|先)?(?:不要|别|不用|不)(?:再)?(?:打开|开锁|解锁|开))"
                           r"[了吧啊哦]?$")
_EN_KEPT_SHUT = re.compile(r"^(?:but\s+)?(?:please\s+)?(?:(?:don'?t|do\s+not|never)\s+(?:open|unlock)\s+(?P<what>.+?)|"
                           r"(?:leave|keep)\s+(?P<left>.+?)\s+(?:locked|shut|closed))(?:\s+(?:though|please))?$",
                           re.IGNORECASE)
_ALL_OPENED = re.compile(r"(?:所有|全部|全都|都|每个|每一个)[^，,]*(?:打开|开锁|解锁|开)|"
                         r"(?:打开|开锁|解锁|开)[^，,]*(?:所有|全部)|"
                         r"\b(?:all|every|everything|each)\b.*\b(?:open|unlock)\b|"
                         r"\b(?:open|unlock)\b.*\b(?:all|every|everything|each)\b", re.IGNORECASE)


def _kept_shut_excepted(utterance: str) -> str:
    """The utterance with a clause that keeps something shut, said beside one that opens all of a kind, read as
    that thing excepted from them: "打开所有门锁，油库门不要开" -> "除了油库门，打开所有门锁"."""
    clauses = [c.strip() for c in re.split(r"[，,;；。]", utterance) if c.strip()]
    kept, others = [], []
    for clause in clauses:
        match = _ZH_KEPT_SHUT.match(clause) or _EN_KEPT_SHUT.match(clause)
        if match:
            kept.append(next(g for g in match.groups() if g))
        else:
            others.append(clause)
    if not kept or not others or not any(_ALL_OPENED.search(c) for c in others):
        return utterance
    if utterance.isascii():
        return f"{', '.join(others)} except {' and '.join(kept)}"
    return f"除了{'和'.join(kept)}，{'，'.join(others)}"


def _without_what_is_set_apart(utterance: str) -> str | None:
    """The utterance less its negated clauses, where another clause asks for something ("don't open the roller
    doors, just turn the workshop lights on", "别开灯，开风扇"): the negation only sets that apart, and asks for
    nothing itself. None where no other clause asks."""
    clauses = _CLAUSE_ENDS.split(utterance)
    negated = [bool(_ZH.search(c) or _EN.search(c)) for c in clauses]
    asking = [not n and bool(_ZH_VERB.search(c) or _EN_VERB.search(c)) for c, n in zip(clauses, negated, strict=True)]
    if not any(negated) or not any(asking):
        return None
    return ", ".join(c.strip() for c, n in zip(clauses, negated, strict=True) if not n and c.strip())


_CLAUSE_ENDS = re.compile(r"[，,;；。]|\bbut\b|\binstead\b", re.IGNORECASE)


def read_negation(utterance: str) -> NegationReading:
    """The utterance with each negated verb read as what it asks for (see the module docstring)."""
    utterance = _kept_shut_excepted(utterance)
    utterance = _STOP_MUTING.sub("取消静音", utterance)  # "别静音了": mute no longer, i.e. unmute (no negation)
    if (asked := _without_what_is_set_apart(utterance)) is not None:
        return NegationReading(asked, negated=True, asks_nothing=False)
    text, zh = _ZH.subn(_zh_reading, utterance)
    text, en = _EN.subn(_en_reading, text)
    if not zh + en:
        return NegationReading(utterance, negated=False, asks_nothing=False)
    # a verb that was read as its opposite is left in the text, so "nothing left" means nothing started
    left = _ZH_VERB.search(text) or _EN_VERB.search(text) or _VALUE.search(text)
    return NegationReading(text, negated=True, asks_nothing=not left)


def is_negated(text: str) -> bool:
    """Whether the text says a negated verb ("灯不用开了", "don't lock"), read or not."""
    return bool(_ZH.search(text) or _EN.search(text))
