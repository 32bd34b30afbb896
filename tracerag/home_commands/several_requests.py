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


def first_request(index, text: str) -> str:
    """``text`` up to the end of its first request, where it makes more than one; else ``text`` as it is."""
    if _EXCEPTING.search(text):
        return text
    ends = [match.start() for match in CLAUSE.finditer(text)] + [len(text)]
    starts = [0] + [match.end() for match in CLAUSE.finditer(text)]
    asking = [end for start, end in zip(starts, ends, strict=True) if _asks(index, text[start:end])]
    return text[:asking[0]] if len(asking) > 1 else text


def _asks(index, clause: str) -> bool:
    """Whether the clause is a request of its own: a verb for an operation, and a device or a kind it names."""
    if not clause.strip() or not read_request(clause).is_request:
        return False
    verbs = any(role in (OPERATION, SWITCH) and meaning is not None
                for _, role, meaning in words_said(verb_text(clause, index)))
    return verbs and (bool(named(index, clause).any()) or bool(categories_said(index.names.without_names(clause))))
