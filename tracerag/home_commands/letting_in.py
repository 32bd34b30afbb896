"""Someone let in: "let them into the bunkhouse", "buzz the courier in".

Letting someone in asks for a door (``room_doors`` finds which), and the person it lets in names no device: "let
the cleaner in" is no Robot Cleaner. Who comes in also says where: a visitor at the house's way in, the cows into
the barn, a car through the gate, and the speaker at a door only they know. (Chinese 让…进来 is not read so: 让
says "let" and "make" alike, and the referent suites' authors disagree on whether it asks for a door.)
"""

from __future__ import annotations

import re

LET_IN = re.compile(r"\b(?:let|buzz)\s+(?:him|her|us|me|them|(?:the|my|our)\s+[\w']+)\s+"
                    r"(?:(?:drive|come|walk|get|step|pull|roll)\s+)?(?:in(?:to)?|up\s+(?:on)?to|through)\b", re.I)

# whom a let-in phrase lets in: "let (the cleaner) in"
_WHOM = re.compile(r"(\b(?:let|buzz)\s+)((?:the|my|our)\s+[\w']+)"
                   r"(?=\s+(?:(?:drive|come|walk|get|step|pull|roll)\s+)?(?:in(?:to)?|up\s+(?:on)?to|through)\b)", re.I)

_NOT_ON_FOOT = re.compile(r"\b(?:cows?|cattle|calf|calves|chickens?|hens?|sheep|lambs?|goats?|horses?|ponies|pony|"
                          r"pigs?|ducks?|geese|goose|animals?|herd|flock|livestock|stock|dogs?|cats?|puppy|kitten|"
                          r"pets?|drive|driving|pull|roll|cars?|vans?|trucks?|lorry|lorries|tanker|vehicles?|"
                          r"air|breeze|wind|light|sun|sunlight|sunshine|heat|warmth|cold|rain|water|smoke|steam)\b",
                          re.I)


def without_whom(text: str) -> str:
    """The text without the person it lets in: "let the cleaner in" -> "let · in". Animals let in say where ("let
    the chickens in": the Chicken Coop Door), and stay."""
    return _WHOM.sub(lambda m: m.group(0) if _NOT_ON_FOOT.search(m.group(0)) else f"{m.group(1)} · ", text)


def a_visitor_let_in(text: str) -> bool:
    """Whether the text lets someone else in on foot ("let the guests in"): they come to the house's way in. The
    speaker let in ("let me in") stands at a door the home cannot know; animals and cars come in
    elsewhere ("let the cows in": the barn; "let them drive in": the gate), and the air through a window."""
    return bool(LET_IN.search(text)) and not _SPEAKER.search(text) and not _NOT_ON_FOOT.search(text)


_SPEAKER = re.compile(r"\b(?:let|buzz)\s+(?:me|us)\b", re.I)
