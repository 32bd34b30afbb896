"""A supply's main: the one water or gas valve that shuts off the whole home's supply of it.

"turn the water main back on", "open the stopcock", "the water to the house", 自来水总阀 ask for the water main,
not for any water valve; "the gas main", "gas back on at the meter", 燃气总阀 for the gas main, never the oxygen
manifold or the hob's valve. Where a hose valve and an irrigation valve stand beside the water main, saying "the
water main" is no question of which. The main is the valve of its supply whose label, room or own name says so
(main, shutoff, stopcock, meter, 总), else the one valve of it no word of which says it serves one place or use (a
hose, a sprinkler, a trough; a hob, a torch, oxygen). None where that leaves several, or none: then the valves are
asked about as before.
"""

from __future__ import annotations

import re

import numpy as np

from .category_words import categories_said
from .text_match import tokens

# what an utterance says of the supply to the whole home, never of a branch of it
_MAIN_SAID = {
    "WaterValve": re.compile(
        r"\b(?:water\s+mains?|mains\s+water|main\s+water|stop\s*cock|stop\s*tap)\b|"
        r"\bwater\b[\w\s']{0,30}?\b(?:main\s+(?:valve|shut-?off|supply|tap)|to\s+the\s+(?:whole\s+)?"
        r"(?:house|home|building|flat|property))\b|"
        r"总水阀|水总阀|水的总阀|自来水总|进户水阀|入户水阀", re.I),
    "GasValve": re.compile(
        r"\b(?:gas\s+mains?|mains\s+gas|main\s+gas|gas\s+meter)\b|"
        r"\bgas\b[\w\s']{0,30}?\b(?:main\s+(?:valve|shut-?off|supply)|(?:at|by)\s+the\s+meter|to\s+the\s+(?:whole\s+)?"
        r"(?:house|home|building|flat|property))\b|"
        r"燃气总阀|煤气总阀|天然气总阀|气总阀|燃气表", re.I),
}
_MAIN_WORDS = frozenset({"main", "mains", "shutoff", "shut", "stopcock", "whole", "meter", "总", "表"})
# words of a valve that serves one place or use: "the water main", "the gas main" are none of them
_BRANCH_WORDS = {
    "WaterValve": frozenset({"hose", "sprinkler", "sprinklers", "irrigation", "garden", "drip", "trough", "lawn",
                             "spigot", "faucet", "tap", "timer", "zone", "field", "orchard", "pool", "tub", "pond",
                             "浇", "灌", "滴", "喷", "淋", "花"}),
    "GasValve": frozenset({"oxygen", "o2", "nitrous", "co2", "beer", "torch", "hob", "cooker", "stove", "fire",
                           "fireplace", "bbq", "grill", "kiln", "forge", "wok", "woks", "oven", "heater", "bottle",
                           "cylinder", "氧", "灶", "炉", "热", "瓶"}),
}


def main_said(index, text: str) -> str | None:
    """The supply whose main the text asks for, and nothing else ("the water main", "at the stopcock", 总水阀; "gas
    back on at the meter"): "WaterValve", "GasValve" or None. "总水阀旁边那个灯" is a light."""
    if not any(said.search(text) for said in _MAIN_SAID.values()):
        return None
    for room in index.names.mentioned_rooms(text):  # "打开燃气表间": a room, no gas meter
        text = re.sub(re.escape(room), " ", text, flags=re.I)
    acted_on = set(categories_said(index.names.without_landmarks(text)))
    return next((kind for kind, said in _MAIN_SAID.items() if said.search(text) and acted_on == {kind}), None)


def the_main(index, kind: str) -> np.ndarray:
    """Per device: the home's one main of the supply (see the module docstring); none where it cannot be told."""
    def find() -> np.ndarray:
        home = index.home
        valves = np.flatnonzero(index.table.device_categories == kind).tolist()
        words = {d: set(tokens(f"{home.devices[d].label} {home.devices[d].room} {home.devices[d].model}"))
                 for d in valves}
        branch = set(tokens(" ".join(_BRANCH_WORDS[kind])))  # as labels are read: "nitrous" is "nitrou"
        main_words = set(tokens(" ".join(_MAIN_WORDS)))
        mains = [d for d in valves if words[d] & main_words and not words[d] & branch]
        if not mains:
            mains = [d for d in valves if not words[d] & branch]
        out = np.zeros(len(home.devices), dtype=bool)
        if len(mains) == 1:
            out[mains] = True
        return out
    return index.memo(("the main", kind), find)


# what may burn gas: a room with one of these is fed by the gas supply
_GAS_BURNERS = frozenset({"Cooktop", "Oven", "Range", "WaterHeater", "Boiler", "Fireplace", "Stove", "Grill"})
_GAS_NAMED = re.compile(r"\bgas\b|燃气|煤气|天然气|灶", re.I)


def gas_feeding(index, rooms: list[str]) -> np.ndarray:
    """Per device, for the gas of rooms said (厨房的燃气, "the gas in the kitchen"): where they burn gas (a cooktop,
    an oven, a water heater, or a device a label says burns it) and hold no gas valve, the home's one gas valve or
    its main; none otherwise (茶室的燃气 opens nothing)."""
    none = np.zeros(len(index.home.devices), dtype=bool)
    gas = index.table.in_category("GasValve")
    there = index.rooms.devices_in(rooms)
    if (there & gas).any() or not (there & _burning_gas(index)).any():
        return none
    return gas if gas.sum() == 1 else the_main(index, "GasValve")


def _burning_gas(index) -> np.ndarray:
    """Per device: an appliance that may burn gas, read once per index."""
    return index.memo(("gas burners",), lambda: index.table.in_categories(_GAS_BURNERS) | np.asarray(
        [bool(_GAS_NAMED.search(d.label)) and d.category != "GasValve" for d in index.home.devices], dtype=bool))
