"""The water main: the one water valve that shuts off the whole home's supply.

"turn the water main back on", "open the stopcock", "the water to the house", 自来水总阀 ask for the main, not for
any water valve: where a hose valve and an irrigation valve stand beside it, saying "the water main" is no
question of which. The main is the water valve whose label, room or own name says so (main, shutoff, stopcock,
总), else the one water valve no word of which says it serves one place (a hose, a sprinkler, a trough). None
where that leaves several, or none: then the valves are asked about as before.
"""

from __future__ import annotations

import re

import numpy as np

from .category_words import categories_said
from .text_match import tokens

# what an utterance says of the supply to the whole home, never of a branch of it (nor of the gas: 煤气总阀)
_MAIN_SAID = re.compile(
    r"\b(?:water\s+mains?|mains\s+water|main\s+water|stop\s*cock|stop\s*tap)\b|"
    r"\bwater\b[\w\s']{0,30}?\b(?:main\s+(?:valve|shut-?off|supply|tap)|to\s+the\s+(?:whole\s+)?"
    r"(?:house|home|building|flat|property))\b|"
    r"总水阀|水总阀|水的总阀|自来水总|进户水阀|入户水阀",
    re.I)
_MAIN_WORDS = frozenset({"main", "mains", "shutoff", "shut", "stopcock", "whole", "总"})
# words of a valve that serves one place or use: "the water main" is none of them
_BRANCH_WORDS = frozenset({"hose", "sprinkler", "sprinklers", "irrigation", "garden", "drip", "trough", "lawn",
                           "spigot", "faucet", "tap", "timer", "zone", "field", "orchard", "pool", "tub", "pond",
                           "浇", "灌", "滴", "喷", "淋", "花"})


def says_water_main(index, text: str) -> bool:
    """Whether the text asks for the supply to the whole home ("the water main", "at the stopcock", 总水阀), and
    of nothing else: "总水阀旁边那个灯" is a light."""
    acted_on = set(categories_said(index.names.without_landmarks(text)))
    return _MAIN_SAID.search(text) is not None and acted_on == {"WaterValve"}


def the_water_main(index) -> np.ndarray:
    """Per device: the home's one water main (see the module docstring); none where it cannot be told."""
    def find() -> np.ndarray:
        home = index.home
        valves = np.flatnonzero(index.table.device_categories == "WaterValve").tolist()
        words = {d: set(tokens(f"{home.devices[d].label} {home.devices[d].room} {home.devices[d].model}"))
                 for d in valves}
        mains = [d for d in valves if words[d] & _MAIN_WORDS and not words[d] & _BRANCH_WORDS]
        if not mains:
            mains = [d for d in valves if not words[d] & _BRANCH_WORDS]
        out = np.zeros(len(home.devices), dtype=bool)
        if len(mains) == 1:
            out[mains] = True
        return out
    return index.memo(("the water main",), find)
