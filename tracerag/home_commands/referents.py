"""Which devices an utterance refers to by name, resolved rather than matched by the words it contains.

- A label said whole names that device: "the TV", "the Gas Fireplace", "后门灯". Its words then name nothing
  else: the "gas" of "Gas Fireplace" is no gas valve, the "back door" of "Back Door Light" no lock.
- A run of a name said names the devices whose name ends in it, where some do (its head noun): "the safe" is
  the Office Safe, not the Safe Room Lamp; "the front door" is the Front Door lock, not the Front Door
  Shades. Where none does, it names every device carrying it ("the pendant": Pendant 1 and Pendant 2).
- A word for what a device is names it where its label does not say it ("the safe": a lock labelled Strongbox
  whose own name says Safe; ``device_kinds``).
- A name said only to say where something is names nothing ("the blinds by the patio door", "门锁旁的灯":
  ``HomeNames.without_landmarks``), nor does a run that qualifies the word for another kind after it ("车库
  的灯", "the oven door").

``named(index, text)`` gives, per device, how much of its name the text says in these terms (the characters
of the longest label or run said; 0 for none): the safety rules decide from it which sensitive device an
utterance asks for, and only a device it names, or a word for its kind said on its own, can be one.
"""

from __future__ import annotations

import re
from functools import partial

import numpy as np

from .category_words import categories_said, family_of, is_kind_word, normalised, only_specific, qualifies, with_family
from .device_kinds import devices_said
from .door_words import DOOR_WORDS, ENTRANCE_SAID, ENTRANCE_WORDS, lock_by_maker_said
from .letting_in import without_whom
from .numerals import numbered_in_digits
from .text_match import contains, join_tokens, phrase_pattern, tokens

_FIRE_UP = re.compile(r"\bfire(?=\s+(?:[\w']+\s+){0,3}?up\b|\s+(?:the|my|our)\s+(?:[\w-]+\s+){0,2}?"
                      r"(?:burners?|kilns?|ovens?|boilers?|furnaces?|forges?)\b)", re.I)  # a verb: "fire the oven up"

# a verb said before what it acts on names nothing: "open the shop door" is no Open Sign ("the open sign" is)
_VERB_BEFORE_OBJECT = re.compile(r"\b(?:open|close|shut|start|stop)(?=\s+(?:up|the|a|an|my|our|your|his|her|its|"
                                 r"their|this|that|these|those|it|them|him|both|all|every|each)\b)", re.I)


def named(index, text: str) -> np.ndarray:
    """Per device: the length in characters of the longest label or name run the text names it by (see the
    module docstring); 0 where it names it by none. Read once per text (the array is shared: not to be changed)."""
    return index.memo(("named", text), lambda: _named(index, text))


def _named(index, text: str) -> np.ndarray:
    text = numbered_in_digits(text)  # "room four": Room 4
    out = np.zeros(len(index.home.devices), dtype=np.int64)
    has_part = partial(_has_part, index)
    # "let the cleaner in": no Robot Cleaner; "fire up the hob": no Fire Door
    plain = index.names.without_landmarks(_VERB_BEFORE_OBJECT.sub(" ", _FIRE_UP.sub(" ", without_whom(text))))
    said = tokens(plain)
    rooms = index.names.mentioned_rooms(text)
    there = index.rooms.devices_in(rooms) if rooms else None
    # a label said to qualify the word for another kind after it names nothing ("阳台门口的灯": a light), nor one
    # said inside a longer run of another name ("the coop door": the Chicken Coop Door, not the one labelled Door)
    longer = {*index.names.name_phrases.found_in(said), *index.names.run_phrases.found_in(said)}
    # a one-word label said as two ("night watch": the Nightwatch)
    joined = [said[i] + said[i + 1] for i in range(len(said) - 1)
              if said[i].isascii() and (said[i] + said[i + 1],) in index.names.devices_labelled]
    said = (*said, "·", *joined) if joined else said
    labels = [label for label in _outermost(index.names.label_phrases.found_in(said))
              if _kinds_qualified(join_tokens(label), plain, has_part) is None
              and not any(len(run) > len(label) and contains(run, label) for run in longer)]
    for label in labels:
        devices = np.zeros(len(out), dtype=bool)
        devices[index.names.devices_labelled[label]] = True
        out[_in_rooms_said(index, devices, label, there)] = len("".join(label))
    for label in labels:  # a label said whole: its words name nothing else
        plain = phrase_pattern(label).sub(" · ", plain)
    for room in sorted(index.rooms.phrases.found_in(tokens(plain)), key=lambda p: (-len(p), p)):  # nor a room's words
        plain = phrase_pattern(room).sub(" · ", plain)
    plain = ENTRANCE_SAID.sub(" · ", plain)  # "the main entrance" is no Gas Main
    said = tokens(plain)
    kinds_in_text = categories_said(plain)
    words = {(t,) for t in said if t.isascii() and len(t) >= 3 and not t.isdigit()}  # "the safe", "the oven"
    runs = _outermost({*index.names.name_phrases.found_in(said), *index.names.run_phrases.found_in(said),
                       *(w for w in words if index.names.carrying(w).any())})
    for run in runs:
        length = len("".join(run))
        if length < 2:
            continue
        carriers = index.names.carrying(run)
        qualified = _kinds_qualified(join_tokens(run), plain, has_part)
        if qualified is not None:
            # the word says which device of the kind after it: the one carrying it, where it is of that kind ("the
            # propane valve": Propane Shutoff); else it names nothing ("the oven light" is no oven)
            # of water or gas said alone, that supply only: "the mains water" is no Gas Main (氧气阀 a valve still)
            supply = len(qualified) == 1 and qualified <= _NAMED_ONLY_WHOLE and \
                re.search(phrase_pattern(run).pattern + r"\s+(?:water|gas)\b", plain) is not None
            carriers = carriers & index.table.in_categories(qualified if supply else with_family(qualified))
            if not carriers.any():
                continue
        elif (itself := carriers & index.names.carrying_before_place(run)).any():
            carriers = itself  # "the key safe": the Key Cabinet, not the Lamp by the Key Cabinet
        heads = carriers & index.names.name_ends_with(run)
        if is_kind_word(join_tokens(run)):
            # a word for a kind names only devices of that kind whose name holds it ("the valve" is no Gas Valve,
            # "the door" no Garage Door), and only in the rooms said; "the security system" no Security Floodlight
            word = join_tokens(run)
            # said inside a longer word for a kind, it is that kind ("the gas valve": no water valve)
            within = {kind for kind, ws in kinds_in_text.items() if any(word in w and w != word for w in ws)}
            of_kind = index.table.in_categories(within or categories_said(word))
            meant = (heads if (heads & of_kind).any() else carriers) & of_kind
            if not (carriers & of_kind).any() and heads.sum() == 1 and word not in DOOR_WORDS and \
                    family_of(index.table.device_categories[heads][0]) not in {family_of(k) for k in within or
                                                                               categories_said(word)}:
                # no device of the kind holds it, and one of another family is called so: "the shutter" of a Roller
                # Shutter that is a garage door (a water valve is never "the gas valve")
                meant = heads
            meant = meant & there if there is not None else meant
            if not within:  # "the staff door" is no Automatic Door; "the water valves" are still the valves
                meant = meant & ~_said_otherwise(index, said, run, meant)
            unnamed = of_kind & ~meant & index.table.in_categories(_NAMED_ONLY_WHOLE)
            if there is not None:
                unnamed &= there
            if not heads.any() or not meant.any() or unnamed.any():
                # "the gas valve" beside a Nitrous Valve, an Oxygen Manifold and the Main Gas names none of them:
                # its word is in one label, and the kind is all three's (which one?)
                continue
        else:
            ending = _kind_it_ends_with(join_tokens(run))
            if not heads.any() and _what_another_is(index, join_tokens(run), carriers, kinds_in_text):
                continue  # 保险柜 of 保险柜台灯: the safe (小金库), not the lamp by it
            if ending and not heads.any():
                # a run ending in a word for a kind is a thing of that kind: "入户门" of 入户门灯 is a door, "the
                # garage door" of the Garage Door Light no light; it names only the carriers of that kind
                carriers = carriers & index.table.in_categories(with_family(ending))
                if not carriers.any():
                    # "the bay door": no name without its room ends so, and the Loading Bay Door's label does
                    carriers = heads = index.names.label_ends_with(run)
                if not carriers.any():
                    continue
            meant = _in_rooms_said(index, heads if heads.any() else carriers, run, there)
            before = _kinds_before(join_tokens(run), plain)
            if before:  # "煤气总阀": the 总阀 of gas, never the water's 自来水总阀
                meant = meant & index.table.in_categories(before)
            meant = meant & ~_said_otherwise(index, said, run, meant)  # "the beer gas" is no Kitchen Gas
            meant = meant & ~_inside_a_kind_word(index, join_tokens(run), kinds_in_text, meant)
        out[meant] = np.maximum(out[meant], length)
    # a word for what a device is, where its label does not say it ("the safe": the lock labelled Strongbox whose
    # own name is SentrySafe Smart Safe; 保险柜: 小金库)
    being = devices_said(index, plain, lambda word: _kinds_qualified(word, plain, has_part) is not None)
    if being.any():
        if there is not None and (being.astype(bool) & there).any():
            being = np.where(there, being, 0)
        out = np.maximum(out, being)
    by_maker = lock_by_maker_said(index.home.devices, plain)  # "open the nuki": the one lock that is a Nuki
    if by_maker is not None:
        out[by_maker] = max(out[by_maker], 2)
    return _by_number_said(index, out, {t for t in said if t.isdigit()})


def _by_number_said(index, out: np.ndarray, numbers: set[str]) -> np.ndarray:
    """The devices named, less those numbered otherwise where the text says the number of some ("open unit 12":
    the Unit 12 Door, not Unit 14's; a name's number is no word of it, so "unit" alone names them all)."""
    if not numbers:
        return out
    ordinals = index.names.label_ordinals
    found = np.flatnonzero(out).tolist()
    if not any(ordinals[d] & numbers for d in found):
        return out
    out = out.copy()
    for d in found:
        if ordinals[d] and not ordinals[d] & numbers:
            out[d] = 0
    return out


# the kinds a word for the kind names no one device of where others of it are called otherwise: the supplies
_NAMED_ONLY_WHOLE = frozenset({"GasValve", "WaterValve"})
# words said before a supply's or a door's head word that do not say which one it is ("turn the gas on")
_NOT_WHICH = frozenset({"the", "a", "an", "my", "our", "your", "this", "that", "some", "all", "every", "other",
                        "main", "big", "little", "small", "on", "off", "up", "turn", "switch", "open", "close",
                        "shut", "start", "stop", "please", "and", "to", "of", "for", "·"})
# the kinds whose head word a modifier may take from another of them: a supply, a lock, a door
_MODIFIED = frozenset({"GasValve", "WaterValve", "Lock", "Door", "GarageDoor"})


def _said_otherwise(index, said: tuple[str, ...], run: tuple[str, ...], meant: np.ndarray) -> np.ndarray:
    """Per device of ``meant``: a supply, a lock or a door whose label says another word before the head said
    than the word said there, a word another name of the home carries ("the beer gas" beside the Kitchen Gas and
    the Beer Garden Door: beer, not kitchen); none where nothing that says which is said before it."""
    out = np.zeros(len(index.home.devices), dtype=bool)
    at = next((i for i in range(1, len(said) - len(run) + 1) if said[i:i + len(run)] == run), None)
    before = said[at - 1] if at else None
    if before == "s" and at >= 2 and said[at - 2].isascii() and not index.names.carrying(said[at - 2:at - 1]).any():
        # "Mrs Hale's door": whose door, not which; no door is named by its head word
        return meant & index.table.in_categories(_MODIFIED)
    if before is None or not before.isascii() or before in _NOT_WHICH or before.isdigit():
        return out
    for d in np.flatnonzero(meant & index.table.in_categories(_MODIFIED)).tolist():
        label = tokens(index.home.devices[d].label)
        way_in = before in ENTRANCE_WORDS and bool(set(label) & ENTRANCE_WORDS)  # "the front door": the Main Door
        out[d] = len(label) > len(run) and label[-len(run):] == run and before not in label and not way_in
    closest = _closest_modifier(index, before, run, out)
    if closest is not None:  # "the parcel locker": the Package Locker, not the Cold Locker
        out[closest] = False
        return out
    if not index.names.carrying((before,)).any():  # a word the home does not use says nothing ("wokk")
        return np.zeros_like(out)
    return out


# the words that say which of a set of places or sides a thing is: a near synonym is no match ("the rear door"
# is no Front Door, though the embedder finds the two words alike)
_SIDES = frozenset({"front", "back", "rear", "side", "left", "right", "middle", "centre", "center", "top",
                    "bottom", "upper", "lower", "upstairs", "downstairs", "inner", "outer", "inside", "outside",
                    "north", "south", "east", "west", "first", "second", "third", "big", "small", "little",
                    "large", "old", "new", "hot", "cold", "red", "blue", "green", "white", "black"})
SAME_WORD = 0.8  # the cosine of two words the embedder finds said alike (parcel / package 0.84, front / rear 0.70)
CLEAR_OF = 0.15  # by how much the closest must beat the next


def _closest_modifier(index, word: str, run: tuple[str, ...], devices: np.ndarray) -> int | None:
    """The one device of ``devices`` whose label's word before ``run`` is the embedder's near synonym of the word
    said ("parcel" of the Package Locker), clearly closer than any other's; None where none is, or where the
    word says a side, a size or a colour (a near word is then another one)."""
    found = np.flatnonzero(devices).tolist()
    if not found or word in _SIDES:
        return None
    words = {}
    for d in found:
        label = tokens(index.home.devices[d].label)
        modifier = label[-len(run) - 1]
        if modifier.isascii() and modifier.isalpha() and modifier not in _SIDES:
            words[d] = modifier
    if not words:
        return None

    def cosines() -> np.ndarray:
        vectors = np.asarray(index.embedder.embed([word, *words.values()]), dtype=np.float64)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors[1:] @ vectors[0]

    alike = index.memo(("modifier", word, tuple(words.values())), cosines)
    order = np.argsort(-alike)
    best = float(alike[order[0]])
    second = float(alike[order[1]]) if len(order) > 1 else 0.0
    return list(words)[int(order[0])] if best >= SAME_WORD and best - second >= CLEAR_OF else None


def _inside_a_kind_word(index, run: str, kinds_said: dict[str, list[str]], meant: np.ndarray) -> np.ndarray:
    """Per device: the Chinese run is said only inside a longer word for a kind that the device's label does not
    hold (动门 of 电动门 is no 自动门)."""
    out = np.zeros(len(meant), dtype=bool)
    longer = [] if run.isascii() else [w for ws in kinds_said.values() for w in ws if len(w) > len(run) and run in w]
    if not longer:
        return out
    for d in np.flatnonzero(meant).tolist():
        out[d] = not any(w in index.home.devices[d].label for w in longer)
    return out


def _what_another_is(index, phrase: str, carriers: np.ndarray, kinds_said: dict[str, list[str]]) -> bool:
    """Whether the Chinese run, whole, is a word for what another device is (``device_kinds``), and every device
    whose name carries it is of another kind: it names that device, never the names it only qualifies (保险柜 of
    保险柜台灯, the lamp by the safe)."""
    if phrase.isascii():  # "vault" of the Vault Door Lamp: a word English uses for more than a safe
        return False
    being = devices_said(index, phrase) == len(phrase)
    categories = index.table.device_categories
    carried = set(categories[carriers].tolist())
    return bool((being & ~carriers).any()) and not carried & set(categories[being].tolist()) and \
        not carried & set(kinds_said)  # "照着保险箱的灯": the lamp said, the safe's


def _kind_it_ends_with(phrase: str) -> set[str]:
    """The kinds whose word the phrase ends in ("入户门": Door; "front door": Door; "bedside": none)."""
    plain = normalised(phrase)
    return {kind for kind, words in categories_said(plain).items() if any(plain.endswith(w) for w in words)}


def _has_part(index, word: str, kinds: dict[str, list[str]]) -> bool:
    """Whether a device whose name holds ``word`` has a command of its own for a kind said after it: the
    thermostat's fan mode ("the thermostat fan"), never a lock's shades."""
    said = {w for words in kinds.values() for phrase in words for w in phrase.split() if w.isascii()}
    carriers = np.flatnonzero(index.names.carrying(tokens(word))).tolist()
    return any(w in spec.id.lower() for d in carriers for spec in index.home.devices[d].commands for w in said)


def _in_rooms_said(index, devices: np.ndarray, words: tuple[str, ...], there: np.ndarray | None) -> np.ndarray:
    """The devices a name said means, where rooms are said: those of them in the rooms, else the devices there
    whose name carries its words ("1栋车库的车库门": the garage door of building 1, labelled 车库门 kab), else all."""
    if there is None:
        return devices
    if (devices & there).any():
        return devices & there
    carried = index.names.carrying(index.names.name_key(join_tokens(words)) or words) & there
    return carried if carried.any() else devices


def _outermost(phrases) -> list[tuple[str, ...]]:
    """The phrases said that lie inside no longer one said ("车棚卷帘门", not its "车棚卷")."""
    found = set(phrases)
    return sorted((p for p in found if not any(len(other) > len(p) and contains(other, p) for other in found)),
                  key=lambda p: (-len(p), p))


def _kinds_before(word: str, text: str) -> set[str]:
    """The kinds of device a word for a kind said right before ``word`` says ("煤气总阀": GasValve), where it is
    always said so; empty where none is."""
    text = normalised(text)
    spans = [m.span() for m in phrase_pattern(tokens(word)).finditer(text)]
    kinds: set[str] = set()
    for start, _ in spans:
        before = text[max(0, start - 12):start].rstrip("的 ")
        said = {kind: [w for w in ws if before.endswith(w)] for kind, ws in categories_said(before).items()}
        said = {kind: ws for kind, ws in said.items() if ws}
        if not said:
            return set()
        # a word of the kind's own says it alone ("自来水总阀" is no gas's 总阀); "阀" any valve
        kinds |= {k for kind, ws in said.items() for k in ({kind} if only_specific(kind, ws) else with_family({kind}))}
    return kinds


def _kinds_qualified(word: str, text: str, has_part=None) -> set[str] | None:
    """The kinds of device ``word`` qualifies where every time it is said it qualifies the word for a kind of
    device after it ("车库的灯", "the oven light": Light), else None: it then says which device of that kind,
    and names no other itself. A word that is itself a word for a kind ("the thermostat fan", "the front door
    shades") qualifies the kind after it only where ``has_part(word, kinds)`` says its devices have no command
    of that kind of their own."""
    text = normalised(text)
    spans = [m.span() for m in phrase_pattern(tokens(word)).finditer(text)]
    if not spans:
        return None
    own = set(categories_said(word))
    qualified: set[str] = set()
    for start, end in spans:
        # the word for its own kind goes on: "总水阀门" is the valve 总水阀
        inside = {w for ws in categories_said(text[start:end]).values() for w in ws}
        if own & {kind for kind, ws in categories_said(text[start:end + 3]).items() if set(ws) - inside}:
            return None
        after = text[end:]
        kinds = categories_said(after[:24])
        first = min((after.find(w) for ws in kinds.values() for w in ws if after.find(w) >= 0), default=-1)
        if first < 0 or not qualifies(after[:first]) or own & set(kinds):
            return None
        if own and (has_part is None or has_part(word, kinds)):
            return None  # "the thermostat fan": the thermostat's own fan mode; "the front door shades": shades
        qualified |= {kind for kind, words in kinds.items() if any(after.find(w) == first for w in words)}
    return qualified


def kinds_acted_on(index, text: str) -> dict[str, list[str]]:
    """The kinds of device the text names as what to act on (``categories_said``), with the words said; where
    it names two kinds or more, outside the rooms it names ("the lights in Garage": Garage is a room)."""
    said = categories_said(text)
    if len(said) > 1:
        said = categories_said(index.rooms.without_room_names(text)) or said
    rooms = {join_tokens(r) for r in index.rooms.phrases.found_in(tokens(text))}
    # "turn on the garage" where Garage is a room: the room, not its door
    return {kind: words for kind, words in outside_room_names(index, said, text).items()
            if not all(w in rooms for w in words)}


def outside_room_names(index, said: dict[str, list[str]], text: str) -> dict[str, list[str]]:
    """The kinds said (``categories_said``) less those whose every word is part of a longer room name said
    ("let him into the boiler room": no boiler)."""
    plain = normalised(text)
    rooms = [join_tokens(r) for r in index.rooms.phrases.found_in(tokens(text))]
    rooms_at = [(room, m.span()) for room in rooms for m in phrase_pattern(tokens(room)).finditer(plain)]

    def inside(word: str) -> bool:
        spans = [m.span() for m in phrase_pattern(tokens(word)).finditer(plain)]
        return bool(spans) and all(any(len(room) > len(word) and s <= start and end <= e for room, (s, e) in rooms_at)
                                   for start, end in spans)

    return {kind: words for kind, words in said.items() if not all(inside(w) for w in words)}


def names_mixed(index, text: str, named_by: np.ndarray, sensitive: np.ndarray) -> np.ndarray:
    """Per device of ``sensitive`` (a mask): the head word of its name said after a word another named one's
    name has and its own has not ("the key cabinet": Drug Cabinet, Key Box): the phrase names neither of them."""
    named_devices = np.flatnonzero((named_by > 0) & sensitive).tolist()
    out = np.zeros(len(named_by), dtype=bool)
    if len(named_devices) < 2:
        return out
    words = {d: tokens(index.home.devices[d].label) for d in named_devices}
    by_head: dict[str, list[int]] = {}
    by_modifier: dict[str, list[int]] = {}
    for d, label in words.items():
        if label:
            by_head.setdefault(label[-1], []).append(d)
        for word in set(label[:-1]):
            by_modifier.setdefault(word, []).append(d)
    said = tokens(index.names.without_landmarks(text))
    for first, second in zip(said, said[1:], strict=False):
        heads, modifiers = by_head.get(second, ()), by_modifier.get(first, ())
        if not heads or not modifiers:
            continue
        kinds = {family_of(kind) for kind in categories_said(second)}  # "the propane valve": its kind said
        for a in modifiers:
            # its own name said ("卷帘门和升降门": 帘门 is the 卷帘门's, the 升降门 is named after it)
            if family_of(index.table.device_categories[a]) in kinds or a in heads:
                continue
            for b in heads:
                if a != b and first not in words[b]:
                    out[[a, b]] = True
    return out
