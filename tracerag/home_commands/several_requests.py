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
from .request_reading import CLAUSE, read_request

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


def _asks(index, clause: str) -> bool:
    """Whether the clause is a request of its own: a verb for an operation, and a device or a kind it names."""
    if not clause.strip() or not read_request(clause).is_request:
        return False
    verbs = any(role in (OPERATION, SWITCH) and meaning is not None
                for _, role, meaning in words_said(verb_text(clause, index)))
    return verbs and (bool(named(index, clause).any()) or bool(categories_said(index.names.without_names(clause))))
