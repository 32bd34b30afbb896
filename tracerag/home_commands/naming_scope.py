"""How many devices a one-device parse means: that one device, every device of a kind, or an area.

A parse says "one", but the words may say more: "关百叶窗" names only a kind, so every blind in the home is
meant; "客厅灯光调到50%" names a room, so every light there is; "餐厅筒灯2" says one device's whole label, so
it is that device, never every 筒灯 in the dining room. ``CommandRetrieval`` reads these judgements to turn a
single-target search into a bulk plan (``bulk_plans``) or to keep it one device.
"""

from __future__ import annotations

import re

import numpy as np

from ..signatures.query_ir import QueryIR
from .category_words import categories_said, general_word, is_kind_word
from .command_results import Candidate
from .home_names import compact, says_label
from .negation import is_negated
from .referents import named

# "随便开一盏灯", "turn on a light", "any speaker": one device of the kind will do, never all of them ("那盏灯": one)
_ONE_OF = re.compile(r"随便|任意|哪个都|哪盏都|[一某][盏个台只部]|[那这][盏台只部]|"
                     r"\b(any|one|either|an?(?! (bit|little|few)\b))\b", re.IGNORECASE)


def says_one_device(index, device_id: str, utterance: str) -> bool:
    """Whether the utterance says this device's whole label, its number included ("餐厅筒灯2", not the
    "筒灯" six lamps share), and that label is this device's alone, or alone in the room said ("一楼客厅的
    筒灯5"): it asks for that one device, never for every device of its kind in its room."""
    names = index.names
    device = index.home.device(device_id)
    label = compact(device.label)
    if not label or not says_label(utterance, label) or \
            (names.generic(device.label) and len(names.rooms_of_label(device.label)) < 2):
        return False
    same = names.devices_by_label[label]
    said = compact(utterance)
    return len(same) == 1 or [d.device_id for d in same if d.room and compact(d.room) in said] == [device_id]


def the_one_said(index, candidates: list[Candidate], utterance: str) -> tuple[list[Candidate], bool]:
    """(the candidates, whether the utterance names one device): the one device it names alone of all, by its
    whole label or by more of its name than a word for a kind ("oven off" beside an Oven and a Deli Oven: the
    Oven; "cabinet light to 100%": the CD Cabinet Light), put first where another device leads with the same
    command, never a plan over every device of the kind. A room said with a kind names the area."""
    if not candidates:
        return candidates, False
    by_name = named(index, utterance)
    best = by_name.max(initial=0)
    meant = np.flatnonzero(by_name == best) if best else []
    if len(meant) != 1:
        return candidates, False
    device = index.home.devices[int(meant[0])]
    if not (says_one_device(index, device.device_id, utterance) or _more_than_a_kind(index, device, best, utterance)):
        return candidates, False
    top = candidates[0]
    if top.device_id == device.device_id:
        return candidates, True
    first = next((c for c in candidates if c.device_id == device.device_id and c.command_id == top.command_id), None)
    return (candidates, False) if first is None else ([first, *(c for c in candidates if c is not first)], True)


def _more_than_a_kind(index, device, said: int, utterance: str) -> bool:
    """Whether ``said`` characters of the device's name are more than any word for a kind the utterance says, with
    no kind said in the plural ("the upstairs lights": each of them), no room said ("主卧吸顶灯": the lights of the
    room) and a label that is no room and kind."""
    kind_words = [w for ws in categories_said(utterance).values() for w in ws]  # as said: "lights"
    several = any(w.isascii() and w.endswith("s") and not w.endswith("ss") for w in kind_words)
    return said > max(map(len, kind_words), default=0) and not several and \
        not index.names.generic(device.label) and not index.names.mentioned_rooms(utterance)


def names_a_kind_only(index, ir: QueryIR, utterance: str, candidates: list[Candidate]) -> bool:
    """Whether a one-device parse names no room and no floor, only a word for the kind of the device
    ranked first ("deactivate the lights", "关百叶窗", "风扇速度设到80%"), and no device: neither a word of
    the first one's label nor the whole label of any ranked one ("户外插座关了"): a command for every
    device of that kind in the home."""
    names = index.names
    top = candidates[0]
    if ir.quantifier != "one" or ir.scope_include or is_negated(utterance) or names.said_rooms(ir, utterance) \
            or _ONE_OF.search(utterance) or names.landmarks(utterance):  # "the shades by the door": one of them
        return False
    return (not ir.name_hint or is_kind_word(ir.name_hint)) and top.category in categories_said(utterance) \
        and not _says_part_of_label(index, top.label, utterance) \
        and not any(_says_whole_label(index, c.label, utterance) for c in candidates)


def _says_whole_label(index, label: str, utterance: str) -> bool:
    """The label said whole, when it is more than a word for a kind ("Lamp") or a room and one ("客厅空调")."""
    whole = compact(label)
    return whole in compact(utterance) and says_label(utterance, whole) and not is_kind_word(whole) \
        and not index.names.generic(label)


def _says_part_of_label(index, label: str, utterance: str) -> bool:
    """Whether the utterance says a word of the label that is no room and no word for a kind: "前门" of
    前门门锁 in "锁上前门", "户外" of 户外插座: a device is being named, not a kind."""
    said, rooms = compact(utterance), index.names.compact_rooms
    label = compact(label)
    if label.isascii():
        words = set(re.findall(r"[a-z0-9]+", utterance.lower()))
        return any(len(w) >= 3 and w in words and not is_kind_word(w) and w not in rooms
                   for w in re.findall(r"[a-z0-9]+", label))
    return any(label[i:j] in said and not is_kind_word(label[i:j]) and label[i:j] not in rooms
               and not any(label[i:j] in r for r in rooms)
               for i in range(len(label)) for j in range(i + 2, len(label) + 1))


def names_an_area(index, ir: QueryIR, utterance: str) -> bool:
    """Whether a one-device parse names a room, floor or wing: "set the first floor brightness to 50%",
    "客厅灯光调到50%", "客厅筒灯调到30%" mean every device of the kind (or the name) there. Not while the
    utterance says a negated verb: its verb says the opposite of what is wanted, and a plan would carry
    that to every device of the room (CommandRetrieval reads negations first: "老人房的灯不用开了"
    arrives here as "老人房的灯关闭了")."""
    return ir.quantifier == "one" and not is_negated(utterance) and \
        bool(index.rooms.expand(ir.scope_include) or index.names.said_rooms(ir, utterance))


def says_the_kind_itself(index, name: str, category: str, utterance: str) -> bool:
    """Whether a name is the Chinese word for the category as a whole ("窗帘" of Blind: 纱帘 and 百叶窗 too; not
    纱帘), said on its own, not inside a longer word the labels use: it names the kind, not devices called so."""
    return bool(name) and name == general_word(category) and \
        not index.names.says_a_narrower_kind(utterance, name, category)
