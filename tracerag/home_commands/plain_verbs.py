"""English verbs people say for a command, in the words the command documents use: "activate the fans" ->
"turn on the fans", "lights out" -> "lights off", "unpause" -> "resume", "un lock" -> "unlock", "dis arm" ->
"disarm", "go back" -> "previous track", "lower the ramp" -> "open the ramp" (a ramp opens going down); a
Chinese verb said apart ("解个锁", "撤个防") -> said whole; 厨房的气 -> 厨房的燃气.

The documents hold one phrasing per command ("turn on, switch on, power on, start"); every synonym added
there thins the rest of the document for the lexical and dense channels alike, so what people also say is
rewritten in the utterance instead, before it is parsed and searched. Whole words only; the rest of the
utterance is left as said.
"""

from __future__ import annotations

import re

_RAMP = r"((?:the|a|my|our|that)\s+)?((?:[\w'-]+\s+){0,2}?)(ramps?|tailgates?|drawbridges?)"
_REWRITES = tuple((re.compile(pattern, re.IGNORECASE), plain) for pattern, plain in (
    # a ramp opens by going down and closes by going up ("lower the horsebox ramp", "get the ramp down")
    (rf"\b(?:lower|drop|let\s+down)\s+{_RAMP}\b", r"open \1\2\3"),
    (rf"\b(?:put|get|bring|let|take)\s+{_RAMP}\s+down\b", r"open \1\2\3"),
    (rf"\b(?:raise|lift)\s+(?:up\s+)?{_RAMP}\b", r"close \1\2\3"),
    (rf"\b(?:put|get|bring|take)\s+{_RAMP}\s+(?:back\s+)?up\b", r"close \1\2\3"),
    # a verb said apart, as voice typing does: "un lock the front door" is no "lock", "dis arm" no "arm"
    (r"\bun[\s-]+(lock|latch|bolt)\b", r"un\1"),
    (r"\bdis[\s-]+arm\b", "disarm"),
    (r"\bpre[\s-]+heat\b", "preheat"),
    (r"\bactivate\b", "turn on"),
    (r"\bdeactivate\b", "turn off"),
    (r"\bkill\s+(the\s+|my\s+|our\s+|all\s+)*(lights?|lamps?|lighting)\b", r"turn off \2"),
    (r"\b(turn|switch|put)\s+(the\s+|my\s+|our\s+|all\s+)*(lights?|lamps?|lighting)\s+out\b", r"turn off \3"),
    (r"\b(turn|switch|put)\s+out\b", "turn off"),
    (r"\b(lights?|lamps?|lighting)\s+out\b", r"\1 off"),
    (r"\bun-?pause\b", "resume"),
    (r"\b(go back|back one|replay the last track|last track|previous song)\b", "previous track"),
    (r"\b(re)?play\s+(the\s+)?(previous|last)(\s+(item|song|one))?(\s+again)?\b|\breplay\b", "previous track"),
    (r"\b(next song|skip (this|the) (song|track|item))\b", "next track"),
    (r"\blift( up)?\b", "raise"),
    # "light the burners": a fire lit is a heater switched on, and no word for a light
    (r"\blight\s+((?:the|my|our|a|an|one|two|all|both|up)\s+)?(burners?|stove(?:top)?s?|hobs?|cooktops?|ovens?|"
     r"fireplaces?|grills?|bbq|barbecues?|forges?|kilns?|fire|pilot)\b", r"turn on \1\2"),
))

# verb-object words people split with a measure word or 上: 解个锁 is 解锁, 撤个防 撤防, 点个火 and 点上火 点火
_SPLIT_ZH = re.compile(r"(解|撤|布|点|开|关)(?:一个|个|上)(锁|防|火|灯|门)")
# the gas of a place or an appliance, said 气 alone: 厨房的气 is its 燃气, 热水器的气 the 燃气 it burns (and
# never the 气温, 气泵 or 气味 of anything: only a 气 a verb or the clause's end follows)
_GAS_OF = re.compile(r"的气(?=[开打关给先再]|\s*(?:[，,。.!！?？;；]|$))")


def plain_verbs(text: str) -> str:
    """``text`` with each English verb phrase of the table above in the documents' words, and each Chinese
    verb said apart said whole."""
    if not text.isascii():
        text = _GAS_OF.sub("的燃气", _SPLIT_ZH.sub(r"\1\2", text))
        if not re.search(r"[A-Za-z]", text):
            return text
    for pattern, plain in _REWRITES:
        text = pattern.sub(plain, text)
    return text
