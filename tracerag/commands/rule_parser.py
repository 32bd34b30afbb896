"""The no-LM parser: a QueryIR from what the home's own data can justify.

Used when no LM is configured or the LM's parse fails. It finds the rooms and device names the
utterance mentions (from rooms.json / devices.json, so it works for any home and language) and
quantifier words from a small closed list. It never guesses a category (type_hint stays Unknown):
mapping words to categories is the LM's job, and bulk mode checks the category against the home's
devices before expanding anything.
"""

from __future__ import annotations

import re

from ..home_commands.command_docs import VERB_RUNS
from ..home_commands.home_index import CommandIndex
from ..home_commands.home_names import FILLER_TOKENS
from ..home_commands.home_operations import kinds_meant, operation_in
from ..home_commands.operation_words import verb_text
from ..home_commands.safety_screen import safety_of
from ..home_commands.several_requests import asking_clause
from ..home_commands.text_match import (
    contains,
    join_tokens,
    phrase_mask,
    remove_phrases,
    split_on_phrases,
    tokens,
)
from ..signatures.query_ir import QueryIR

ALL_WORDS = ("所有", "全部", "全都", "都", "每个", "每一个", "整个", "全屋", "一切", "统统",
             "all", "every", "everything", "each", "whole")
# "Except" markers whose excluded part follows them ("除了书房以外", "except the office") ...
EXCEPT_BEFORE = ("除了", "除去", "except for", "except", "other than", "apart from", "besides", "but not", "but")
# ... and those whose excluded part precedes them in the same clause ("书房的除外").
EXCEPT_AFTER = ("除外", "不包括", "不算", "以外", "之外")
EXCEPT_WORDS = (*EXCEPT_BEFORE, *EXCEPT_AFTER)
_QUANTIFIER_TOKENS = tuple(tokens(w) for w in (*ALL_WORDS, *EXCEPT_WORDS))
_CLAUSE_END = re.compile(r"以外|之外|[,，;；。.!！?？]")
_CLAUSE_START = re.compile(r"[,，;；。.!！?？]")


def _has_word(text: str, words: tuple[str, ...]) -> bool:
    lowered = text.lower()
    return any(re.search(rf"\b{re.escape(w)}\b", lowered) if w.isascii() else w in text for w in words)


def parse_without_lm(utterance: str, index: CommandIndex) -> QueryIR:
    """Deterministic QueryIR: rooms, device name, quantifier; type_hint Unknown."""
    excluded: list[str] = []
    quantifier = "one"
    wanted = utterance  # the part that says what to act on
    if _has_word(utterance, EXCEPT_WORDS):
        quantifier = "except"
        clause = _excluded_clause(utterance)
        excluded = list(dict.fromkeys(e for part in _EXCEPTED_PARTS.split(_LEAVE.sub(" ", clause)) if part.strip()
                                      for e in _excepted(part, index)))
        wanted = utterance.replace(clause, " ") if clause.strip() else utterance
    elif _has_word(utterance, ALL_WORDS):
        quantifier = "all"
    # a room said inside the excluded clause qualifies what is excluded ("书房台灯除外"), never the scope
    excluded_rooms = set(excluded)  # a building's wings: hundreds of rooms on each side
    included = [r for r in index.names.mentioned_rooms(wanted) if r not in excluded_rooms]
    # a device named in the excluded clause ("except the desk lamp") is the one device not wanted:
    # it must not become the name hint that bulk mode narrows the targets to
    parsed = QueryIR(action=_action(utterance, index), type_hint="Unknown",
                     name_hint=_name_hint(index.names.without_landmarks(wanted), index),
                     scope_include=included, scope_exclude=excluded, quantifier=quantifier)
    # the operation of the clause that asks something of a device, where another only tells ("阿姨来打扫了，...")
    asking = asking_clause(index, utterance)
    # of the kinds that clause names, where it names only ordinary ones ("设备间的灯开一下，我去看看总阀": a light,
    # no valve); a sensitive kind is read from all that was said, as the safety screen reads it
    said = kinds_meant(index, parsed, asking) if asking != utterance else frozenset()
    kinds = said if said and not said & safety_of(index).sensitive.categories else \
        kinds_meant(index, parsed, utterance)
    operation = operation_in(index, verb_text(asking, index), kinds)
    return parsed.model_copy(update={"operation": operation}) if operation else parsed




# what is excepted, one part at a time ("except the well pump and the chest freezer"), "leave ... on" said around it
_EXCEPTED_PARTS = re.compile(r"\b(?:and|or|nor)\b|[和与跟及、,，/&]", re.IGNORECASE)
_LEAVE = re.compile(r"^\s*(?:leave|keep)\b|\b(?:on|off|alone|as\s+it\s+is|be)\s*$", re.IGNORECASE)


def _excepted(part: str, index: CommandIndex) -> list[str]:
    """The scope_exclude entries one excepted part says. A whole device name ("the desk lamp", "书房台灯") excepts
    that device, the room words before it and all; part of a name does not (卧室 of a lamp called 卧室小夜灯 still
    names the bedrooms); a run of a name said with no room ("the workshop one") excepts the devices carrying it."""
    said = tokens(part)
    names = [name for name in (*index.names.name_phrases.found_in(said), *index.names.label_phrases.found_in(said))
             if len("".join(name)) >= 2]
    if names:  # a device name, with the room words before it: the index excepts that device
        content = _content_tokens(part)  # up to the name's end: "the bed lights" excepts "bed"
        return [join_tokens(content[:max(_end_of(content, name) for name in names)])]
    words = [*index.rooms.words_said(part), *_unknown_words(part, index)]
    rooms = [r for word in words for r in (*index.rooms.meant_by(word), *index.rooms.aliases.get(word, ()))]
    if rooms:
        return rooms
    runs = [*(run for run in index.names.run_phrases.found_in(said) if len("".join(run)) >= 3),
            *((t,) for t in said if t.isascii() and len(t) >= 4 and t not in FILLER_TOKENS
              and index.names.carrying((t,)).any())]
    return [join_tokens(max(runs, key=len))] if runs else []


def _excluded_clause(utterance: str) -> str:
    """The part of an "except" utterance that names what is excluded."""
    lowered = utterance.lower()
    for word in EXCEPT_BEFORE:
        match = re.search(rf"\b{word}\b" if word.isascii() else word, lowered)
        if match:
            end = _CLAUSE_END.search(utterance, match.end())
            return utterance[match.end():end.start() if end else len(utterance)]
    for word in EXCEPT_AFTER:
        at = utterance.find(word)
        if at >= 0:
            starts = [m.end() for m in _CLAUSE_START.finditer(utterance, 0, at)]
            return utterance[(starts[-1] if starts else 0):at]
    return ""


def _end_of(toks: tuple[str, ...], phrase: tuple[str, ...]) -> int:
    """Where the last occurrence of ``phrase`` in ``toks`` ends (``len(toks)`` if it does not occur)."""
    ends = [i + len(phrase) for i in range(len(toks) - len(phrase) + 1) if toks[i:i + len(phrase)] == phrase]
    return max(ends, default=len(toks))


def _content_tokens(text: str) -> tuple[str, ...]:
    return tuple(t for t in tokens(text) if t not in FILLER_TOKENS)


def _unknown_words(text: str, index: CommandIndex) -> list[tuple[str, ...]]:
    """The runs of the text that are no room, device name, quantifier or filler word.

    In the excluded clause such a run names a room the home calls otherwise ("除了卧室" where the
    rooms are 主卧 and 次卧). Only whole names count as device words here: 卧室 of a lamp called
    卧室小夜灯 is still a room word."""
    said = tokens(text)
    return split_on_phrases(said, [*index.rooms.phrases.found_in(said), *index.names.name_phrases.found_in(said),
                                   *_QUANTIFIER_TOKENS, *((t,) for t in FILLER_TOKENS)])


def _device_words(text: str, index: CommandIndex) -> list[tuple[str, ...]]:
    """The device names and name runs ("风扇" of 小米风扇) the text contains, and runs of Latin words a
    name holds in order ("hue spots" of Hue ambiance spot)."""
    said = tokens(text)
    names = index.names
    return [*names.name_phrases.found_in(said), *names.run_phrases.found_in(said), *_words_of_names(said, index)]


def _words_of_names(said: tuple[str, ...], index: CommandIndex) -> list[tuple[str, ...]]:
    """Runs of two or more Latin words of the text that some device name holds in order, others allowed
    between them ("hue spots": "Hue ambiance spot 3"), longest first; fillers end a run."""
    found: list[tuple[str, ...]] = []
    for span in split_on_phrases(said, [(t,) for t in said if not t.isascii() or t in FILLER_TOKENS]):
        for start in range(len(span) - 1):
            for end in range(len(span), start + 1, -1):
                run = span[start:end]
                if not any(contains(f, run) for f in found) and index.names.carrying(run).any():
                    found.append(run)
                    break
    return sorted(found, key=len, reverse=True)


def _name_hint(utterance: str, index: CommandIndex) -> str:
    """The longest device name (of two or more characters) the utterance contains in full, else the
    longest run of three or more words of device names it contains, else the longest run of Latin
    words a name holds in order ("hue spots").

    One-character names such as "灯" (what "客厅灯" is called once its room is removed) are left
    out: they name a kind of device, not a device. A Latin word is a word: "lamp" names the lamps.
    """
    said = tokens(utterance)
    named = {key for key in index.names.name_phrases.found_in(said) if len("".join(key)) >= 2}
    if not named:  # three or more words of names ("床头灯" of 床头灯左 and 床头灯右) name those devices
        named = {run for run in index.names.run_phrases.found_in(said) if len(run) >= 3}
    if not named:  # Latin words a name holds in order ("hue spots")
        named = set(_words_of_names(said, index))
    # ties go to more characters (more specific), then to the one said first: never to a set's order
    return join_tokens(max(sorted(named, key=lambda run: _position(said, run)),
                           key=lambda run: (len(run), len("".join(run))))) if named else ""


def _position(said: tuple[str, ...], run: tuple[str, ...]) -> int:
    return next((i for i in range(len(said)) if said[i:i + len(run)] == run), len(said))


def _action(utterance: str, index: CommandIndex) -> str:
    """The utterance without rooms, device names and quantifier words: the intent, roughly.

    Device words must go: "把所有空调都关了" should search for 关了, not for documents that
    mention 空调 ("设置空调模式")."""
    said = tokens(utterance)
    rest = remove_phrases(said, [*index.rooms.phrases.possible_in(said), *_device_words(utterance, index),
                                 *_QUANTIFIER_TOKENS, *((t,) for t in index.names.category_words_said(said))])
    # a filler inside a verb phrase is part of it: 一 of "下一首" stays, or 下首 would mean nothing
    in_verb = phrase_mask(rest, VERB_RUNS)
    return join_tokens(tuple(t for t, verb in zip(rest, in_verb, strict=True) if verb or t not in FILLER_TOKENS))
