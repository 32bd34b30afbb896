"""An utterance that makes several requests is answered for the first of them, never a mix of two.

"open the front gate and turn on the gate light", "把报警器关了，然后打开报警灯": each clause asks an operation of a
device of its own. Read whole, the first clause's operation meets the second clause's device (the gate light
"opened", the alarm light switched off) or no device at all (the curtains opened in the gate's place). One
answer is one request: the first, with the clauses before it that it may point back to ("the coop door, open
it please" is one request). A clause that only adds to a request ("烤箱打开，两百度": the setpoint; "turn on the
light and the fan": a second device for the same verb) makes no request of its own.
"""

from __future__ import annotations

import re

from .category_words import categories_said
from .operation_words import OPERATION, SWITCH, verb_text, words_said
from .referents import named
from .request_reading import CLAUSE, CONDITION, read_request

# an exception said in a clause of its own is no request ("turn off the lights but leave the night light on")
_EXCEPTING = re.compile(r"\b(?:except|but|besides|apart from|other than|excluding)\b|除了|除去|除外|以外|之外|不包括",
                        re.IGNORECASE)


def first_request(index, text: str) -> tuple[str, str]:
    """(``text`` up to the end of its first request, the rest after it) where it makes more than one; else
    (``text``, ""). The rest is what the caller may ask again ("lock the side door, turn off the side door
    light" -> "turn off the side door light")."""
    clauses = list(CLAUSE.finditer(text))
    if not clauses or _EXCEPTING.search(text):
        return text, ""
    ends = [match.start() for match in clauses] + [len(text)]
    starts = [0] + [match.end() for match in clauses]
    asking = [i for i, (start, end) in enumerate(zip(starts, ends, strict=True)) if _asks(index, text[start:end])]
    if len(asking) < 2:
        return text, ""
    return text[:ends[asking[0]]], text[starts[asking[0] + 1]:].strip()


def asking_clause(index, text: str) -> str:
    """The one clause of ``text`` that asks something of a device, where the others only tell ("阿姨来打扫了，把玄关
    的门锁打开": the lock's clause, not the cleaning); ``text`` itself otherwise."""
    parts = [c for c in CLAUSE.split(text) if c.strip()]
    if len(parts) < 2:
        return text
    asking = [c for c in parts if _asks(index, c)]
    return asking[0] if len(asking) == 1 else text


def acting_clauses(index, text: str) -> str:
    """The clauses of ``text`` that say an operation ("入户门的锁打开一下，朋友到楼下了" -> the first: where the friend
    is asks nothing of the home); ``text`` itself where none or all do."""
    parts = [c for c in CLAUSE.split(text) if c.strip()]
    acting = [c for c in parts if _says_operation(index, c)]
    return " , ".join(acting) if acting and len(acting) < len(parts) else text


def _says_operation(index, clause: str) -> bool:
    return any(role in (OPERATION, SWITCH) and meaning is not None
               for _, role, meaning in words_said(verb_text(clause, index)))


def _asks(index, clause: str) -> bool:
    """Whether the clause is a request of its own: a verb for an operation, and a device or a kind it names; no
    plan or condition of the speaker's ("before I open the coin safe, turn the counter lamp on": the lamp)."""
    if not clause.strip() or not read_request(clause).is_request or CONDITION.search(clause):
        return False
    return _says_operation(index, clause) and \
        (bool(named(index, clause).any()) or bool(categories_said(index.names.without_names(clause))))
